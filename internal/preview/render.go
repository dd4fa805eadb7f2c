package preview

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// What crossplane render adds to the function's output, so that
// preview -o yaml diffs cleanly against a render of the same stack:
//
//	crossplane render <xr> <composition> <functions> --include-full-xr \
//	  --required-resources=<dir> --observed-resources=<(preview -o observed)>
//
// (make render's converged stage). It follows cmd/crank/render of the
// crossplane CLI pinned in tools/go.mod: Render, and
// SetComposedResourceMetadata, which mirrors Crossplane's composition
// controller. Each composed resource keeps the name its observed resource
// has, and gets the XR's namespace (a namespaced XR's), the
// crossplane.io/composition-resource-name annotation, the
// crossplane.io/composite label (and the crossplane.io/claim-* labels of a
// claim's XR), and the XR as its controller owner. The XR gets the Ready
// condition Crossplane derives from the readiness the function reports,
// then the function's conditions, all at crossplane render's fixed time.
//
// Where this differs from a real Crossplane rather than from crossplane
// render: the names are the simulated providers' (a five-character suffix,
// see simulate.Name), where Crossplane generates <xr>-<random>; the owner
// reference's uid is the XR file's metadata.uid, empty for a file without
// one; a claim's XR is named by preview (xpsim.ClaimComposite), not
// <claim>-<random>; and the lastTransitionTimes are crossplane render's.

// conditionTime is the lastTransitionTime crossplane render gives every
// condition.
const conditionTime = "2024-01-01T00:00:00Z"

// Rendered returns the stack as crossplane render --include-full-xr prints
// it: the XR with its conditions, then every composed resource, in
// composition-resource-name order, with the metadata Crossplane derives
// from the XR.
func Rendered(st *Stack) []xpsim.Object {
	out := []xpsim.Object{renderedXR(st.XR, st.Last)}
	for _, name := range slices.Sorted(maps.Keys(st.Resources)) {
		out = append(out, renderedComposed(st.XR, st.Resources[name], st.Observed[name], name))
	}
	return out
}

// renderedXR is the XR with the Ready condition crossplane render derives
// from the response, and the response's conditions.
func renderedXR(x xpsim.Object, rsp *fnv1.RunFunctionResponse) xpsim.Object {
	out := overlay.DeepCopy(x)
	status, _ := out["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		out["status"] = status
	}
	conds, _ := status["conditions"].([]any)
	conds = setCondition(conds, readyCondition(rsp))
	for _, c := range rsp.GetConditions() {
		switch c.GetType() {
		case "Ready", "Synced", "Healthy":
			continue // Crossplane's own: a function cannot set them
		}
		s := "Unknown"
		switch c.GetStatus() {
		case fnv1.Status_STATUS_CONDITION_TRUE:
			s = "True"
		case fnv1.Status_STATUS_CONDITION_FALSE:
			s = "False"
		}
		conds = setCondition(conds, condition(c.GetType(), s, c.GetReason(), c.GetMessage()))
	}
	status["conditions"] = conds
	return out
}

// readyCondition is the XR's Ready condition as crossplane render derives
// it: Creating when the function says the XR is not ready, or says nothing
// and a composed resource is not ready; Available otherwise.
func readyCondition(rsp *fnv1.RunFunctionResponse) map[string]any {
	var unready []string
	for name, r := range rsp.GetDesired().GetResources() {
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			unready = append(unready, name)
		}
	}
	switch ready := rsp.GetDesired().GetComposite().GetReady(); {
	case ready == fnv1.Ready_READY_FALSE:
		return condition("Ready", "False", "Creating", "")
	case ready == fnv1.Ready_READY_UNSPECIFIED && len(unready) > 0:
		return condition("Ready", "False", "Creating", "Unready resources: "+someNames(unready))
	default:
		return condition("Ready", "True", "Available", "")
	}
}

// condition is a condition as crossplane render writes it.
func condition(typ, status, reason, message string) map[string]any {
	c := map[string]any{"type": typ, "status": status, "reason": reason, "lastTransitionTime": conditionTime}
	if message != "" {
		c["message"] = message
	}
	return c
}

// setCondition sets a condition as crossplane-runtime's SetConditions
// does: it replaces the condition of its type unless that one is equal
// but for its time, and is appended when there is none.
func setCondition(conds []any, c map[string]any) []any {
	for i, e := range conds {
		m, _ := e.(map[string]any)
		if m["type"] != c["type"] {
			continue
		}
		if m["status"] != c["status"] || m["reason"] != c["reason"] || m["message"] != c["message"] {
			conds[i] = c
		}
		return conds
	}
	return append(conds, c)
}

// someNames lists names, sorted, as crossplane-runtime's
// StableNAndSomeMore does with its default of three: "a, b, and c",
// "a, b, c, and 2 more".
func someNames(names []string) string {
	const n = 3
	s := slices.Sorted(slices.Values(names))
	switch {
	case len(s) > n:
		return fmt.Sprintf("%s, and %d more", strings.Join(s[:n], ", "), len(s)-n)
	case len(s) == n:
		return fmt.Sprintf("%s, and %s", strings.Join(s[:n-1], ", "), s[n-1])
	default:
		return strings.Join(s, ", ")
	}
}

// renderedComposed is a desired composed resource with the metadata
// crossplane render sets: the name, generateName and namespace of its
// observed resource, if any, then what it derives from the XR.
func renderedComposed(x, desired, observed xpsim.Object, name string) xpsim.Object {
	out := overlay.DeepCopy(desired)
	meta := child(out, "metadata")
	if observed != nil {
		om, _ := observed["metadata"].(map[string]any)
		for _, k := range []string{"namespace", "name", "generateName"} {
			if v, _ := om[k].(string); v != "" {
				meta[k] = v
			} else {
				delete(meta, k)
			}
		}
	}
	xmeta, _ := x["metadata"].(map[string]any)
	xlabels, _ := xmeta["labels"].(map[string]any)
	xname, _ := xmeta["name"].(string)
	// A nested XR's composed resources carry the root XR's name.
	prefix, _ := xlabels[xr.LabelComposite].(string)
	if prefix == "" {
		prefix = xname
	}
	if meta["name"] == nil && meta["generateName"] == nil {
		meta["generateName"] = prefix + "-"
	}
	if ns, _ := xmeta["namespace"].(string); ns != "" {
		meta["namespace"] = ns
	}
	child(meta, "annotations")[xr.AnnotationCompositionResourceName] = name
	labels := child(meta, "labels")
	labels[xr.LabelComposite] = prefix
	claim, _ := xlabels[xr.LabelClaimName].(string)
	claimNS, _ := xlabels[xr.LabelClaimNamespace].(string)
	if claim != "" && claimNS != "" {
		labels[xr.LabelClaimName], labels[xr.LabelClaimNamespace] = claim, claimNS
	}
	uid, _ := xmeta["uid"].(string)
	owner := map[string]any{
		"apiVersion": x["apiVersion"], "kind": x["kind"], "name": xname, "uid": uid,
		"controller": true, "blockOwnerDeletion": true,
	}
	refs, _ := meta["ownerReferences"].([]any)
	i := slices.IndexFunc(refs, func(r any) bool {
		m, _ := r.(map[string]any)
		u, _ := m["uid"].(string)
		return u == uid
	})
	if i < 0 {
		refs = append(refs, owner)
	} else {
		refs[i] = owner
	}
	meta["ownerReferences"] = refs
	return out
}

// child is the map at key of m, made when there is none.
func child(m map[string]any, key string) map[string]any {
	c, _ := m[key].(map[string]any)
	if c == nil {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

// SameAsRender compares the objects preview -o yaml prints with those
// crossplane render prints for the same stack, in order. They must be
// equal, except that preview's XR status may hold more: what the function
// reads from the composed resources' connection details (such as an AKS
// cluster's CA, from its kubeconfig), which crossplane render does not pass
// to functions. It returns those status fields, and an error naming the
// first object that differs and how.
func SameAsRender(previewed, rendered []xpsim.Object) ([]string, error) {
	if len(previewed) != len(rendered) {
		return nil, fmt.Errorf("preview prints %d objects, crossplane render %d", len(previewed), len(rendered))
	}
	var extra []string
	for i := range previewed {
		p, r := previewed[i], rendered[i]
		what := fmt.Sprintf("%v %s", p["kind"], xpsim.CompositionResourceName(p))
		if i == 0 {
			meta, _ := p["metadata"].(map[string]any)
			what = fmt.Sprintf("the XR %v %v", p["kind"], meta["name"])
			p = overlay.DeepCopy(p)
			ps, _ := p["status"].(map[string]any)
			rs, _ := r["status"].(map[string]any)
			for _, k := range slices.Sorted(maps.Keys(ps)) {
				if _, ok := rs[k]; !ok {
					extra = append(extra, "status."+k)
					delete(ps, k)
				}
			}
		}
		if reflect.DeepEqual(p, r) {
			continue
		}
		// diff leaves the status out, and lists what one side has and
		// the other has not: both ways, and the status on its own.
		changes := append(diff("", p, r), diff("", r, p)...)
		if !reflect.DeepEqual(p["status"], r["status"]) {
			changes = append(changes, Change{Path: "status", Old: r["status"], New: p["status"]})
		}
		var paths []string
		for _, c := range changes {
			paths = append(paths, c.Path)
		}
		return extra, fmt.Errorf("%s differs from crossplane render's at %s", what, strings.Join(slices.Compact(slices.Sorted(slices.Values(paths))), ", "))
	}
	return extra, nil
}
