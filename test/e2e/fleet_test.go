package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangedFields(t *testing.T) {
	cond := func(typ, status, msg, at string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": msg, "lastTransitionTime": at}
	}
	type args struct {
		a, b object
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []string
	}{
		"OnlyBookkeeping": {
			reason: "A write that changed only the resourceVersion and managedFields changed no field.",
			args: args{
				a: object{"metadata": map[string]any{"resourceVersion": "1", "managedFields": []any{"a"}}},
				b: object{"metadata": map[string]any{"resourceVersion": "2", "managedFields": []any{"b"}}},
			},
		},
		"SpecAndStatus": {
			reason: "Fields are named two levels deep, from metadata, spec and status.",
			args: args{
				a: object{"metadata": map[string]any{"generation": 1}, "spec": map[string]any{"crossplane": map[string]any{"x": 1}}},
				b: object{"metadata": map[string]any{"generation": 2}, "spec": map[string]any{"crossplane": map[string]any{"x": 2}}, "status": map[string]any{"host": "h"}},
			},
			want: []string{"metadata.generation", "spec.crossplane", "status.host"},
		},
		"ConditionsByType": {
			reason: "A changed condition is named by its type; one whose lastTransitionTime alone changed, or that did not change, is not; one gone is.",
			args: args{
				a: object{"status": map[string]any{"conditions": []any{
					cond("Ready", "False", "Not ready yet: a", "t1"), cond("Synced", "True", "", "t1"), cond("Gone", "True", "", "t1"), cond("Same", "True", "", "t1"),
				}}},
				b: object{"status": map[string]any{"conditions": []any{
					cond("Ready", "False", "Not ready yet: b", "t1"), cond("Synced", "True", "", "t2"), cond("Same", "True", "", "t1"),
				}}},
			},
			want: []string{"status.conditions[Gone]", "status.conditions[Ready]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := changedFields(tc.args.a, tc.args.b)
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nchangedFields(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
