package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// TestConditions derives a condition group's status, reason and message
// from its resources: each reason, and the wording of a group of one.
func TestConditions(t *testing.T) {
	const typ = "NetworkReady"
	in := func(r *registry.Rendered) *registry.Rendered { r.Condition = typ; return r }
	type args struct {
		rendered []*registry.Rendered
		observed map[string]bool
		// unsynced are observed resources whose provider reports
		// Synced False, with the message.
		unsynced map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   response.Condition
	}{
		"NothingRequested": {
			reason: "A group with no resources is True, NotRequested, with the module's explanation.",
			want:   response.Condition{Type: typ, Status: response.StatusTrue, Reason: ReasonNotRequested, Message: "No network: the XR joins one"},
		},
		"OneReady": {
			reason: "A group of one ready resource names it, rather than counting \"all 1 composed resources\".",
			args:   args{rendered: []*registry.Rendered{in(rendered("network"))}, observed: map[string]bool{"network": true}},
			want:   response.Condition{Type: typ, Status: response.StatusTrue, Reason: ReasonAvailable, Message: "The composed resource network is ready"},
		},
		"AllReady": {
			reason: "A group of several ready resources counts them.",
			args: args{rendered: []*registry.Rendered{in(rendered("network")), in(rendered("subnet", "network"))},
				observed: map[string]bool{"network": true, "subnet": true}},
			want: response.Condition{Type: typ, Status: response.StatusTrue, Reason: ReasonAvailable, Message: "All 2 composed resources are ready"},
		},
		"Creating": {
			reason: "A composed resource not ready yet is named as Creating.",
			args:   args{rendered: []*registry.Rendered{in(rendered("network"))}, observed: map[string]bool{"network": false}},
			want:   response.Condition{Type: typ, Status: response.StatusFalse, Reason: ReasonCreating, Message: "Not ready yet: network"},
		},
		"OneReadyOneRetiring": {
			reason: "A resource retiring (a pool's old generation) is not a member: one ready resource is left, and named.",
			args: args{rendered: []*registry.Rendered{in(rendered("network")), in(&registry.Rendered{Name: "old", Kind: netKind, Object: object.Object{"kind": "Net"}, Retire: "replaced by network"})},
				observed: map[string]bool{"network": true, "old": true}},
			want: response.Condition{Type: typ, Status: response.StatusTrue, Reason: ReasonAvailable, Message: "The composed resource network is ready"},
		},
		"ReconcileError": {
			reason: "A resource whose provider reports Synced False makes the group a ReconcileError quoting the provider, ahead of anything still creating.",
			args: args{rendered: []*registry.Rendered{in(rendered("network")), in(rendered("subnet"))},
				observed: map[string]bool{"subnet": false}, unsynced: map[string]string{"network": "quota exceeded"}},
			want: response.Condition{Type: typ, Status: response.StatusFalse, Reason: ReasonReconcileError, Message: "The provider cannot reconcile network: quota exceeded"},
		},
		"Waiting": {
			reason: "A resource held for its dependency is named with what it waits for.",
			args:   args{rendered: []*registry.Rendered{in(rendered("network")), in(rendered("subnet", "network"))}},
			want:   response.Condition{Type: typ, Status: response.StatusFalse, Reason: ReasonWaiting, Message: "Not composed yet: subnet waits for network"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[string]*structpb.Struct{}
			for n, ready := range tc.args.observed {
				obs[n] = observed(t, "x-"+n, ready)
			}
			for n, msg := range tc.args.unsynced {
				s, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": "x-" + n}, "status": map[string]any{"conditions": []any{
					map[string]any{"type": "Ready", "status": "False"}, map[string]any{"type": "Synced", "status": "False", "message": msg},
				}}})
				if err != nil {
					t.Fatal(err)
				}
				obs[n] = s
			}
			st := decide(&xr.Composite{Name: "x", Namespace: "ns", Scope: xr.Namespaced}, nil, tc.args.rendered, obs)
			got := st.Conditions([]string{typ}, map[string]string{typ: "No network: the XR joins one"})
			if diff := cmp.Diff([]response.Condition{tc.want}, got); diff != "" {
				t.Errorf("%s\nConditions(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
