package preview

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// A StepError is a reconcile Crossplane fails before this function runs:
// an earlier step of the XR's Composition (function-environment-configs)
// returns a Fatal. A preview reports it as the XR's Fatal.
type StepError struct{ error }

// request builds the request of a reconcile: the XR, what is observed, and
// the required resources. Without Compositions, the step-level
// requirements of the shipped Compositions (the platform's
// EnvironmentConfigs, the spend ConfigMaps) are answered, or with
// InContext the EnvironmentConfigs are merged into the context as the
// shipped two-step Composition does; with Compositions, the XR's
// Composition decides the Input, the step's requirements and the context.
// Every requirement the function returned before is answered from the
// world, over a step's requirement of the same name (as Crossplane does).
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
	if w.Compositions != nil {
		c, err := w.Compositions.of(x)
		if err != nil {
			return nil, err
		}
		// Crossplane fetches what the step requires; what the function
		// asked for itself is answered below too, and wins a name.
		r.EnvironmentConfigs, r.Spend, r.Input = nil, nil, c.step.input
		required = maps.Clone(required)
		for name, sel := range c.step.required {
			if _, ok := required[name]; !ok {
				required[name] = sel
			}
		}
		if c.step.env != nil {
			if r.Context, err = c.step.env.Context(x, w.Environment); err != nil {
				return nil, StepError{fmt.Errorf("the Composition %s: its function-environment-configs step fails: %w", c.name, err)}
			}
		}
	} else if w.InContext {
		meta, _ := x["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		cloud, _ := labels[envcfg.LabelCloud].(string)
		planeType, _ := labels[envcfg.LabelPlaneType].(string)
		r.EnvironmentConfigs, r.Context = nil, xpsim.MergeEnvironment(w.Environment, cloud, planeType, nil)
	}
	req, err := r.Proto()
	if err != nil {
		return nil, err
	}
	// Crossplane lists what a requirement selects in namespace/name order.
	pool := append(slices.Clone(w.Objects), w.Environment...)
	slices.SortStableFunc(pool, func(a, b xpsim.Object) int {
		return cmp.Or(cmp.Compare(str(a, "metadata", "namespace"), str(b, "metadata", "namespace")), cmp.Compare(str(a, "metadata", "name"), str(b, "metadata", "name")))
	})
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
