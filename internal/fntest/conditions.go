package fntest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// A ConditionCase is a change of one field a provider replaces only on a
// condition, and whether it replaces the resource for it.
type ConditionCase struct {
	Reason string
	Args   ConditionArgs
	// Want is whether the provider replaces the resource.
	Want bool
}

// ConditionArgs are the change a ConditionCase evaluates.
type ConditionArgs struct {
	// Attribute is the Terraform resource.attribute, a key of the cloud's
	// conditions.
	Attribute string
	// Old and New are the field's observed and rendered values (numbers
	// as float64, as JSON decodes them); nil for unset.
	Old, New any
	// Observed and Desired are the observed resource's and the render's
	// spec.forProvider, for conditions that read other fields.
	Observed, Desired map[string]any
}

// Conditions holds a cloud's conditions against its generated tables and
// its cases: every generated entry with a Rule has a condition, which names
// its source and is evaluated or says why not (Conditions.Unregistered);
// each evaluated condition has a case its provider makes in place and one
// it replaces the resource for; and each case gets the verdict it wants.
func Conditions(t *testing.T, tables map[string]registry.Table, conds registry.Conditions, cases map[string]ConditionCase) {
	t.Helper()
	for _, p := range conds.Unregistered(tables) {
		t.Error(p)
	}
	ways := map[string]map[bool]bool{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, ok := conds[tc.Args.Attribute]
			if !ok || !c.Evaluated() {
				t.Fatalf("%s: no evaluated condition of %s", tc.Reason, tc.Args.Attribute)
			}
			observed, err := structpb.NewStruct(map[string]any{"spec": map[string]any{"forProvider": tc.Args.Observed}})
			if err != nil {
				t.Fatal(err)
			}
			desired := map[string]any{"spec": map[string]any{"forProvider": tc.Args.Desired}}
			got := c.Replaces(lifecycle.NewDiff(tc.Args.Old, tc.Args.New, observed, desired))
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("%s\n%s %v -> %v replaces: -want, +got:\n%s", tc.Reason, tc.Args.Attribute, tc.Args.Old, tc.Args.New, diff)
			}
		})
		if ways[tc.Args.Attribute] == nil {
			ways[tc.Args.Attribute] = map[bool]bool{}
		}
		ways[tc.Args.Attribute][tc.Want] = true
	}
	for attr, c := range conds {
		if c.Evaluated() && (!ways[attr][true] || !ways[attr][false]) {
			t.Errorf("condition %s needs a case the provider makes in place and one it replaces the resource for", attr)
		}
	}
}
