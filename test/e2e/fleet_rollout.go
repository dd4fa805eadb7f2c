package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// The fleet's rollout (make fleet, unless FLEET_ROLLOUT=0): once the fleet
// is Ready, the environment's minor is raised and followed across the
// fleet's waves (canary, staging, production, which requires approval),
// each wave measured: its time, the RunFunction calls, the writes per
// Cluster and the API server's CPU per XR.

// fleetOpts are how make fleet runs the fleet (run.sh's flags).
type fleetOpts struct {
	// work is run.sh's work folder, metrics the function's metrics.
	work, metrics string
	// idle, when not 0, measures the fleet at rest for that long once
	// all are Ready.
	idle time.Duration
	// faults injects the faults at the end.
	faults bool
	// rollout runs the rollout across the waves once the fleet is Ready
	// (and at rest), before the faults, within rolloutTimeout.
	rollout        bool
	rolloutTimeout time.Duration
	// restXPArgs, when not empty, are flags Crossplane core is restarted
	// with before the fleet is measured at rest (say, its own default
	// circuit breaker, which the convergence's compressed events would
	// trip): they come last, so they win over run.sh's.
	restXPArgs string
}

// fleetWaves are the waves of the fleet's rollout, in order.
var fleetWaves = []string{"canary", "staging", "production"}

// fleetWaveNamespace is where the fleet's XRs are (the examples'
// namespace): the namespaces canary and staging admit.
const fleetWaveNamespace = "platform"

// fleetBaselineName is the baseline EnvironmentConfig of the examples,
// which holds the fleet's waves and the version it raises.
const fleetBaselineName = "cluster-platform-baseline"

// fleetRef is an XR of the fleet as a ruling names it ("Cluster
// platform/prod-cluster-gcp0", "XCluster search-gcp0").
func fleetRef(kind, namespace, name string) string {
	return rollout.Ref{Kind: kind, Namespace: namespace, Name: name}.String()
}

// withWaves gives each Cluster of the fleet its wave label and takes off
// the examples' version pin (a pinned Cluster is left out of a rollout),
// and returns each one's wave by fleetRef. In each group of ten, the GCP,
// AWS and Azure Clusters take the three waves in turn, shifted by one
// each group, so that every wave has Clusters of every cloud; the legacy
// XCluster, which has no namespace that canary's or staging's admits, is
// production's. A quarter of the Clusters are canary, a quarter staging,
// half production.
func withWaves(xrs []*fleetXR) map[string]string {
	namespaced := []string{"gcp/cluster.yaml", "aws/cluster.yaml", "azure/cluster.yaml"}
	out := map[string]string{}
	for i, x := range xrs {
		g, p := i/len(fleetPattern), fleetPattern[i%len(fleetPattern)]
		var wave string
		switch j := slices.Index(namespaced, p.example); {
		case j >= 0:
			wave = fleetWaves[(j+g)%len(fleetWaves)]
		case p.example == "gcp/legacy.yaml":
			wave = fleetWaves[len(fleetWaves)-1]
		default:
			continue
		}
		meta := x.obj["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels[rollout.Label] = wave
		delete(x.obj["spec"].(map[string]any)["parameters"].(map[string]any), "version")
		out[fleetRef(x.kind, x.namespace, x.name)] = wave
	}
	return out
}

// waveCounts says how many Clusters each wave has.
func waveCounts(waves map[string]string) string {
	n := map[string]int{}
	for _, w := range waves {
		n[w]++
	}
	out := make([]string, 0, len(fleetWaves))
	for _, w := range fleetWaves {
		out = append(out, fmt.Sprintf("%s %d", w, n[w]))
	}
	return strings.Join(out, ", ") + " Clusters"
}

// fleetBaseline is the examples' baseline EnvironmentConfig with the
// fleet's waves: canary and staging admit the fleet's namespace, production
// every namespace and requires approval, given for approved. version, when
// not empty, replaces its version.
func fleetBaseline(examples, version string, approved []string) object {
	for _, o := range fntest.MustLoad(filepath.Join(examples, "envconfigs")) {
		if str(o, "metadata", "name") != fleetBaselineName {
			continue
		}
		o = overlay.DeepCopy(o)
		data := o["data"].(map[string]any)
		if version != "" {
			data["version"] = version
		}
		prod := map[string]any{"name": "production", "requiresApproval": true}
		if len(approved) > 0 {
			prod["approved"] = anyList(approved)
		}
		data["rollout"] = map[string]any{"waves": []any{
			map[string]any{"name": "canary", "namespaces": []any{fleetWaveNamespace}},
			map[string]any{"name": "staging", "namespaces": []any{fleetWaveNamespace}},
			prod,
		}}
		return o
	}
	panic("no EnvironmentConfig " + fleetBaselineName + " in " + examples + "/envconfigs")
}

// applyFleetBaseline applies the baseline EnvironmentConfig, and keeps it
// for the faults to apply again (dropEnvironment).
func (s *scenarios) applyFleetBaseline(o object) error {
	if err := s.k.apply(o); err != nil {
		return err
	}
	if s.env == nil {
		s.env = map[string]object{}
	}
	s.env[str(o, "metadata", "name")] = o
	return nil
}

// fleetWrite is one write of a Cluster XR or of a ruling, as a watch saw
// it: for a Cluster's, the fields it changed (changedFields).
type fleetWrite struct {
	at     time.Duration
	ref    string
	fields []string
}

// waveWatch follows the fleet's Clusters (both kinds, by their wave label)
// and the fleet controller's rulings through a rollout, from their
// watches: each Cluster's state, every write, and for the target, the
// resource version at which each Cluster first asked for it and at which
// each wave was all done.
type waveWatch struct {
	mu      sync.Mutex
	start   time.Time
	to      string
	waves   map[string]string
	states  map[string]rolloutState
	last    map[string]object
	writes  []fleetWrite
	rulings []fleetWrite
	// asked is the resource version of each Cluster's first event with
	// status.upgrade.target at to; done that of the event after which
	// every Cluster of a wave ran to Ready.
	asked, done map[string]int64
}

// fleetDone reports whether a fleet Cluster runs to: Ready, the control
// plane and every pool that reports a version on to (GKE's pools on a
// release channel report none: GKE moves them).
func fleetDone(st rolloutState, to string) bool {
	if !st.ready || st.target != to || st.controlPlane != to {
		return false
	}
	for _, p := range st.pools {
		if p != "" && p != to {
			return false
		}
	}
	return true
}

// observe records one watch event of a Cluster.
func (w *waveWatch) observe(typ string, o object) {
	if typ == "DELETED" {
		return
	}
	ref := fleetRef(str(o, "kind"), str(o, "metadata", "namespace"), str(o, "metadata", "name"))
	rv, _ := strconv.ParseInt(str(o, "metadata", "resourceVersion"), 10, 64)
	st := rolloutStateOf(o)
	w.mu.Lock()
	defer w.mu.Unlock()
	wave, ok := w.waves[ref]
	if !ok {
		return
	}
	w.states[ref] = st
	if prev, ok := w.last[ref]; ok && typ != "LISTED" {
		fields := changedFields(prev, o)
		if len(fields) == 0 {
			fields = []string{bookkeeping(prev, o)}
		}
		w.writes = append(w.writes, fleetWrite{time.Since(w.start), ref, fields})
	}
	w.last[ref] = o
	if st.target == w.to && w.asked[ref] == 0 {
		w.asked[ref] = rv
	}
	if w.done[wave] != 0 || !fleetDone(st, w.to) {
		return
	}
	for r, wv := range w.waves {
		if wv == wave && !fleetDone(w.states[r], w.to) {
			return
		}
	}
	w.done[wave] = rv
}

// watchWaves starts following the fleet's Clusters of waves and the
// rulings for the rollout to to, until ctx ends; it returns once every
// Cluster was listed.
func (s *scenarios) watchWaves(ctx context.Context, waves map[string]string, to string) (*waveWatch, error) {
	w := &waveWatch{start: time.Now(), to: to, waves: waves, states: map[string]rolloutState{}, last: map[string]object{}, asked: map[string]int64{}, done: map[string]int64{}}
	for _, k := range []kindRef{clusterXR, {"legacy.platform.example.org/v1alpha1", "XCluster"}} {
		go s.k.watchResumed(ctx, k.apiVersion, k.kind, rollout.Label, w.observe, nil) //nolint:errcheck // ends with ctx
	}
	go s.k.watchResumed(ctx, rollout.RulingAPIVersion, rollout.RulingKind, rollout.LabelRuling+"=true", func(typ string, o object) { //nolint:errcheck // ends with ctx
		if typ != "ADDED" && typ != "MODIFIED" {
			return
		}
		w.mu.Lock()
		w.rulings = append(w.rulings, fleetWrite{at: time.Since(w.start), ref: str(o, "data", "cluster")})
		w.mu.Unlock()
	}, nil)
	_, err := s.waitFor("the fleet's Clusters listed", func() (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.states) == len(waves), fmt.Errorf("%d of %d listed", len(w.states), len(waves))
	})
	return w, err
}

// wait waits until every Cluster of wave ("" for all) meets cond, or the
// deadline passes, saying every 30 s how many do.
func (w *waveWatch) wait(what, wave string, deadline time.Time, cond func(rolloutState) bool) error {
	start, last := time.Now(), time.Now()
	for {
		w.mu.Lock()
		met, of, example := 0, 0, ""
		for ref, wv := range w.waves {
			if wave != "" && wv != wave {
				continue
			}
			of++
			if cond(w.states[ref]) {
				met++
			} else if example == "" || ref < example {
				example = ref
			}
		}
		st := w.states[example]
		w.mu.Unlock()
		if met == of {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s: %d of %d, not %s: %s", what, met, of, example, st)
		}
		if time.Since(last) > 30*time.Second {
			fmt.Printf("fleet rollout: %s: %d of %d after %.0f s\n", what, met, of, time.Since(start).Seconds())
			last = time.Now()
		}
		time.Sleep(time.Second)
	}
}

// writesIn counts, of writes, those between from and to, by wave (of the
// Cluster a write is of, or rules on).
func (w *waveWatch) writesIn(writes []fleetWrite, from, to time.Duration) map[string]int {
	out := map[string]int{}
	for _, x := range writes {
		if x.at > from && x.at <= to {
			out[w.waves[x.ref]]++
		}
	}
	return out
}

// bookkeeping names what a write that changed no field (changedFields)
// changed: the managed fields' record, a condition's lastTransitionTime
// alone, or nothing at all.
func bookkeeping(a, b object) string {
	switch {
	case !reflect.DeepEqual(at(a, "metadata", "managedFields"), at(b, "metadata", "managedFields")):
		return "(metadata.managedFields alone)"
	case !reflect.DeepEqual(at(a, "status", "conditions"), at(b, "status", "conditions")):
		return "(a condition's lastTransitionTime alone)"
	}
	return "(nothing)"
}

// waitingFields says, of the writes between from and to of the Clusters
// of the waves after moving (every wave but canary when moving is ""),
// which fields they changed, per such Cluster, most often first.
func (w *waveWatch) waitingFields(moving string, from, to time.Duration) string {
	i := slices.Index(fleetWaves, moving)
	if moving == "" {
		i = 0
	}
	waiting, n := map[string]bool{}, 0
	for _, wv := range fleetWaves[i+1:] {
		waiting[wv] = true
	}
	for _, wv := range w.waves {
		if waiting[wv] {
			n++
		}
	}
	count := map[string]int{}
	for _, x := range w.writes {
		if x.at > from && x.at <= to && waiting[w.waves[x.ref]] {
			for _, f := range x.fields {
				count[f]++
			}
		}
	}
	if n == 0 || len(count) == 0 {
		return "none"
	}
	names := slices.SortedFunc(maps.Keys(count), func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	out := make([]string, 0, 6)
	for _, f := range names[:min(6, len(names))] {
		out = append(out, fmt.Sprintf("%s %.1f", f, float64(count[f])/float64(n)))
	}
	return strings.Join(out, ", ")
}

// rolloutMark is the stack at one moment of the rollout.
type rolloutMark struct {
	at    time.Time
	since time.Duration
	r     stackReading
}

// fleetRollout raises the baseline's minor and follows the fleet across
// its waves: canary moves at once, staging once canary runs the new minor
// Ready, production once staging does and the environment approves it
// (given as soon as production waits for it); then every XR of the
// fleet must be Synced and Ready again. Each step is measured from the
// stack (RunFunction calls, CPU) and the watches (writes per Cluster by
// wave, rulings written). No Cluster of a wave may ask for the new minor
// before every Cluster of the wave before it runs it Ready, nor one of
// production before the approval. readyPerXR is the API server's CPU per
// XR the fleet took to become Ready, which the rollout's is set against.
func (s *scenarios) fleetRollout(xrs []*fleetXR, waves map[string]string, n int, readyPerXR float64, o fleetOpts) error {
	from := str(fleetBaseline(s.examples, "", nil), "data", "version")
	to := nextMinor(from)
	deadline := time.Now().Add(o.rolloutTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.watchWaves(ctx, waves, to)
	if err != nil {
		return err
	}
	mark := func() (rolloutMark, error) {
		r, err := s.readStack(o.work, o.metrics)
		return rolloutMark{at: time.Now(), since: time.Since(w.start), r: r}, err
	}
	var marks []rolloutMark
	step := func(err error) error {
		if err != nil {
			return err
		}
		m, err := mark()
		marks = append(marks, m)
		return err
	}
	fmt.Printf("fleet rollout: %s -> %s across %s\n", from, to, waveCounts(waves))
	if err := step(nil); err != nil {
		return err
	}
	if err := s.applyFleetBaseline(fleetBaseline(s.examples, to, nil)); err != nil {
		return err
	}
	done := func(st rolloutState) bool { return fleetDone(st, to) }
	if err := step(w.wait("canary on "+to, "canary", deadline, done)); err != nil {
		return err
	}
	if err := step(w.wait("staging on "+to, "staging", deadline, done)); err != nil {
		return err
	}
	if err := step(w.wait("production gated for approval", "production", deadline, func(st rolloutState) bool {
		return st.gatedBy("Approval") && st.wants == to && st.target == from
	})); err != nil {
		return err
	}
	if err := s.applyFleetBaseline(fleetBaseline(s.examples, to, []string{to})); err != nil {
		return err
	}
	env, err := s.k.get("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "", fleetBaselineName)
	if err != nil {
		return err
	}
	approvedRV, _ := strconv.ParseInt(str(env, "metadata", "resourceVersion"), 10, 64)
	if err := step(w.wait("production on "+to, "production", deadline, done)); err != nil {
		return err
	}
	timeout := s.timeout
	s.timeout = max(time.Until(deadline), time.Second)
	_, err = s.waitFleet(xrs, time.Now(), "Synced", "Ready")
	s.timeout = timeout
	if err := step(err); err != nil {
		return fmt.Errorf("after production moved to %s: %w", to, err)
	}
	// Give the watches an instant to catch up with the last writes.
	time.Sleep(time.Second)
	if err := w.order(approvedRV); err != nil {
		return err
	}
	report := w.report(n, from, to, marks, readyPerXR)
	fmt.Print(report)
	if o.work != "" {
		path := filepath.Join(o.work, "fleet-rollout.txt")
		if err := os.WriteFile(path, []byte(report), 0o600); err != nil {
			return fmt.Errorf("cannot write the rollout's report: %w", err)
		}
		fmt.Printf("  the rollout's report: %s\n", path)
	}
	return nil
}

// order checks, from the watches' resource versions, that no Cluster of a
// wave asked for the target before every Cluster of the wave before it ran
// it Ready, and none of production before its approval (approvedRV).
func (w *waveWatch) order(approvedRV int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, wave := range fleetWaves {
		gate, after := int64(0), ""
		if i > 0 {
			gate, after = w.done[fleetWaves[i-1]], "every Cluster of wave "+fleetWaves[i-1]+" ran it Ready"
			if gate == 0 {
				return fmt.Errorf("the watches saw wave %s never all on %s", fleetWaves[i-1], w.to)
			}
		}
		if wave == "production" && approvedRV > gate {
			gate, after = approvedRV, "its approval"
		}
		for ref, wv := range w.waves {
			if wv != wave {
				continue
			}
			asked := w.asked[ref]
			switch {
			case asked == 0:
				return fmt.Errorf("the watches saw %s (wave %s) never ask for %s", ref, wave, w.to)
			case asked <= gate:
				return fmt.Errorf("%s (wave %s) asked for %s at resource version %d, before %s at %d", ref, wave, w.to, asked, after, gate)
			}
		}
	}
	return nil
}

// report is the rollout's table, one row per step and one for the whole,
// and its summary line.
func (w *waveWatch) report(n int, from, to string, m []rolloutMark, readyPerXR float64) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	size := map[string]int{}
	for _, wv := range w.waves {
		size[wv]++
	}
	var b strings.Builder
	steps := []string{"canary: the raise until it runs " + to + " Ready", "staging: canary done until it runs " + to + " Ready",
		"production waits for its approval", "production: the approval until it runs " + to + " Ready", "every XR Synced and Ready again"}
	fmt.Fprintf(&b, "\nFLEET ROLLOUT N=%d: %s -> %s, %s\n", n, from, to, waveCounts(w.waves))
	fmt.Fprintf(&b, "  %-58s %8s %16s %26s %8s %12s %12s %10s\n", "step", "time s", "RunFunction", "writes per Cluster", "rulings", "apiserver", "Crossplane", "fleet ctl")
	fmt.Fprintf(&b, "  %-58s %8s %16s %26s %8s %12s %12s %10s\n", "", "", "calls (per XR)", "canary/staging/production", "written", "CPU s per XR", "CPU s per XR", "CPU s")
	row := func(name string, a, z rolloutMark) (api float64) {
		cpu := func(p string) float64 { return z.r.procs[p].cpu - a.r.procs[p].cpu }
		calls := z.r.calls - a.r.calls
		wr := w.writesIn(w.writes, a.since, z.since)
		ru := w.writesIn(w.rulings, a.since, z.since)
		per := func(wave string) float64 { return float64(wr[wave]) / float64(max(size[wave], 1)) }
		rulings := 0
		for _, c := range ru {
			rulings += c
		}
		api = cpu("kube-apiserver") / float64(n)
		fmt.Fprintf(&b, "  %-58s %8.1f %7.0f (%5.1f) %26s %8d %12.3f %12.3f %10.1f\n", name, z.at.Sub(a.at).Seconds(), calls, calls/float64(n),
			fmt.Sprintf("%.1f / %.1f / %.1f", per("canary"), per("staging"), per("production")), rulings, api, cpu("crossplane")/float64(n), cpu("fleet-controller"))
		return api
	}
	// The wave that moves in each step: the later ones wait.
	moving := []string{"canary", "staging", "staging", "production", "production"}
	var waits []string
	for i, name := range steps {
		row(name, m[i], m[i+1])
		if moving[i] != "production" {
			waits = append(waits, fmt.Sprintf("  %s: per Cluster of the waves after %s: %s\n", name, moving[i], w.waitingFields(moving[i], m[i].since, m[i+1].since)))
		}
	}
	api := row("the whole rollout", m[0], m[len(m)-1])
	b.WriteString("  what the writes of the Clusters that waited changed (fields, per waiting Cluster):\n")
	for _, l := range waits {
		b.WriteString("  " + l)
	}
	last := m[len(m)-1]
	allWrites := w.writesIn(w.writes, m[0].since, last.since)
	writes := 0
	for _, c := range allWrites {
		writes += c
	}
	rulings := 0
	for _, c := range w.writesIn(w.rulings, m[0].since, last.since) {
		rulings += c
	}
	fmt.Fprintf(&b, "FLEET ROLLOUT N=%d: %s -> %s across %d Clusters in 3 waves (%s) in %.0f s, all XRs Synced and Ready again: canary %.0f s, staging %.0f s, production %.0f s after its approval (held %.0f s for it); %.1f RunFunction calls per XR, %.1f writes per Cluster, %d rulings written; kube-apiserver %.2f CPU s per XR, %.2fx the %.2f the fleet took to become Ready (target: at most 1.5x)\n",
		n, from, to, len(w.waves), waveCounts(w.waves), last.at.Sub(m[0].at).Seconds(),
		m[1].at.Sub(m[0].at).Seconds(), m[2].at.Sub(m[1].at).Seconds(), m[4].at.Sub(m[3].at).Seconds(), m[3].at.Sub(m[2].at).Seconds(),
		(last.r.calls-m[0].r.calls)/float64(n), float64(writes)/float64(len(w.waves)), rulings, api, api/readyPerXR, readyPerXR)
	return b.String()
}
