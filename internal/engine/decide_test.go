package engine

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of the tests: one ready by its Ready condition, and the Usage.
var (
	netKind   = &registry.ResourceKind{Kind: "Net", Namespaced: "net.test.m.example.org/v1", Ready: registry.ReadyCondition}
	usageKind = registry.UsageKind(xr.Namespaced)
)

// observed is an existing resource named name, Ready or not.
func observed(t *testing.T, name string, ready bool) *structpb.Struct {
	t.Helper()
	status := "False"
	if ready {
		status = "True"
	}
	s, err := structpb.NewStruct(map[string]any{
		"metadata": map[string]any{"name": name},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rendered is a complete rendered resource of netKind.
func rendered(name string, dependsOn ...string) *registry.Rendered {
	return &registry.Rendered{Name: name, Kind: netKind, Object: object.Object{"kind": "Net"}, DependsOn: dependsOn}
}

func TestDecide(t *testing.T) {
	type args struct {
		rendered []*registry.Rendered
		// observed are the existing resources, by name: whether each is
		// Ready.
		observed map[string]bool
	}
	type want struct {
		emitted        []string
		held           []string
		waitsOnOtherXR bool
		ready          bool
	}
	usage := func(by, of string, pending string) *registry.Rendered {
		u := &registry.Rendered{Name: registry.UsageName(by, of), Kind: usageKind, UsageBy: by, Pending: pending}
		if pending == "" {
			u.Object = object.Object{"kind": "Usage"}
		}
		return u
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"WaitsForItsOwn": {
			reason: "A resource waiting for one of the XR's own is held, and the XR does not wait on another XR: the ready TTL applies, its dependency's change re-runs it.",
			args:   args{rendered: []*registry.Rendered{rendered("network"), rendered("subnet", "network")}},
			want:   want{emitted: []string{"network"}, held: []string{"subnet"}},
		},
		"PendingOnOtherXR": {
			reason: "A resource Pending on another XR's report is held, and the XR waits on another XR: the converging TTL applies.",
			args: args{rendered: []*registry.Rendered{rendered("network"), {Name: "rule", Kind: netKind, Pending: "waits for Cluster \"c\" to report", OnOtherXR: true}},
				observed: map[string]bool{"network": true}},
			want: want{emitted: []string{"network"}, held: []string{"rule"}, waitsOnOtherXR: true},
		},
		"PendingOnItsOwn": {
			reason: "A Pending without OnOtherXR waits for a value one of the XR's own resources reports.",
			args:   args{rendered: []*registry.Rendered{rendered("network"), {Name: "rule", Kind: netKind, Pending: "waits for the ID of network"}}},
			want:   want{emitted: []string{"network"}, held: []string{"rule"}},
		},
		"UseNotReady": {
			reason: "A resource that uses another XR's resource, not ready yet, is held and the XR waits on another XR.",
			args: args{rendered: []*registry.Rendered{{Name: "instance", Kind: netKind, Object: object.Object{"kind": "Net"},
				Uses: []registry.Use{{Name: "other-connection", Kind: netKind, Observed: observed(t, "c", false)}}}}},
			want: want{held: []string{"instance"}, waitsOnOtherXR: true},
		},
		"UsageBeforeItsEndsExist": {
			reason: "A Usage whose ends do not exist yet (Pending) is neither composed nor held: the user it follows is composed at once.",
			args:   args{rendered: []*registry.Rendered{rendered("network"), rendered("cluster", "network"), usage("cluster", "network", "waits until cluster and network exist, to name them")}},
			want:   want{emitted: []string{"network"}, held: []string{"cluster"}},
		},
		"UsageOnceItsEndsExist": {
			reason: "Once both ends exist the Usage is composed with its user; the XR is ready once it exists too.",
			args: args{rendered: []*registry.Rendered{rendered("network"), rendered("cluster", "network"), usage("cluster", "network", "")},
				observed: map[string]bool{"network": true, "cluster": true}},
			want: want{emitted: []string{"cluster", "cluster-uses-network", "network"}},
		},
		"Ready": {
			reason: "Everything composed and ready: nothing held, the XR is ready.",
			args: args{rendered: []*registry.Rendered{rendered("network"), rendered("cluster", "network"), usage("cluster", "network", "")},
				observed: map[string]bool{"network": true, "cluster": true, "cluster-uses-network": true}},
			want: want{emitted: []string{"cluster", "cluster-uses-network", "network"}, ready: true},
		},
		"ExistingUsageStays": {
			reason: "A Usage that exists stays composed even while Pending (it keeps its observed body): nothing is withdrawn.",
			args: args{rendered: []*registry.Rendered{rendered("network"), rendered("cluster", "network"), usage("cluster", "network", "waits until cluster and network exist, to name them")},
				observed: map[string]bool{"network": true, "cluster-uses-network": true}},
			want: want{emitted: []string{"cluster", "cluster-uses-network", "network"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := make(map[string]*structpb.Struct, len(tc.args.observed))
			for name, ready := range tc.args.observed {
				obs[name] = observed(t, "x-"+name, ready)
			}
			st := decide(&xr.Composite{Name: "x", Namespace: "ns", Scope: xr.Namespaced}, nil, tc.args.rendered, obs)
			got := want{
				emitted:        slices.Sorted(maps.Keys(st.emitted)),
				held:           slices.Sorted(maps.Keys(st.held)),
				waitsOnOtherXR: st.WaitsOnOtherXR(),
				ready:          st.Ready(),
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndecide(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
