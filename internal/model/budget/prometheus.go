package budget

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of the Prometheus spend source.
const (
	DefaultPrometheusTimeout = 2 * time.Second
	DefaultPrometheusCache   = 5 * time.Minute
	// DefaultPrometheusLabel is the label of the query's result that names
	// a machine type: kube-state-metrics' rendering of the node label
	// node.kubernetes.io/instance-type.
	DefaultPrometheusLabel = "label_node_kubernetes_io_instance_type"
	// maxPrometheusTimeout caps the timeout whatever the environment says.
	maxPrometheusTimeout = 10 * time.Second
	// maxPrometheusEntries caps the cache: one entry per XR and query.
	maxPrometheusEntries = 10000
)

// A PrometheusQuery asks a Prometheus-compatible API for an XR's
// month-to-date spend: Query returns, per machine type (the value of
// Label), the node-hours used this month; Prices turn them into USD.
type PrometheusQuery struct {
	URL    string
	Query  string
	Label  string
	Prices map[string]float64
	// Timeout bounds one query; CacheFor is how long an answer is used.
	Timeout  time.Duration
	CacheFor time.Duration
}

// Prometheus is the spend source that queries Prometheus-compatible APIs.
// It never blocks a render: Spend answers from its cache at once, and
// refreshes a missing or stale answer in the background, one query at a
// time per key, under a strict timeout. Whatever fails reads as an unknown
// spend (fail open).
type Prometheus struct {
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*promEntry
}

type promEntry struct {
	spend    Spend
	at       time.Time
	fetching bool
}

// NewPrometheus returns a Prometheus spend source with an empty cache.
func NewPrometheus() *Prometheus {
	return &Prometheus{client: &http.Client{}, now: time.Now, entries: map[string]*promEntry{}}
}

// Source is the process's Prometheus spend source, whose cache serves every
// XR.
var Source = NewPrometheus()

// Spend returns the last answer to q, refreshing it in the background when
// it is missing or older than q.CacheFor. Before the first answer, the
// spend is unknown and the agent unreachable.
func (p *Prometheus) Spend(q PrometheusQuery) Spend {
	key := q.URL + "\x00" + q.Query
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[key]
	if !ok {
		if len(p.entries) >= maxPrometheusEntries {
			p.evictOldest()
		}
		e = &promEntry{spend: Spend{Unreachable: true, Warning: fmt.Sprintf("the spend query to %s has not answered yet: the spend is unknown", q.URL)}}
		p.entries[key] = e
	}
	if !e.fetching && (e.at.IsZero() || p.now().Sub(e.at) >= cmp.Or(q.CacheFor, DefaultPrometheusCache)) {
		e.fetching = true
		go p.refresh(key, q)
	}
	return e.spend
}

// evictOldest drops the entry answered longest ago.
func (p *Prometheus) evictOldest() {
	var oldest string
	var at time.Time
	for k, e := range p.entries {
		if !e.fetching && (oldest == "" || e.at.Before(at)) {
			oldest, at = k, e.at
		}
	}
	delete(p.entries, oldest)
}

// refresh queries once and records the answer, or the failure.
func (p *Prometheus) refresh(key string, q PrometheusQuery) {
	s := p.query(q)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.entries[key]; ok {
		e.spend, e.at, e.fetching = s, p.now(), false
	}
}

// promResponse is the part of a Prometheus instant query's answer we read.
type promResponse struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// query runs the instant query and prices its answer.
func (p *Prometheus) query(q PrometheusQuery) Spend {
	timeout := min(cmp.Or(q.Timeout, DefaultPrometheusTimeout), maxPrometheusTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	unreachable := func(format string, a ...any) Spend {
		return Spend{Unreachable: true, Warning: fmt.Sprintf("the spend query to %s failed (%s): the spend is unknown", q.URL, fmt.Sprintf(format, a...))}
	}
	u := strings.TrimSuffix(q.URL, "/") + "/api/v1/query?query=" + url.QueryEscape(q.Query)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Spend{Warning: fmt.Sprintf("cannot query %s: %v: the spend is unknown", q.URL, err)}
	}
	res, err := p.client.Do(req)
	if err != nil {
		return unreachable("%v", err)
	}
	defer res.Body.Close() //nolint:errcheck // a read-only body
	if res.StatusCode != http.StatusOK {
		return unreachable("HTTP %d", res.StatusCode)
	}
	var pr promResponse
	if err := json.NewDecoder(http.MaxBytesReader(nil, res.Body, 1<<20)).Decode(&pr); err != nil {
		return unreachable("cannot decode the answer: %v", err)
	}
	if pr.Status != "success" || pr.Data.ResultType != "vector" {
		return unreachable("status %q, result type %q: %s", pr.Status, pr.Data.ResultType, pr.Error)
	}
	label := cmp.Or(q.Label, DefaultPrometheusLabel)
	hours := map[string]float64{}
	for _, r := range pr.Data.Result {
		if len(r.Value) != 2 {
			return unreachable("a sample without a value")
		}
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return Spend{Warning: fmt.Sprintf("the spend query to %s answered %q, which is not a number of hours: the spend is unknown", q.URL, s)}
		}
		hours[r.Metric[label]] += v
	}
	var usd float64
	for _, mt := range slices.Sorted(maps.Keys(hours)) {
		price, ok := q.Prices[mt]
		if !ok {
			return Spend{Warning: fmt.Sprintf("the spend query to %s reports %v hours of machine type %q (label %s), which the price table lacks: the spend is unknown", q.URL, hours[mt], mt, label)}
		}
		usd += hours[mt] * price
	}
	return Spend{USD: round(usd, 2), Known: true}
}
