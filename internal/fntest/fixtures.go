package fntest

import (
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// GCPXR is a namespaced GCP Cluster that is not one of the examples: two
// pools (general of size small, gpu of an explicit spot machine type) and a
// domain. Mutations apply in order.
func GCPXR(mutate ...func(o Object)) Object {
	o := Object{
		"apiVersion": "platform.example.org/v1alpha1",
		"kind":       "Cluster",
		"metadata": map[string]any{
			"name":      "edge",
			"namespace": "team-edge",
			"labels":    map[string]any{"cloud": "gcp", "planeId": "edge-project-42", "planeType": "production"},
		},
		"spec": map[string]any{"parameters": map[string]any{
			"location": "europe-west4",
			"domain":   "edge.example.net",
			"pools": map[string]any{
				"general": map[string]any{"size": "small", "minNodes": 2.0, "maxNodes": 4.0},
				"gpu":     map[string]any{"machineType": "g2-standard-8", "minNodes": 0.0, "maxNodes": 2.0, "spot": true},
			},
		}},
	}
	for _, m := range mutate {
		m(o)
	}
	return o
}

// AWSXR is GCPXR on AWS.
func AWSXR(mutate ...func(o Object)) Object {
	return GCPXR(append([]func(o Object){
		Set("metadata.labels.cloud", "aws"),
		Set("metadata.labels.planeId", "210987654321"),
		Set("spec.parameters.location", "us-east-1"),
		Set("spec.parameters.pools.gpu.machineType", "g5.xlarge"),
	}, mutate...)...)
}

// AzureXR is GCPXR on Azure.
func AzureXR(mutate ...func(o Object)) Object {
	return GCPXR(append([]func(o Object){
		Set("metadata.labels.cloud", "azure"),
		Set("metadata.labels.planeId", "11111111-2222-3333-4444-555555555555"),
		Set("spec.parameters.location", "swedencentral"),
		Set("spec.parameters.pools.gpu.machineType", "Standard_NC4as_T4_v3"),
	}, mutate...)...)
}

// Legacy turns an XR into a cluster-scoped XR of the legacy API.
func Legacy(o Object) {
	o["apiVersion"] = "legacy.platform.example.org/v1alpha1"
	o["kind"] = "XCluster"
	delete(o["metadata"].(map[string]any), "namespace")
}

// Set returns a mutation that sets a dotted path of an object, creating
// objects on the way; a nil value deletes the key.
func Set(path string, v any) func(o Object) {
	return func(o Object) {
		parts := strings.Split(path, ".")
		m := o
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		if v == nil {
			delete(m, parts[len(parts)-1])
			return
		}
		m[parts[len(parts)-1]] = v
	}
}

// Unreported returns required resources as delivered before the first item
// of requirement reported path: a copy, with that item's path removed.
func Unreported(required map[string][]Object, requirement, path string) map[string][]Object {
	out := maps.Clone(required)
	o := overlay.DeepCopy(out[requirement][0])
	Set(path, nil)(o)
	out[requirement] = []Object{o}
	return out
}

// ObservedFile loads an observed-resource file, keyed by
// composition-resource name.
func ObservedFile(path string) map[string]Object {
	out := map[string]Object{}
	for _, o := range MustLoad(path) {
		out[xpsim.CompositionResourceName(o)] = o
	}
	return out
}

// SpendConfigMap is a ConfigMap holding a month-to-date spend at
// data.spentUsd, labelled so that the shipped Compositions deliver it.
func SpendConfigMap(namespace, name, usd string) Object {
	return Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"platform.example.org/spend": "true"}},
		"data":     map[string]any{"spentUsd": usd},
	}
}

// Located returns required resources with the first item of requirement
// (a Cluster) given spec.parameters.location spec and status.location
// status, each left out when empty: a Cluster located by its spec, by its
// environment (which the cluster module reports in its status), or not yet
// by either.
func Located(required map[string][]Object, requirement, spec, status string) map[string][]Object {
	out := maps.Clone(required)
	c := overlay.DeepCopy(out[requirement][0])
	var sv, st any
	if spec != "" {
		sv = spec
	}
	if status != "" {
		st = status
	}
	Set("spec.parameters.location", sv)(c)
	Set("status."+xr.StatusLocation, st)(c)
	out[requirement] = []Object{c}
	return out
}

// ClusterLocations are, by cloud, the example Cluster's own
// spec.parameters.location (Spec) and another location its environment
// could give it (Other, on GCP a zone) with the region that makes
// (OtherRegion).
var ClusterLocations = map[string]struct{ Spec, Other, OtherRegion string }{
	"gcp":   {Spec: "us-central1", Other: "europe-west1-b", OtherRegion: "europe-west1"},
	"aws":   {Spec: "eu-west-1", Other: "us-west-2", OtherRegion: "us-west-2"},
	"azure": {Spec: "westeurope", Other: "northeurope", OtherRegion: "northeurope"},
}

// ComposedBy labels observed resources as composed by the XR named xr, as
// Crossplane labels everything it composes (crossplane.io/composite).
func ComposedBy(observed map[string]Object, xr string) map[string]Object {
	for _, o := range observed {
		meta := o["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels["crossplane.io/composite"] = xr
	}
	return observed
}

// KeepsNames checks that a response to an XR that ran before names had
// tenants keeps every observed resource, under the external name it runs
// with, and labels none with a derived cloud name.
func KeepsNames(t *testing.T, observed map[string]Object, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	if msg := Fatal(rsp); msg != "" {
		t.Fatalf("the XR that ran before names had tenants is refused: %s", msg)
	}
	desired := Desired(rsp)
	for name, obs := range observed {
		d, ok := desired[name]
		if !ok {
			t.Errorf("%s ran, and is no longer desired", name)
			continue
		}
		if want, got := metaString(obs, "annotations", "crossplane.io/external-name"), metaString(d, "annotations", "crossplane.io/external-name"); got != want {
			t.Errorf("%s runs as %q in the cloud, and is now desired as %q: a rename re-creates it", name, want, got)
		}
		if l := metaString(d, "labels", "platform.example.org/cloud-name"); l != "" {
			t.Errorf("%s gains cloud name %q; what ran keeps its bare names", name, l)
		}
	}
}

// metaString is a label or annotation of an object.
func metaString(o Object, field, key string) string {
	m, _ := o["metadata"].(map[string]any)[field].(map[string]any)
	s, _ := m[key].(string)
	return s
}
