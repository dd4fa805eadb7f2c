package bench

import (
	"fmt"
	"path/filepath"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	// The cloud layers register themselves.
	"github.com/seed-6471616d/function-cluster-platform/input/v1beta1"
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// Options are the module options the measurements use.
var Options = response.Options{TTLConverging: 15 * time.Second, TTLReady: 5 * time.Minute}

// Run runs the cluster module in process, as fn.go does.
func Run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, Options.TTLConverging)
	if err := cluster.Run(req, rsp, Options); err != nil {
		response.Fatal(rsp, err)
		return rsp
	}
	if err := response.CheckSize(rsp); err != nil {
		rsp = response.New(req, Options.TTLConverging)
		response.Fatal(rsp, err)
	}
	return rsp
}

// Examples is the repository's examples folder, relative to the caller.
type Examples string

// Converged returns the request Crossplane sends for an example XR whose
// whole stack exists and is ready: the example XR with its observed-resource
// file, the example EnvironmentConfigs and spend objects, every observed
// object carrying the metadata the API server adds.
func (e Examples) Converged(cloud string) (*fnv1.RunFunctionRequest, error) {
	dir := string(e)
	r := xpsim.Request{
		XR:                 fntest.MustLoad(filepath.Join(dir, cloud, "cluster.yaml"))[0],
		EnvironmentConfigs: fntest.MustLoad(filepath.Join(dir, "envconfigs")),
		Spend:              fntest.MustLoad(filepath.Join(dir, "spend")),
		Observed:           fntest.ObservedFile(filepath.Join(dir, cloud, "observed", "cluster.yaml")),
	}
	return realistic(r)
}

// Kinds are the XR kinds the load benchmark measures, by the module that
// renders them: the example file of each cloud, and the clusterref reader
// whose required resources (the Cluster it runs on) it is delivered with.
var Kinds = []Kind{
	{Name: "Cluster", Module: v1beta1.ModuleCluster, File: "cluster"},
	{Name: "AppEnvironment", Module: v1beta1.ModuleEnvironment, File: "appenvironment", Cluster: clusterref.ForAppEnvironment},
	{Name: "Database", Module: v1beta1.ModuleDatabase, File: "database", Cluster: clusterref.ForDatabase},
}

// A Kind of XR the load benchmark measures.
type Kind struct {
	Name, Module, File string
	Cluster            *clusterref.Reader
}

// ConvergedKind returns the request Crossplane sends for a cloud's example
// XR of the kind, converged, as Converged does for a Cluster, with the
// step's Input selecting the kind's module and, for a kind that runs on a
// Cluster, the Cluster and what the module reads of it delivered.
func (e Examples) ConvergedKind(cloud string, k Kind) (*fnv1.RunFunctionRequest, error) {
	dir := string(e)
	x := fntest.MustLoad(filepath.Join(dir, cloud, k.File+".yaml"))[0]
	r := xpsim.Request{
		XR:                 x,
		EnvironmentConfigs: fntest.MustLoad(filepath.Join(dir, "envconfigs")),
		Spend:              fntest.MustLoad(filepath.Join(dir, "spend")),
		Observed:           fntest.ObservedFile(filepath.Join(dir, cloud, "observed", k.File+".yaml")),
		Input:              xpsim.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": k.Module},
	}
	if k.Cluster != nil {
		extra, err := fntest.Required(dir, cloud, x, k.Cluster)
		if err != nil {
			return nil, err
		}
		r.Extra = extra
	}
	return realistic(r)
}

// First returns the request of an example XR's first reconcile.
func (e Examples) First(cloud string) (*fnv1.RunFunctionRequest, error) {
	dir := string(e)
	return realistic(xpsim.Request{
		XR:                 fntest.MustLoad(filepath.Join(dir, cloud, "cluster.yaml"))[0],
		EnvironmentConfigs: fntest.MustLoad(filepath.Join(dir, "envconfigs")),
		Spend:              fntest.MustLoad(filepath.Join(dir, "spend")),
	})
}

// Pools returns the converged request of a GCP XR with n node pools.
func (e Examples) Pools(n int) (*fnv1.RunFunctionRequest, error) {
	dir := string(e)
	pools := map[string]any{}
	for i := range n {
		pools[fmt.Sprintf("pool%02d", i)] = map[string]any{"size": "medium", "minNodes": 1.0, "maxNodes": 5.0}
	}
	xr := fntest.GCPXR(fntest.Set("spec.parameters.pools", pools))
	r := xpsim.Request{XR: xr, EnvironmentConfigs: fntest.MustLoad(filepath.Join(dir, "envconfigs"))}
	_, observed, _, err := xpsim.Converge(Run, r, 30)
	if err != nil {
		return nil, err
	}
	r.Observed = observed
	return realistic(r)
}

// realistic adds what the API server adds to every object Crossplane
// observes: uid, resourceVersion, generation, creation time, finalizer,
// owner reference and managed fields. Without it a request is a fraction of
// the size Crossplane really sends.
func realistic(r xpsim.Request) (*fnv1.RunFunctionRequest, error) {
	xr := overlay.DeepCopy(r.XR)
	addServerMetadata(xr, "xr", nil)
	r.XR = xr
	observed := make(map[string]xpsim.Object, len(r.Observed))
	for name, o := range r.Observed {
		o = overlay.DeepCopy(o)
		addServerMetadata(o, name, xr)
		observed[name] = o
	}
	r.Observed = observed
	return r.Proto()
}

func addServerMetadata(o xpsim.Object, name string, owner xpsim.Object) {
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	uid := fmt.Sprintf("%08x-1d2e-4f3a-9b8c-%012x", len(name)*7919, len(name)*104729)
	meta["uid"] = uid
	meta["resourceVersion"] = "123456789"
	meta["generation"] = 3.0
	meta["creationTimestamp"] = "2026-11-01T09:30:00Z"
	if owner != nil {
		om := owner["metadata"].(map[string]any)
		meta["finalizers"] = []any{"finalizer.managedresource.crossplane.io"}
		meta["ownerReferences"] = []any{map[string]any{
			"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": om["name"],
			"uid": om["uid"], "controller": true, "blockOwnerDeletion": true,
		}}
	}
	fields := map[string]any{}
	for k, v := range o {
		if k == "apiVersion" || k == "kind" || k == "status" {
			continue
		}
		fields["f:"+k] = fieldSet(v)
	}
	managed := []any{map[string]any{
		"manager": "apiextensions.crossplane.io/composed/" + uid, "operation": "Apply",
		"apiVersion": o["apiVersion"], "time": "2026-11-01T09:30:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields,
	}}
	if st, ok := o["status"]; ok {
		managed = append(managed, map[string]any{
			"manager": "provider", "operation": "Update", "subresource": "status",
			"apiVersion": o["apiVersion"], "time": "2026-11-01T09:35:00Z", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:status": fieldSet(st)},
		})
	}
	meta["managedFields"] = managed
}

// fieldSet is the FieldsV1 form of a value: its keys prefixed with "f:".
func fieldSet(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, c := range m {
		out["f:"+k] = fieldSet(c)
	}
	return out
}
