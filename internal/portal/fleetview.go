package portal

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// FleetView is what GET /api/v1/fleet answers, and each event of its
// stream carries: the environment's target and, per wave in order, its
// gate and the Clusters the user may see, per cloud, each with the fleet
// controller's ruling on it.
type FleetView struct {
	// Target is the Kubernetes minor the baseline asks for (version).
	Target string `json:"target"`
	// Charts are the chart catalog's versions it asks for, by chart,
	// gated with the minor (cluster.Settings.RolloutTarget).
	Charts map[string]string `json:"charts,omitempty"`
	// Sources are the baseline EnvironmentConfigs read.
	Sources []string `json:"sources"`
	// Rollout is whether the environment sets waves (rollout.waves).
	Rollout bool `json:"rollout"`
	// Message says, without waves, that every Cluster moves at once,
	// what is wrong with the rollout keys, and that the XClusters could
	// not be read.
	Message string `json:"message,omitempty"`
	// Waves are the waves in order; without waves, one of every Cluster.
	Waves []WaveView `json:"waves"`
	// Release is the platform release the fleet moves to over the same
	// waves, when the baseline sets release keys (rollout.release).
	Release *ReleaseView `json:"release,omitempty"`

	// wake is the earliest time a soak that holds a Cluster, an XR or a
	// gate ends: the view changes then, though nothing of the fleet does.
	wake time.Time
}

// WaveSettings are a wave's keys as the environment sets them
// (rollout.waves[]), which the version rollout and a platform release
// share.
type WaveSettings struct {
	Name             string   `json:"name"`
	Namespaces       []string `json:"namespaces,omitempty"`
	MaxUnavailable   int      `json:"maxUnavailable"`
	RequiresApproval bool     `json:"requiresApproval"`
	// Soak is how long the later waves wait once the wave runs the
	// target Ready (rollout.waves[].soak).
	Soak string `json:"soak,omitempty"`
}

// settingsOf are wave w's settings.
func settingsOf(w rollout.Wave) WaveSettings {
	return WaveSettings{Name: w.Name, Namespaces: w.Namespaces, MaxUnavailable: w.MaxUnavailable, RequiresApproval: w.RequiresApproval, Soak: w.Soak}
}

// WaveView is one wave: its settings, its gate, its Clusters per cloud.
type WaveView struct {
	WaveSettings
	// Approved is whether the environment approves each change its
	// Clusters still make (rollout.Wave.Unapproved).
	Approved bool `json:"approved"`
	// Gate is what the wave waits for before its Clusters adopt the
	// target.
	Gate GateView `json:"gate"`
	// Done and Total count the wave's Clusters the user may see: those
	// that run their target (the one each reports, else the baseline's)
	// and are Ready, and all.
	Done   int         `json:"done"`
	Total  int         `json:"total"`
	Clouds []CloudView `json:"clouds"`
}

// GateView is rollout.GateOf's decision, on the rollout package's Fleet
// of every Cluster of both kinds at the portal's clock, for a Cluster of
// the wave that does not run the target yet: the target the wave's
// Clusters the user may see report (rollout.WantsOf; the first in
// namespace/name order that has not adopted it, else the baseline's),
// asked for from what the wave's Clusters ask for (rollout.AsksOf). It
// says the verdict, the changes it makes, the Clusters of earlier waves
// it waits for that the user may see, and how many it may not.
type GateView struct {
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	// Target is the target the gate is for (rollout.Target.String).
	Target string `json:"target,omitempty"`
	// Changes are the changes the wave's Clusters still make, as
	// approvals name them: the minor ("1.34") and each chart's move
	// ("cert-manager=v1.19.2"); Unapproved those of them that wait for
	// approval, when the wave requires it.
	Changes    []string      `json:"changes"`
	Unapproved []string      `json:"unapproved,omitempty"`
	WaitsFor   []ClusterView `json:"waitsFor"`
	Hidden     int           `json:"hidden"`
	Failed     *ClusterView  `json:"failed,omitempty"`
	// Until is when the soak that holds the wave ends (RFC 3339), when
	// one does and its end is known.
	Until string `json:"until,omitempty"`
}

// CloudView is a wave's Clusters on one cloud.
type CloudView struct {
	Cloud    string        `json:"cloud"`
	Clusters []ClusterView `json:"clusters"`
}

// ClusterView is one Cluster as its status reports it (rollout.MemberOf),
// with the fleet controller's ruling on it (fleet.Rule).
type ClusterView struct {
	// Kind is Cluster, or XCluster for a legacy one; Namespace is, for
	// an XCluster, its claim's ("" for one of no claim).
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Cloud     string `json:"cloud"`
	// Label is its wave label, when it names another wave than the one
	// the environment counts it in.
	Label string `json:"label,omitempty"`
	// ControlPlane is the control plane's minor; Pools its pools.
	ControlPlane string     `json:"controlPlane"`
	Pools        []PoolView `json:"pools"`
	// Runs and Asks are rollout.Member's Kubernetes minors.
	Runs string `json:"runs"`
	Asks string `json:"asks"`
	// Charts are the chart versions its releases run (status.charts).
	Charts map[string]string `json:"charts,omitempty"`
	// Pinned is set when its XR pins its version
	// (spec.parameters.version): it is out of the rollout.
	Pinned   bool   `json:"pinned,omitempty"`
	Ready    bool   `json:"ready"`
	Failed   bool   `json:"failed"`
	Stale    bool   `json:"stale,omitempty"`
	Deleting bool   `json:"deleting,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Phase and Step are status.upgrade's.
	Phase string `json:"phase,omitempty"`
	Step  string `json:"step,omitempty"`
	// Target is the target it reports it is asked for
	// (status.rollout: rollout.WantsOf), "" when it reports none.
	Target string `json:"target,omitempty"`
	// Verdict, Message and Until are the fleet controller's ruling on it
	// (fleet.Rule: the same decision, from the same Clusters and
	// baseline, at the portal's clock): Adopt, Keep, Hold, Halt or
	// Approval. A Cluster that pins its version says Pinned; one that
	// reports no target is ruled on by no one, and says nothing.
	Verdict string `json:"verdict,omitempty"`
	Message string `json:"message,omitempty"`
	Until   string `json:"until,omitempty"`
}

// PoolView is a node pool as status.nodePools reports it.
type PoolView struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Ready   bool   `json:"ready"`
}

// noWaves is the message of an environment without waves.
const noWaves = "The environment sets no rollout waves (rollout.waves): every Cluster adopts the target at once."

// ViewOf is the fleet view of clusters (Cluster and XCluster XRs, in any
// order) under the baseline EnvironmentConfigs among configs, at now, as
// a user who may list Clusters in the namespaces visible admits sees it:
// what GET /api/v1/fleet answers from the informers' objects, and what a
// test holds against the function's own status.rollout.
func ViewOf(configs, clusters []*unstructured.Unstructured, visible func(ns string) bool, now time.Time) FleetView {
	objs := make([]map[string]any, 0, len(configs))
	for _, c := range configs {
		objs = append(objs, c.Object)
	}
	return buildView(fleet.BaselineOf(objs), clusters, visible, now)
}

// entry is a Cluster of the view: its object, what its status says
// (rollout.MemberOf), and the target it reports (rollout.WantsOf).
type entry struct {
	obj     *unstructured.Unstructured
	m       rollout.Member
	wants   rollout.Target
	reports bool
}

// buildView is the fleet as a user sees it at now: clusters of namespaces
// that visible refuses are not shown, and a gate counts, not names, those
// it waits for. Which wave a Cluster is in is rollout.WaveOf's: its label
// only where the environment admits its namespace. Each Cluster's verdict
// is fleet.Rule's, decided on every Cluster, seen or not, as the fleet
// controller decides it.
func buildView(b fleet.Baseline, clusters []*unstructured.Unstructured, visible func(ns string) bool, now time.Time) FleetView {
	view := FleetView{Target: b.Target.Kubernetes, Charts: b.Target.Charts, Sources: b.Sources, Rollout: len(b.Settings.Waves) > 0, Waves: []WaveView{}}
	waves := b.Settings.Waves
	switch {
	case len(b.Problems) > 0:
		view.Message = "The rollout keys are invalid, so no waves are shown: " + fmt.Sprint(b.Problems)
	case !view.Rollout:
		view.Message = noWaves
	}
	if len(b.Sources) == 0 {
		view.Message = "No baseline EnvironmentConfig (" + BaselineSelector + "): no target, no waves."
	}
	if len(waves) == 0 {
		waves = []rollout.Wave{{}}
	}
	entries := make([]entry, 0, len(clusters))
	objs := make([]map[string]any, 0, len(clusters))
	for _, c := range clusters {
		e := entry{obj: c, m: rollout.MemberOf(c.Object)}
		e.wants, e.reports = rollout.WantsOf(c.Object)
		entries = append(entries, e)
		objs = append(objs, c.Object)
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.m.Key(), b.m.Key()) })
	members := make([]rollout.Member, 0, len(entries))
	for _, e := range entries {
		members = append(members, e.m)
	}
	rulings := map[rollout.Ref]rollout.Ruling{}
	rs, _ := fleet.Rule(b, objs, now) // a baseline with problems rules on nothing, and Message says why
	for _, r := range rs {
		rulings[r.Cluster] = r
		view.wake = earlier(view.wake, r.Until)
	}

	byWave := make([][]ClusterView, len(waves))
	done := make([]int, len(waves))
	// gateTarget is, per wave, the target its gate is for: the first
	// Cluster the user may see that reports one it has not adopted, else
	// the first that reports one.
	gateTarget := make([]*rollout.Target, len(waves))
	adopted := make([]bool, len(waves))
	byKey := make(map[string]*unstructured.Unstructured, len(entries))
	for _, e := range entries {
		byKey[e.m.Key()] = e.obj
		if !visible(e.m.Namespace) {
			continue
		}
		i := rollout.WaveOf(waves, e.m)
		own := b.Target
		if e.reports {
			own = e.wants
			if moving := !e.m.Pinned && !e.m.Deleting && !e.m.Asks.Equal(own) && !e.m.Runs.Holds(own); gateTarget[i] == nil || (adopted[i] && moving) {
				gateTarget[i], adopted[i] = &own, !moving
			}
		}
		if e.m.Done(own) {
			// What the gate counts done (rollout.Member.Done): a newer
			// minor proves the target too.
			done[i]++
		}
		cv := clusterView(e.obj, e.m)
		if e.m.Wave != waves[i].Name {
			cv.Label = e.m.Wave
		}
		if e.reports {
			cv.Target = e.wants.String()
		}
		switch r, ok := rulings[rollout.RefOf(e.obj.Object)]; {
		case ok:
			cv.Verdict, cv.Message, cv.Until = string(r.Verdict), r.Message, timeString(r.Until)
		default:
			// Not gated (Adopt, Keep) or pinned: no ruling, and the
			// Cluster's own status.rollout says what it does.
			cv.Verdict, _, _ = unstructured.NestedString(e.obj.Object, "status", "rollout", "verdict")
			if e.m.Pinned {
				cv.Verdict = string(rollout.Pinned)
			}
			cv.Message, _, _ = unstructured.NestedString(e.obj.Object, "status", "rollout", "message")
		}
		byWave[i] = append(byWave[i], cv)
	}
	for i, w := range waves {
		target := b.Target
		if t := gateTarget[i]; t != nil {
			target = *t
		}
		// The portal does not know what the environment asked before, as
		// preview --fleet does: the gate's Cluster asks for what the
		// wave's Clusters ask for (rollout.AsksOf), so that the changes
		// approvals must name are those one of them has still to make.
		from := rollout.AsksOf(b.Settings.Waves, i, target, members)
		wv := WaveView{
			WaveSettings: settingsOf(w),
			Approved:     len(w.Approved) > 0 && len(w.Unapproved(target, from)) == 0, Total: len(byWave[i]), Clouds: clouds(byWave[i]),
		}
		wv.Done = done[i]
		var until time.Time
		wv.Gate, until = gate(b, i, from, target, members, byKey, visible, now)
		view.wake = earlier(view.wake, until)
		view.Waves = append(view.Waves, wv)
	}
	return view
}

// earlier is the earlier of two times, zero meaning none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// timeString is t in RFC 3339, "" when zero.
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// gate is what wave i waits for (rollout.GateOf) at now, for a Cluster
// that asks for from and is asked for target, and when the soak that
// holds it ends (zero when none does).
func gate(b fleet.Baseline, i int, from, target rollout.Target, members []rollout.Member, byKey map[string]*unstructured.Unstructured, visible func(string) bool, now time.Time) (GateView, time.Time) {
	if target.Kubernetes == "" {
		return GateView{Message: "The environment sets no version: there is nothing to roll out.", Changes: []string{}, WaitsFor: []ClusterView{}}, time.Time{}
	}
	d := rollout.GateOf(b.Settings.Waves, i, from, target, members, visible, now)
	g := GateView{
		Verdict: string(d.Verdict), Message: d.Message, Target: target.String(), Changes: target.Changes(from),
		WaitsFor: make([]ClusterView, 0, len(d.WaitsFor)), Hidden: d.Hidden, Until: timeString(d.Until),
	}
	if g.Changes == nil {
		g.Changes = []string{}
	}
	if w := b.Settings.Waves; i < len(w) && w[i].RequiresApproval {
		g.Unapproved = w[i].Unapproved(target, from)
	}
	find := func(m rollout.Member) ClusterView { return clusterView(byKey[m.Key()], m) }
	for _, m := range d.WaitsFor {
		g.WaitsFor = append(g.WaitsFor, find(m))
	}
	if d.Failed != nil {
		f := find(*d.Failed)
		g.Failed = &f
	}
	return g, d.Until
}

// clusterView is a Cluster for the page.
func clusterView(c *unstructured.Unstructured, m rollout.Member) ClusterView {
	cv := ClusterView{
		Kind: c.GetKind(), Name: m.Name, Namespace: m.Namespace, Cloud: m.Cloud, Runs: m.Runs.Kubernetes, Asks: m.Asks.Kubernetes, Charts: m.Runs.Charts,
		Pinned: m.Pinned, Ready: m.Ready, Failed: m.Failed, Stale: m.Stale, Deleting: m.Deleting, Reason: m.Reason, Pools: []PoolView{},
	}
	cp, _, _ := unstructured.NestedString(c.Object, "status", "upgrade", "controlPlane")
	cv.ControlPlane = rollout.Minor(cp)
	cv.Phase, _, _ = unstructured.NestedString(c.Object, "status", "upgrade", "phase")
	cv.Step, _, _ = unstructured.NestedString(c.Object, "status", "upgrade", "step")
	pools, _, _ := unstructured.NestedSlice(c.Object, "status", "nodePools")
	for _, p := range pools {
		pm, _ := p.(map[string]any)
		name, _ := pm["name"].(string)
		version, _ := pm["version"].(string)
		ready, _ := pm["ready"].(bool)
		cv.Pools = append(cv.Pools, PoolView{Name: name, Version: version, Ready: ready})
	}
	return cv
}

// errNoFleet is a user who may list Clusters in none of the namespaces
// that hold some, nor any XR of a platform release.
var errNoFleet = errors.New("may list Clusters in none of the namespaces that hold them, nor any XR of the platform release")

// viewFor is the fleet as user u sees it, waiting at most 10 s for the
// informers' first lists.
func (s *Server) viewFor(ctx context.Context, u *User) (FleetView, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Fleet.synced(ctx); err != nil {
		return FleetView{}, err
	}
	clusters, configs, unread := s.Fleet.state()
	vis, err := s.Fleet.visible(ctx, s.Authz, u, clusters)
	if err != nil {
		return FleetView{}, err
	}
	objs := make([]map[string]any, 0, len(configs))
	for _, c := range configs {
		objs = append(objs, c.Object)
	}
	b := fleet.BaselineOf(objs)
	// The XRs of the release, of every kind, and what the user may see
	// of them: only reviewed when the baseline names a release.
	var xrs, claims, revisions []*unstructured.Unstructured
	var unreadRelease []string
	var acc map[Access]bool
	if b.Settings.Release != nil {
		xrs, claims, revisions, unreadRelease = s.Fleet.releaseState()
		xrs = append(slices.Clone(clusters), xrs...)
		if acc, err = s.Fleet.reviews(ctx, s.Authz, u, xrs); err != nil {
			return FleetView{}, err
		}
	}
	if (len(vis) > 0 || len(acc) > 0) && !slices.Contains(slices.Collect(maps.Values(vis)), true) && !slices.Contains(slices.Collect(maps.Values(acc)), true) {
		return FleetView{}, errNoFleet
	}
	now := s.Fleet.now()
	view := buildView(b, clusters, func(ns string) bool { return vis[ns] }, now)
	var wake time.Time
	view.Release, wake = releaseView(b, xrs, claims, revisions, func(x *unstructured.Unstructured) bool { return acc[listAccess(x)] }, unreadRelease, now)
	view.wake = earlier(view.wake, wake)
	if unread != "" {
		// Fail loudly, not closed: the Clusters are shown, and the page
		// says that the legacy XClusters, which the controller reads, are
		// missing from them and from the verdicts.
		view.Message = strings.TrimSpace(view.Message + " The portal cannot list the legacy XClusters, so they are not shown and the gates and verdicts here leave them out (the fleet controller's own rulings do not): " + unread)
	}
	return view, nil
}

// fleetError answers a view that could not be built.
func (s *Server) fleetError(w http.ResponseWriter, u *User, err error) {
	if errors.Is(err, errNoFleet) {
		writeError(w, http.StatusForbidden, u.Name+" "+err.Error(), nil)
		return
	}
	s.Log.Error("cannot show the fleet", "user", u.Name, "error", err)
	writeError(w, http.StatusServiceUnavailable, "cannot read the fleet: "+err.Error(), nil)
}

// fleet answers the fleet view.
func (s *Server) fleet(w http.ResponseWriter, r *http.Request, u *User) {
	view, err := s.viewFor(r.Context(), u)
	if err != nil {
		s.fleetError(w, u, err)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// fleetEvents streams the fleet view: an event "fleet" with the whole
// view first, then one each time what the user sees changes. Each is
// built from the shared informers and the user's access reviews, which
// are remembered for FleetAccessTTL: a permission revoked takes effect
// within it. A viewer that reconnects gets the whole view again.
func (s *Server) fleetEvents(w http.ResponseWriter, r *http.Request, u *User) {
	view, err := s.viewFor(r.Context(), u)
	if err != nil {
		s.fleetError(w, u, err)
		return
	}
	rc, release, ok := s.openStream(w, u)
	if !ok {
		return
	}
	defer release()
	v, more := s.Fleet.Changed()
	last := s.Fleet.frameOf(v, view)
	more = s.Fleet.wakeAt(r.Context(), more, view.wake)
	next := func() ([][]byte, <-chan struct{}) {
		v, more := s.Fleet.Changed()
		view, err := s.viewFor(r.Context(), u)
		more = s.Fleet.wakeAt(r.Context(), more, view.wake)
		switch {
		case errors.Is(err, errNoFleet):
			// The user may no longer list any namespace's Clusters: the
			// stream ends, and the page's reconnect gets the 403.
			return nil, nil
		case err != nil:
			// Fail closed: a view that cannot be checked is not sent.
			s.Log.Error("cannot show the fleet", "user", u.Name, "error", err)
			return nil, more
		}
		f := s.Fleet.frameOf(v, view)
		if bytes.Equal(stripID(f), stripID(last)) {
			return nil, more
		}
		last = f
		return [][]byte{f}, more
	}
	s.pump(w, r, rc, [][]byte{last}, more, next)
}

// wakeAt is a channel closed when changed is, or at t by the portal's
// clock (a soak ends then, and with it a hold, though nothing of the
// fleet changes), or with ctx. Without t it is changed.
func (f *Fleet) wakeAt(ctx context.Context, changed <-chan struct{}, t time.Time) <-chan struct{} {
	if t.IsZero() {
		return changed
	}
	// At least a second: the soak has ended when the view is next built.
	d := max(t.Sub(f.now()), time.Second)
	out := make(chan struct{})
	go func() {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
		}
		close(out)
	}()
	return out
}

// stripID is an event without its id line, to tell a change of what the
// user sees from a change of the fleet's version alone.
func stripID(f []byte) []byte {
	if i := bytes.IndexByte(f, '\n'); i >= 0 {
		return f[i+1:]
	}
	return f
}
