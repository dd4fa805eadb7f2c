package cluster

import (
	"cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ConditionRolloutGated is True while the environment's rollout holds the
// Cluster at the version it has adopted (package rollout): its reason is
// the verdict, Hold, Halt or Approval. It is False, for Adopted or Pinned,
// otherwise, and absent when the environment has no rollout.waves.
const ConditionRolloutGated = "RolloutGated"

// Reasons of the RolloutGated condition when it is False.
const (
	reasonAdopted = "Adopted"
	reasonPinned  = string(rollout.Pinned)
)

// Requirement names of the fleet a gated Cluster reads.
const (
	// requirementWave prefixes the requirement of one wave's Clusters,
	// selected by their wave label in every namespace.
	requirementWave = "rollout-wave-"
	// requirementFleet is every Cluster of the XR's kind: what the last
	// wave's maxUnavailable counts, since a Cluster without a wave label
	// is in it.
	requirementFleet = "rollout-fleet"
)

// fleetKinds are the kinds of Cluster a rollout reads, each under its
// requirement names' prefix: "" for namespaced Clusters, "x" for legacy
// XClusters (rollout-wave-staging, xrollout-wave-staging).
var fleetKinds = []struct{ apiVersion, kind, prefix string }{
	{xr.ClusterAPIVersion, xr.ClusterKind, ""},
	{xr.LegacyClusterAPIVersion, xr.LegacyClusterKind, "x"},
}

// gated is what the rollout decided for the Cluster.
type gated struct {
	rollout.Decision
	// runs are the chart versions the Cluster's releases run, for
	// status.charts.
	runs map[string]string
}

// gate decides whether the Cluster adopts the environment's target now
// (package rollout): its Kubernetes version, and the versions of the
// add-on charts that follow the environment (those the XR does not pin in
// spec.parameters.charts). It returns nil when the environment has no
// rollout.waves. A Cluster whose XR pins spec.parameters.version is left
// out of the rollout, as is one whose control plane does not exist yet
// (it is created at the target); one that already asks for the target
// keeps moving to it. Any other reads the Clusters of the earlier waves,
// and of its own when the wave has a maxUnavailable, as required resources
// in every namespace; while they are not delivered yet, or while the
// verdict holds it, the Cluster keeps what it has adopted: the Kubernetes
// version of status.upgrade.target, which gate sets on the plan for
// upgrade to walk on, and each release's chart version as observed. A
// release that does not exist yet is created at the target: nothing runs
// it to protect.
//
// Every other key of the environment reaches every Cluster at once.
func gate(c *engine.Call, x *xr.Cluster, plan *cluster.Plan) *gated {
	waves := cluster.SettingsOf(c.Env).Rollout.Waves
	target := rollout.Target{Kubernetes: rollout.Minor(plan.Cluster.Version)}
	if len(waves) == 0 || target.Kubernetes == "" {
		// Without waves there is nothing to gate; a version that names no
		// minor is upgrade's to refuse.
		return nil
	}
	self := rollout.Member{Name: x.Name, Namespace: cmp.Or(x.Namespace, x.Labels[rollout.LabelClaimNamespace]), Cloud: x.Cloud, Wave: x.Labels[rollout.Label]}
	g := &gated{Decision: rollout.Decision{Wave: waves[rollout.WaveOf(waves, self)].Name}}
	releases := followers(x, plan)
	asks := rollout.Target{Kubernetes: rollout.Minor(object.String(x.Status, "upgrade", "target"))}
	g.runs = reportedCharts(c, x, releases)
	if len(releases) > 0 {
		target.Charts, asks.Charts = map[string]string{}, map[string]string{}
		for _, r := range releases {
			target.Charts[r.Name] = r.Version
			a, _ := c.Cloud.Versions.Charts.Observed(c.Observed, r.Name)
			asks.Charts[r.Name] = cmp.Or(a, r.Version)
		}
	}
	g.Target = target
	switch {
	case x.Parameters.Version != "":
		g.Verdict, g.Message = rollout.Pinned, "spec.parameters.version pins "+x.Parameters.Version+": the owner's pin leaves the Cluster out of the rollout's waves"
		return g
	case c.Observed[registry.ClusterResource] == nil:
		g.Verdict, g.Message = rollout.Adopt, "wave "+g.Wave+": the control plane does not exist yet, so it is created at "+target.String()
		return g
	case asks.Equal(target):
		g.Verdict, g.Message = rollout.Keep, "wave "+g.Wave+": runs or moves to "+target.String()
		return g
	}

	self = rollout.MemberOf(c.Req.GetObserved().GetComposite().GetResource().AsMap())
	self.Asks, self.Runs.Charts = asks, runningCharts(c, releases)
	fleet, delivered := readFleet(c, waves, self)
	if delivered {
		g.Decision = rollout.Decide(rollout.Request{Waves: waves, Self: self, Target: target, Fleet: fleet})
	} else {
		g.Verdict, g.Message = rollout.Hold, "wave "+g.Wave+": reading the earlier waves' Clusters before adopting "+target.String()
	}
	if !g.Verdict.Gated() {
		return g
	}
	// Keep what it adopted: a walk under way goes on to its own target,
	// and each release keeps the version it asks for.
	cp := c.Observed[registry.ClusterResource]
	if keep := cmp.Or(asks.Kubernetes, rollout.Minor(c.Cloud.Versions.ControlPlane.Asked(cp)), self.Runs.Kubernetes); keep != "" {
		cl := plan.Cluster
		cl.Version = keep
		plan.Replace(cl)
	}
	for _, r := range releases {
		if v := asks.Charts[r.Name]; v != r.Version {
			r.Version = v
			plan.Replace(r)
		}
	}
	c.Gated = true
	return g
}

// followers are the plan's add-on releases whose chart version follows
// the environment: every one whose version the XR does not pin
// (spec.parameters.charts.<name>.version).
func followers(x *xr.Cluster, plan *cluster.Plan) []cluster.Release {
	var out []cluster.Release
	for _, comp := range plan.Components {
		if r, ok := comp.(cluster.Release); ok && x.Parameters.Charts[r.Name].Version == "" {
			out = append(out, r)
		}
	}
	return out
}

// runningCharts are the chart versions the followers' releases that exist
// run, as the decision reads them for the Cluster itself: "" for a release
// whose version is unknown now (not Ready, or not reconciled), which runs
// nothing of the target; a release that does not exist yet is left out.
func runningCharts(c *engine.Call, releases []cluster.Release) map[string]string {
	out := map[string]string{}
	for _, r := range releases {
		if asked, runs := c.Cloud.Versions.Charts.Observed(c.Observed, r.Name); asked != "" || runs != "" {
			out[r.Name] = runs
		}
	}
	return out
}

// reportedCharts are the chart versions the followers' releases run, as
// status.charts reports them: what each observed release asks for while it
// is Ready, else what the status last said.
func reportedCharts(c *engine.Call, x *xr.Cluster, releases []cluster.Release) map[string]string {
	out := map[string]string{}
	for _, r := range releases {
		_, runs := c.Cloud.Versions.Charts.Observed(c.Observed, r.Name)
		if runs = cmp.Or(runs, object.String(x.Status, "charts", r.Name)); runs != "" {
			out[r.Name] = runs
		}
	}
	return out
}

// readFleet asks Crossplane for the Clusters the decision reads and
// returns them, and whether every requirement was delivered. Both kinds
// of Cluster count, namespaced Clusters and legacy XClusters: one fleet,
// one rollout, whichever API a Cluster was made with.
func readFleet(c *engine.Call, waves []rollout.Wave, self rollout.Member) ([]rollout.Member, bool) {
	wi := rollout.WaveOf(waves, self)
	sels := map[string]*fnv1.ResourceSelector{}
	add := func(name string, labels map[string]string) {
		for _, k := range fleetKinds {
			s := &fnv1.ResourceSelector{ApiVersion: k.apiVersion, Kind: k.kind}
			if labels != nil {
				s.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}}
			}
			sels[k.prefix+name] = s
		}
	}
	own := waves[wi]
	if wi == len(waves)-1 && own.MaxUnavailable > 0 {
		add(requirementFleet, nil)
	} else {
		for _, w := range waves[:wi] {
			add(requirementWave+w.Name, map[string]string{rollout.Label: w.Name})
		}
		if own.MaxUnavailable > 0 {
			add(requirementWave+own.Name, map[string]string{rollout.Label: own.Name})
		}
	}
	var fleet []rollout.Member
	delivered := true
	for name, sel := range sels {
		response.Require(c.Rsp, name, sel)
		got, ok := c.Req.GetRequiredResources()[name]
		if !ok {
			delivered = false
			continue
		}
		for _, it := range got.GetItems() {
			fleet = append(fleet, rollout.MemberOf(it.GetResource().AsMap()))
		}
	}
	return fleet, delivered
}

// condition is the RolloutGated condition.
func (g *gated) condition() response.Condition {
	c := response.Condition{Type: ConditionRolloutGated, Status: response.StatusFalse, Reason: reasonAdopted, Message: g.Message}
	switch {
	case g.Verdict.Gated():
		c.Status, c.Reason = response.StatusTrue, string(g.Verdict)
	case g.Verdict == rollout.Pinned:
		c.Reason = reasonPinned
	}
	return c
}

// status is status.rollout: the wave, the environment's target, the
// verdict and its message, the Clusters it waits for that the owner may
// see (and how many others), the earlier waves' Clusters not counted
// because they pin their own version, and the one that halted it.
func (g *gated) status() map[string]any {
	out := map[string]any{
		"wave":    g.Wave,
		"target":  g.Target.Kubernetes,
		"verdict": string(g.Verdict),
		"message": g.Message,
	}
	if len(g.WaitsFor) > 0 {
		waits := make([]any, 0, len(g.WaitsFor))
		for _, m := range g.WaitsFor {
			waits = append(waits, map[string]any{
				"name": m.Name, "namespace": m.Namespace, "cloud": m.Cloud,
				"runs": m.Runs.Kubernetes, "ready": m.Ready,
			})
		}
		out["waitsFor"] = waits
	}
	if g.Hidden > 0 {
		out["hidden"] = int64(g.Hidden)
	}
	if len(g.Target.Charts) > 0 {
		out["charts"] = object.FromStringMap(g.Target.Charts)
	}
	if g.Pinned > 0 {
		out["pinnedEarlier"] = int64(g.Pinned)
	}
	if f := g.Failed; f != nil {
		out["failed"] = map[string]any{"name": f.Name, "namespace": f.Namespace, "cloud": f.Cloud, "reason": f.Reason}
	}
	return out
}
