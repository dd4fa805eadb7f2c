package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
)

// TestMerge holds how a generated table joins a kind's hand-written one: a
// hand entry wins, a generated entry is refused (rotated on a node pool),
// a custom diff's replacement of a decrease stays a Raise where the kind
// does not rotate, and an entry its provider replaces on a condition gets
// the cloud's condition (but its reference, and a Raise or Walk).
func TestMerge(t *testing.T) {
	const src lifecycle.Source = "provider v1"
	generated := Table{Resource: "r", Fields: []lifecycle.Field{
		src.Refuse("name", "r.name", "r.go:1"),
		src.Raise("size", "r.size", "r.go:2 (CustomizeDiff: ForceNewIfChange (decrease))"),
		src.Refuse("zone", "r.zone", "r.go:3"),
		src.Refuse("tier", "r.tier", "r.go:4 (CustomizeDiff: ForceNewIfChange)").Conditional(lifecycle.ForceNewIfChange),
		src.Refuse("tierRef", "r.tier", "r.go:4 (CustomizeDiff: ForceNewIfChange)").Conditional(lifecycle.ForceNewIfChange),
	}}
	conds := Conditions{
		"r.tier": {Replaces: lifecycle.Unsets, Summary: "when it is unset", Source: "r.go:4-6"},
		"r.size": {Replaces: lifecycle.Unsets, Summary: "when it is unset", Source: "r.go:2-3"},
	}
	type want struct {
		paths       []string
		actions     []lifecycle.Action
		conditioned []string
	}
	cases := map[string]struct {
		reason string
		hand   []lifecycle.Field
		want   want
	}{
		"Refuses": {
			reason: "On a kind that does not rotate, a ForceNew is refused and a decrease rule stays a Raise.",
			want: want{
				paths:       []string{"spec.forProvider.name", "spec.forProvider.size", "spec.forProvider.zone", "spec.forProvider.tier", "spec.forProvider.tierRef"},
				actions:     []lifecycle.Action{lifecycle.Refuse, lifecycle.Raise, lifecycle.Refuse, lifecycle.Refuse, lifecycle.Refuse},
				conditioned: []string{"spec.forProvider.tier"},
			},
		},
		"Rotates": {
			reason: "On a node pool every generated entry rotates it, a decrease rule too.",
			hand:   []lifecycle.Field{src.Rotate("machine", "r.machine", "r.go:9")},
			want: want{
				paths:       []string{"spec.forProvider.machine", "spec.forProvider.name", "spec.forProvider.size", "spec.forProvider.zone", "spec.forProvider.tier", "spec.forProvider.tierRef"},
				actions:     []lifecycle.Action{lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate},
				conditioned: []string{"spec.forProvider.tier"},
			},
		},
		"HandWins": {
			reason: "A hand entry keeps its action for its path; the generated one is left out.",
			hand:   []lifecycle.Field{src.Walk("size", "r.size", "r.go:2")},
			want: want{
				paths:       []string{"spec.forProvider.size", "spec.forProvider.name", "spec.forProvider.zone", "spec.forProvider.tier", "spec.forProvider.tierRef"},
				actions:     []lifecycle.Action{lifecycle.Walk, lifecycle.Refuse, lifecycle.Refuse, lifecycle.Refuse, lifecycle.Refuse},
				conditioned: []string{"spec.forProvider.tier"},
			},
		},
		"HandGetsCondition": {
			reason: "A hand entry of an attribute its provider replaces on a condition gets the condition too, its reference keeps refusing.",
			hand:   []lifecycle.Field{src.Refuse("tier", "r.tier (when unset)", "r.go:4")},
			want: want{
				paths:       []string{"spec.forProvider.tier", "spec.forProvider.name", "spec.forProvider.size", "spec.forProvider.zone", "spec.forProvider.tierRef"},
				actions:     []lifecycle.Action{lifecycle.Refuse, lifecycle.Refuse, lifecycle.Raise, lifecycle.Refuse, lifecycle.Refuse},
				conditioned: []string{"spec.forProvider.tier"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := (&ResourceKind{Kind: "K"}).Replaces(tc.hand...)
			k.merge(generated, conds)
			var got want
			for _, f := range k.Replacements {
				got.paths = append(got.paths, f.Path)
				got.actions = append(got.actions, f.Action)
				if f.Condition != nil {
					got.conditioned = append(got.conditioned, f.Path)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nmerge: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestUnregistered holds the check each cloud's tests make of its
// conditions: every generated entry with a rule has one, each is complete,
// and none names an attribute without a rule.
func TestUnregistered(t *testing.T) {
	const src lifecycle.Source = "provider v1"
	tables := map[string]Table{"g, Kind=K": {Resource: "r", Fields: []lifecycle.Field{
		src.Refuse("name", "r.name", "r.go:1"),
		src.Refuse("tier", "r.tier", "r.go:4").Conditional(lifecycle.ForceNewIfChange),
		src.Refuse("region", "r.region", "region.go:1").Conditional(lifecycle.DiffForceNew),
	}}}
	cases := map[string]struct {
		reason string
		conds  Conditions
		want   []string
	}{
		"Complete": {
			reason: "An evaluated condition, and one that says why it is not (for every resource's region), register every rule.",
			conds: Conditions{
				"r.tier":   {Replaces: lifecycle.Unsets, Summary: "when it is unset", Source: "r.go:4-6"},
				"*.region": {Source: "region.go:1-9", Why: "the wrapper sets it"},
			},
		},
		"Missing": {
			reason: "A rule without a condition fails.",
			conds:  Conditions{"*.region": {Source: "region.go:1-9", Why: "the wrapper sets it"}},
			want:   []string{"g, Kind=K spec.forProvider.tier: r.tier replaces it on a condition (ForceNewIfChange), which the cloud's conditions do not give: write it (Replaces, from the provider's source), or say Why every change is refused"},
		},
		"StaleAndIncomplete": {
			reason: "A condition of no rule, or one without a source or a reason, fails.",
			conds: Conditions{
				"r.tier":   {Replaces: lifecycle.Unsets, Summary: "when it is unset"},
				"*.region": {Source: "region.go:1-9", Why: "the wrapper sets it"},
				"r.name":   {Source: "r.go:1", Why: "it is unconditional"},
			},
			want: []string{
				"condition r.name names no generated entry with a rule",
				"condition r.tier needs a Source, and either Replaces with a Summary or Why",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.conds.Unregistered(tables)); diff != "" {
				t.Errorf("%s\nUnregistered: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
