package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// State is what decide concluded about every rendered and observed
// composed resource.
type State struct {
	rendered []*registry.Rendered
	observed map[string]*structpb.Struct

	// emitted are the rendered resources sent as desired.
	emitted map[string]bool
	// ready is the readiness of every resource, from its observed state.
	ready map[string]bool
	// held are rendered resources not composed yet, with what they wait for.
	held map[string]string
	// onOtherXR is whether a held resource waits for another XR's
	// resource: Pending with OnOtherXR, or a Use not ready yet.
	onOtherXR bool
	// kept are observed resources no longer rendered but held, because no
	// statement of the XR's spec removed them.
	kept map[string]component.Removal
	// retired are observed resources the spec removed, or older
	// generations of rotated node pools, with why.
	retired map[string]string
	// refused are observed resources whose provider refuses an update
	// because it would replace the cloud resource, with its message: they
	// are not ready, whatever their Ready condition says.
	refused map[string]string
}

// isReady applies a kind's readiness rule to an observed resource.
func isReady(k *registry.ResourceKind, obs *structpb.Struct) bool {
	if obs == nil {
		return false
	}
	switch k.Ready {
	case registry.ReadyWhenObserved:
		return true
	case registry.ReadyWhenReported:
		return object.IsConditionTrue(obs, "Ready") && object.String(obs, strings.Split(k.Reported, ".")...) != ""
	}
	return object.IsConditionTrue(obs, "Ready")
}

// isReadyObserved is the readiness of an observed resource whose kind the
// registry no longer renders: its Ready condition, or, for kinds without
// conditions, its existence.
func isReadyObserved(obs *structpb.Struct) bool {
	if len(object.Conditions(obs)) == 0 {
		return true
	}
	return object.IsConditionTrue(obs, "Ready")
}

// decide works out which rendered resources to compose now and what to do
// with observed resources the registry did not render.
func decide(x *xr.Composite, removals component.Remover, rendered []*registry.Rendered, observed map[string]*structpb.Struct) *State {
	st := &State{
		rendered: rendered,
		observed: observed,
		emitted:  make(map[string]bool, len(rendered)),
		ready:    make(map[string]bool, len(rendered)+len(observed)),
		held:     map[string]string{},
		kept:     map[string]component.Removal{},
		retired:  map[string]string{},
		refused:  map[string]string{},
	}
	byName := make(map[string]*registry.Rendered, len(rendered))
	for _, rd := range rendered {
		byName[rd.Name] = rd
		st.ready[rd.Name] = isReady(rd.Kind, observed[rd.Name])
		if msg, ok := lifecycle.Refusing(observed[rd.Name]); ok && rd.Retire == "" {
			// A resource whose update is refused forever is never ready.
			st.ready[rd.Name] = false
			st.refused[rd.Name] = msg
		}
	}

	for _, rd := range rendered {
		switch {
		case rd.Retire != "":
			st.retired[rd.Name] = rd.Retire
		case observed[rd.Name] != nil:
			// Whatever exists stays composed, whatever its prerequisites
			// are doing now.
			st.emitted[rd.Name] = true
		case rd.UsageBy != "":
			// A Usage comes once both its ends exist (until then it is
			// Pending, see registry.withUsages); it holds nothing back.
			if st.emitted[rd.UsageBy] && rd.Pending == "" {
				st.emitted[rd.Name] = true
			}
		case x.Deleting:
			st.held[rd.Name] = "the XR is being deleted"
		case rd.Pending != "":
			st.held[rd.Name] = rd.Pending
			st.onOtherXR = st.onOtherXR || rd.OnOtherXR
		default:
			var waiting []string
			for _, d := range rd.DependsOn {
				if !st.ready[d] {
					waiting = append(waiting, d)
				}
			}
			for _, u := range rd.Uses {
				if !isReady(u.Kind, u.Observed) {
					waiting = append(waiting, u.Name)
					st.onOtherXR = true
				}
			}
			if len(waiting) > 0 {
				st.held[rd.Name] = "waits for " + strings.Join(waiting, ", ")
				continue
			}
			st.emitted[rd.Name] = true
		}
	}

	// Observed resources the registry did not render: the spec removed
	// them, or they are held. Usages follow what they protect.
	var usages []string
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		obs := observed[name]
		if _, ok := byName[name]; ok || !ours(obs) {
			continue
		}
		if registry.IsUsage(obs) {
			usages = append(usages, name)
			continue
		}
		st.ready[name] = isReadyObserved(obs)
		r := removal(x, removals, name, obs)
		if r.BySpec {
			st.retired[name] = r.Why
			continue
		}
		st.kept[name] = r
	}
	st.holdUsedElsewhere(observed)
	for _, name := range usages {
		obs := observed[name]
		st.ready[name] = true
		by, of := registry.UsageEnds(obs)
		if _, gone := st.retired[of]; gone {
			st.retired[name] = fmt.Sprintf("it protects %q, which the spec removed", of)
			continue
		}
		if _, gone := st.retired[by]; gone {
			st.retired[name] = fmt.Sprintf("%q, which used %q, was removed by the spec", by, of)
			continue
		}
		if r := removal(x, removals, name, obs); r.BySpec {
			st.retired[name] = r.Why
			continue
		}
		if !st.desired(of) || !st.desired(by) {
			st.retired[name] = fmt.Sprintf("%q no longer depends on %q", by, of)
			continue
		}
		// A Usage an earlier version composed on an edge whose deletion
		// order does not matter (registry.UsageRules) goes, and the stack
		// keeps only the Usages it needs; but not one that refused a
		// deletion of what it protects: with replayDeletion, removing it
		// would delete that.
		if rby, rof := byName[by], byName[of]; rby != nil && rof != nil && object.Annotation(obs, registry.AnnotationDeletionAttempt) == "" {
			if _, ok := registry.NeedsUsage(rby.Kind, rof.Kind); !ok {
				st.retired[name] = fmt.Sprintf("the order in which %q and %q are deleted does not matter (registry.UsageRules)", by, of)
				continue
			}
		}
		st.kept[name] = component.Removal{Why: fmt.Sprintf("it protects %q while %q uses it", of, by)}
	}
	return st
}

// holdUsedElsewhere holds what the spec removed but a Usage of another XR
// still protects (a Cluster's private services connection, while a
// Database's instance uses it), and what goes with it (the rest of its
// component): Crossplane's webhook would refuse the delete, failing every
// reconcile of this XR until nothing uses it, and the rest of the
// component would be left half deleted (its deletion cannot be taken back
// if the owner changes their mind). They go once nothing uses them.
func (st *State) holdUsedElsewhere(observed map[string]*structpb.Struct) {
	// Most reconciles remove nothing: then there is nothing to hold.
	if len(st.retired) == 0 {
		return
	}
	// What this XR's own Usages protect: those go with their users.
	protected := map[string]bool{}
	for _, obs := range observed {
		if registry.IsUsage(obs) {
			_, of := registry.UsageEnds(obs)
			protected[of] = true
		}
	}
	// inUse are the protected ones; used names, per component, the first
	// of them, which the rest of its component goes with. A resource of
	// no component goes alone.
	inUse, used := map[string]bool{}, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(st.retired)) {
		obs := observed[name]
		if obs == nil || registry.IsUsage(obs) || protected[name] || object.StringMap(obs, "metadata", "labels")[registry.LabelInUse] != "true" {
			continue
		}
		inUse[name] = true
		if comp := object.Annotation(obs, registry.AnnotationComponent); comp != "" && used[comp] == "" {
			used[comp] = name
		}
	}
	if len(inUse) == 0 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(st.retired)) {
		obs := observed[name]
		if obs == nil || registry.IsUsage(obs) {
			continue
		}
		by, ok := name, inUse[name]
		if comp := object.Annotation(obs, registry.AnnotationComponent); !ok && comp != "" {
			by, ok = used[comp]
		}
		if !ok {
			continue
		}
		why := fmt.Sprintf("removed (%s), but a Usage of another XR still protects it (label %s)", st.retired[name], registry.LabelInUse)
		if by != name {
			why = fmt.Sprintf("removed (%s), but it goes with %q, which a Usage of another XR still protects (label %s)", st.retired[name], by, registry.LabelInUse)
		}
		delete(st.retired, name)
		st.kept[name] = component.Removal{InUse: true, Why: why}
	}
}

// removal says whether the XR's spec removed an observed composed resource
// that is no longer rendered: confirmed by name in
// spec.parameters.confirmRemovals, left out of an import.only set, or
// removed by a statement of the spec about its component.
func removal(x *xr.Composite, removals component.Remover, name string, obs *structpb.Struct) component.Removal {
	if slices.Contains(x.ConfirmRemovals, name) {
		return component.Removal{BySpec: true, Why: "spec.parameters.confirmRemovals lists it"}
	}
	if imp := x.Import; imp.Enabled && imp.Only {
		if _, imported := imp.Resources[name]; !imported {
			return component.Removal{BySpec: true, Why: "spec.parameters.import.only is set and it is not imported"}
		}
	}
	return removals.Removal(object.Annotation(obs, registry.AnnotationComponent))
}

// heldNames are the held resources that are not Usages, sorted: what the
// XR's owner is asked to confirm. A held Usage goes with what it protects.
func (st *State) heldNames() []string {
	out := make([]string, 0, len(st.kept))
	for _, name := range slices.Sorted(maps.Keys(st.kept)) {
		if !registry.IsUsage(st.observed[name]) {
			out = append(out, name)
		}
	}
	return out
}

// desired reports whether the named resource is in the desired state.
func (st *State) desired(name string) bool {
	_, kept := st.kept[name]
	return st.emitted[name] || kept
}

// WaitsOnOtherXR reports whether a resource is held until another XR's
// resource reports a value or is ready. Crossplane v2.3 re-runs an XR when
// its own composed resources change, not when another XR's do; v2.4 also
// when a resource a function required changes (it watches every
// requirement: crossplane v2.4.0 composite/composition_functions.go and
// its dependency.Tracker), and the other XR's resources reach the function
// as requirements. The caller answers with the converging TTL meanwhile,
// which v2.3 needs and v2.4 keeps as a backstop.
func (st *State) WaitsOnOtherXR() bool { return st.onOtherXR }

// Ready reports whether everything is composed and ready.
func (st *State) Ready() bool {
	if len(st.held) > 0 {
		return false
	}
	for name := range st.emitted {
		if !st.ready[name] {
			return false
		}
	}
	for name := range st.kept {
		if !st.ready[name] {
			return false
		}
	}
	return true
}

// write adds the desired composed resources to the response. It returns
// the names of resources an earlier pipeline step desired too.
func (st *State) write(rsp *fnv1.RunFunctionResponse) ([]string, error) {
	var clashes []string
	prior := rsp.GetDesired().GetResources()
	// The rendered objects' values, allocated in batches.
	var batch object.Batch
	for _, rd := range st.rendered {
		if !st.emitted[rd.Name] {
			continue
		}
		if _, clash := prior[rd.Name]; clash {
			clashes = append(clashes, rd.Name)
		}
		var s *structpb.Struct
		if rd.Object == nil {
			// Pending but existing: leave it as it is.
			s = keep(st.observed[rd.Name])
		} else {
			var err error
			if s, err = batch.NewStruct(rd.Object); err != nil {
				return nil, fmt.Errorf("cannot encode composed resource %q: %w", rd.Name, err)
			}
		}
		setDesired(rsp, rd.Name, s, readyOf(st.ready[rd.Name]))
	}
	for _, name := range slices.Sorted(maps.Keys(st.kept)) {
		setDesired(rsp, name, keep(st.observed[name]), readyOf(st.ready[name]))
	}
	if len(st.held) > 0 {
		// Resources not composed yet do not count towards the XR's
		// readiness, so say explicitly that it is not ready.
		if rsp.Desired.Composite == nil {
			rsp.Desired.Composite = &fnv1.Resource{}
		}
		rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	}
	return clashes, nil
}

func readyOf(b bool) fnv1.Ready {
	if b {
		return fnv1.Ready_READY_TRUE
	}
	return fnv1.Ready_READY_FALSE
}
