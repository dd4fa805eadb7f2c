package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Observed is what runs, as the providers report it.
type Observed struct {
	// Exists is set once the control plane's resource is observed.
	Exists bool
	// ControlPlane is the version the control plane runs; zero before it
	// exists, or while its provider reports none.
	ControlPlane Minor
	// Asked is the version the control plane's resource asks for now (its
	// spec); zero when it asks for none.
	Asked Minor
	// Pools are the node pools that exist.
	Pools []Pool
}

// Pool is one existing node pool.
type Pool struct {
	Name string
	// Running is the version its nodes run; zero when the provider reports
	// none.
	Running Minor
	// Asked is the version its resource asks for now; zero when none.
	Asked Minor
	// Busy is set while its resource is not ready or its provider is in
	// the middle of an operation: what it reports may not run yet.
	Busy bool
}

// runs is the version the pool is taken to run: what the provider
// reports, else what its resource asks for, else the control plane's
// (a pool without a version was created at the control plane's).
func (p Pool) runs(cp Minor) Minor {
	switch {
	case !p.Running.IsZero():
		return p.Running
	case !p.Asked.IsZero():
		return p.Asked
	}
	return cp
}

// Policy is how a cloud and its environment let versions move.
type Policy struct {
	// Window is the environment's supported range of minors.
	Window Window
	// Parallel is how many pools are upgraded at a time; below one means
	// one.
	Parallel int
	// AutoUpgrade is set where the cloud upgrades the control plane and
	// the pools on its own (GKE on a release channel): pools carry no
	// version, and a control plane found ahead of the target is the
	// cloud's doing, not a downgrade.
	AutoUpgrade bool
}

// Phase names the step an upgrade is at.
type Phase string

// Phases of an upgrade.
const (
	// PhaseUpToDate: the control plane and every pool run the target.
	PhaseUpToDate Phase = "UpToDate"
	// PhaseControlPlane: the control plane moves to the next minor.
	PhaseControlPlane Phase = "ControlPlaneUpgrade"
	// PhaseNodePools: pools move to the control plane's minor.
	PhaseNodePools Phase = "NodePoolUpgrade"
)

// Step is one step of an upgrade.
type Step struct {
	Phase   Phase
	Version Minor
	// Pools are the pools the step moves (PhaseNodePools).
	Pools []string
	// Auto is set when the cloud, not the function, moves the pools.
	Auto bool
}

// String says what the step does.
func (s Step) String() string {
	switch s.Phase {
	case PhaseControlPlane:
		return "control plane to " + s.Version.String()
	case PhaseNodePools:
		how := ""
		if s.Auto {
			how = " (the cloud's auto-upgrade)"
		}
		return fmt.Sprintf("node pools %s to %s%s", strings.Join(s.Pools, ", "), s.Version, how)
	}
	return "up to date at " + s.Version.String()
}

// An Upgrade is what to render now, and the steps from here to the target:
// the upgrade plan of a Cluster's Kubernetes versions.
type Upgrade struct {
	// Target is the requested version.
	Target Minor
	// Running is the control plane's running version; zero before it
	// exists.
	Running Minor
	// ControlPlane is the version the control plane's resource asks for.
	ControlPlane Minor
	// Pools is the version each existing pool's resource asks for; zero
	// where the cloud upgrades pools itself.
	Pools map[string]Minor
	// NewPools is the version a pool that does not exist yet is created
	// at: never ahead of the running control plane.
	NewPools Minor
	// Steps run from the current step to the target; none when up to date.
	Steps []Step
	// Waiting says what the current step waits for.
	Waiting string
	// Ahead is set when the cloud's auto-upgrade took the control plane
	// past the target.
	Ahead bool
}

// Phase is the current step's phase.
func (p Upgrade) Phase() Phase {
	if len(p.Steps) == 0 {
		return PhaseUpToDate
	}
	return p.Steps[0].Phase
}

// Next decides the next step towards the target version, and the steps
// after it. The control plane moves one minor at a time and never down;
// pools follow once the observed control plane runs a minor, at most
// Parallel at a time, and are never asked for a version ahead of the
// running control plane; the control plane moves on only once every pool
// runs its minor. A target below the running control plane, or outside
// the window, is an error naming path, the running version and the
// allowed targets.
func Next(target Minor, obs Observed, pol Policy, path *field.Path) (Upgrade, *field.Error) {
	p := Upgrade{Target: target, Running: obs.ControlPlane, Pools: map[string]Minor{}}
	r := obs.ControlPlane
	if r.IsZero() && obs.Exists {
		// The control plane exists but reports no version (its status was
		// lost, or an import is not observed yet): nothing moves until it
		// says what it runs.
		p.ControlPlane, p.NewPools = obs.Asked, obs.Asked
		if pol.AutoUpgrade {
			p.NewPools = Minor{}
		}
		for _, pool := range obs.Pools {
			p.Pools[pool.Name] = pool.Asked
			if pol.AutoUpgrade {
				p.Pools[pool.Name] = Minor{}
			}
		}
		p.Steps = []Step{{Phase: PhaseControlPlane, Version: target}}
		p.Waiting = "the control plane to report the version it runs"
		return p, nil
	}
	if r.IsZero() {
		// Nothing runs yet: everything is created at the target.
		if !pol.Window.Contains(target) {
			return p, field.NotSupported(path, target.String(), pol.Window.Targets(Minor{}))
		}
		p.ControlPlane, p.NewPools = target, target
		if pol.AutoUpgrade {
			p.NewPools = Minor{}
		}
		for _, pool := range obs.Pools {
			p.Pools[pool.Name] = target
			if pol.AutoUpgrade {
				p.Pools[pool.Name] = Minor{}
			}
		}
		return p, nil
	}
	if !walkable(r, target) {
		// Minor steps never cross a major version, and a minor beyond
		// Kubernetes's is no step at all.
		return p, field.Invalid(path, target.String(), fmt.Sprintf("the control plane runs %s; a version is reached one minor at a time within Kubernetes 1.x", r))
	}
	if target.Less(r) {
		if obs.Asked.IsZero() || target.Less(obs.Asked) {
			return p, field.Invalid(path, target.String(), fmt.Sprintf("the control plane runs %s and is never downgraded%s", r, allowed(pol.Window, r)))
		}
		// The cloud upgraded past what was asked (a release channel, or
		// EKS at the end of extended support): the pools keep to the
		// target, and the control plane is not asked for less than it runs.
		p.Ahead = true
	}
	if !pol.Window.Contains(target) {
		return p, field.Invalid(path, target.String(), fmt.Sprintf("the environment supports %s (environment key lifecycle.versions); the control plane runs %s%s", pol.Window, r, allowed(pol.Window, r)))
	}
	// base is the version the pools catch up with: what the control plane
	// runs, or the target when the cloud took the control plane past it.
	base := r
	if p.Ahead {
		base = target
	}
	parallel := max(pol.Parallel, 1)

	var lag []Pool
	var busy []string
	for _, pool := range obs.Pools {
		runs := pool.runs(r)
		// A pool is never asked for less than it runs, nor more than the
		// control plane runs.
		p.Pools[pool.Name] = keep(pool, r)
		if runs.Less(base) {
			lag = append(lag, pool)
		}
		if pool.Busy {
			busy = append(busy, pool.Name)
		}
	}
	slices.SortFunc(lag, func(a, b Pool) int { return strings.Compare(a.Name, b.Name) })
	p.NewPools = base
	p.ControlPlane = r
	if p.Ahead && pol.AutoUpgrade {
		// A release channel's minimum version: asking again for what was
		// asked changes nothing, and a lower minimum is never sent.
		p.ControlPlane = obs.Asked
	}

	all := make([]string, 0, len(obs.Pools))
	for _, pool := range obs.Pools {
		all = append(all, pool.Name)
	}
	slices.Sort(all)
	switch {
	case len(lag) > 0:
		// The pools catch up with the control plane first.
		names := make([]string, 0, len(lag))
		for _, pool := range lag {
			names = append(names, pool.Name)
		}
		p.Steps = append(p.Steps, Step{Phase: PhaseNodePools, Version: base, Pools: names, Auto: pol.AutoUpgrade})
		if pol.AutoUpgrade {
			p.Waiting = fmt.Sprintf("the cloud's auto-upgrade to move node pools %s to %s", strings.Join(names, ", "), base)
		} else {
			moving := choose(lag, base, parallel)
			for _, n := range moving {
				p.Pools[n] = base
			}
			p.Waiting = fmt.Sprintf("node pools %s to report %s (%d of %d at a time)", strings.Join(moving, ", "), base, len(moving), len(lag))
		}
	case r.Less(target) && len(busy) > 0 && obs.Asked != r.Next():
		// A pool that is not ready, or is being changed, may not run what
		// it reports yet: the control plane waits for it.
		slices.Sort(busy)
		p.Waiting = fmt.Sprintf("node pools %s to be Ready before the control plane moves to %s", strings.Join(busy, ", "), r.Next())
	case r.Less(target):
		p.ControlPlane = r.Next()
		p.Waiting = fmt.Sprintf("the control plane to report %s", r.Next())
	}
	for m := r.Next(); !target.Less(m); m = m.Next() {
		p.Steps = append(p.Steps, Step{Phase: PhaseControlPlane, Version: m})
		if len(all) > 0 {
			p.Steps = append(p.Steps, Step{Phase: PhaseNodePools, Version: m, Pools: all, Auto: pol.AutoUpgrade})
		}
	}
	if obs.Asked == r.Next() && p.ControlPlane.Less(obs.Asked) {
		// A step under way is never taken back: the control plane is not
		// asked for less than it is already moving to.
		p.ControlPlane = obs.Asked
	}
	if pol.AutoUpgrade {
		p.NewPools = Minor{}
		for name := range p.Pools {
			p.Pools[name] = Minor{}
		}
	}
	return p, nil
}

// keep is the version a pool's resource keeps asking for while it is not
// moved: what it asks for, or what it runs, but never more than the control
// plane runs.
func keep(pool Pool, cp Minor) Minor {
	v := pool.runs(cp)
	if !pool.Asked.IsZero() && v.Less(pool.Asked) && !cp.Less(pool.Asked) {
		// An upgrade to a version the control plane runs is under way.
		v = pool.Asked
	}
	if cp.Less(v) {
		// Never ahead of the control plane: a pool found ahead (the cloud
		// moved it) is left to what it asks for.
		return pool.Asked
	}
	return v
}

// choose picks the lagging pools to move to version now: those already
// asked for it first, then by name, at most n.
func choose(lag []Pool, version Minor, n int) []string {
	var out []string
	for _, pool := range lag {
		if pool.Asked == version && len(out) < n {
			out = append(out, pool.Name)
		}
	}
	for _, pool := range lag {
		if pool.Asked != version && len(out) < n {
			out = append(out, pool.Name)
		}
	}
	slices.Sort(out)
	return out
}

// allowed says which targets a control plane running r may be asked for.
func allowed(w Window, r Minor) string {
	t := w.Targets(r)
	if len(t) == 0 {
		if w.Max.IsZero() {
			return fmt.Sprintf("; allowed targets: %s or newer", r)
		}
		return fmt.Sprintf("; no target is allowed: the environment supports %s", w)
	}
	return "; allowed targets: " + strings.Join(t, ", ")
}
