package clusterref

import (
	"maps"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFind(t *testing.T) {
	eks := &registry.ResourceKind{Kind: "Cluster", Namespaced: "eks.aws.m.upbound.io/v1beta1", Cluster: "eks.aws.upbound.io/v1beta1"}
	r := &Reader{Requirement: "test-cluster"}
	r.Reads("aws", Read{Resource: "cluster", Kind: eks})
	ns := "team-a"
	cluster := map[string]any{
		"apiVersion": xr.ClusterAPIVersion, "kind": xr.ClusterKind,
		"metadata": map[string]any{"name": "prod", "namespace": ns, "labels": map[string]any{"cloud": "aws", "planeId": "123456789012"}},
		"spec":     map[string]any{"parameters": map[string]any{"location": "eu-west-1"}},
	}
	type want struct {
		found    bool
		location string
		labels   map[string]string
		reqs     map[string]*fnv1.ResourceSelector
		observed []string
	}
	cases := map[string]struct {
		reason   string
		x        xr.Composite
		required map[string]*fnv1.Resources
		want     want
	}{
		"NamespacedWaiting": {
			reason: "A namespaced XR asks for the Cluster by name in its namespace and, in the same call, for what its cloud reads by the composite label (so that Crossplane calls twice, not three times); it reports false until the Cluster is there.",
			x:      xr.Composite{Name: "app", Namespace: ns, Scope: xr.Namespaced, Cloud: "aws"},
			want: want{
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}, Namespace: &ns},
					"test-cluster-cluster": {ApiVersion: eks.Namespaced, Kind: "Cluster", Namespace: &ns,
						Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{xr.LabelComposite: "prod", registry.LabelResource: "cluster"}}}},
				},
			},
		},
		"NamespacedFound": {
			reason: "Once the Cluster is delivered, the requirements stay the same, and delivered resources are kept by composition-resource name.",
			x:      xr.Composite{Name: "app", Namespace: ns, Scope: xr.Namespaced, Cloud: "aws"},
			required: map[string]*fnv1.Resources{
				"test-cluster":         {Items: []*fnv1.Resource{{Resource: mustStruct(t, cluster)}}},
				"test-cluster-cluster": {Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{"kind": "Cluster"})}}},
			},
			want: want{
				found: true, location: "eu-west-1", labels: map[string]string{xr.LabelComposite: "prod"}, observed: []string{"cluster"},
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}, Namespace: &ns},
					"test-cluster-cluster": {ApiVersion: eks.Namespaced, Kind: "Cluster", Namespace: &ns,
						Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{xr.LabelComposite: "prod", registry.LabelResource: "cluster"}}}},
				},
			},
		},
		"LocationFromStatus": {
			reason: "A Cluster that names no location runs in its environment's, which it reports in status.location: that is its location, as a region (a GKE zone's region).",
			x:      xr.Composite{Name: "app", Namespace: ns, Scope: xr.Namespaced, Cloud: "gcp"},
			required: map[string]*fnv1.Resources{
				"test-cluster": {Items: []*fnv1.Resource{{Resource: mustStruct(t, located(cluster, "", "europe-west1-b"))}}},
			},
			want: want{
				found: true, location: "europe-west1", labels: map[string]string{xr.LabelComposite: "prod"},
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}, Namespace: &ns},
				},
			},
		},
		"SpecLocationWins": {
			reason: "The spec's location is the Cluster's location, whatever its status reports (the Cluster refuses to move; its status keeps the last location it rendered).",
			x:      xr.Composite{Name: "app", Namespace: ns, Scope: xr.Namespaced, Cloud: "gcp"},
			required: map[string]*fnv1.Resources{
				"test-cluster": {Items: []*fnv1.Resource{{Resource: mustStruct(t, located(cluster, "us-central1", "europe-west1"))}}},
			},
			want: want{
				found: true, location: "us-central1", labels: map[string]string{xr.LabelComposite: "prod"},
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}, Namespace: &ns},
				},
			},
		},
		"LocationUnreported": {
			reason: "A Cluster that names no location and has not reported its environment's is found without one: its dependents wait (AwaitLocation), never use an empty region.",
			x:      xr.Composite{Name: "app", Namespace: ns, Scope: xr.Namespaced, Cloud: "gcp"},
			required: map[string]*fnv1.Resources{
				"test-cluster": {Items: []*fnv1.Resource{{Resource: mustStruct(t, located(cluster, "", ""))}}},
			},
			want: want{
				found: true, labels: map[string]string{xr.LabelComposite: "prod"},
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}, Namespace: &ns},
				},
			},
		},
		"Claim": {
			reason: "The XR of a claim asks for the Cluster claim of that name in the claim's namespace, by the claim labels.",
			x:      xr.Composite{Name: "app-x1", Scope: xr.ClusterScoped, Cloud: "gcp", Labels: map[string]string{xr.LabelClaimNamespace: ns}},
			want: want{
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.LegacyClusterAPIVersion, Kind: xr.LegacyClusterKind,
						Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{xr.LabelClaimName: "prod", xr.LabelClaimNamespace: ns}}}},
				},
			},
		},
		"ClusterScoped": {
			reason: "A cluster-scoped XR without a claim asks for the XCluster by name.",
			x:      xr.Composite{Name: "app", Scope: xr.ClusterScoped, Cloud: "gcp"},
			want: want{
				reqs: map[string]*fnv1.ResourceSelector{
					"test-cluster": {ApiVersion: xr.LegacyClusterAPIVersion, Kind: xr.LegacyClusterKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "prod"}},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{RequiredResources: tc.required}
			rsp := &fnv1.RunFunctionResponse{}
			c, found := r.Find(req, rsp, &tc.x, "prod")
			if found != tc.want.found {
				t.Fatalf("%s\nFind(...): found %t, want %t", tc.reason, found, tc.want.found)
			}
			if diff := cmp.Diff(tc.want.reqs, rsp.GetRequirements().GetResources(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nFind(...) requirements: -want, +got:\n%s", tc.reason, diff)
			}
			if !found {
				return
			}
			var observed []string
			for k := range c.Observed {
				observed = append(observed, k)
			}
			got := want{found: found, location: c.Location, labels: c.Labels, reqs: tc.want.reqs, observed: observed}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nFind(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// located returns a copy of the Cluster object c with spec.parameters.location
// spec and status.location status, each left out when empty.
func located(c map[string]any, spec, status string) map[string]any {
	out := maps.Clone(c)
	params := map[string]any{}
	if spec != "" {
		params["location"] = spec
	}
	out["spec"] = map[string]any{"parameters": params}
	delete(out, "status")
	if status != "" {
		out["status"] = map[string]any{xr.StatusLocation: status}
	}
	return out
}

func TestUse(t *testing.T) {
	conn := &registry.ResourceKind{Kind: "Connection", Namespaced: "servicenetworking.gcp.m.upbound.io/v1beta1"}
	observed := mustStruct(t, map[string]any{"kind": "Connection"})
	c := &cluster.Reported{Ref: "prod", Labels: map[string]string{xr.LabelComposite: "prod"}, Observed: map[string]*structpb.Struct{"peering": observed}}
	type want struct {
		name     string
		selector map[string]any
		observed *structpb.Struct
	}
	cases := map[string]struct {
		reason   string
		resource string
		want     want
	}{
		"Delivered": {
			reason:   "A resource of the Cluster is used as delivered, selected by the Cluster's labels and its composition-resource name, never by controller.",
			resource: "peering",
			want: want{name: "cluster-peering", observed: observed,
				selector: map[string]any{"matchLabels": map[string]any{xr.LabelComposite: "prod", registry.LabelResource: "peering"}}},
		},
		"NotDelivered": {
			reason:   "One not delivered yet has nothing observed, which keeps its user waiting.",
			resource: "range",
			want:     want{name: "cluster-range", selector: map[string]any{"matchLabels": map[string]any{xr.LabelComposite: "prod", registry.LabelResource: "range"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := Use(c, tc.resource, conn)
			got := want{name: u.Name, selector: u.Selector, observed: u.Observed}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nUse(%q): -want, +got:\n%s", tc.reason, tc.resource, diff)
			}
			if u.Kind != conn {
				t.Errorf("%s\nUse(%q).Kind = %v, want %v", tc.reason, tc.resource, u.Kind, conn)
			}
		})
	}
}
