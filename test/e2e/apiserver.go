package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// requestWork is what the API server spent on one kind of request: how
// many it served and their summed latency, from its own metrics.
type requestWork struct {
	count, seconds float64
}

// apiserverWork reads the API server's request metrics, keyed by verb and
// resource ("PUT usages", "PATCH objects/status"). Long-running requests
// (WATCH, CONNECT) are left out: their latency is how long they stayed open.
func (k *kube) apiserverWork() (map[string]requestWork, error) {
	b, err := k.metrics()
	if err != nil {
		return nil, err
	}
	out := map[string]requestWork{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		name, rest, ok := strings.Cut(l, "{")
		if !ok || (name != "apiserver_request_duration_seconds_sum" && name != "apiserver_request_duration_seconds_count") {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		verb, resource := label(labels, "verb"), label(labels, "resource")
		if verb == "WATCH" || verb == "WATCHLIST" || verb == "CONNECT" || resource == "" {
			continue
		}
		if sub := label(labels, "subresource"); sub != "" {
			resource += "/" + sub
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		key := verb + " " + resource
		w := out[key]
		if name == "apiserver_request_duration_seconds_sum" {
			w.seconds += v
		} else {
			w.count += v
		}
		out[key] = w
	}
	return out, sc.Err()
}

// label is a label's value in a metric's label set.
func label(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 || (i > 0 && labels[i-1] != ',') {
		return ""
	}
	v := labels[i+len(name)+2:]
	return v[:strings.IndexByte(v, '"')]
}

// topRequests prints the kinds of request the API server spent the most
// time on between two readings, and their share of all of it.
func topRequests(before, after map[string]requestWork, n int) {
	type row struct {
		key string
		requestWork
	}
	var rows []row
	var total float64
	verbs := map[string]requestWork{}
	for key, a := range after {
		d := requestWork{a.count - before[key].count, a.seconds - before[key].seconds}
		total += d.seconds
		rows = append(rows, row{key, d})
		verb, _, _ := strings.Cut(key, " ")
		v := verbs[verb]
		verbs[verb] = requestWork{v.count + d.count, v.seconds + d.seconds}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.seconds, a.seconds), cmp.Compare(a.key, b.key)) })
	fmt.Printf("  API server requests by time spent (%.0f s in all):", total)
	for _, verb := range slices.Sorted(maps.Keys(verbs)) {
		fmt.Printf(" %s %.0f%%", verb, 100*verbs[verb].seconds/total)
	}
	fmt.Println()
	for _, r := range rows[:min(n, len(rows))] {
		fmt.Printf("    %-48s %8.0f requests %8.1f s %5.1f%%\n", r.key, r.count, r.seconds, 100*r.seconds/total)
	}
}
