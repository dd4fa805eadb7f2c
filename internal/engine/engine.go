// Package engine is the machinery every module shares: from a module's
// decoded XR and agnostic plan to the response. It refuses a changed cloud
// label, resolves the environment (or keeps everything while it is being
// fetched), renders the plan through the registry's three layers, decides
// what to compose now (dependents wait until what they need is ready,
// nothing that exists is withdrawn because a prerequisite flapped, an
// observed resource leaves the desired state only when the XR's spec
// removed it), and reports warnings, events, conditions, status and TTL.
//
// A module (internal/modules/<kind>) decodes and validates its XR, builds
// its plan, and calls Begin, Render and Finish:
//
//	c, err := engine.Begin(req, rsp, opts, &x.Composite, errs)
//	if c == nil { return err }
//	plan, perrs := build(x, c.Env)
//	...
//	st, err := c.Render(plan.Components, plan)
//	return c.Finish(st, status, append(st.Conditions(types, notRequested), st.RemovalsCondition()))
package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// A Call is one run of a module on the shared machinery.
type Call struct {
	Req  *fnv1.RunFunctionRequest
	Rsp  *fnv1.RunFunctionResponse
	Opts response.Options
	// XR is what every XR kind shares.
	XR *xr.Composite
	// Cloud is the XR's cloud layer.
	Cloud *registry.Cloud
	// Env is the XR's layered environment.
	Env *envcfg.Env
	// Observed are the observed composed resources by composition-resource
	// name.
	Observed map[string]*structpb.Struct
	// Errs are the XR's errors so far; Invalid reports them.
	Errs field.ErrorList
	// Warnings are the call's warnings so far, in the order they are
	// reported.
	Warnings []string
	// Gated is set by a module whose XR holds a change until a ruling
	// on the fleet, delivered as a required resource, lets it move:
	// Crossplane v2.4 re-runs it when the ruling changes, v2.3 only on
	// the gated TTL (Options.Gated), which Finish then gives.
	Gated bool

	layers map[string][]string
}

// Begin takes the first steps of every module. errs are the errors the
// module found decoding and validating its XR (xr.ValidateComposite
// included); they are returned with the plan's, or at once when there is no
// cloud layer to plan with. Begin refuses a changed cloud label before
// anything else, finds the cloud layer and resolves the environment. While
// the environment is being fetched it keeps every existing resource and
// returns a nil Call: Crossplane calls again with it. A missing layer the
// XR's resources were rendered with is an error.
func Begin(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts response.Options, x *xr.Composite, errs field.ErrorList) (*Call, error) {
	observed := observedResources(req)
	// Before anything else: rendering another cloud would delete every
	// existing resource.
	if err := checkCloudLabel(x, observed); err != nil {
		return nil, err
	}
	cloud, ok := registry.Lookup(x.Cloud)
	if !ok {
		// The module's validation named the cloud label; nothing else can
		// be checked without a cloud layer.
		return nil, response.Invalid(x.Kind, x.Namespace, x.Name, errs)
	}

	res, err := envcfg.Resolve(req, x.Cloud, x.PlaneType)
	if err != nil {
		return nil, err
	}
	if res.Require {
		response.Require(rsp, envcfg.FallbackRequirementName, envcfg.Selector())
	}
	for _, name := range slices.Sorted(maps.Keys(res.Original)) {
		response.Require(rsp, name, res.Original[name])
	}
	if res.Env == nil {
		if len(errs) > 0 {
			return nil, response.Invalid(x.Kind, x.Namespace, x.Name, errs)
		}
		// Crossplane calls again with the EnvironmentConfigs. Should this
		// response ever be final, it still keeps everything that exists.
		keepAll(rsp, observed)
		rsp.Meta.Ttl = durationpb.New(opts.TTLConverging)
		return nil, nil
	}
	if layers := requiredLayers(x, observed); len(layers) > 0 {
		if err := res.RequireLayers("this XR already composes resources rendered with every layer it selects (status.environment lists those of its last render)", layers...); err != nil {
			return nil, err
		}
	}
	x.CloudName = cloudName(x, TenancyOf(res.Env), cloud, observed)
	c := &Call{
		Req: req, Rsp: rsp, Opts: opts,
		XR: x, Cloud: cloud, Env: res.Env, Observed: observed,
		Errs: errs, Warnings: res.Warnings, layers: res.Layers,
	}
	c.checkChosenNames()
	c.checkBareName()
	return c, nil
}

// checkChosenNames refuses the cloud names an XR's owner chose that its
// namespace was not assigned: a Cluster's clusterName label, and the
// existing resources an import adopts (a provider adopts a cloud resource
// by its name, so importing another tenant's would manage it).
func (c *Call) checkChosenNames() {
	x := c.XR
	if x.Chosen {
		if err := c.check(xr.LabelPath(xr.LabelClusterName), "cluster name", x.BareName, "names", c.Tenancy().Name); err != nil {
			c.Errs = append(c.Errs, err)
		}
	}
	ip := xr.ParametersPath("import", "resources")
	for _, k := range slices.Sorted(maps.Keys(x.Import.Resources)) {
		if err := c.CheckName(ip.Key(k), "existing resource", x.Import.Resources[k]); err != nil {
			c.Errs = append(c.Errs, err)
		}
	}
}

// Invalid returns the call's errors, and the wrongly typed environment
// values read so far, as one error for a Fatal result, or nil when there
// are none.
func (c *Call) Invalid() error {
	errs := append(slices.Clip(c.Errs), c.Env.Errors()...)
	if len(errs) == 0 {
		return nil
	}
	return response.Invalid(c.XR.Kind, c.XR.Namespace, c.XR.Name, errs)
}

// Check runs the cloud's rules for the components (registry.Check) and
// adds what they refuse to the call's errors, so that one Fatal names every
// bad field, the plan's and the cloud's alike. Render runs them again: a
// module that does not call Check has them refused there.
func (c *Call) Check(comps []component.Component) {
	c.Errs = append(c.Errs, c.Cloud.CheckAll(registry.NewContext(c.XR, c.Env, c.Cloud, c.Observed), comps)...)
}

// Render runs the plan's components through the cloud layer and the
// registry, decides what to compose now and writes it to the response, with
// the warnings and events that go with it. removals is the module's plan,
// which says why a component no longer renders a resource.
func (c *Call) Render(comps []component.Component, removals component.Remover) (*State, error) {
	x := c.XR
	rctx := registry.NewContext(x, c.Env, c.Cloud, c.Observed)
	rendered, err := c.Cloud.Render(rctx, comps)
	var invalid *registry.InvalidError
	if errors.As(err, &invalid) {
		return nil, response.Invalid(x.Kind, x.Namespace, x.Name, invalid.Errs)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot render %s %s: %w", x.Kind, x.Name, err)
	}
	if errs := c.Env.Errors(); len(errs) > 0 {
		// A wrongly typed value is never rendered as its default.
		return nil, response.Invalid(x.Kind, x.Namespace, x.Name, errs)
	}

	st := decide(x, removals, rendered, c.Observed)
	clashes, err := st.write(c.Rsp)
	if err != nil {
		return nil, err
	}

	for _, name := range clashes {
		c.Warnings = append(c.Warnings, fmt.Sprintf("an earlier pipeline step desires composed resource %q, which this function renders; this function's version wins", name))
	}
	c.Warnings = append(c.Warnings, rctx.Warnings()...)
	if missing := c.Env.Missing(); len(missing) > 0 {
		c.Warnings = append(c.Warnings, "the environment lacks keys the platform needs: "+strings.Join(missing, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(st.refused)) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the provider refuses to update composed resource %q because the update would replace the cloud resource (%s): it is not Ready until the value is restored or the change is made another way", name, st.refused[name]))
	}
	for _, name := range st.heldNames() {
		if r := st.kept[name]; r.InUse {
			c.Warnings = append(c.Warnings, fmt.Sprintf("holding composed resource %q, which is no longer rendered: %s; %s", name, r.Why, howToConfirm(name, r)))
			continue
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("holding composed resource %q, which is no longer rendered: %s. Only the XR's spec removes composed resources; %s", name, st.kept[name].Why, howToConfirm(name, st.kept[name])))
	}
	for _, name := range slices.Sorted(maps.Keys(st.retired)) {
		// Once, not on every reconcile until the resource is gone.
		if object.String(c.Observed[name], "metadata", "deletionTimestamp") == "" {
			response.Normal(c.Rsp, "ComposedResourceRemoved", "Removing composed resource %q: %s", name, st.retired[name])
		}
	}
	response.Warn(c.Rsp, object.Strings(x.Status, "warnings"), c.Warnings)
	return st, nil
}

// Finish writes the XR's status: the module's fields, then the current
// warnings and the EnvironmentConfigs of each layer. It sets the
// conditions, emitting events only on transitions, and the response's TTL:
// the converging TTL only while a resource waits for another XR, which
// Crossplane v2.3 does not watch for this one (v2.4 does, through the
// requirement that delivers it: see State.WaitsOnOtherXR); what waits for
// the XR's own composed resources is re-run by their changes.
func (c *Call) Finish(st *State, status map[string]any, conds []response.Condition) error {
	if len(c.Warnings) > 0 {
		status["warnings"] = object.FromStrings(c.Warnings)
	}
	if len(c.layers) > 0 {
		layers := make(map[string]any, len(c.layers))
		for l, names := range c.layers {
			layers[l] = object.FromStrings(names)
		}
		status["environment"] = layers
	}
	if err := writeStatus(c.Rsp, c.XR, status); err != nil {
		return err
	}
	response.SetConditions(c.Rsp, c.XR.Conditions, conds)
	ttl := c.Opts.TTL(st.WaitsOnOtherXR())
	if c.Gated && !st.WaitsOnOtherXR() {
		ttl = c.Opts.Gated()
	}
	c.Rsp.Meta.Ttl = durationpb.New(ttl)
	return nil
}

// Wait keeps every existing resource as it is and composes nothing more:
// the XR waits for something outside it (a Database for the Cluster it
// joins). It reports why in the conditions, writes the status and answers
// with the converging TTL.
func (c *Call) Wait(status map[string]any, conds []response.Condition) error {
	keepAll(c.Rsp, c.Observed)
	response.Warn(c.Rsp, object.Strings(c.XR.Status, "warnings"), c.Warnings)
	st := &State{observed: c.Observed}
	if err := c.Finish(st, status, conds); err != nil {
		return err
	}
	if c.Rsp.Desired.Composite == nil {
		c.Rsp.Desired.Composite = &fnv1.Resource{}
	}
	c.Rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	c.Rsp.Meta.Ttl = durationpb.New(c.Opts.TTLConverging)
	return nil
}

// writeStatus sets the XR's status fields in the desired composite,
// keeping what earlier pipeline steps wrote into it.
func writeStatus(rsp *fnv1.RunFunctionResponse, x *xr.Composite, status map[string]any) error {
	s, err := structpb.NewStruct(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("cannot encode XR status: %w", err)
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	dxr := rsp.Desired.Composite.Resource
	if dxr == nil {
		dxr = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		rsp.Desired.Composite.Resource = dxr
	}
	dxr.Fields["apiVersion"] = structpb.NewStringValue(x.APIVersion)
	dxr.Fields["kind"] = structpb.NewStringValue(x.Kind)
	if prior := dxr.Fields["status"].GetStructValue(); prior != nil {
		for k, v := range s.Fields["status"].GetStructValue().Fields {
			prior.Fields[k] = v
		}
		return nil
	}
	dxr.Fields["status"] = s.Fields["status"]
	return nil
}

// Outputs reads the XR's status fields from the observed resources of the
// rendered resources that declare outputs.
func (st *State) Outputs(req *fnv1.RunFunctionRequest) registry.Outputs {
	var out registry.Outputs
	for _, rd := range st.rendered {
		if rd.Outputs != nil && st.observed[rd.Name] != nil {
			rd.Outputs(st.observed[rd.Name], req.GetObserved().GetResources()[rd.Name].GetConnectionDetails(), &out)
		}
	}
	return out
}

// Rendered are the rendered resources, in the registry's order.
func (st *State) Rendered() []*registry.Rendered { return st.rendered }

// Composed reports whether a rendered resource is composed and observed
// ready.
func (st *State) Composed(name string) bool { return st.emitted[name] && st.ready[name] }

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
// is: its apiVersion, kind, labels, annotations and spec; but the label
// Crossplane's Usage controller sets and removes (registry.LabelInUse),
// which the XR must not apply as its own: it would keep the label once the
// Usage is gone.
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
	if labels := meta.Fields["labels"].GetStructValue(); labels != nil && labels.Fields[registry.LabelInUse] != nil {
		own := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(labels.Fields))}
		for k, v := range labels.Fields {
			if k != registry.LabelInUse {
				own.Fields[k] = v
			}
		}
		meta.Fields["labels"] = structpb.NewStructValue(own)
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
