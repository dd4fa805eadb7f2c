package preview

import (
	"fmt"
	"maps"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// request builds the request of a reconcile: the XR, what is observed, and
// the required resources. The step-level requirements of the shipped
// Compositions (the platform's EnvironmentConfigs, the spend ConfigMaps)
// are always answered; every requirement the function returned before is
// answered from the world.
func (w World) request(x xpsim.Object, observed map[string]xpsim.Object, required map[string]*fnv1.ResourceSelector) (*fnv1.RunFunctionRequest, error) {
	m, ok := modules.ForKind(fmt.Sprint(x["kind"]))
	if !ok {
		return nil, fmt.Errorf("%v %v is not a kind this function serves", x["apiVersion"], x["kind"])
	}
	r := xpsim.Request{
		XR:                 x,
		Observed:           observed,
		EnvironmentConfigs: w.Environment,
		Spend:              w.Objects,
		Input:              xpsim.Object{"apiVersion": inputAPIVersion, "kind": "Input", "module": m.Name},
	}
	inContext, env := w.InContext, w.Environment
	if len(w.Compositions) > 0 {
		c, err := compositionOf(w.Compositions, x)
		if err != nil {
			return nil, err
		}
		st, err := stepOf(c)
		if err != nil {
			return nil, err
		}
		// Crossplane fetches what the step requires, answered below
		// with what the function asked for.
		r.EnvironmentConfigs, r.Spend, r.Input = nil, nil, st.input
		required = maps.Clone(required)
		maps.Copy(required, st.required)
		if inContext = st.inContext; inContext {
			env = st.environment(env)
		}
	}
	if inContext {
		labels, _ := x["metadata"].(map[string]any)["labels"].(map[string]any)
		cloud, _ := labels[envcfg.LabelCloud].(string)
		planeType, _ := labels[envcfg.LabelPlaneType].(string)
		r.EnvironmentConfigs, r.Context = nil, xpsim.MergeEnvironment(env, cloud, planeType, nil)
	}
	req, err := r.Proto()
	if err != nil {
		return nil, err
	}
	pool := append(slices.Clone(w.Objects), w.Environment...)
	for name, sel := range required {
		items := &fnv1.Resources{}
		for _, o := range pool {
			if matches(sel, o) {
				r, err := structpb.NewStruct(o)
				if err != nil {
					return nil, err
				}
				items.Items = append(items.Items, &fnv1.Resource{Resource: r})
			}
		}
		req.RequiredResources[name] = items
	}
	return req, nil
}

// matches reports whether an object is one a selector selects.
func matches(sel *fnv1.ResourceSelector, o xpsim.Object) bool {
	meta, _ := o["metadata"].(map[string]any)
	if o["apiVersion"] != sel.GetApiVersion() || o["kind"] != sel.GetKind() {
		return false
	}
	if sel.Namespace != nil && meta["namespace"] != sel.GetNamespace() {
		return false
	}
	if n := sel.GetMatchName(); n != "" {
		return meta["name"] == n
	}
	labels, _ := meta["labels"].(map[string]any)
	for k, v := range sel.GetMatchLabels().GetLabels() {
		if labels[k] != v {
			return false
		}
	}
	return true
}
