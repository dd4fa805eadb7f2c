package main

import (
	"errors"
	"fmt"
	"path/filepath"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/input/v1beta1"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// A Stack is one example XR rendered through the registry's three layers
// on one cloud, before anything is observed: every composed resource with
// the Component that produced it and the resources it waits for.
type Stack struct {
	// Cloud is the cloud label.
	Cloud string
	// Module is the Input's module that serves the XR.
	Module string
	// Example is the example file, relative to the examples folder.
	Example string
	// Components are the Component kinds of the plan, by Component ID.
	Components map[string]component.Kind
	// Rendered are the composed resources, in the registry's order.
	Rendered []*registry.Rendered
}

// exampleFiles are the namespaced example XR of each module with
// Components, in examples/<cloud>/.
var exampleFiles = []struct{ Module, File string }{
	{Module: v1beta1.ModuleCluster, File: "cluster.yaml"},
	{Module: v1beta1.ModuleDatabase, File: "database.yaml"},
	{Module: v1beta1.ModuleEnvironment, File: "appenvironment.yaml"},
}

// Stacks renders every module's namespaced example XR on every registered
// cloud, from examples/<cloud>/ and the EnvironmentConfigs of
// examples/envconfigs; a Cluster that an XR names comes from
// examples/<cloud>/required, as crossplane render gets it.
func Stacks(examples string) ([]Stack, error) {
	envs, err := xpsim.Load(filepath.Join(examples, "envconfigs"))
	if err != nil {
		return nil, fmt.Errorf("cannot load the example EnvironmentConfigs: %w", err)
	}
	var out []Stack
	for _, cloud := range registry.Clouds() {
		for _, ex := range exampleFiles {
			file := filepath.Join(cloud, ex.File)
			st, err := render(examples, file, ex.Module, envs)
			if err != nil {
				return nil, fmt.Errorf("cannot render example %s: %w", file, err)
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// render renders one example XR as its module would once its stack has
// converged: against the example's observed composed resources
// (examples/<cloud>/observed), so that no resource is still pending a value
// only an observed resource has.
func render(examples, file, module string, envs []xpsim.Object) (Stack, error) {
	objs, err := xpsim.Load(filepath.Join(examples, file))
	if err != nil {
		return Stack{}, err
	}
	if len(objs) == 0 {
		return Stack{}, fmt.Errorf("no XR in %s", file)
	}
	observed, err := xpsim.Load(filepath.Join(examples, filepath.Dir(file), "observed", filepath.Base(file)))
	if err != nil {
		return Stack{}, fmt.Errorf("cannot load the example's observed resources: %w", err)
	}
	ex := example{dir: examples, obj: objs[0], envs: envs, observed: map[string]xpsim.Object{}}
	for _, o := range observed {
		ex.observed[xpsim.CompositionResourceName(o)] = o
	}
	st := Stack{Module: module, Example: file, Components: map[string]component.Kind{}}
	switch module {
	case v1beta1.ModuleCluster:
		err = renderCluster(&st, ex)
	case v1beta1.ModuleDatabase:
		err = renderDatabase(&st, ex)
	case v1beta1.ModuleEnvironment:
		err = renderEnvironment(&st, ex)
	default:
		err = fmt.Errorf("module %q has no example to render", module)
	}
	return st, err
}

// An example is one example XR and what it is rendered with.
type example struct {
	// dir is the examples folder.
	dir string
	obj xpsim.Object
	// envs are the example EnvironmentConfigs.
	envs []xpsim.Object
	// observed are its converged stack's composed resources.
	observed map[string]xpsim.Object
}

// composite returns the XR as Crossplane sends it.
func (ex example) composite() (*structpb.Struct, error) {
	req, err := xpsim.Request{XR: ex.obj}.Proto()
	if err != nil {
		return nil, fmt.Errorf("cannot read the XR: %w", err)
	}
	return req.GetObserved().GetComposite().GetResource(), nil
}

// call is what every module's render needs: the request as Crossplane
// would send it, the XR's cloud layer and its layered environment.
type call struct {
	req   *fnv1.RunFunctionRequest
	cloud *registry.Cloud
	env   *envcfg.Env
}

// begin builds the request with the supplied required resources, finds the
// XR's cloud and resolves its environment, as the engine does.
func begin(st *Stack, ex example, x *xr.Composite, required map[string][]xpsim.Object) (*call, error) {
	req, err := xpsim.Request{XR: ex.obj, EnvironmentConfigs: ex.envs, Extra: required, Observed: ex.observed}.Proto()
	if err != nil {
		return nil, fmt.Errorf("cannot build the request: %w", err)
	}
	cloud, ok := registry.Lookup(x.Cloud)
	if !ok {
		return nil, fmt.Errorf("cloud %q is not registered", x.Cloud)
	}
	res, err := envcfg.Resolve(req, x.Cloud, x.PlaneType)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the environment: %w", err)
	}
	if res.Env == nil {
		return nil, fmt.Errorf("no example EnvironmentConfig selects cloud %q", x.Cloud)
	}
	st.Cloud = x.Cloud
	return &call{req: req, cloud: cloud, env: res.Env}, nil
}

// finish renders the plan's components through the cloud layer and the
// registry.
func (c *call) finish(st *Stack, x *xr.Composite, comps []component.Component, errs field.ErrorList) error {
	errs = append(errs, c.env.Errors()...)
	if len(errs) > 0 {
		return fmt.Errorf("cannot plan: %w", errs.ToAggregate())
	}
	for _, comp := range comps {
		st.Components[comp.ID()] = comp.Kind()
	}
	observed := map[string]*structpb.Struct{}
	for name, r := range c.req.GetObserved().GetResources() {
		observed[name] = r.GetResource()
	}
	rendered, err := c.cloud.Render(registry.NewContext(x, c.env, c.cloud, observed), comps)
	if err != nil {
		return fmt.Errorf("cannot render: %w", err)
	}
	st.Rendered = rendered
	return nil
}

func renderCluster(st *Stack, ex example) error {
	s, err := ex.composite()
	if err != nil {
		return err
	}
	x, errs := xr.Decode(s)
	c, err := begin(st, ex, &x.Composite, nil)
	if err != nil {
		return err
	}
	if x.Parameters.Location == "" {
		x.Parameters.Location = cluster.SettingsOf(c.env).Location
	}
	plan, perrs := cluster.Build(x, c.env, cluster.CloudTraits[c.cloud.Name])
	return c.finish(st, &x.Composite, plan.Components, append(errs, perrs...))
}

// findCluster is the Cluster an XR names, as the module's reader finds it
// among the example's required resources (examples/<cloud>/required).
func findCluster(st *Stack, ex example, x *xr.Composite, r *clusterref.Reader, ref string) (*call, *cluster.Reported, error) {
	required, err := fntest.Required(ex.dir, x.Cloud, ex.obj, r)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load the Cluster the XR names: %w", err)
	}
	c, err := begin(st, ex, x, required)
	if err != nil {
		return nil, nil, err
	}
	cluster, found := r.Find(c.req, &fnv1.RunFunctionResponse{}, x, ref)
	if !found {
		return nil, nil, fmt.Errorf("cannot find Cluster %q in examples/%s/required", ref, x.Cloud)
	}
	return c, cluster, nil
}

func renderDatabase(st *Stack, ex example) error {
	s, err := ex.composite()
	if err != nil {
		return err
	}
	x, errs := xr.DecodeDatabase(s)
	if x.Parameters.ClusterRef == nil {
		return errors.New("the example names no Cluster (spec.parameters.clusterRef)")
	}
	c, cluster, err := findCluster(st, ex, &x.Composite, clusterref.ForDatabase, x.Parameters.ClusterRef.Name)
	if err != nil {
		return err
	}
	plan, perrs := database.Build(x, *database.SettingsOf(c.env), cluster, database.Engine{}, database.Server{})
	return c.finish(st, &x.Composite, plan.Components, append(errs, perrs...))
}

func renderEnvironment(st *Stack, ex example) error {
	s, err := ex.composite()
	if err != nil {
		return err
	}
	x, errs := xr.DecodeAppEnvironment(s)
	c, cluster, err := findCluster(st, ex, &x.Composite, clusterref.ForAppEnvironment, x.Parameters.ClusterRef.Name)
	if err != nil {
		return err
	}
	plan, perrs := appenvironment.Build(x, c.env, cluster, appenvironment.Running{})
	return c.finish(st, &x.Composite, plan.Components, append(errs, perrs...))
}
