package fntest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// A World is everything a reconcile sees: the XR, the environment, what the
// providers report, what earlier pipeline steps desire, and the required
// resources Crossplane delivers.
type World struct {
	XR          Object
	Envs        []Object
	Fetched     bool
	Context     Object
	Observed    map[string]Object
	Connections map[string]map[string][]byte
	Desired     map[string]Object
	Spend       []Object
	Extra       map[string][]Object
}

// Request is the request of one reconcile of the world.
func (w *World) Request() Request {
	return Request{
		XR:                 w.XR,
		EnvironmentConfigs: w.Envs,
		Fetched:            w.Fetched,
		Context:            w.Context,
		Observed:           w.Observed,
		Connections:        w.Connections,
		Desired:            w.Desired,
		Spend:              w.Spend,
		Extra:              w.Extra,
	}
}

// A Check asserts something of a response.
type Check func(t *testing.T, rsp *fnv1.RunFunctionResponse)

// A Step is one reconcile of a scenario.
type Step struct {
	Name string
	// Spec is the XR owner's change to the XR before this reconcile.
	Spec func(w *World)
	// World is any other change before this reconcile: the environment,
	// the providers' reports, the pipeline context.
	World func(w *World)
	// Removes names the resources whose removal the spec change of this
	// step asks for; a removed resource's Usages may go with it.
	Removes []string
	// Fatal, when set, is a part of the Fatal result the step must give.
	Fatal string
	// Check asserts more about the response.
	Check Check
	// Hold keeps the providers from acting on this reconcile's desired
	// state.
	Hold bool
	// Converge repeats the step, letting the providers act after each
	// reconcile, until everything desired is ready.
	Converge bool
	// Upgrade says a new version of the function reconciles the world an
	// earlier one composed: it may drop that version's Usages between two
	// resources it still composes (dropping one deletes nothing), unless
	// Crossplane refused a delete on it, and nothing else.
	Upgrade bool
}

// A Scenario is a sequence of reconciles of one XR.
type Scenario struct {
	Reason string
	XR     Object
	// Extra are the required resources Crossplane delivers, by
	// requirement name.
	Extra map[string][]Object
	Steps []Step
	// Status writes the desired composite's status to the XR after each
	// reconcile without a Fatal, as Crossplane does, so that the next
	// reconcile reads what this one reported. (Crossplane applies it
	// server-side: a field the function stops returning goes, as here.)
	Status bool
}

// removedBy reports whether the spec change that removes the named
// resources accounts for the removal of name: the resource itself or a
// Usage it takes part in.
func removedBy(name string, removes []string) bool {
	for _, r := range removes {
		if name == r || strings.HasPrefix(name, r+"-uses-") || strings.HasSuffix(name, "-uses-"+r) {
			return true
		}
	}
	return false
}

// Rotated returns the resource that replaced an observed node pool that
// is no longer desired, or "": a resource of the same component and kind,
// observed Ready before the call and still desired. Only a node pool's
// older generation may go that way: once its new one is Ready (a rotation,
// for a field the cloud can change only by replacing the pool). A Usage
// goes with the generation it protected.
func Rotated(name string, before, desired map[string]Object) string {
	if by, of, ok := strings.Cut(name, "-uses-"); ok {
		for _, n := range []string{by, of} {
			if _, was := before[n]; was {
				if _, still := desired[n]; !still {
					if r := Rotated(n, before, desired); r != "" {
						return r
					}
				}
			}
		}
		return ""
	}
	gone := before[name]
	comp := annotation(gone, "platform.example.org/component")
	if !strings.HasPrefix(comp, "pool/") {
		return ""
	}
	for _, other := range slices.Sorted(maps.Keys(before)) {
		o := before[other]
		if other == name || annotation(o, "platform.example.org/component") != comp || o["kind"] != gone["kind"] || !ready(o) {
			continue
		}
		if _, ok := desired[other]; ok {
			return other
		}
	}
	return ""
}

func annotation(o Object, key string) string {
	meta, _ := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, _ := ann[key].(string)
	return s
}

func ready(o Object) bool {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// usagesBetweenDesired are the observed Usages no longer desired whose two
// ends, read from the Usage's name (<by>-uses-<of>), are both still
// desired: what a new version may drop.
func usagesBetweenDesired(before, desired map[string]Object) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		kind, _ := before[name]["kind"].(string)
		by, of, ok := strings.Cut(name, "-uses-")
		if _, still := desired[name]; still || !ok || (kind != "Usage" && kind != "ClusterUsage") {
			continue
		}
		// Deleting a Usage on which Crossplane's webhook refused a delete
		// replays that delete (replayDeletion): dropping it is no
		// harmless drop. The annotation is Crossplane's (v2.3.4
		// internal/protection/usage.go), named here, not taken from the
		// code under test.
		meta, _ := before[name]["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		if _, refused := ann["usage.crossplane.io/deletion-attempt-with-policy"]; refused {
			continue
		}
		_, byDesired := desired[by]
		_, ofDesired := desired[of]
		if byDesired && ofDesired {
			out = append(out, name)
		}
	}
	return out
}

// CheckInvariant is the safety invariant checked after every reconcile,
// independently of the function's code: a composed resource that was
// observed before the reconcile is still desired, unless the spec change of
// this step removed it, or the response is Fatal (then Crossplane changes
// nothing).
func CheckInvariant(t *testing.T, where string, before map[string]Object, rsp *fnv1.RunFunctionResponse, removes []string) {
	t.Helper()
	if Fatal(rsp) != "" {
		return
	}
	desired := rsp.GetDesired().GetResources()
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := desired[name]; ok || removedBy(name, removes) || Rotated(name, before, Desired(rsp)) != "" {
			continue
		}
		t.Errorf("%s: INVARIANT VIOLATED: observed composed resource %q is no longer desired, and the spec change did not remove it", where, name)
	}
	for _, r := range removes {
		if _, ok := desired[r]; ok {
			t.Errorf("%s: %q is still desired after the spec removed it", where, r)
		}
	}
}

// Run runs the scenario's steps with the supplied function and starting
// environment, checking the invariant after every reconcile. It returns the
// number of reconciles.
func (s Scenario) Run(t *testing.T, run Runner, envs []Object) int {
	t.Helper()
	w := &World{XR: overlay.DeepCopy(s.XR), Envs: envs, Observed: map[string]Object{}, Extra: s.Extra}
	calls := 0
	for i, st := range s.Steps {
		where := fmt.Sprintf("step %d (%s)", i+1, st.Name)
		if st.Spec != nil {
			st.Spec(w)
		}
		if st.World != nil {
			st.World(w)
		}
		for round := 1; ; round++ {
			before := w.Observed
			req, err := w.Request().Proto()
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			rsp := run(req)
			calls++
			removes := st.Removes
			if st.Upgrade {
				removes = append(slices.Clone(removes), usagesBetweenDesired(before, Desired(rsp))...)
			}
			CheckInvariant(t, where, before, rsp, removes)
			msg := Fatal(rsp)
			switch {
			case st.Fatal == "" && msg != "":
				t.Fatalf("%s: unexpected Fatal: %s", where, msg)
			case st.Fatal != "" && !strings.Contains(msg, st.Fatal):
				t.Fatalf("%s: want a Fatal containing %q, got %q", where, st.Fatal, msg)
			}
			if !st.Converge && st.Check != nil {
				st.Check(t, rsp)
			}
			if msg == "" && !st.Hold {
				w.Observed = ObserveAll(rsp, w.Observed)
				w.Connections = Connections(rsp)
				if s.Status {
					if st, ok := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any); ok {
						w.XR["status"] = st
					}
				}
			}
			if !st.Converge || AllReady(rsp) && len(rsp.GetDesired().GetResources()) == len(before) {
				if st.Converge && st.Check != nil {
					st.Check(t, rsp)
				}
				break
			}
			if round > 30 {
				t.Fatalf("%s: did not converge in 30 reconciles", where)
			}
		}
	}
	return calls
}

// RunAll runs every scenario as a subtest and logs how many reconciles the
// invariant was checked after.
func RunAll(t *testing.T, what string, run Runner, envs []Object, scenarios map[string]Scenario) {
	t.Helper()
	calls := 0
	for name, s := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Log(s.Reason)
			calls += s.Run(t, run, envs)
		})
	}
	t.Logf("%d %s, %d reconciles; invariant checked after each: an observed composed resource stays desired unless the step's spec change removed it, or the response is Fatal", len(scenarios), what, calls)
}

// ConvergeStep is a step that lets the providers act until everything is
// ready.
func ConvergeStep(name string) Step { return Step{Name: name, Converge: true} }

// Checks.

// Desires checks that the named resources are desired.
func Desires(names ...string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, n := range names {
			if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
				t.Errorf("%q is not desired; desired: %v", n, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())))
			}
		}
	}
}

// Lacks checks that the named resources are not desired.
func Lacks(names ...string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, n := range names {
			if _, ok := rsp.GetDesired().GetResources()[n]; ok {
				t.Errorf("%q is desired, want it absent", n)
			}
		}
	}
}

// Condition checks a condition's status (TRUE, FALSE, UNKNOWN) and reason.
func Condition(typ, status, reason string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range rsp.GetConditions() {
			if c.GetType() != typ {
				continue
			}
			if got := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_"); got != status || c.GetReason() != reason {
				t.Errorf("condition %s is %s/%s (%s), want %s/%s", typ, got, c.GetReason(), c.GetMessage(), status, reason)
			}
			return
		}
		t.Errorf("no condition %s", typ)
	}
}

// ConditionMentions checks that a condition's message contains part.
func ConditionMentions(typ, part string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range rsp.GetConditions() {
			if c.GetType() == typ {
				if !strings.Contains(c.GetMessage(), part) {
					t.Errorf("condition %s does not mention %q: %s", typ, part, c.GetMessage())
				}
				return
			}
		}
		t.Errorf("no condition %s", typ)
	}
}

// Warns checks that the XR's status lists a warning containing part.
func Warns(part string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		ws, _ := st["warnings"].([]any)
		for _, w := range ws {
			if strings.Contains(w.(string), part) {
				return
			}
		}
		t.Errorf("no warning containing %q", part)
	}
}

// Field checks a dotted path of a desired resource.
func Field(name, path string, want any) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		r, ok := rsp.GetDesired().GetResources()[name]
		if !ok {
			t.Errorf("%q is not desired", name)
			return
		}
		var cur any = r.GetResource().AsMap()
		for _, p := range strings.Split(path, ".") {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		if fmt.Sprint(cur) != fmt.Sprint(want) {
			t.Errorf("%s %s = %v, want %v", name, path, cur, want)
		}
	}
}

// IsReady checks whether everything desired is ready.
func IsReady(want bool) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if got := AllReady(rsp); got != want {
			t.Errorf("everything ready = %t, want %t", got, want)
		}
	}
}

// TTL checks the response's TTL.
func TTL(want time.Duration) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if got := rsp.GetMeta().GetTtl().AsDuration(); got != want {
			t.Errorf("TTL %s, want %s", got, want)
		}
	}
}

// Requires checks that the function asked for the EnvironmentConfigs.
func Requires(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if rsp.GetRequirements().GetResources()[envcfg.FallbackRequirementName] == nil {
		t.Errorf("the function did not ask for the EnvironmentConfigs")
	}
}

// FatalHas checks that the response is a Fatal naming every part.
func FatalHas(parts ...string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		msg := Fatal(rsp)
		for _, p := range parts {
			if !strings.Contains(msg, p) {
				t.Errorf("the Fatal does not name %q: %s", p, msg)
			}
		}
	}
}

// All runs every check.
func All(checks ...Check) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range checks {
			c(t, rsp)
		}
	}
}

// Held checks that the named resources are still desired, each named in a
// Warning and in the RemovalsSettled condition, which awaits the owner.
func Held(names ...string) Check { return held("AwaitingOwner", names) }

// HeldInUse is Held for resources that only wait for another XR to stop
// using them: RemovalsSettled's reason is InUseElsewhere.
func HeldInUse(names ...string) Check { return held("InUseElsewhere", names) }

// held checks that the named resources are still desired, each named in a
// Warning and in the RemovalsSettled condition, False with reason.
func held(reason string, names []string) Check {
	checks := []Check{Desires(names...), Condition("RemovalsSettled", "FALSE", reason)}
	for _, n := range names {
		checks = append(checks, Warns(fmt.Sprintf("holding composed resource %q", n)), ConditionMentions("RemovalsSettled", n))
	}
	return All(checks...)
}

// Changes.

// Edit sets a dotted path of the XR; nil deletes it.
func Edit(path string, v any) func(*World) {
	return func(w *World) { Set(path, v)(w.XR) }
}

// ObservedCondition sets a condition of an observed resource.
func ObservedCondition(name, typ, status, message string) func(*World) {
	return func(w *World) {
		o := overlay.DeepCopy(w.Observed[name])
		if o == nil {
			return
		}
		st, _ := o["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			o["status"] = st
		}
		conds := []any{map[string]any{"type": typ, "status": status, "reason": "Simulated", "message": message}}
		prev, _ := st["conditions"].([]any)
		for _, c := range prev {
			if c.(map[string]any)["type"] != typ {
				conds = append(conds, c)
			}
		}
		st["conditions"] = conds
		w.Observed = maps.Clone(w.Observed)
		w.Observed[name] = o
	}
}

// Vanish removes an observed resource, as if the provider lost it.
func Vanish(name string) func(*World) {
	return func(w *World) {
		w.Observed = maps.Clone(w.Observed)
		delete(w.Observed, name)
	}
}

// EnvWithout removes a key from every EnvironmentConfig.
func EnvWithout(key string) func(*World) {
	return func(w *World) {
		out := make([]Object, 0, len(w.Envs))
		for _, e := range w.Envs {
			e = overlay.DeepCopy(e)
			delete(e["data"].(map[string]any), key)
			out = append(out, e)
		}
		w.Envs = out
	}
}

// EnvEdit sets a dotted path of the data of the named EnvironmentConfig;
// nil deletes it.
func EnvEdit(config, path string, v any) func(*World) {
	return func(w *World) {
		out := make([]Object, 0, len(w.Envs))
		for _, e := range w.Envs {
			e = overlay.DeepCopy(e)
			if e["metadata"].(map[string]any)["name"] == config {
				Set("data."+path, v)(e)
			}
			out = append(out, e)
		}
		w.Envs = out
	}
}

// EnvDrop removes the named EnvironmentConfig.
func EnvDrop(config string) func(*World) {
	return func(w *World) {
		out := make([]Object, 0, len(w.Envs))
		for _, e := range w.Envs {
			if e["metadata"].(map[string]any)["name"] != config {
				out = append(out, e)
			}
		}
		w.Envs = out
	}
}

// PlaneIDs are the example Clusters' projects, accounts and subscriptions,
// by cloud.
var PlaneIDs = map[string]string{"gcp": "my-project-123", "aws": "123456789012", "azure": "00000000-0000-0000-0000-000000000000"}

// Status checks a field of the XR's status: set, and equal to want unless
// want is nil.
func Status(key string, want any) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		if st[key] == nil || (want != nil && !cmp.Equal(st[key], want)) {
			t.Errorf("status.%s = %v, want %v", key, st[key], want)
		}
	}
}

// NoStatus checks that the XR's status has no such field.
func NoStatus(key string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		if v, ok := st[key]; ok {
			t.Errorf("status.%s = %v, want none", key, v)
		}
	}
}

// ConnectionKeys checks the keys of the XR's connection details in the
// response: exactly want, none when want is empty.
func ConnectionKeys(want ...string) Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		got := slices.Sorted(maps.Keys(rsp.GetDesired().GetComposite().GetConnectionDetails()))
		if diff := cmp.Diff(slices.Sorted(slices.Values(want)), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("XR connection detail keys: -want +got:\n%s", diff)
		}
	}
}

// NoEmptyRegion checks that no desired resource names an empty region or
// location in spec.forProvider.
func NoEmptyRegion(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())) {
		spec, _ := rsp.GetDesired().GetResources()[name].GetResource().AsMap()["spec"].(map[string]any)
		fp, _ := spec["forProvider"].(map[string]any)
		for _, k := range []string{"region", "location"} {
			if v, ok := fp[k]; ok && fmt.Sprint(v) == "" {
				t.Errorf("%s: spec.forProvider.%s is empty", name, k)
			}
		}
	}
}

// Grant returns an environment change that grants a namespace hosts and
// cloud names in the tenancy of names (environment key tenancy), as the
// platform team does for a namespace that imports existing resources or
// publishes under a domain of its own.
func Grant(namespace string, hosts, names []string) func(*World) {
	return EnvEdit("cluster-platform-baseline", "tenancy.namespaces."+namespace, map[string]any{"hosts": FromStrings(hosts), "names": FromStrings(names)})
}

// FromStrings is a list of strings as an object's list.
func FromStrings(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// Granted is a step that first applies a grant (Grant).
func Granted(st Step, grant func(*World)) Step {
	prev := st.World
	st.World = func(w *World) {
		grant(w)
		if prev != nil {
			prev(w)
		}
	}
	return st
}
