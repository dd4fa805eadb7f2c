package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// What the rollout scenario asserts of the fleet controller (function-
// cluster-platform fleet run, which run.sh starts with start-fleet.sh):
// that a gate without it fails closed, that a wave whose namespaces match
// nothing holds the waves after it, and that a Cluster waiting for its
// ruling is not re-run by time alone more often than the function's
// --ttl-gated allows.

// rolloutClosedFor is how long the rollout scenario leaves the fleet
// controller stopped once every Cluster holds for it: four times the
// simulated control planes' delay, in which a Cluster that moved anyway
// would be seen asking for the new version.
const rolloutClosedFor = 4 * rolloutCPDelay

// rolloutQuietFor is how long production waits for its approval while
// the rollout scenario counts its RunFunction calls and writes: longer
// than the default converging TTL (15 s) three times over, so that a
// gated Cluster answered with it would be seen re-run.
const rolloutQuietFor = 45 * time.Second

// rolloutSettled is how long nothing of the rollout must be written
// before rolloutQuiet begins counting.
const rolloutSettled = 10 * time.Second

// settle waits until rec saw no write for quiet, or for at most limit.
func (r *rolloutRecord) settle(quiet, limit time.Duration) {
	for start := time.Now(); time.Since(start) < limit; time.Sleep(time.Second) {
		var last time.Duration
		for _, e := range r.sorted() {
			if e.write() && e.at > last {
				last = e.at
			}
		}
		if time.Since(r.start)-last >= quiet {
			return
		}
	}
}

// pidOf reads the pid of one of run.sh's processes (name.pid in -work).
func (s *scenarios) pidOf(name string) (int, error) {
	if s.work == "" {
		return 0, fmt.Errorf("cannot find the %s's pid: no -work folder", name)
	}
	b, err := os.ReadFile(filepath.Join(s.work, name+".pid")) //nolint:gosec // run.sh's pid files
	if err != nil {
		return 0, fmt.Errorf("cannot read the %s's pid: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("cannot read the %s's pid: %w", name, err)
	}
	return pid, nil
}

// stopFleetController stops the fleet controller (SIGTERM, then SIGKILL
// after 10 s) and waits until it is gone.
func (s *scenarios) stopFleetController() error {
	pid, err := s.pidOf("fleet")
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("cannot stop the fleet controller (pid %d): %w", pid, err)
	}
	for i := 0; syscall.Kill(pid, 0) == nil; i++ {
		if i == 100 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if i > 150 {
			return fmt.Errorf("cannot stop the fleet controller (pid %d): still running 15 s after SIGTERM", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// startFleetController starts the fleet controller again with run.sh's
// start script, and checks that it runs a second later.
func (s *scenarios) startFleetController() error {
	if s.work == "" {
		return errors.New("cannot start the fleet controller: no -work folder")
	}
	out, err := exec.Command(filepath.Join(s.work, "start-fleet.sh")).CombinedOutput() //nolint:gosec // run.sh's start script
	if err != nil {
		return fmt.Errorf("cannot start the fleet controller: %w: %s", err, out)
	}
	time.Sleep(time.Second)
	pid, err := s.pidOf("fleet")
	if err != nil {
		return err
	}
	if syscall.Kill(pid, 0) != nil {
		return fmt.Errorf("cannot start the fleet controller: it exited at once (%s)", filepath.Join(s.work, "fleet.log"))
	}
	return nil
}

// rolloutFailClosed waits, with the fleet controller stopped and the
// environment raised from from to to, until every Cluster of the
// rollout holds on to saying that the controller has not ruled, keeps it
// so for rolloutClosedFor, checks that none moved, and starts the
// controller again. It returns what it saw.
func (s *scenarios) rolloutFailClosed(from, to string) (string, error) {
	closed := func(st rolloutState) bool { return st.holds(to, "has not ruled") && st.target == from }
	if err := s.waitWave("every Cluster holding on "+to+" for the stopped fleet controller", "", closed); err != nil {
		return "", err
	}
	held := time.Now()
	time.Sleep(rolloutClosedFor)
	states, err := s.rolloutStates()
	if err != nil {
		return "", err
	}
	for _, c := range rolloutFleet {
		if st := states[c.key()]; !closed(st) {
			return "", fmt.Errorf("%s, %s after every Cluster held for the stopped fleet controller: %s", c.key(), rolloutClosedFor, st)
		}
	}
	said := states[rolloutFleet[0].key()].message
	if err := s.startFleetController(); err != nil {
		return "", err
	}
	fmt.Printf("  %s -> %s with the fleet controller stopped: all %d Clusters held for %.1f s, e.g. %s: %q; the controller started again\n",
		from, to, len(rolloutFleet), time.Since(held).Seconds(), rolloutFleet[0].key(), said)
	return fmt.Sprintf("with the fleet controller stopped all %d held (%q)", len(rolloutFleet), said), nil
}

// rolloutTypo waits, with staging's namespaces misspelt, until every
// Cluster that is not canary's holds on to because staging has no
// Cluster, staging's own counting in the last wave, then applies fixed
// (the same environment, the namespaces right). It returns what it saw.
func (s *scenarios) rolloutTypo(to string, fixed rolloutEnv) (string, error) {
	var said string
	if err := s.waitWave("every Cluster but canary's holding on the empty staging wave", "", func(st rolloutState) bool {
		if st.wave == "canary" {
			return true
		}
		said = st.message
		return st.holds(to, "wave staging has no Cluster that follows the environment") && st.wave == "production"
	}); err != nil {
		return "", err
	}
	if err := s.applyRolloutEnv(fixed); err != nil {
		return "", err
	}
	fmt.Printf("  %s with staging's namespaces misspelt: staging's Clusters counted in production, which held: %q; the namespaces fixed\n", to, said)
	return fmt.Sprintf("staging misspelt held production (%q)", said), nil
}

// functionTTLs are the function's response TTLs, read from its command
// line (run.sh's start-function.sh and FN_ARGS): the flags' defaults when
// it sets none.
type functionTTLs struct{ converging, ready, gated time.Duration }

// functionTTLs reads the running function's flags.
func (s *scenarios) functionTTLs() (functionTTLs, error) {
	t := functionTTLs{converging: 15 * time.Second, ready: 5 * time.Minute, gated: 5 * time.Minute}
	pid, err := s.pidOf("function")
	if err != nil {
		return t, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return t, fmt.Errorf("cannot read the function's command line: %w", err)
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	for i, a := range args {
		for flag, d := range map[string]*time.Duration{"--ttl-converging": &t.converging, "--ttl-ready": &t.ready, "--ttl-gated": &t.gated} {
			v, ok := strings.CutPrefix(a, flag+"=")
			if !ok && a == flag && i+1 < len(args) {
				v, ok = args[i+1], true
			}
			if !ok {
				continue
			}
			if *d, err = time.ParseDuration(v); err != nil {
				return t, fmt.Errorf("cannot read the function's %s %q: %w", flag, v, err)
			}
		}
	}
	return t, nil
}

// reruns is how many times Crossplane may have re-run an XR by time alone
// between from and to, its TTL ttl counted from its last write last (a
// reconcile that wrote it; the TTL runs from the last reconcile, which is
// that one or a later one): Crossplane requeues after the TTL less up to
// 10% (its jitter).
func reruns(last, from, to time.Duration, ttl time.Duration) int {
	least := time.Duration(float64(ttl) * 0.9)
	first := last + least
	if least <= 0 || first > to {
		return 0
	}
	return 1 + int(math.Floor(float64(to-max(first, from))/float64(least)))
}

// rolloutQuiet counts, for d, while production waits for its approval
// and canary and staging run the target Ready, the RunFunction calls the
// function served (the function's own counter: the rollout's are the
// only XRs then, any other is allowed its shortest TTL) and the writes of
// the rollout's XRs, control planes, rulings and environment (from rec).
// A waiting Cluster is written nothing and its ruling is not rewritten,
// and the calls are no more than the XRs' TTLs allow, counted from each
// one's last write (--ttl-gated for the waiting ones, --ttl-ready for the
// others), plus two per write seen (a watch event re-runs an XR, and may
// take a second call for its requirements). It returns what it counted.
func (s *scenarios) rolloutQuiet(rec *rolloutRecord, d time.Duration) (string, error) {
	ttl, err := s.functionTTLs()
	if err != nil {
		return "", err
	}
	others, err := s.otherXRs()
	if err != nil {
		return "", err
	}
	// Canary and staging may still be settling (the last of their
	// composed resources reporting, their conditions following): the
	// window begins once nothing of the rollout was written for
	// rolloutSettled, or after a minute at the most.
	rec.settle(rolloutSettled, time.Minute)
	calls0, _, _, err := runFunctionLatency(s.metrics)
	if err != nil {
		return "", err
	}
	from := time.Since(rec.start)
	time.Sleep(d)
	calls1, _, _, err := runFunctionLatency(s.metrics)
	if err != nil {
		return "", err
	}
	to := time.Since(rec.start)
	// The watches may be an instant behind.
	time.Sleep(time.Second)
	last := map[string]time.Duration{}
	writes := map[string]int{}
	rulings := map[string]int{}
	events := 0
	for _, e := range rec.sorted() {
		if !e.write() || e.at > to {
			continue
		}
		if e.xr != nil && e.at > last[e.of] {
			last[e.of] = e.at
		}
		if e.at <= from {
			continue
		}
		events++
		switch {
		case e.xr != nil:
			writes[e.of]++
		case e.ruling:
			rulings[e.of]++
		}
	}
	allowed := others * reruns(0, from, to, min(ttl.converging, ttl.ready, ttl.gated))
	var waitWrites, waitRulings int
	for _, c := range rolloutFleet {
		t := ttl.ready
		if c.wave == "production" {
			t = ttl.gated
			waitWrites += writes[c.key()]
			waitRulings += rulings[c.key()]
		}
		allowed += reruns(last[c.key()], from, to, t)
	}
	calls := int(calls1 - calls0)
	said := fmt.Sprintf("while production waited %s for its approval: %d RunFunction calls (at most %d: the XRs' TTLs, --ttl-gated %s and --ttl-ready %s, allow %d, and %d writes were seen), %d writes of the waiting Clusters, %d of their rulings",
		d, calls, allowed+2*events, ttl.gated, ttl.ready, allowed, events, waitWrites, waitRulings)
	fmt.Println("  " + said)
	switch {
	case waitWrites > 0 || waitRulings > 0:
		return "", fmt.Errorf("a Cluster waiting for its approval was written: %s", said)
	case calls > allowed+2*events:
		return "", fmt.Errorf("the waiting Clusters were re-run by time alone more often than their TTLs allow: %s", said)
	}
	return fmt.Sprintf("waiting %s for approval: %d RunFunction calls, %d writes of the waiting Clusters", d, calls, waitWrites), nil
}

// otherXRs counts the XRs other than the rollout's that exist: their
// RunFunction calls count with the rollout's.
func (s *scenarios) otherXRs() (int, error) {
	n := 0
	for _, k := range []kindRef{
		{"platform.example.org/v1alpha1", "Cluster"}, {"platform.example.org/v1alpha1", "Database"}, {"platform.example.org/v1alpha1", "AppEnvironment"},
		{"platform.example.org/v1alpha1", "WorkloadBudget"}, {"legacy.platform.example.org/v1alpha1", "XCluster"}, {"legacy.platform.example.org/v1alpha1", "XDatabase"},
		{"legacy.platform.example.org/v1alpha1", "XAppEnvironment"},
	} {
		items, err := s.k.list(k.apiVersion, k.kind, "", "")
		if err != nil {
			return 0, err
		}
		n += len(items)
	}
	return n - len(rolloutFleet), nil
}

// watchResumed calls fn with every object of a kind (across namespaces,
// with a label selector) as a list brings it (LISTED), then with every
// event of one watch after the other, each resumed from the last resource
// version seen (bookmarks included), so that no write is missed between
// them; it lists again only when the API server no longer has that
// version (410 Gone). listed, when set, is called after the first list.
// It returns ctx's error.
func (k *kube) watchResumed(ctx context.Context, apiVersion, kind, selector string, fn func(typ string, o object), listed func()) error {
	ri, err := k.resource(apiVersion, kind)
	if err != nil {
		return err
	}
	lister, watcher := k.dyn.Resource(ri.gvr), k.watcher.Resource(ri.gvr)
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			if rv, err = listEach(ctx, lister, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"}, func(o object) { fn("LISTED", o) }); err != nil {
				fmt.Printf("watch %s: %v\n", kind, err)
				sleepCtx(ctx, time.Second)
				continue
			}
			if listed != nil {
				listed()
				listed = nil
			}
		}
		next, err := resume(ctx, watcher, selector, rv, fn)
		switch {
		case err != nil && ctx.Err() == nil:
			fmt.Printf("watch %s: %v\n", kind, err)
			sleepCtx(ctx, time.Second)
		case err == nil:
			rv = next
		}
	}
	return ctx.Err()
}

// resume watches from a resource version for at most resync, calls fn
// with each event's type and object, and returns the last resource
// version seen, "" when the API server no longer has rv.
func resume(ctx context.Context, c dynamic.ResourceInterface, selector, rv string, fn func(string, object)) (string, error) {
	timeout := int64(resync.Seconds())
	w, err := c.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return rv, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		switch {
		case ev.Type == watch.Error:
			// Most often 410 Gone: the resource version is too old.
			return "", nil
		case !ok:
		case ev.Type == watch.Bookmark:
			rv = u.GetResourceVersion()
		default:
			rv = u.GetResourceVersion()
			fn(string(ev.Type), plain(u))
		}
	}
	return rv, nil
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
