package cluster

import (
	"cmp"
	"fmt"
	"strings"
	"time"

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

// requirementRuling is the requirement of the fleet controller's Ruling on
// the Cluster (rollout.Ruling): one ConfigMap, required by name.
const requirementRuling = "rollout-ruling"

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
// keeps moving to it: what it asks for is the newer of status.upgrade.target
// and what its observed control plane asks for, so that a stale copy of its
// own status never takes an adoption back.
//
// Any other Cluster reads the fleet controller's Ruling on it (one
// ConfigMap, required by name: rollout.Ruling), never the fleet itself, so
// that its request stays small whatever the fleet's size and whatever a
// tenant labels. It adopts only on a Ruling of Adopt (or Keep) for the
// very target it asks for, in the wave it counts in, with the wave's
// approvals (read again here, from the environment as it is now); with no
// Ruling, an unreadable one, or one on another target, it holds and says
// why: the gate fails closed when the controller is not there. While it is
// gated the Cluster keeps what it has adopted: the Kubernetes version of
// status.upgrade.target, which gate sets on the plan for upgrade to walk
// on, and each release's chart version as observed. A release that does
// not exist yet is created at the target: nothing runs it to protect.
//
// Every other key of the environment reaches every Cluster at once.
func gate(c *engine.Call, x *xr.Cluster, plan *cluster.Plan) *gated {
	settings := cluster.SettingsOf(c.Env).Rollout
	waves := settings.Waves
	target := rollout.Target{Kubernetes: rollout.Minor(plan.Cluster.Version)}
	if len(waves) == 0 || target.Kubernetes == "" {
		// Without waves there is nothing to gate; a version that names no
		// minor is upgrade's to refuse.
		return nil
	}
	self := rollout.Member{Name: x.Name, Namespace: cmp.Or(x.Namespace, x.Labels[rollout.LabelClaimNamespace]), Cloud: x.Cloud, Wave: x.Labels[rollout.Label]}
	wi := rollout.WaveOf(waves, self)
	g := &gated{Decision: rollout.Decision{Wave: waves[wi].Name}}
	releases := followers(x, plan)
	cp := c.Observed[registry.ClusterResource]
	asks := rollout.Target{Kubernetes: rollout.NewerMinor(rollout.Minor(object.String(x.Status, "upgrade", "target")), rollout.Minor(c.Cloud.Versions.ControlPlane.Asked(cp)))}
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
	case cp == nil:
		g.Verdict, g.Message = rollout.Adopt, "wave "+g.Wave+": the control plane does not exist yet, so it is created at "+target.String()
		return g
	case asks.Equal(target):
		g.Verdict, g.Message = rollout.Keep, "wave "+g.Wave+": runs or moves to "+target.String()
		return g
	}

	self = rollout.MemberOf(c.Req.GetObserved().GetComposite().GetResource().AsMap())
	self.Asks, self.Runs.Charts = asks, runningCharts(c, releases)
	if self.Runs.Holds(target) {
		g.Verdict, g.Message = rollout.Keep, "wave "+g.Wave+": runs or moves to "+target.String()
		return g
	}
	g.rule(c, x, settings, wi, self)
	if !g.Verdict.Gated() {
		return g
	}
	// Keep what it adopted: a walk under way goes on to its own target,
	// and each release keeps the version it asks for.
	if keep := cmp.Or(asks.Kubernetes, self.Runs.Kubernetes); keep != "" {
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

// rule reads the fleet controller's Ruling on the Cluster (requiring it by
// name in the environment's rollout.namespace) and decides from it: Adopt
// only on a Ruling of Adopt or Keep for g's target, in the wave wi the
// Cluster counts in, with wave wi's approvals as the environment has them
// now; Hold, with why, in every other case.
func (g *gated) rule(c *engine.Call, x *xr.Cluster, settings rollout.Settings, wi int, self rollout.Member) {
	ref := rollout.Ref{Kind: cmp.Or(x.Kind, xr.ClusterKind), Namespace: x.Namespace, Name: x.Name}
	ns, name := settings.RulingNamespace(), rollout.RulingName(ref)
	where := "ConfigMap " + ns + "/" + name
	response.Require(c.Rsp, requirementRuling, &fnv1.ResourceSelector{
		ApiVersion: rollout.RulingAPIVersion, Kind: rollout.RulingKind, Namespace: &ns,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: name},
	})
	target := g.Target.String()
	hold := func(why string) {
		g.Verdict, g.Message = rollout.Hold, fmt.Sprintf("wave %s holds %s: %s", g.Wave, target, why)
	}
	got, delivered := c.Req.GetRequiredResources()[requirementRuling]
	items := got.GetItems()
	switch {
	case !delivered:
		hold("reading the fleet controller's ruling (" + where + ")")
		return
	case len(items) == 0:
		hold("the fleet controller has not ruled on this Cluster (no " + where + "): the waves hold while it is not running (function-cluster-platform fleet, docs/rollouts.md)")
		return
	}
	r, err := rollout.ReadRuling(items[0].GetResource().AsMap())
	switch {
	case err != nil:
		hold(fmt.Sprintf("cannot read the fleet controller's ruling (%s): %v", where, err))
		return
	case r.Cluster != ref:
		hold(fmt.Sprintf("the ruling in %s is on %s, not on this Cluster", where, r.Cluster))
		return
	case r.Target != target:
		hold(fmt.Sprintf("the fleet controller's ruling (%s) is on %s; it has not ruled on %s yet", where, r.Target, target))
		return
	case r.Wave != g.Wave:
		hold(fmt.Sprintf("the fleet controller counts this Cluster in wave %s, this Cluster's environment in wave %s: rollout.waves must be the same for every Cluster (set them in the baseline EnvironmentConfigs only)", r.Wave, g.Wave))
		return
	}
	g.Verdict, g.Message, g.Failed, g.Until = r.Verdict, r.Message, r.Failed, r.Until
	if g.Verdict == rollout.Keep {
		// The controller saw the Cluster ask for the target already: a
		// step under way is never taken back.
		g.Verdict = rollout.Adopt
	}
	if g.Verdict != rollout.Adopt {
		return
	}
	w := settings.Waves[wi]
	if missing := w.Unapproved(g.Target, self.Asks); w.RequiresApproval && len(missing) > 0 {
		g.Verdict = rollout.Approval
		g.Message = fmt.Sprintf("wave %s waits for the environment to approve %s (rollout.waves[%d].approved)", g.Wave, strings.Join(missing, ", "), wi)
	}
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
// verdict and its message, the Cluster that halted it (when its owner may
// see it) and when the soak that holds it ends. Nothing in it follows the
// fleet Cluster by Cluster, so that it is rewritten only when the
// Cluster's own decision changes.
func (g *gated) status() map[string]any {
	out := map[string]any{
		"wave":    g.Wave,
		"target":  g.Target.Kubernetes,
		"verdict": string(g.Verdict),
		"message": g.Message,
	}
	if len(g.Target.Charts) > 0 {
		out["charts"] = object.FromStringMap(g.Target.Charts)
	}
	if !g.Until.IsZero() {
		out["until"] = g.Until.UTC().Format(time.RFC3339)
	}
	if f := g.Failed; f != nil {
		out["failed"] = map[string]any{"name": f.Name, "namespace": f.Namespace, "cloud": f.Cloud, "reason": f.Reason}
	}
	return out
}
