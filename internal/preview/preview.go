// Package preview shows what an XR will become before Crossplane makes it:
// it runs the function's own RunFunction in process, answering its
// requirements from files, standing in for Crossplane (package xpsim) and
// for the providers (package simulate), round after round until the stack
// converges. With observed resources it also plans one reconcile against
// them: what would be added, changed, held or removed. Over a fleet, it
// plans every XR under two environments and sums the impact of the change.
package preview

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// MaxRounds bounds a convergence.
const MaxRounds = 30

// A Runner is RunFunction.
type Runner func(*fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse

// World is what the function may read besides the XR: the
// EnvironmentConfigs, and every other object a requirement may name (spend
// ConfigMaps, the Cluster a Database joins).
type World struct {
	Environment []xpsim.Object
	Objects     []xpsim.Object
	// InContext delivers the EnvironmentConfigs merged into the pipeline
	// context, as function-environment-configs does for the two-step and
	// the compat Compositions (selected by their layer labels alone),
	// rather than as the shipped Composition's required resources.
	InContext bool
	// Compositions, when set, are the Compositions the XRs are composed
	// with (a release's): each XR's step Input, the resources its step
	// requires and the EnvironmentConfigs an earlier step merges into the
	// context are its Composition's, not the shipped step's (InContext is
	// then unused).
	Compositions *Compositions
}

// Resource is one composed resource of a converged stack.
type Resource struct {
	Name         string
	Kind         string
	APIVersion   string
	ExternalName string
	// WaitsFor are the resources it is composed after (its Usages).
	WaitsFor []string
	// Created and Ready are the rounds it was first desired and first
	// desired ready.
	Created int
	Ready   int
}

// Stack is an XR converged in process.
type Stack struct {
	// XR is the composite resource as the last response desires it, with
	// its status.
	XR xpsim.Object
	// Resources are the composed resources, by name.
	Resources map[string]xpsim.Object
	// Table describes them, in name order.
	Table []Resource
	// Rounds is how many reconciles it took; Converged is false when it
	// did not converge within MaxRounds or a Fatal stopped it.
	Rounds    int
	Converged bool
	// Warnings and Fatal are the results as Crossplane surfaces them.
	Warnings []string
	Fatal    string
	// Estimate is status.estimatedMonthlyUsd, when the XR reports one.
	Estimate *Cost
	// Walk is, for a stack converged from observed resources, what each
	// round changed of the resources that existed: the steps an upgrade
	// or a rotation takes, as the simulated providers carry them out.
	Walk []Round
	// Observed are the composed resources as the last reconcile observed
	// them, by name, with the names the simulated providers (or the
	// observed resources it started from) gave them.
	Observed map[string]xpsim.Object
	// Last is the last response.
	Last *fnv1.RunFunctionResponse
}

// Round is what one reconcile changed of the resources that existed
// before it.
type Round struct {
	Number  int
	Changed map[string][]Change
	Added   []string
	Removed []string
}

// Cost is a monthly estimate in USD.
type Cost struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Composite returns the XR Crossplane reconciles for an object: a claim of
// a legacy XRD becomes its cluster-scoped XR (see xpsim.ClaimComposite).
func Composite(o xpsim.Object) xpsim.Object { return xpsim.ClaimComposite(o) }

// Converge reconciles the XR round after round, feeding the desired
// resources back as observed and ready (as the simulator reports them),
// until the set stops growing and everything is ready, a Fatal stops it, or
// MaxRounds pass. observed, when not empty, is where it starts.
func Converge(run Runner, w World, x xpsim.Object, observed map[string]xpsim.Object) (*Stack, error) {
	x = Composite(x)
	st := &Stack{}
	required := map[string]*fnv1.ResourceSelector{}
	created, ready := map[string]int{}, map[string]int{}
	walk := len(observed) > 0
	observed = maps.Clone(observed)
	var conns map[string]map[string][]byte
	prev := -1
	var rsp *fnv1.RunFunctionResponse
	for round := 1; round <= MaxRounds; round++ {
		req, err := w.request(x, observed, required)
		if se := (StepError{}); errors.As(err, &se) {
			st.Fatal, st.Rounds = se.Error(), round
			return st, nil
		}
		if err != nil {
			return nil, err
		}
		st.Observed = observed
		for name, c := range conns {
			if r := req.GetObserved().GetResources()[name]; r != nil {
				r.ConnectionDetails = c
			}
		}
		rsp = run(req)
		st.Rounds = round
		newRequirement := false
		for name, sel := range rsp.GetRequirements().GetResources() {
			if _, ok := required[name]; !ok {
				newRequirement = true
			}
			required[name] = sel
		}
		if msg := xpsim.Fatal(rsp); msg != "" {
			st.Fatal = msg
			break
		}
		for name, r := range rsp.GetDesired().GetResources() {
			if _, ok := created[name]; !ok {
				created[name] = round
			}
			if _, ok := ready[name]; !ok && r.GetReady() != fnv1.Ready_READY_FALSE {
				ready[name] = round
			}
		}
		n := len(rsp.GetDesired().GetResources())
		r := changes(round, xpsim.Desired(rsp), observed)
		if walk && (len(r.Changed) > 0 || len(r.Removed) > 0 || len(r.Added) > 0) {
			st.Walk = append(st.Walk, r)
		}
		if !newRequirement && n == prev && xpsim.AllReady(rsp) && len(r.Changed) == 0 && len(r.Removed) == 0 {
			st.Converged = true
			break
		}
		prev = n
		observed = xpsim.ObserveAll(rsp, observed)
		conns = xpsim.Connections(rsp)
	}
	st.describe(rsp, created, ready)
	st.XR = withStatus(x, st.XR)
	return st, nil
}

// changes is what a round's desired resources change of the observed
// ones.
func changes(round int, desired, observed map[string]xpsim.Object) Round {
	r := Round{Number: round, Changed: map[string][]Change{}}
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		obs, ok := observed[name]
		if !ok {
			r.Added = append(r.Added, name)
			continue
		}
		if ch := diff("", desired[name], obs); len(ch) > 0 {
			r.Changed[name] = ch
		}
	}
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		if _, ok := desired[name]; !ok {
			r.Removed = append(r.Removed, name)
		}
	}
	return r
}

// withStatus is the XR with the status a response desires for it.
func withStatus(x, desired xpsim.Object) xpsim.Object {
	out := maps.Clone(x)
	if s, ok := desired["status"]; ok {
		out["status"] = s
	}
	return out
}

// describe fills the stack from the last response.
func (st *Stack) describe(rsp *fnv1.RunFunctionResponse, created, ready map[string]int) {
	st.Last = rsp
	st.XR = rsp.GetDesired().GetComposite().GetResource().AsMap()
	st.Resources = xpsim.Desired(rsp)
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			st.Warnings = append(st.Warnings, r.GetMessage())
		}
	}
	status, _ := st.XR["status"].(map[string]any)
	for _, w := range object.Strings(structOf(status), "warnings") {
		if !slices.Contains(st.Warnings, w) {
			st.Warnings = append(st.Warnings, w)
		}
	}
	if e, ok := status["estimatedMonthlyUsd"].(map[string]any); ok {
		mn, _ := e["min"].(float64)
		mx, _ := e["max"].(float64)
		st.Estimate = &Cost{Min: mn, Max: mx}
	} else if e, ok := status["estimatedMonthlyUsd"].(float64); ok {
		st.Estimate = &Cost{Min: e, Max: e}
	}
	waits := map[string][]string{}
	for name := range st.Resources {
		if by, of, ok := strings.Cut(name, usageInfix); ok && st.Resources[by] != nil && st.Resources[of] != nil {
			waits[by] = append(waits[by], of)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Resources)) {
		o := st.Resources[name]
		meta, _ := o["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		ext, _ := ann["crossplane.io/external-name"].(string)
		slices.Sort(waits[name])
		st.Table = append(st.Table, Resource{
			Name: name, Kind: fmt.Sprint(o["kind"]), APIVersion: fmt.Sprint(o["apiVersion"]), ExternalName: ext,
			WaitsFor: waits[name], Created: created[name], Ready: ready[name],
		})
	}
}

// usageInfix joins a Usage's user and the resource it uses in its name.
const usageInfix = "-uses-"

func structOf(m map[string]any) *structpb.Struct {
	s, _ := structpb.NewStruct(m)
	return s
}

// A Change is one field a reconcile would change on a composed resource.
type Change struct {
	Path     string
	Old, New any
}

// Plan is what one reconcile against observed resources would do.
type Plan struct {
	Added   []string
	Changed map[string][]Change
	// Held are resources the trust rules keep although nothing renders
	// them any more (only the XR's spec may remove them).
	Held    []string
	Removed []string
	Fatal   string
	// Warnings are the reconcile's, Estimate its cost estimate.
	Warnings []string
	Estimate *Cost
	// Upgrade is the XR's status.upgrade: the version walk, every step
	// to the target in order; nil for XRs without one.
	Upgrade *Upgrade
	// Rotations are the node pools that rotate, or wait to.
	Rotations []Rotation
	// XR is the XR as the reconcile leaves it, as crossplane render
	// prints it: its spec, the status the function desires and the
	// conditions Crossplane derives.
	XR xpsim.Object
	// Desired are the composed resources the reconcile renders, by name;
	// nil when a Fatal refused the XR.
	Desired map[string]xpsim.Object
}

// Upgrade is a version walk, as the XR's status says it: a Cluster's
// (ControlPlane set) or a Database's (Running set).
type Upgrade struct {
	Target       string   `json:"target"`
	ControlPlane string   `json:"controlPlane"`
	Running      string   `json:"running"`
	Phase        string   `json:"phase"`
	Step         string   `json:"step"`
	WaitingFor   string   `json:"waitingFor"`
	Plan         []string `json:"plan"`
}

// Rotation is a node pool's blue/green replacement, as its status says it.
type Rotation struct {
	Pool       string   `json:"pool"`
	Resource   string   `json:"resource"`
	From       []string `json:"from"`
	Changes    []string `json:"changes"`
	WaitingFor string   `json:"waitingFor"`
}

// lifecycleOf reads the version walk and the rotations from a desired XR's
// status.
func lifecycleOf(x xpsim.Object) (*Upgrade, []Rotation) {
	status, _ := x["status"].(map[string]any)
	var up *Upgrade
	if u, ok := status["upgrade"].(map[string]any); ok {
		up = &Upgrade{}
		if b, err := json.Marshal(u); err == nil {
			_ = json.Unmarshal(b, up)
		}
	}
	var rots []Rotation
	pools, _ := status["nodePools"].([]any)
	for _, p := range pools {
		m, _ := p.(map[string]any)
		r, ok := m["rotation"].(map[string]any)
		if !ok {
			continue
		}
		rot := Rotation{Pool: fmt.Sprint(m["name"]), Resource: fmt.Sprint(m["resource"])}
		if b, err := json.Marshal(r); err == nil {
			_ = json.Unmarshal(b, &rot)
		}
		rots = append(rots, rot)
	}
	return up, rots
}

// reHeld finds the resources the function holds in its warnings.
var reHeld = regexp.MustCompile(`holding composed resource "([^"]+)"`)

// PlanOne reconciles the XR once against observed (converging first on
// the requirements it returns, which Crossplane answers within the same
// reconcile) and compares the desired resources with the observed ones.
func PlanOne(run Runner, w World, x xpsim.Object, observed map[string]xpsim.Object) (*Plan, error) {
	x = Composite(x)
	required := map[string]*fnv1.ResourceSelector{}
	var rsp *fnv1.RunFunctionResponse
	for range 3 {
		req, err := w.request(x, observed, required)
		if se := (StepError{}); errors.As(err, &se) {
			return &Plan{Changed: map[string][]Change{}, Fatal: se.Error(), XR: x}, nil
		}
		if err != nil {
			return nil, err
		}
		rsp = run(req)
		asked := false
		for name, sel := range rsp.GetRequirements().GetResources() {
			if _, ok := required[name]; !ok {
				asked = true
			}
			required[name] = sel
		}
		if !asked {
			break
		}
	}
	p := &Plan{Changed: map[string][]Change{}, Fatal: xpsim.Fatal(rsp)}
	st := &Stack{}
	st.describe(rsp, nil, nil)
	p.Warnings, p.Estimate = st.Warnings, st.Estimate
	p.Upgrade, p.Rotations = lifecycleOf(st.XR)
	p.XR = renderedXR(withStatus(x, st.XR), rsp)
	if p.Fatal != "" {
		return p, nil
	}
	desired := st.Resources
	p.Desired = desired
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		obs, ok := observed[name]
		if !ok {
			p.Added = append(p.Added, name)
			continue
		}
		if ch := diff("", desired[name], obs); len(ch) > 0 {
			p.Changed[name] = ch
		}
	}
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		if _, ok := desired[name]; !ok {
			p.Removed = append(p.Removed, name)
		}
	}
	for _, w := range p.Warnings {
		for _, m := range reHeld.FindAllStringSubmatch(w, -1) {
			if !slices.Contains(p.Held, m[1]) {
				p.Held = append(p.Held, m[1])
			}
		}
	}
	slices.Sort(p.Held)
	return p, nil
}

// diff lists the leaves of desired whose value observed does not have:
// what applying desired would change. Fields only observed has (status,
// what the provider or the API server set) are not changes.
func diff(path string, desired, observed any) []Change {
	switch d := desired.(type) {
	case map[string]any:
		o, _ := observed.(map[string]any)
		var out []Change
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if path == "" && k == "status" {
				continue
			}
			out = append(out, diff(join(path, k), d[k], o[k])...)
		}
		return out
	case []any:
		if o, ok := observed.([]any); ok && fmt.Sprint(o) == fmt.Sprint(d) {
			return nil
		}
		return []Change{{Path: path, Old: observed, New: desired}}
	default:
		if fmt.Sprint(desired) == fmt.Sprint(observed) && observed != nil {
			return nil
		}
		return []Change{{Path: path, Old: observed, New: desired}}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Impact is one XR's plan under a changed environment.
type Impact struct {
	File    string   `json:"file"`
	XR      string   `json:"xr"`
	Added   []string `json:"added,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Held    []string `json:"held,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Fatal   string   `json:"fatal,omitempty"`
	// CostDelta is the change of the monthly estimate, new minus old.
	CostDelta *Cost `json:"costDelta,omitempty"`
	// Cluster is, for a Cluster XR, what it runs as the change reaches
	// it, and the fleet controller's ruling on it: what the rollout
	// report (RolloutOf) places in its wave.
	Cluster *FleetCluster `json:"-"`
}

// A FleetXR is one XR of a fleet: the file it came from, the XR, and its
// observed resources when they are known.
type FleetXR struct {
	File     string
	XR       xpsim.Object
	Observed map[string]xpsim.Object
}

// Fleet plans every XR of a fleet under the new environment, against its
// observed resources or, without them, against the stack it converges to
// under the old environment: what the environment change would do to it.
// Crossplane delivers other XRs as required resources (the Cluster a
// Database joins), so every plan under the new environment sees the fleet
// as it stands before the change: each XR with the status its reconcile
// under the old environment leaves, itself too.
//
// A Cluster the rollout gates adopts the new environment's target only on
// the fleet controller's ruling on it (package fleet), a ConfigMap it
// requires by name; preview stands in for the controller as a control
// plane would. It plans each XR once under the new environment, as
// Crossplane's first reconcile after the change, which the controller has
// not ruled on yet (so a gated Cluster holds); takes every Cluster into
// the fleet as the API server then holds it (reported: the status.rollout
// that reconcile reports, with the target each Cluster is asked for);
// rules on the whole fleet with the controller's own code
// (fleet.ConfigMaps: the new environment's baseline, at now; zero means
// no clock, so that no wave's soak has passed); puts the rulings'
// ConfigMaps among the new environment's objects; and plans each Cluster
// ruled on again. So its counts are what the gate lets through, and each
// Impact's Cluster carries its ruling. planned, when not nil, is called
// after each of the 2×len(xrs) plans it counts (the old environment's,
// then the new one's, ruled on or not).
func Fleet(run Runner, old, updated World, xrs []FleetXR, now time.Time, planned func()) ([]Impact, error) {
	if planned == nil {
		planned = func() {}
	}
	all := make([]fleetPlan, 0, len(xrs))
	var peers []xpsim.Object
	for _, f := range xrs {
		p, err := fleetBefore(run, old, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.File, err)
		}
		planned()
		if p.before != nil && p.before.Fatal == "" {
			p.x = p.before.XR
			peers = append(peers, p.x)
		}
		all = append(all, p)
	}
	updated.Objects = append(slices.Clone(updated.Objects), peers...)

	// Crossplane's first reconcile under the new environment, and the
	// fleet as the API server holds it then.
	var clusters []map[string]any
	for i := range all {
		p := &all[i]
		fatal := p.im.Fatal
		if p.before != nil {
			after, err := PlanOne(run, updated, p.x, p.observed)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.im.File, err)
			}
			p.after, fatal = after, after.Fatal
		}
		if !fleet.IsCluster(p.x) {
			continue
		}
		var first xpsim.Object
		if fatal == "" {
			first = p.after.XR
		}
		p.reported = reported(p.file, p.x, first, fatal)
		p.im.Cluster = clusterOf(p.reported, fatal)
		clusters = append(clusters, p.reported)
	}
	// The fleet controller's rulings. Rollout keys it refuses rule on
	// nothing: the function refuses every Cluster with a Fatal then.
	rulings, _ := fleet.ConfigMaps(updated.Environment, clusters, now)
	byName := map[string]rollout.Ruling{}
	for _, cm := range rulings {
		if r, err := rollout.ReadRuling(cm); err == nil {
			byName[rollout.RulingName(r.Cluster)] = r
		}
	}
	updated.Objects = append(updated.Objects, rulings...)

	out := make([]Impact, 0, len(all))
	for _, p := range all {
		planned()
		if p.before == nil {
			out = append(out, p.im)
			continue
		}
		after := p.after
		if c := p.im.Cluster; c != nil {
			if r, ok := byName[rollout.RulingName(rollout.RefOf(p.reported))]; ok {
				c.Ruling = &r
				var err error
				if after, err = PlanOne(run, updated, p.x, p.observed); err != nil {
					return nil, fmt.Errorf("%s: %w", p.im.File, err)
				}
			}
		}
		im := p.im
		im.Added, im.Held, im.Removed, im.Fatal = after.Added, after.Held, after.Removed, after.Fatal
		for _, name := range slices.Sorted(maps.Keys(after.Changed)) {
			// What the old environment would change too is not the new
			// environment's doing.
			if fmt.Sprint(p.before.Changed[name]) != fmt.Sprint(after.Changed[name]) {
				im.Changed = append(im.Changed, name)
			}
		}
		if p.before.Estimate != nil && after.Estimate != nil {
			im.CostDelta = &Cost{Min: round(after.Estimate.Min - p.before.Estimate.Min), Max: round(after.Estimate.Max - p.before.Estimate.Max)}
		}
		out = append(out, im)
	}
	return out, nil
}

// fleetPlan is an XR of a fleet planned under the old environment.
type fleetPlan struct {
	im Impact
	// file is the XR as its file has it; x as it stands before the
	// change: the XR the old environment's reconcile leaves, when it
	// leaves one.
	file, x  xpsim.Object
	observed map[string]xpsim.Object
	// before is its plan under the old environment; nil when the old
	// environment refuses it outright (im says so).
	before *Plan
	// after is its first plan under the new environment, before the
	// fleet controller has ruled; reported, for a Cluster, the XR as the
	// API server holds it then.
	after    *Plan
	reported xpsim.Object
	// refused is the Fatal with which the old environment's convergence
	// stopped, when it did (before is nil then).
	refused string
}

// fleetBefore plans an XR under the old environment, against its observed
// resources or the stack it converges to there.
func fleetBefore(run Runner, old World, f FleetXR) (fleetPlan, error) {
	x := Composite(f.XR)
	meta, _ := x["metadata"].(map[string]any)
	name := fmt.Sprint(meta["name"])
	if ns, _ := meta["namespace"].(string); ns != "" {
		name = ns + "/" + name
	}
	p := fleetPlan{im: Impact{File: f.File, XR: fmt.Sprintf("%v %s", x["kind"], name)}, file: x, x: x, observed: f.Observed}
	if len(p.observed) == 0 {
		st, err := Converge(run, old, x, nil)
		if err != nil {
			return p, err
		}
		if st.Fatal != "" {
			p.im.Fatal, p.refused = "under the old environment: "+st.Fatal, st.Fatal
			return p, nil
		}
		p.observed = map[string]xpsim.Object{}
		for name, o := range st.Resources {
			p.observed[name] = simulate.Observe(o, name)
		}
	}
	before, err := PlanOne(run, old, x, p.observed)
	if err != nil {
		return p, err
	}
	p.before = before
	return p, nil
}

func round(v float64) float64 { return math.Round(v*100) / 100 }
