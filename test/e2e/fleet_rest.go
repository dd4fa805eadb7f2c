package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// restWindow is how long each reading of the fleet at rest spans.
const restWindow = time.Minute

// atRest measures the fleet once all are Ready, for d, a reading per
// minute: what a Ready XR costs per minute when nothing converges
// (provider-kubernetes's polls of its Objects, the function's ready TTL
// re-running every XR, Crossplane re-applying what it composes, and
// Crossplane's periodic full resync, --sync-interval, which re-runs every
// XR at once). An XR Ready before the last pays that while it waits for
// the others, waited seconds on average, so of perXR, the API server's
// CPU per XR until all were Ready, about rate × waited is that cost; the
// rest is the convergence's own.
//
// It fails when, at rest, an XR's circuit breaker opens (its Responsive
// condition False: Crossplane throttles the XR's watch events), an XR
// stops being Synced or Ready, or a composed resource is re-created
// (one that was there is gone, or one appears), and it says whether the
// cost per minute climbs: the last window's against the first's.
//
// With xpArgs, it first restarts Crossplane core with them (after
// run.sh's, so that they win) and waits for every XR to be Synced and
// Ready again.
func (s *scenarios) atRest(c *cloud, xrs []*fleetXR, work, metrics string, d time.Duration, xpArgs string, perXR, waited float64) error {
	n := len(xrs)
	if xpArgs != "" {
		fmt.Printf("  at rest: Crossplane core restarted with %s\n", xpArgs)
		if err := s.restartCrossplane(work, xpArgs); err != nil {
			return err
		}
		again, err := s.waitFleet(xrs, time.Now(), "Synced", "Ready")
		if err != nil {
			return fmt.Errorf("after restarting Crossplane core with %s: %w", xpArgs, err)
		}
		fmt.Printf("  at rest: all Synced and Ready again %.0f s after the restart\n", again.Seconds())
	}
	composed0, err := s.composedUIDs(c)
	if err != nil {
		return err
	}
	watch := s.watchRest(xrs)
	defer watch.stop()
	r0, err := s.readStack(work, metrics)
	if err != nil {
		return err
	}
	first := r0
	var perMinute []float64
	for elapsed := time.Duration(0); elapsed < d; elapsed += restWindow {
		time.Sleep(min(restWindow, d-elapsed))
		r1, err := s.readStack(work, metrics)
		if err != nil {
			return err
		}
		span := min(restWindow, d-elapsed).Minutes()
		api := (r1.procs["kube-apiserver"].cpu - r0.procs["kube-apiserver"].cpu) / float64(n) / span
		perMinute = append(perMinute, api)
		fmt.Printf("  at rest, minute %d: per XR per minute kube-apiserver %.3f CPU s, %.2f RunFunction calls\n",
			len(perMinute), api, (r1.calls-r0.calls)/float64(n)/span)
		r0 = r1
	}
	last := r0
	before, after := first.procs, last.procs
	perMin := func(v float64) float64 { return v / float64(n) / d.Minutes() }
	api := perMin(after["kube-apiserver"].cpu - before["kube-apiserver"].cpu)
	fmt.Printf("  at rest, all Ready, for %s: per XR per minute kube-apiserver %.3f CPU s, Crossplane core %.3f CPU s, provider-kubernetes %.3f CPU s, %.2f RunFunction calls\n",
		d, api, perMin(after["crossplane"].cpu-before["crossplane"].cpu), perMin(after["provider-kubernetes"].cpu-before["provider-kubernetes"].cpu), perMin(last.calls-first.calls))
	paid := api * waited / 60
	fmt.Printf("  of the API server's %.2f CPU s per XR until all were Ready, about %.2f were paid at rest (an XR waited %.0f s Ready for the last, on average); converging: %.2f\n",
		perXR, paid, waited, perXR-paid)
	topRequests(first.work, last.work, 5)

	composed1, err := s.composedUIDs(c)
	if err != nil {
		return err
	}
	gone, created := 0, 0
	for uid := range composed0.uids {
		if !composed1.uids[uid] {
			gone++
		}
	}
	for uid := range composed1.uids {
		if !composed0.uids[uid] {
			created++
		}
	}
	opened, left := watch.result()
	climb := 0.0
	if len(perMinute) > 1 && perMinute[0] > 0 {
		climb = perMinute[len(perMinute)-1] / perMinute[0]
	}
	fmt.Printf("  at rest: per XR per minute kube-apiserver, first %.3f, lowest %.3f, highest %.3f, last %.3f CPU s (last/first %.2fx); %d XRs' circuit breaker opened, %d XRs left Synced or Ready; composed %d before, %d after, %d gone, %d new\n",
		perMinute[0], slices.Min(perMinute), slices.Max(perMinute), perMinute[len(perMinute)-1], climb, len(opened), len(left), composed0.resources, composed1.resources, gone, created)
	var problems []string
	if len(opened) > 0 {
		problems = append(problems, fmt.Sprintf("the circuit breaker of %d XRs opened at rest (%s)", len(opened), strings.Join(firstOf(opened, 5), ", ")))
	}
	if len(left) > 0 {
		problems = append(problems, fmt.Sprintf("%d XRs left Synced or Ready at rest (%s)", len(left), strings.Join(firstOf(left, 5), ", ")))
	}
	if gone+created > 0 {
		problems = append(problems, fmt.Sprintf("%d composed resources gone and %d new at rest", gone, created))
	}
	if len(problems) > 0 {
		return fmt.Errorf("at rest: %s", strings.Join(problems, "; "))
	}
	return nil
}

// restartCrossplane stops Crossplane core and starts it again with
// xpArgs after run.sh's flags (start-crossplane.sh reads XP_REST_ARGS).
func (s *scenarios) restartCrossplane(work, xpArgs string) error {
	if err := stopProcess(work, "crossplane", syscall.SIGTERM); err != nil {
		return err
	}
	return startProcess(work, "crossplane", "XP_REST_ARGS="+xpArgs)
}

// firstOf is the first k of names, sorted, and how many more.
func firstOf(names []string, k int) []string {
	slices.Sort(names)
	if len(names) <= k {
		return names
	}
	return append(slices.Clone(names[:k]), fmt.Sprintf("and %d more", len(names)-k))
}

// restWatch follows the fleet's XRs at rest: those whose Responsive
// condition turned False (the circuit breaker), and those that stopped
// being Synced or Ready.
type restWatch struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	opened map[string]bool
	// left holds, for each XR that left Synced or Ready, the first
	// condition it left by, with its reason and message.
	left map[string]string
}

// watchRest starts following the kinds of xrs, one watch each.
func (s *scenarios) watchRest(xrs []*fleetXR) *restWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &restWatch{cancel: cancel, opened: map[string]bool{}, left: map[string]string{}}
	kinds := map[[2]string]bool{}
	for _, x := range xrs {
		k := [2]string{x.apiVersion, x.kind}
		if kinds[k] {
			continue
		}
		kinds[k] = true
		go s.k.watchEvents(ctx, x.apiVersion, x.kind, "", func(typ string, o object) { //nolint:errcheck // ends with ctx
			name := fmt.Sprintf("%s %s/%s", x.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"))
			responsive, _, _ := condition(o, "Responsive")
			w.mu.Lock()
			defer w.mu.Unlock()
			if responsive == "False" {
				w.opened[name] = true
			}
			for _, typ2 := range []string{"Synced", "Ready"} {
				st, reason, msg := condition(o, typ2)
				if _, seen := w.left[name]; typ != "ADDED" && st != "True" && !seen {
					w.left[name] = fmt.Sprintf("%s %s %s: %s", typ2, st, reason, msg)
				}
			}
		})
	}
	return w
}

// stop ends the watches.
func (w *restWatch) stop() { w.cancel() }

// result is the XRs whose circuit breaker opened, and those that left
// Synced or Ready, so far.
func (w *restWatch) result() (opened, left []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.opened {
		opened = append(opened, n)
	}
	for n, why := range w.left {
		left = append(left, n+" ("+why+")")
	}
	return opened, left
}
