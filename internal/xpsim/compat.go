package xpsim

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ClaimComposite returns the cluster-scoped XR Crossplane creates for a
// claim of a legacy XRD (kind K in group legacy.platform.example.org
// becomes XK): a name derived from the claim's, the claim's labels plus
// Crossplane's claim labels, spec.claimRef, and the claim's spec. A claim
// without a namespace is in "default", as kubectl would put it. Any other
// object is returned as is.
func ClaimComposite(claim Object) Object {
	av, _ := claim["apiVersion"].(string)
	kind, _ := claim["kind"].(string)
	if !strings.HasPrefix(av, xr.LegacyGroup+"/") || strings.HasPrefix(kind, "X") {
		return claim
	}
	meta, _ := claim["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = "default"
	}
	labels := map[string]any{}
	if l, ok := meta["labels"].(map[string]any); ok {
		labels = overlay.DeepCopy(l)
	}
	labels[xr.LabelClaimName] = name
	labels[xr.LabelClaimNamespace] = ns
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns + "/" + name))
	spec, _ := overlay.DeepCopyValue(claim["spec"]).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["claimRef"] = map[string]any{"apiVersion": av, "kind": kind, "name": name, "namespace": ns}
	return Object{
		"apiVersion": av,
		"kind":       "X" + kind,
		"metadata":   map[string]any{"name": fmt.Sprintf("%s-%05x", name, h.Sum32()&0xfffff), "labels": labels},
		"spec":       spec,
	}
}

// MergeEnvironment layers the configs as function-environment-configs does
// for the two-step Compositions: those labelled baseline=default, then
// cloud=<cloud>, then planeType=<planeType>, each layer in name order,
// whatever their API version; each selector also requires the labels of
// also (the two-step Composition selects platform configs, the compat one
// any). It returns the pipeline context holding the merged environment.
func MergeEnvironment(configs []Object, cloud, planeType string, also map[string]string) Object {
	data := map[string]any{}
	for _, layer := range []struct{ label, value string }{
		{envcfg.LabelBaseline, envcfg.BaselineValue}, {envcfg.LabelCloud, cloud}, {envcfg.LabelPlaneType, planeType},
	} {
		var in []Object
		for _, c := range configs {
			labels, _ := c["metadata"].(map[string]any)["labels"].(map[string]any)
			if layer.value != "" && labels[layer.label] == layer.value && hasLabels(labels, also) {
				in = append(in, c)
			}
		}
		sort.Slice(in, func(i, j int) bool { return name(in[i]) < name(in[j]) })
		for _, c := range in {
			if d, ok := c["data"].(map[string]any); ok {
				overlay.Merge(data, overlay.DeepCopy(d))
			}
		}
	}
	env := Object{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}
	for k, v := range data {
		env[k] = v
	}
	return Object{envcfg.ContextKey: map[string]any(env)}
}

// hasLabels reports whether labels hold every one of want.
func hasLabels(labels map[string]any, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}
