package preview

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// owner is the controller reference crossplane render writes for an XR.
func owner(apiVersion, kind, name, uid string) []any {
	return []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}}
}

func TestRenderedComposed(t *testing.T) {
	namespaced := xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "prod", "namespace": "platform"}}
	legacy := xpsim.Object{"apiVersion": "legacy.platform.example.org/v1alpha1", "kind": "XCluster", "metadata": map[string]any{
		"name": "prod-1a2b3", "uid": "0000-1111",
		"labels": map[string]any{"cloud": "gcp", "crossplane.io/claim-name": "prod", "crossplane.io/claim-namespace": "team"},
	}}
	nested := xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Database", "metadata": map[string]any{
		"name": "orders-db", "namespace": "platform", "labels": map[string]any{"crossplane.io/composite": "orders"},
	}}
	network := xpsim.Object{"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network", "metadata": map[string]any{
		"annotations": map[string]any{"crossplane.io/external-name": "prod"}, "labels": map[string]any{"platform.example.org/cloud": "gcp"},
	}, "spec": map[string]any{"forProvider": map[string]any{"autoCreateSubnetworks": false}}}

	type args struct {
		xr, desired, observed xpsim.Object
		name                  string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   xpsim.Object
	}{
		"New": {
			reason: "A resource not observed yet gets the XR's name as generateName, the XR's namespace, the composition-resource-name annotation, the composite label and the XR as controller; what the function set stays.",
			args:   args{xr: namespaced, desired: network, name: "network"},
			want: xpsim.Object{"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network", "metadata": map[string]any{
				"generateName": "prod-", "namespace": "platform",
				"annotations":     map[string]any{"crossplane.io/external-name": "prod", "crossplane.io/composition-resource-name": "network"},
				"labels":          map[string]any{"platform.example.org/cloud": "gcp", "crossplane.io/composite": "prod"},
				"ownerReferences": owner("platform.example.org/v1alpha1", "Cluster", "prod", ""),
			}, "spec": map[string]any{"forProvider": map[string]any{"autoCreateSubnetworks": false}}},
		},
		"Observed": {
			reason: "An observed resource keeps its name, and no generateName.",
			args: args{xr: namespaced, desired: network, name: "network", observed: xpsim.Object{"metadata": map[string]any{
				"name": "5cnth", "annotations": map[string]any{"crossplane.io/composition-resource-name": "network"},
			}}},
			want: xpsim.Object{"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network", "metadata": map[string]any{
				"name": "5cnth", "namespace": "platform",
				"annotations":     map[string]any{"crossplane.io/external-name": "prod", "crossplane.io/composition-resource-name": "network"},
				"labels":          map[string]any{"platform.example.org/cloud": "gcp", "crossplane.io/composite": "prod"},
				"ownerReferences": owner("platform.example.org/v1alpha1", "Cluster", "prod", ""),
			}, "spec": map[string]any{"forProvider": map[string]any{"autoCreateSubnetworks": false}}},
		},
		"ClaimXR": {
			reason: "A cluster-scoped claim's XR passes its claim labels on, keeps a resource's own namespace and name, and its uid is the owner's.",
			args: args{xr: legacy, name: "provider-config-helm", desired: xpsim.Object{"apiVersion": "helm.crossplane.io/v1beta1", "kind": "ProviderConfig", "metadata": map[string]any{
				"name": "prod-helm", "namespace": "crossplane-system",
			}}},
			want: xpsim.Object{"apiVersion": "helm.crossplane.io/v1beta1", "kind": "ProviderConfig", "metadata": map[string]any{
				"name": "prod-helm", "namespace": "crossplane-system",
				"annotations": map[string]any{"crossplane.io/composition-resource-name": "provider-config-helm"},
				"labels": map[string]any{
					"crossplane.io/composite": "prod-1a2b3", "crossplane.io/claim-name": "prod", "crossplane.io/claim-namespace": "team",
				},
				"ownerReferences": owner("legacy.platform.example.org/v1alpha1", "XCluster", "prod-1a2b3", "0000-1111"),
			}},
		},
		"NestedXR": {
			reason: "A nested XR's resources carry the root XR's name (the XR's crossplane.io/composite label), as label and generateName.",
			args:   args{xr: nested, name: "instance", desired: xpsim.Object{"apiVersion": "rds.aws.m.upbound.io/v1beta1", "kind": "Instance"}},
			want: xpsim.Object{"apiVersion": "rds.aws.m.upbound.io/v1beta1", "kind": "Instance", "metadata": map[string]any{
				"generateName": "orders-", "namespace": "platform",
				"annotations":     map[string]any{"crossplane.io/composition-resource-name": "instance"},
				"labels":          map[string]any{"crossplane.io/composite": "orders"},
				"ownerReferences": owner("platform.example.org/v1alpha1", "Database", "orders-db", ""),
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderedComposed(tc.args.xr, tc.args.desired, tc.args.observed, tc.args.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrenderedComposed(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if _, ok := network["metadata"].(map[string]any)["annotations"].(map[string]any)["crossplane.io/composition-resource-name"]; ok {
		t.Errorf("renderedComposed modified the desired resource")
	}
}

func TestRenderedXR(t *testing.T) {
	x := xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "prod", "namespace": "platform"},
		"status": map[string]any{"clusterEndpoint": "https://10.0.0.1"}}
	resources := func(ready ...fnv1.Ready) map[string]*fnv1.Resource {
		out := map[string]*fnv1.Resource{}
		for i, r := range ready {
			out[string(rune('a'+i))] = &fnv1.Resource{Resource: &structpb.Struct{}, Ready: r}
		}
		return out
	}
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2024-01-01T00:00:00Z"}
	cases := map[string]struct {
		reason string
		rsp    *fnv1.RunFunctionResponse
		want   []any
	}{
		"Available": {
			reason: "Every resource ready: Ready is Available, then the function's conditions in order, at crossplane render's time; Crossplane's own condition types are not the function's to set.",
			rsp: &fnv1.RunFunctionResponse{
				Desired: &fnv1.State{Resources: resources(fnv1.Ready_READY_TRUE, fnv1.Ready_READY_TRUE)},
				Conditions: []*fnv1.Condition{
					{Type: "ClusterReady", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: "Available", Message: ptr("All 5 composed resources are ready")},
					{Type: "Synced", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "Nope"},
					{Type: "Upgrading", Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: "UpToDate"},
					{Type: "BudgetOK", Status: fnv1.Status_STATUS_CONDITION_UNKNOWN, Reason: "SpendUnknown"},
				},
			},
			want: []any{
				ready,
				map[string]any{"type": "ClusterReady", "status": "True", "reason": "Available", "message": "All 5 composed resources are ready", "lastTransitionTime": "2024-01-01T00:00:00Z"},
				map[string]any{"type": "Upgrading", "status": "False", "reason": "UpToDate", "lastTransitionTime": "2024-01-01T00:00:00Z"},
				map[string]any{"type": "BudgetOK", "status": "Unknown", "reason": "SpendUnknown", "lastTransitionTime": "2024-01-01T00:00:00Z"},
			},
		},
		"Unready": {
			reason: "The function leaves the XR's readiness to Crossplane and resources are not ready: Creating, naming the first three in order.",
			rsp:    &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: resources(fnv1.Ready_READY_FALSE, fnv1.Ready_READY_TRUE, fnv1.Ready_READY_UNSPECIFIED, fnv1.Ready_READY_FALSE, fnv1.Ready_READY_FALSE)}},
			want:   []any{map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: a, c, d, and 1 more", "lastTransitionTime": "2024-01-01T00:00:00Z"}},
		},
		"XRNotReady": {
			reason: "The function says the XR is not ready: Creating, without a message.",
			rsp:    &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Ready: fnv1.Ready_READY_FALSE}, Resources: resources(fnv1.Ready_READY_TRUE)}},
			want:   []any{map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "lastTransitionTime": "2024-01-01T00:00:00Z"}},
		},
		"XRReady": {
			reason: "The function says the XR is ready: Available, whatever its resources.",
			rsp:    &fnv1.RunFunctionResponse{Desired: &fnv1.State{Composite: &fnv1.Resource{Ready: fnv1.Ready_READY_TRUE}, Resources: resources(fnv1.Ready_READY_FALSE)}},
			want:   []any{ready},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderedXR(x, tc.rsp)
			want := xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "prod", "namespace": "platform"},
				"status": map[string]any{"clusterEndpoint": "https://10.0.0.1", "conditions": tc.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nrenderedXR(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if _, ok := x["status"].(map[string]any)["conditions"]; ok {
		t.Errorf("renderedXR modified the XR")
	}
}

func ptr(s string) *string { return &s }

func TestSameAsRender(t *testing.T) {
	xr := func(status map[string]any) xpsim.Object {
		return xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "prod"}, "status": status}
	}
	composed := func(label string) xpsim.Object {
		return xpsim.Object{"apiVersion": "v1", "kind": "Network", "metadata": map[string]any{
			"annotations": map[string]any{"crossplane.io/composition-resource-name": "network"},
			"labels":      map[string]any{"crossplane.io/composite": label},
		}}
	}
	type want struct {
		extra []string
		err   string
	}
	cases := map[string]struct {
		reason              string
		previewed, rendered []xpsim.Object
		want                want
	}{
		"Same": {
			reason:    "The same objects are the same.",
			previewed: []xpsim.Object{xr(map[string]any{"a": 1.0}), composed("prod")},
			rendered:  []xpsim.Object{xr(map[string]any{"a": 1.0}), composed("prod")},
		},
		"ConnectionDetails": {
			reason:    "The XR's status in preview may hold more (what the function reads from connection details, which crossplane render does not pass): those fields are named.",
			previewed: []xpsim.Object{xr(map[string]any{"a": 1.0, "clusterCA": "Q0E="}), composed("prod")},
			rendered:  []xpsim.Object{xr(map[string]any{"a": 1.0}), composed("prod")},
			want:      want{extra: []string{"status.clusterCA"}},
		},
		"StatusDiffers": {
			reason:    "A status field both have must be equal.",
			previewed: []xpsim.Object{xr(map[string]any{"a": 2.0}), composed("prod")},
			rendered:  []xpsim.Object{xr(map[string]any{"a": 1.0}), composed("prod")},
			want:      want{err: "the XR Cluster prod differs from crossplane render's at status"},
		},
		"LabelDiffers": {
			reason:    "A composed resource that differs is named, with the path.",
			previewed: []xpsim.Object{xr(nil), composed("prod")},
			rendered:  []xpsim.Object{xr(nil), composed("other")},
			want:      want{err: "Network network differs from crossplane render's at metadata.labels.crossplane.io/composite"},
		},
		"Count": {
			reason:    "A missing object is an error.",
			previewed: []xpsim.Object{xr(nil)},
			rendered:  []xpsim.Object{xr(nil), composed("prod")},
			want:      want{err: "preview prints 1 objects, crossplane render 2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			extra, err := SameAsRender(tc.previewed, tc.rendered)
			got := want{extra: extra}
			if err != nil {
				got.err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nSameAsRender(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
