// Package compose is the cluster module: it turns one Cluster XR into its
// desired composed resources, status and conditions.
//
// The registry says what the platform consists of. This package decides what
// of it to send to Crossplane now: dependents wait until what they need is
// observed ready, nothing that exists is ever withdrawn because a
// prerequisite flapped, and an observed resource leaves the desired state only
// when the XR's spec removed it.
package compose

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Run computes the response to a request for a Cluster XR. rsp must already
// carry the desired state of earlier pipeline steps. An error means the
// desired state cannot be computed; the caller returns it as a Fatal result,
// so that Crossplane changes nothing.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts module.Options) error {
	oxr := req.GetObserved().GetComposite().GetResource()
	x, errs := xr.Decode(oxr)
	observed := observedResources(req)
	// Before anything else: rendering another cloud would delete every
	// existing resource.
	if err := checkCloudLabel(x, observed); err != nil {
		return err
	}
	errs = append(errs, xr.Validate(x, registry.Clouds())...)
	cloud, ok := registry.Lookup(x.Cloud)
	if !ok {
		// Validate named the cloud label; nothing else can be checked
		// without a cloud layer.
		return module.Invalid(x.Kind, x.Namespace, x.Name, errs)
	}

	res, err := envcfg.Resolve(req, x.Cloud, x.PlaneType)
	if err != nil {
		return err
	}
	if res.Require {
		module.Require(rsp, envcfg.FallbackRequirementName, envcfg.Selector())
	}
	if res.Env == nil {
		if len(errs) > 0 {
			return module.Invalid(x.Kind, x.Namespace, x.Name, errs)
		}
		// Crossplane calls again with the EnvironmentConfigs. Should this
		// response ever be final, it still keeps everything that exists.
		keepAll(rsp, observed)
		rsp.Meta.Ttl = durationpb.New(opts.TTLConverging)
		return nil
	}
	if layers := requiredLayers(x, observed); len(layers) > 0 {
		if err := res.RequireLayers("this XR already composes resources rendered with every layer it selects (status.environment lists those of its last render)", layers...); err != nil {
			return err
		}
	}
	warnings := res.Warnings
	env := res.Env

	// Plan and check the cloud's rules even when the XR has errors, so
	// that one Fatal names every bad field.
	plan, perrs := platform.Build(x, env, cloud.Traits)
	errs = append(errs, perrs...)
	if cloud.Validate != nil {
		errs = append(errs, cloud.Validate(x, env, plan)...)
	}
	if len(errs) > 0 {
		return module.Invalid(x.Kind, x.Namespace, x.Name, errs)
	}
	eval, warning := evaluateBudget(req, rsp, x, plan)
	if warning != "" {
		warnings = append(warnings, warning)
	}
	estimate, eerrs := plan.Estimate(env)
	if len(eerrs) > 0 {
		return module.Invalid(x.Kind, x.Namespace, x.Name, eerrs)
	}

	rctx := registry.NewContext(x, env, cloud, plan, observed)
	rendered, err := cloud.Render(rctx, plan.Components)
	var invalid *registry.InvalidError
	if errors.As(err, &invalid) {
		return module.Invalid(x.Kind, x.Namespace, x.Name, invalid.Errs)
	}
	if err != nil {
		return fmt.Errorf("cannot render %s %s: %w", x.Kind, x.Name, err)
	}

	st := decide(x, plan, rendered, observed)
	clashes, err := st.write(rsp)
	if err != nil {
		return err
	}

	for _, name := range clashes {
		warnings = append(warnings, fmt.Sprintf("an earlier pipeline step desires composed resource %q, which this function renders; this function's version wins", name))
	}
	warnings = append(warnings, rctx.Warnings()...)
	if missing := env.Missing(); len(missing) > 0 {
		warnings = append(warnings, "the environment lacks keys the platform needs: "+strings.Join(missing, ", "))
	}
	for _, name := range st.heldNames() {
		warnings = append(warnings, fmt.Sprintf("holding composed resource %q, which is no longer rendered: %s. Only the XR's spec removes composed resources; %s", name, st.kept[name].Why, howToConfirm(name, st.kept[name])))
	}
	for _, name := range slices.Sorted(maps.Keys(st.retired)) {
		// Once, not on every reconcile until the resource is gone.
		if object.String(observed[name], "metadata", "deletionTimestamp") == "" {
			module.Normal(rsp, "ComposedResourceRemoved", "Removing composed resource %q: %s", name, st.retired[name])
		}
	}
	module.Warn(rsp, object.Strings(x.Status, "warnings"), warnings)

	conds := append(conditions(st), removalsCondition(st))
	if eval != nil {
		conds = append(conds, budgetCondition(*eval, st))
	}
	if err := writeStatus(req, rsp, x, plan, st, statusExtras{warnings: warnings, estimate: estimate, budget: eval, layers: res.Layers}); err != nil {
		return err
	}
	module.SetConditions(rsp, x.Conditions, conds)

	rsp.Meta.Ttl = durationpb.New(opts.TTL(st.allReady()))
	return nil
}

// evaluateBudget measures the XR's spend against its budget, asking for the
// spend object when it was not delivered, and holds the plan's pools at their
// floor when the budget is exhausted and enforced. It returns nil without a
// budget, and a warning when the spend is unknown.
func evaluateBudget(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, x *xr.Composite, plan *platform.Plan) (*budget.Evaluation, string) {
	b := plan.Budget
	if b == nil {
		return nil, ""
	}
	sp := budget.Find(req, x.Parameters.Budget.SpendRef, x.Namespace)
	if sp.Require != nil {
		module.Require(rsp, budget.RequirementName, sp.Require)
	}
	e := budget.Evaluate(b.LimitUSD, b.Thresholds, plan.BudgetEnforcement, sp, x.Deleting)
	if e.Paused {
		plan.Pause()
	}
	if sp.Known {
		return &e, ""
	}
	return &e, "budget: " + sp.Warning + "; nothing is paused"
}

// observedResources indexes the observed composed resources by
// composition-resource name.
func observedResources(req *fnv1.RunFunctionRequest) map[string]*structpb.Struct {
	res := req.GetObserved().GetResources()
	out := make(map[string]*structpb.Struct, len(res))
	for name, r := range res {
		out[name] = r.GetResource()
	}
	return out
}

// checkCloudLabel refuses a cloud label that differs from the cloud that
// composed the existing resources: rendering the other cloud would delete
// every one of them.
func checkCloudLabel(x *xr.Composite, observed map[string]*structpb.Struct) error {
	flipped := false
	for _, obs := range observed {
		if was := object.Label(obs, registry.LabelCloud); was != "" && was != x.Cloud {
			flipped = true
			break
		}
	}
	if !flipped {
		return nil
	}
	// Name the same resource every time.
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		was := object.Label(observed[name], registry.LabelCloud)
		if was != "" && was != x.Cloud {
			return fmt.Errorf("cloud is immutable: %s's composed resources (such as %q) were composed for cloud %q, but metadata.labels.cloud is now %q; restore the label, or create a new XR for %q",
				x.Name, name, was, x.Cloud, x.Cloud)
		}
	}
	return nil
}

// requiredLayers are the environment layers an XR cannot be rendered
// without: those its last render used (status.environment) and, once it
// composes resources, the baseline and the cloud layer.
func requiredLayers(x *xr.Composite, observed map[string]*structpb.Struct) []string {
	var out []string
	if env := object.Get(x.Status, "environment").GetStructValue(); env != nil {
		out = slices.Sorted(maps.Keys(env.GetFields()))
	}
	for _, o := range observed {
		if ours(o) {
			return append(out, envcfg.LabelBaseline, envcfg.LabelCloud)
		}
	}
	return out
}

// keepAll desires every observed composed resource of this function as it
// is, so that a response without a computed state still deletes nothing.
func keepAll(rsp *fnv1.RunFunctionResponse, observed map[string]*structpb.Struct) {
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		if !ours(observed[name]) {
			continue
		}
		setDesired(rsp, name, keep(observed[name]), fnv1.Ready_READY_UNSPECIFIED)
	}
}

// ours reports whether this function composed the observed resource.
func ours(obs *structpb.Struct) bool {
	return object.Annotation(obs, registry.AnnotationComponent) != ""
}

// keep returns the desired state that leaves an observed resource as it
// is: its apiVersion, kind, labels, annotations and spec.
func keep(obs *structpb.Struct) *structpb.Struct {
	f := obs.GetFields()
	out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for _, k := range []string{"apiVersion", "kind", "spec"} {
		if v, ok := f[k]; ok {
			out.Fields[k] = v
		}
	}
	meta := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for _, k := range []string{"labels", "annotations"} {
		if v := object.Get(obs, "metadata", k); v != nil {
			meta.Fields[k] = v
		}
	}
	out.Fields["metadata"] = structpb.NewStructValue(meta)
	return out
}

// setDesired adds a desired composed resource to the response, replacing
// any desired by an earlier step under the same name.
func setDesired(rsp *fnv1.RunFunctionResponse, name string, s *structpb.Struct, ready fnv1.Ready) {
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[name] = &fnv1.Resource{Resource: s, Ready: ready}
}
