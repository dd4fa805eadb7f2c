package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompareConditional holds a field its provider replaces only on a
// condition: a change the condition says is made in place is no change,
// one it says replaces the resource is compared as ever (the pool rotates,
// the field is refused), and a condition may read the rest of the
// resource.
func TestCompareConditional(t *testing.T) {
	src := Source("terraform-provider-test v1")
	drain := src.Rotate("upgradeSettings.drainTimeoutInMinutes", "azurerm_kubernetes_cluster_node_pool.upgrade_settings.drain_timeout_in_minutes", "f.go:1").
		When(Condition{Replaces: Unsets, Summary: "when the timeout is unset", Source: "f.go:85-88"})
	plugin := src.Refuse("networkProfile.networkPlugin", "t.network_profile.network_plugin", "f.go:2").
		When(Condition{Replaces: func(d Diff) bool { return Str(d.NewAt("networkProfile.networkPluginMode")) != "overlay" }, Summary: "unless the mode is overlay", Source: "f.go:117-133"})
	whole := src.Refuse("zone", "t.zone", "f.go:3").Conditional(ForceNewIf)
	fields := []Field{drain, plugin, whole}
	spec := func(fp map[string]any) map[string]any {
		return map[string]any{"spec": map[string]any{"forProvider": fp}}
	}
	observed := func(fp, at map[string]any) map[string]any {
		o := spec(fp)
		o["status"] = map[string]any{"atProvider": at}
		return o
	}
	settings := func(v any) map[string]any {
		return map[string]any{"upgradeSettings": map[string]any{"maxSurge": "33%", "drainTimeoutInMinutes": v}}
	}
	type args struct {
		desired, observed map[string]any
	}
	type want struct {
		changes []string
		action  Action
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"RaisedInPlace": {
			reason: "A drain timeout raised 30 -> 45 is made in place: no rotation.",
			args:   args{desired: spec(settings(45)), observed: observed(settings(30), settings(30))},
		},
		"SetInPlace": {
			reason: "A drain timeout set where the pool has none (its settings reported) is made in place.",
			args:   args{desired: spec(settings(30)), observed: observed(map[string]any{"upgradeSettings": map[string]any{"maxSurge": "33%"}}, map[string]any{"upgradeSettings": map[string]any{"maxSurge": "33%"}})},
		},
		"UnsetRotates": {
			reason: "Unsetting it (0) is what the provider replaces the pool for: it rotates.",
			args:   args{desired: spec(settings(0)), observed: observed(settings(30), settings(30))},
			want:   want{changes: []string{"spec.forProvider.upgradeSettings.drainTimeoutInMinutes 30 -> 0"}, action: Rotate},
		},
		"NullRotates": {
			reason: "Rendered as null it is unset too.",
			args:   args{desired: spec(settings(nil)), observed: observed(settings(30), nil)},
			want:   want{changes: []string{"spec.forProvider.upgradeSettings.drainTimeoutInMinutes 30 -> null"}, action: Rotate},
		},
		"OtherFieldRead": {
			reason: "A condition reads another field of the render: kubenet to azure with the overlay mode is made in place.",
			args: args{
				desired:  spec(map[string]any{"networkProfile": map[string]any{"networkPlugin": "azure", "networkPluginMode": "overlay"}}),
				observed: observed(map[string]any{"networkProfile": map[string]any{"networkPlugin": "kubenet"}}, nil),
			},
		},
		"OtherFieldFromObserved": {
			reason: "A field the render leaves out is read from the observed resource, which keeps it: without the overlay mode the change is refused.",
			args: args{
				desired:  spec(map[string]any{"networkProfile": map[string]any{"networkPlugin": "azure"}}),
				observed: observed(map[string]any{"networkProfile": map[string]any{"networkPlugin": "kubenet"}}, map[string]any{"networkProfile": map[string]any{"networkPluginMode": ""}}),
			},
			want: want{changes: []string{`spec.forProvider.networkProfile.networkPlugin "kubenet" -> "azure"`}, action: Refuse},
		},
		"RuleWithoutCondition": {
			reason: "A rule the cloud does not evaluate refuses every change, as before: fail safe.",
			args:   args{desired: spec(map[string]any{"zone": "b"}), observed: observed(map[string]any{"zone": "a"}, nil)},
			want:   want{changes: []string{`spec.forProvider.zone "a" -> "b"`}, action: Refuse},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Compare(fields, tc.args.desired, obj(t, tc.args.observed))
			got := want{changes: Describe(v.Changes), action: v.Action()}
			if len(got.changes) == 0 {
				got.changes = nil
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nCompare: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCarriedConditional holds that an update the provider makes in place,
// under way, is no update the provider refuses.
func TestCarriedConditional(t *testing.T) {
	src := Source("terraform-provider-test v1")
	plain := src.Rotate("upgradeSettings.drainTimeoutInMinutes", "t.upgrade_settings.drain_timeout_in_minutes", "f.go:1")
	conditional := plain.When(Condition{Replaces: Unsets, Summary: "when the timeout is unset", Source: "f.go:85-88"})
	observed := func(asked, reported any) map[string]any {
		return map[string]any{
			"spec":   map[string]any{"forProvider": map[string]any{"upgradeSettings": map[string]any{"drainTimeoutInMinutes": asked}}},
			"status": map[string]any{"atProvider": map[string]any{"upgradeSettings": map[string]any{"drainTimeoutInMinutes": reported}}},
		}
	}
	cases := map[string]struct {
		reason   string
		field    Field
		observed map[string]any
		want     bool
	}{
		"InPlaceUnderWay":   {reason: "45 asked, 30 still reported: made in place, so carried (under way).", field: conditional, observed: observed(45.0, 30.0), want: true},
		"ReplacingNotDone":  {reason: "0 asked, 30 reported: a replacement the provider refuses, not carried.", field: conditional, observed: observed(0.0, 30.0)},
		"WithoutCondition":  {reason: "Without a condition every difference is one the provider refuses.", field: plain, observed: observed(45.0, 30.0)},
		"SameWithCondition": {reason: "What is asked is what runs.", field: conditional, observed: observed(45.0, 45.0), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Carried([]Field{tc.field}, obj(t, tc.observed))); diff != "" {
				t.Errorf("%s\nCarried: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDiff holds how a condition reads the resource: another field of the
// observed resource from its spec, else its provider's report, through
// the first item of a list (a Terraform block); of the render, its value
// where rendered, else the observed one; and values as Terraform's zero
// values when unset.
func TestDiff(t *testing.T) {
	observed := map[string]any{
		"spec":   map[string]any{"forProvider": map[string]any{"computeConfig": []any{map[string]any{"enabled": true}}, "mode": "a"}},
		"status": map[string]any{"atProvider": map[string]any{"replicaNames": []any{"db-2"}, "mode": "b"}},
	}
	d := NewDiff(nil, nil, obj(t, observed), map[string]any{"spec": map[string]any{"forProvider": map[string]any{"mode": "c"}}})
	type got struct {
		OldBlock, OldReported, OldSpec, NewRendered, NewKept, Missing any
		Set                                                           []bool
	}
	want := got{
		OldBlock: true, OldReported: []any{"db-2"}, OldSpec: "a", NewRendered: "c", NewKept: true, Missing: nil,
		Set: []bool{false, false, false, false, false, true, true, true, true},
	}
	have := got{
		OldBlock: d.OldAt("computeConfig.enabled"), OldReported: d.OldAt("replicaNames"), OldSpec: d.OldAt("mode"),
		NewRendered: d.NewAt("mode"), NewKept: d.NewAt("computeConfig.enabled"), Missing: d.NewAt("nothing.here"),
		Set: []bool{IsSet(nil), IsSet(""), IsSet(0.0), IsSet(false), IsSet([]any{}), IsSet("x"), IsSet(1.0), IsSet(true), IsSet(map[string]any{})},
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("Diff: -want, +got:\n%s", diff)
	}
}
