package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func TestConditions(t *testing.T) {
	const typ = "NetworkReady"
	in := func(r *registry.Rendered) *registry.Rendered { r.Condition = typ; return r }
	type args struct {
		rendered []*registry.Rendered
		observed map[string]bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   module.Condition
	}{
		"NothingRequested": {
			reason: "A group with no resources is True, NotRequested, with the module's explanation.",
			want:   module.Condition{Type: typ, Status: module.StatusTrue, Reason: ReasonNotRequested, Message: "No network: the XR joins one"},
		},
		"OneReady": {
			reason: "A group of one ready resource names it, rather than counting \"all 1 composed resources\".",
			args:   args{rendered: []*registry.Rendered{in(rendered("network"))}, observed: map[string]bool{"network": true}},
			want:   module.Condition{Type: typ, Status: module.StatusTrue, Reason: ReasonAvailable, Message: "The composed resource network is ready"},
		},
		"AllReady": {
			reason: "A group of several ready resources counts them.",
			args: args{rendered: []*registry.Rendered{in(rendered("network")), in(rendered("subnet", "network"))},
				observed: map[string]bool{"network": true, "subnet": true}},
			want: module.Condition{Type: typ, Status: module.StatusTrue, Reason: ReasonAvailable, Message: "All 2 composed resources are ready"},
		},
		"Creating": {
			reason: "A composed resource not ready yet is named as Creating.",
			args:   args{rendered: []*registry.Rendered{in(rendered("network"))}, observed: map[string]bool{"network": false}},
			want:   module.Condition{Type: typ, Status: module.StatusFalse, Reason: ReasonCreating, Message: "Not ready yet: network"},
		},
		"Waiting": {
			reason: "A resource held for its dependency is named with what it waits for.",
			args:   args{rendered: []*registry.Rendered{in(rendered("network")), in(rendered("subnet", "network"))}},
			want:   module.Condition{Type: typ, Status: module.StatusFalse, Reason: ReasonWaiting, Message: "Not composed yet: subnet waits for network"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[string]*structpb.Struct{}
			for n, ready := range tc.args.observed {
				obs[n] = observed(t, "x-"+n, ready)
			}
			st := decide(&xr.Composite{Name: "x", Namespace: "ns", Scope: xr.Namespaced}, nil, tc.args.rendered, obs)
			got := st.Conditions([]string{typ}, map[string]string{typ: "No network: the XR joins one"})
			if diff := cmp.Diff([]module.Condition{tc.want}, got); diff != "" {
				t.Errorf("%s\nConditions(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
