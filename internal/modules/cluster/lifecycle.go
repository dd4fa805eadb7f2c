package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ConditionUpgrading is True while a version step or a node pool rotation
// is under way, its reason the step's phase.
const ConditionUpgrading = "Upgrading"

// Reasons of the Upgrading condition besides the lifecycle's phases.
const (
	reasonRotation = "NodePoolRotation"
	reasonUpToDate = string(lifecycle.PhaseUpToDate)
)

// running is what the observed resources say of one pool.
type running struct {
	pool   lifecycle.Pool
	asked  string
	runs   string
	exists bool
}

// upgraded is what upgrade decided.
type upgraded struct {
	plan lifecycle.Upgrade
	// warnings are to be given; runs are the versions the pools run, as
	// their providers report them, by pool name.
	warnings []string
	runs     map[string]string
}

// upgrade decides the Kubernetes versions the plan renders (package
// lifecycle): from the target (spec.parameters.version or the environment's
// version), the versions the observed control plane and pools run, and the
// environment's window. It sets them on the plan's cluster and pools, and
// returns the decision and the warnings to give, or the error that names
// the version field when the target cannot be reached.
func upgrade(c *engine.Call, x *xr.Cluster, plan *cluster.Plan) (*upgraded, *field.Error) {
	s := cluster.SettingsOf(c.Env)
	path := xr.ParametersPath("version")
	if x.Parameters.Version == "" {
		path = field.NewPath("environment", "version")
	}
	target, ok := lifecycle.ParseMinor(plan.Cluster.Version)
	if !ok {
		return nil, field.Invalid(path, plan.Cluster.Version, "must be a Kubernetes minor version such as \"1.33\"")
	}
	var win lifecycle.Window
	for _, end := range []struct {
		key, value string
		into       *lifecycle.Minor
	}{{"min", s.Lifecycle.Versions.Min, &win.Min}, {"max", s.Lifecycle.Versions.Max, &win.Max}} {
		if end.value == "" {
			continue
		}
		m, ok := lifecycle.ParseMinor(end.value)
		if !ok {
			return nil, field.Invalid(field.NewPath("environment", "lifecycle", "versions", end.key), end.value, "must be a Kubernetes minor version such as \"1.33\"")
		}
		*end.into = m
	}
	if win == (lifecycle.Window{}) {
		c.Env.Need("lifecycle", "versions")
	}

	vf := c.Cloud.Versions
	cp := c.Observed[registry.ClusterResource]
	cpRuns, cpAsked := vf.ControlPlane.Runs(cp), vf.ControlPlane.Asked(cp)
	obs := lifecycle.Observed{Exists: cp != nil}
	obs.ControlPlane, _ = lifecycle.ParseMinor(cpRuns)
	obs.Asked, _ = lifecycle.ParseMinor(cpAsked)

	pools := map[string]running{}
	for _, p := range plan.Pools {
		if r, ok := observedPool(c, vf.Pool, registry.Generations(c.Observed, cluster.PoolID(p.Name))); ok {
			r.pool.Name = p.Name
			pools[p.Name] = r
		}
	}
	for name, f := range vf.SystemPools {
		if cp != nil {
			pools[name] = poolState(name, f, cp)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		obs.Pools = append(obs.Pools, pools[name].pool)
	}
	auto := vf.AutoUpgrade != nil && vf.AutoUpgrade(c.Env)
	pol := lifecycle.Policy{Window: win, Parallel: int(envcfg.Or(s.Lifecycle.ParallelPools, cluster.DefaultParallelPools)), AutoUpgrade: auto}
	lp, ferr := lifecycle.Next(target, obs, pol, path)
	if ferr != nil {
		return nil, ferr
	}

	// The control plane's resource keeps the version string it asks for
	// while the minor stays (an alias or a patch the provider accepted).
	cl := plan.Cluster
	cl.Version = keepString(lp.ControlPlane, cpAsked)
	cl.Running = lp.Running.String()
	if lp.Running.IsZero() {
		cl.Running = target.String()
	}
	for name := range vf.SystemPools {
		v := poolVersion(lp, name, pools[name], cpRuns, vf.ExactPools)
		if v != "" {
			if cl.PoolVersions == nil {
				cl.PoolVersions = map[string]string{}
			}
			cl.PoolVersions[name] = v
		}
	}
	plan.Replace(cl)
	for _, p := range plan.Pools {
		p.Version = poolVersion(lp, p.Name, pools[p.Name], cpRuns, vf.ExactPools)
		plan.Replace(p)
	}

	out := &upgraded{plan: lp, runs: map[string]string{}}
	for name, r := range pools {
		out.runs[name] = r.runs
	}
	var warnings []string
	if n := len(lp.Steps); target.Minor-lp.Running.Minor > 1 && !lp.Running.IsZero() && n > 0 {
		warnings = append(warnings, fmt.Sprintf("%s %s is %d minors ahead of the control plane's %s: the cloud moves one minor at a time, so the function walks there in %d steps: %s (status.upgrade shows the step)",
			path, target, target.Minor-lp.Running.Minor, lp.Running, n, steps(lp.Steps)))
	}
	if lp.Ahead {
		warnings = append(warnings, fmt.Sprintf("the control plane runs %s, ahead of %s %s: the cloud upgraded it on its own; set %s to %s", lp.Running, path, target, path, lp.Running))
	}
	out.warnings = warnings
	return out, nil
}

// observedPool reads a pool's versions from its observed generations: the
// oldest version any of them runs, whether one is busy.
func observedPool(c *engine.Call, f registry.VersionField, gens []string) (running, bool) {
	var out running
	for _, gen := range gens {
		r := poolState("", f, c.Observed[gen])
		if !out.exists || (!r.pool.Running.IsZero() && r.pool.Running.Less(out.pool.Running)) {
			busy := out.pool.Busy || r.pool.Busy
			out = r
			out.pool.Busy = busy
		} else {
			out.pool.Busy = out.pool.Busy || r.pool.Busy
		}
	}
	return out, out.exists
}

// poolState reads one pool's versions from the observed resource that
// composes it.
func poolState(name string, f registry.VersionField, obs *structpb.Struct) running {
	r := running{exists: true, asked: f.Asked(obs), runs: f.Runs(obs)}
	r.pool.Name = name
	r.pool.Running, _ = lifecycle.ParseMinor(r.runs)
	r.pool.Asked, _ = lifecycle.ParseMinor(r.asked)
	r.pool.Busy = lifecycle.InProgress(obs)
	return r
}

// poolVersion is the version string a pool's resource asks for: none where
// the cloud upgrades pools itself; else, while its minor stays, the string
// it asks for (or, where the cloud wants exact versions, the one it runs);
// for a new minor, exactly what the control plane runs where the cloud
// wants that (GKE), else the minor.
func poolVersion(lp lifecycle.Upgrade, name string, r running, cpRuns string, exact bool) string {
	m := lp.NewPools
	if r.exists {
		m = lp.Pools[name]
	}
	if m.IsZero() {
		return ""
	}
	if exact {
		if same(m, r.runs) {
			return r.runs
		}
		if same(m, cpRuns) {
			return cpRuns
		}
		return m.String()
	}
	if same(m, r.asked) {
		return r.asked
	}
	if same(m, r.runs) {
		return r.runs
	}
	return m.String()
}

// keepString is the string s when it names the minor m, else m's.
func keepString(m lifecycle.Minor, s string) string {
	if same(m, s) {
		return s
	}
	return m.String()
}

// same reports whether the version string s is of the minor m.
func same(m lifecycle.Minor, s string) bool {
	v, ok := lifecycle.ParseMinor(s)
	return ok && v == m
}

// steps lists steps for a message.
func steps(ss []lifecycle.Step) string {
	out := make([]string, 0, len(ss))
	for i, s := range ss {
		out = append(out, fmt.Sprintf("%d) %s", i+1, s))
	}
	return strings.Join(out, ", ")
}

// upgradeStatus is status.upgrade: the target, what the control plane runs,
// the current step and what it waits for, and every step to the target.
func upgradeStatus(lp lifecycle.Upgrade) map[string]any {
	out := map[string]any{
		"target": lp.Target.String(),
		"phase":  string(lp.Phase()),
	}
	if !lp.Running.IsZero() {
		out["controlPlane"] = lp.Running.String()
	}
	if len(lp.Steps) > 0 {
		out["step"] = lp.Steps[0].String()
		out["stepVersion"] = lp.Steps[0].Version.String()
		out["waitingFor"] = lp.Waiting
		plan := make([]string, 0, len(lp.Steps))
		for _, s := range lp.Steps {
			plan = append(plan, s.String())
		}
		out["plan"] = object.FromStrings(plan)
	}
	return out
}

// rotations are the rendered node pool resources that rotate, or wait to.
func rotations(st *engine.State) []*registry.Rendered {
	var out []*registry.Rendered
	for _, rd := range st.Rendered() {
		if rd.Rotation != nil {
			out = append(out, rd)
		}
	}
	return out
}

// upgradingCondition is the Upgrading condition: True while a version step
// or a rotation is under way, with the step or the rotations in its
// message; False and UpToDate otherwise.
func upgradingCondition(lp lifecycle.Upgrade, rots []*registry.Rendered) response.Condition {
	var parts []string
	reason := ""
	if len(lp.Steps) > 0 {
		reason = string(lp.Phase())
		parts = append(parts, fmt.Sprintf("%s, waiting for %s (%d step(s) to %s)", lp.Steps[0], lp.Waiting, len(lp.Steps), lp.Target))
	}
	for _, rd := range rots {
		if reason == "" {
			reason = reasonRotation
		}
		what := strings.Join(lifecycle.Describe(rd.Rotation.Changes), ", ")
		if what == "" {
			what = "back to a generation it had"
		}
		parts = append(parts, fmt.Sprintf("node pool %s rotates (%s): %s", strings.TrimPrefix(rd.Component, "pool/"), what, rd.Rotation.Waiting))
	}
	if reason == "" {
		msg := fmt.Sprintf("The control plane and every node pool run %s, and no node pool rotates", lp.Target)
		if lp.Ahead {
			msg = fmt.Sprintf("The control plane runs %s, ahead of the target %s (the cloud upgraded it); every node pool runs the target, and no node pool rotates", lp.Running, lp.Target)
		}
		return response.Condition{Type: ConditionUpgrading, Status: response.StatusFalse, Reason: reasonUpToDate, Message: msg}
	}
	return response.Condition{Type: ConditionUpgrading, Status: response.StatusTrue, Reason: reason, Message: engine.List(parts)}
}

// announceStep emits an event when the upgrade's current step (its phase
// and version) is not the one the XR's status last showed: one event per
// step, however many pools it moves one after the other.
func announceStep(rsp *fnv1.RunFunctionResponse, x *xr.Cluster, lp lifecycle.Upgrade) {
	if len(lp.Steps) == 0 {
		return
	}
	cur := lp.Steps[0]
	if string(cur.Phase) == object.String(x.Status, "upgrade", "phase") && cur.Version.String() == object.String(x.Status, "upgrade", "stepVersion") {
		return
	}
	response.Normal(rsp, "UpgradeStep", "Upgrade to %s: %s, waiting for %s (%d step(s) left: %s)", lp.Target, lp.Steps[0], lp.Waiting, len(lp.Steps), steps(lp.Steps))
}
