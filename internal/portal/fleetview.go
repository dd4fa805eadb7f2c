package portal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// FleetView is what GET /api/v1/fleet answers, and each event of its
// stream carries: the environment's target and, per wave in order, its
// gate and the Clusters the user may see, per cloud.
type FleetView struct {
	// Target is the Kubernetes minor the environment asks for (version).
	Target string `json:"target"`
	// Charts are the chart catalog's versions it asks for, by chart,
	// gated with the minor (cluster.Settings.RolloutTarget).
	Charts map[string]string `json:"charts,omitempty"`
	// Sources are the baseline EnvironmentConfigs read.
	Sources []string `json:"sources"`
	// Rollout is whether the environment sets waves (rollout.waves).
	Rollout bool `json:"rollout"`
	// Message says, without waves, that every Cluster moves at once, and
	// what is wrong with the rollout keys.
	Message string `json:"message,omitempty"`
	// Waves are the waves in order; without waves, one of every Cluster.
	Waves []WaveView `json:"waves"`
}

// WaveView is one wave: its settings, its gate, its Clusters per cloud.
type WaveView struct {
	Name             string   `json:"name"`
	Namespaces       []string `json:"namespaces,omitempty"`
	MaxUnavailable   int      `json:"maxUnavailable"`
	RequiresApproval bool     `json:"requiresApproval"`
	// Approved is whether the environment approves each change its
	// Clusters still make (rollout.Wave.Unapproved).
	Approved bool `json:"approved"`
	// Gate is what the wave waits for before its Clusters adopt the
	// target.
	Gate GateView `json:"gate"`
	// Done and Total count the wave's Clusters the user may see: those
	// that run the target and are Ready, and all.
	Done   int         `json:"done"`
	Total  int         `json:"total"`
	Clouds []CloudView `json:"clouds"`
}

// GateView is rollout.Decide's decision for a Cluster of the wave that
// does not run the target yet and asks for what the wave's Clusters ask
// for (rollout.AsksOf): the verdict, the changes it makes, the Clusters
// of earlier waves it waits for that the user may see, and how many it
// may not.
type GateView struct {
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	// Changes are the changes the wave's Clusters still make, as
	// approvals name them: the minor ("1.34") and each chart's move
	// ("cert-manager=v1.19.2"); Unapproved those of them that wait for
	// approval, when the wave requires it.
	Changes    []string      `json:"changes"`
	Unapproved []string      `json:"unapproved,omitempty"`
	WaitsFor   []ClusterView `json:"waitsFor"`
	Hidden     int           `json:"hidden"`
	Failed     *ClusterView  `json:"failed,omitempty"`
}

// CloudView is a wave's Clusters on one cloud.
type CloudView struct {
	Cloud    string        `json:"cloud"`
	Clusters []ClusterView `json:"clusters"`
}

// ClusterView is one Cluster as its status reports it (rollout.MemberOf).
type ClusterView struct {
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
	Pinned bool   `json:"pinned,omitempty"`
	Ready  bool   `json:"ready"`
	Failed bool   `json:"failed"`
	Reason string `json:"reason,omitempty"`
	// Phase and Step are status.upgrade's.
	Phase string `json:"phase,omitempty"`
	Step  string `json:"step,omitempty"`
}

// PoolView is a node pool as status.nodePools reports it.
type PoolView struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Ready   bool   `json:"ready"`
}

// noWaves is the message of an environment without waves.
const noWaves = "The environment sets no rollout waves (rollout.waves): every Cluster adopts the target at once."

// ViewOf is the fleet view of clusters (Cluster XRs) under the baseline
// EnvironmentConfigs among configs, as a user who may list Clusters in the
// namespaces visible admits sees it: what GET /api/v1/fleet answers from
// the informers' objects, and what a test holds against the function's
// own status.rollout.
func ViewOf(configs, clusters []*unstructured.Unstructured, visible func(ns string) bool) FleetView {
	return buildView(baselineOf(configs), clusters, visible)
}

// buildView is the fleet as a user sees it: clusters of namespaces that
// visible refuses are not shown, and a gate counts, not names, those it
// waits for. Which wave a Cluster is in is rollout.WaveOf's: its label
// only where the environment admits its namespace.
func buildView(b baseline, clusters []*unstructured.Unstructured, visible func(ns string) bool) FleetView {
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
	members := make([]rollout.Member, 0, len(clusters))
	byKey := make(map[string]*unstructured.Unstructured, len(clusters))
	byWave := make([][]ClusterView, len(waves))
	done := make([]int, len(waves))
	for _, c := range clusters {
		m := rollout.MemberOf(c.Object)
		members = append(members, m)
		byKey[m.Key()] = c
		if !visible(m.Namespace) {
			continue
		}
		i := rollout.WaveOf(waves, m)
		if m.Done(b.Target) {
			// What the gate counts done (rollout.Member.Done): a newer
			// minor proves the target too.
			done[i]++
		}
		cv := clusterView(c, m)
		if m.Wave != waves[i].Name {
			cv.Label = m.Wave
		}
		byWave[i] = append(byWave[i], cv)
	}
	for i, w := range waves {
		// The portal does not know what the environment asked before, as
		// preview --fleet does: the gate's Cluster asks for what the
		// wave's Clusters ask for (rollout.AsksOf), so that the changes
		// approvals must name are those one of them has still to make.
		from := rollout.AsksOf(b.Settings.Waves, i, b.Target, members)
		wv := WaveView{
			Name: w.Name, Namespaces: w.Namespaces, MaxUnavailable: w.MaxUnavailable, RequiresApproval: w.RequiresApproval,
			Approved: len(w.Approved) > 0 && len(w.Unapproved(b.Target, from)) == 0, Total: len(byWave[i]), Clouds: clouds(byWave[i]),
		}
		wv.Done = done[i]
		wv.Gate = gate(b, i, from, members, byKey, visible)
		view.Waves = append(view.Waves, wv)
	}
	return view
}

// gate is what wave i waits for (rollout.GateOf) for a Cluster that asks
// for from.
func gate(b baseline, i int, from rollout.Target, members []rollout.Member, byKey map[string]*unstructured.Unstructured, visible func(string) bool) GateView {
	if b.Target.Kubernetes == "" {
		return GateView{Message: "The environment sets no version: there is nothing to roll out.", Changes: []string{}, WaitsFor: []ClusterView{}}
	}
	d := rollout.GateOf(b.Settings.Waves, i, from, b.Target, members, visible)
	g := GateView{Verdict: string(d.Verdict), Message: d.Message, Changes: b.Target.Changes(from), WaitsFor: make([]ClusterView, 0, len(d.WaitsFor)), Hidden: d.Hidden}
	if g.Changes == nil {
		g.Changes = []string{}
	}
	if w := b.Settings.Waves; i < len(w) && w[i].RequiresApproval {
		g.Unapproved = w[i].Unapproved(b.Target, from)
	}
	find := func(m rollout.Member) ClusterView { return clusterView(byKey[m.Key()], m) }
	for _, m := range d.WaitsFor {
		g.WaitsFor = append(g.WaitsFor, find(m))
	}
	if d.Failed != nil {
		f := find(*d.Failed)
		g.Failed = &f
	}
	return g
}

// clusterView is a Cluster for the page.
func clusterView(c *unstructured.Unstructured, m rollout.Member) ClusterView {
	cv := ClusterView{
		Name: m.Name, Namespace: m.Namespace, Cloud: m.Cloud, Runs: m.Runs.Kubernetes, Asks: m.Asks.Kubernetes, Charts: m.Runs.Charts,
		Pinned: m.Pinned, Ready: m.Ready, Failed: m.Failed, Reason: m.Reason, Pools: []PoolView{},
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
// that hold some.
var errNoFleet = errors.New("may list Clusters in none of the namespaces that hold them")

// viewFor is the fleet as user u sees it, waiting at most 10 s for the
// informers' first lists.
func (s *Server) viewFor(ctx context.Context, u *User) (FleetView, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Fleet.synced(ctx); err != nil {
		return FleetView{}, err
	}
	clusters, configs := s.Fleet.state()
	vis, err := s.Fleet.visible(ctx, s.Authz, u, clusters)
	if err != nil {
		return FleetView{}, err
	}
	if len(vis) > 0 && !slices.Contains(slices.Collect(maps.Values(vis)), true) {
		return FleetView{}, errNoFleet
	}
	return ViewOf(configs, clusters, func(ns string) bool { return vis[ns] }), nil
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
	next := func() ([][]byte, <-chan struct{}) {
		v, more := s.Fleet.Changed()
		view, err := s.viewFor(r.Context(), u)
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

// stripID is an event without its id line, to tell a change of what the
// user sees from a change of the fleet's version alone.
func stripID(f []byte) []byte {
	if i := bytes.IndexByte(f, '\n'); i >= 0 {
		return f[i+1:]
	}
	return f
}
