package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// xrChanges counts, from the watch events of the fleet's top-level XRs,
// how often each was written while converging and which of its fields
// each write changed (two levels deep: status.conditions,
// metadata.annotations, spec.crossplane, ...): a write re-runs the XR
// and every XR that requires it.
type xrChanges struct {
	mu     sync.Mutex
	start  time.Time
	last   map[string]object
	writes map[string]int
	fields map[string]map[string]int
	// back counts, by kind, the writes that put a condition back to what
	// it was before the write before (A, B, A): Crossplane applied the
	// conditions of a copy of the XR older than the last it wrote, or the
	// write after that undid it. earlier holds, by XR and condition type,
	// the value the last change replaced.
	back    map[string]int
	earlier map[string]map[string]string
	// traced are the first tracedPerKind XRs of each kind seen, whose
	// every change of a condition or of the generation goes to trace.
	traced map[string]bool
	kinds  map[string]int
	trace  []string
}

// tracedPerKind is how many XRs of each kind the fleet's trace follows.
const tracedPerKind = 3

// observe records one watch event of an XR.
func (c *xrChanges) observe(typ string, o object) {
	kind, _ := o["kind"].(string)
	key := kind + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last, c.writes, c.fields = map[string]object{}, map[string]int{}, map[string]map[string]int{}
		c.back, c.earlier, c.traced, c.kinds = map[string]int{}, map[string]map[string]string{}, map[string]bool{}, map[string]int{}
	}
	prev, seen := c.last[key]
	c.last[key] = o
	if !seen && c.kinds[kind] < tracedPerKind {
		c.kinds[kind]++
		c.traced[key] = true
	}
	if typ != "MODIFIED" || !seen {
		return
	}
	c.writes[kind]++
	if c.fields[kind] == nil {
		c.fields[kind] = map[string]int{}
	}
	changed := changedFields(prev, o)
	for _, f := range changed {
		c.fields[kind][f]++
	}
	if c.putBack(key, prev, o) {
		c.back[kind]++
	}
	if c.traced[key] {
		c.trace = append(c.trace, traceLines(time.Since(c.start), key, changed, o)...)
	}
}

// putBack reports whether the write from prev to o put one of the XR's
// conditions back to the value it had before prev, and records what this
// write replaced. A condition's value is all of it but its
// lastTransitionTime.
func (c *xrChanges) putBack(key string, prev, o object) bool {
	a, b := conditionValues(prev), conditionValues(o)
	if c.earlier[key] == nil {
		c.earlier[key] = map[string]string{}
	}
	back := false
	for t, v := range b {
		if v == a[t] {
			continue
		}
		if e, ok := c.earlier[key][t]; ok && e == v {
			back = true
		}
		c.earlier[key][t] = a[t]
	}
	return back
}

// conditionValues are o's conditions by type, each as its fields but
// lastTransitionTime.
func conditionValues(o object) map[string]string {
	out := map[string]string{}
	l, _ := at(o, "status", "conditions").([]any)
	for _, c := range l {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		out[t] = fmt.Sprint(m["status"], "|", m["reason"], "|", m["message"], "|", m["observedGeneration"])
	}
	return out
}

// traceLines says, for the trace, what a write of the XR o changed: each
// condition as it now is, and the generation.
func traceLines(since time.Duration, key string, changed []string, o object) []string {
	conds := map[string]map[string]any{}
	l, _ := at(o, "status", "conditions").([]any)
	for _, c := range l {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		conds[t] = m
	}
	var out []string
	for _, f := range changed {
		what := f
		if t, ok := strings.CutPrefix(f, "status.conditions["); ok {
			t = strings.TrimSuffix(t, "]")
			m := conds[t]
			what = fmt.Sprintf("[%s] %v %v (generation %v/%v): %v", t, m["status"], m["reason"], m["observedGeneration"], at(o, "metadata", "generation"), m["message"])
		}
		out = append(out, fmt.Sprintf("%7.1f s %s %s", since.Seconds(), key, what))
	}
	return out
}

// writeTrace writes the trace to path, grouped by XR.
func (c *xrChanges) writeTrace(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := slices.Clone(c.trace)
	slices.SortStableFunc(lines, func(a, b string) int { return cmp.Compare(strings.Fields(a)[2], strings.Fields(b)[2]) })
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("cannot write the fleet's trace: %w", err)
	}
	fmt.Printf("  the conditions of %d XRs as they changed: %s\n", len(c.traced), path)
	return nil
}

// changedFields lists the fields two levels deep in which b differs from
// a, leaving out what every write changes (resourceVersion, managedFields),
// and the conditions by type.
func changedFields(a, b object) []string {
	var out []string
	for _, top := range []string{"metadata", "spec", "status"} {
		am, _ := a[top].(map[string]any)
		bm, _ := b[top].(map[string]any)
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			if top == "metadata" && (k == "resourceVersion" || k == "managedFields") {
				continue
			}
			if reflect.DeepEqual(am[k], bm[k]) {
				continue
			}
			if top == "status" && k == "conditions" {
				out = append(out, changedConditions(am[k], bm[k])...)
				continue
			}
			out = append(out, top+"."+k)
		}
	}
	return out
}

// changedConditions lists the types of the conditions that differ
// between a and b other than in their lastTransitionTime, each as
// status.conditions[Type].
func changedConditions(a, b any) []string {
	byType := func(v any) map[string]map[string]any {
		out := map[string]map[string]any{}
		l, _ := v.([]any)
		for _, c := range l {
			m, _ := c.(map[string]any)
			t, _ := m["type"].(string)
			m = maps.Clone(m)
			delete(m, "lastTransitionTime")
			out[t] = m
		}
		return out
	}
	am, bm := byType(a), byType(b)
	var out []string
	for t := range bm {
		if !reflect.DeepEqual(am[t], bm[t]) {
			out = append(out, "status.conditions["+t+"]")
		}
	}
	for t := range am {
		if _, ok := bm[t]; !ok {
			out = append(out, "status.conditions["+t+"]")
		}
	}
	return out
}

// print says, per kind, the writes per XR applied of that kind and the
// fields they changed most often.
func (c *xrChanges) print() {
	c.mu.Lock()
	defer c.mu.Unlock()
	perKind := map[string]int{}
	for key := range c.last {
		kind, _, _ := strings.Cut(key, "/")
		perKind[kind]++
	}
	for _, kind := range slices.Sorted(maps.Keys(c.writes)) {
		xrs := float64(perKind[kind])
		fields := c.fields[kind]
		names := slices.SortedFunc(maps.Keys(fields), func(a, b string) int { return cmp.Or(cmp.Compare(fields[b], fields[a]), cmp.Compare(a, b)) })
		var top []string
		for _, f := range names[:min(8, len(names))] {
			top = append(top, fmt.Sprintf("%s %.1f", f, float64(fields[f])/xrs))
		}
		fmt.Printf("  writes per %s until all Ready: %.1f (%.1f of them put a condition back to its value before the last); fields they changed, per XR: %s\n",
			kind, float64(c.writes[kind])/xrs, float64(c.back[kind])/xrs, strings.Join(top, ", "))
	}
}
