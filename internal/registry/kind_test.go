package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
)

// TestMerge holds how a generated table joins a kind's hand-written one: a
// hand entry wins, a generated entry is refused (rotated on a node pool),
// and a custom diff's replacement of a decrease stays a Raise where the
// kind does not rotate.
func TestMerge(t *testing.T) {
	const src lifecycle.Source = "provider v1"
	generated := Table{Resource: "r", Fields: []lifecycle.Field{
		src.Refuse("name", "r.name", "r.go:1"),
		src.Raise("size", "r.size", "r.go:2 (CustomizeDiff: ForceNewIfChange (decrease))"),
		src.Refuse("zone", "r.zone", "r.go:3"),
	}}
	type want struct {
		paths   []string
		actions []lifecycle.Action
	}
	cases := map[string]struct {
		reason string
		hand   []lifecycle.Field
		want   want
	}{
		"Refuses": {
			reason: "On a kind that does not rotate, a ForceNew is refused and a decrease rule stays a Raise.",
			want: want{
				paths:   []string{"spec.forProvider.name", "spec.forProvider.size", "spec.forProvider.zone"},
				actions: []lifecycle.Action{lifecycle.Refuse, lifecycle.Raise, lifecycle.Refuse},
			},
		},
		"Rotates": {
			reason: "On a node pool every generated entry rotates it, a decrease rule too.",
			hand:   []lifecycle.Field{src.Rotate("machine", "r.machine", "r.go:9")},
			want: want{
				paths:   []string{"spec.forProvider.machine", "spec.forProvider.name", "spec.forProvider.size", "spec.forProvider.zone"},
				actions: []lifecycle.Action{lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate, lifecycle.Rotate},
			},
		},
		"HandWins": {
			reason: "A hand entry keeps its action for its path; the generated one is left out.",
			hand:   []lifecycle.Field{src.Walk("size", "r.size", "r.go:2")},
			want: want{
				paths:   []string{"spec.forProvider.size", "spec.forProvider.name", "spec.forProvider.zone"},
				actions: []lifecycle.Action{lifecycle.Walk, lifecycle.Refuse, lifecycle.Refuse},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := (&ResourceKind{Kind: "K"}).Replaces(tc.hand...)
			k.merge(generated)
			var got want
			for _, f := range k.Replacements {
				got.paths = append(got.paths, f.Path)
				got.actions = append(got.actions, f.Action)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nmerge: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
