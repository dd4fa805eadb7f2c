package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		reason   string
		desired  map[string]any
		observed map[string]any
		want     []Change
	}{
		"Same": {
			reason:   "What the observed resource already has is no change; fields only it has (set by the provider) are none either.",
			desired:  map[string]any{"spec": map[string]any{"forProvider": map[string]any{"a": 1.0, "l": []any{"x"}}}},
			observed: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"a": 1.0, "l": []any{"x"}, "id": "set-by-provider"}}, "status": map[string]any{"ready": true}},
		},
		"Changed": {
			reason:   "A scalar and a list that differ are changes, with old and new values.",
			desired:  map[string]any{"spec": map[string]any{"a": 2.0, "l": []any{"x", "y"}}},
			observed: map[string]any{"spec": map[string]any{"a": 1.0, "l": []any{"x"}}},
			want:     []Change{{Path: "spec.a", Old: 1.0, New: 2.0}, {Path: "spec.l", Old: []any{"x"}, New: []any{"x", "y"}}},
		},
		"New": {
			reason:   "A field the observed resource lacks is a change from nothing; the XR's status is not.",
			desired:  map[string]any{"spec": map[string]any{"b": "v"}, "status": map[string]any{"x": 1.0}},
			observed: map[string]any{"spec": map[string]any{}},
			want:     []Change{{Path: "spec.b", New: "v"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, diff("", tc.desired, tc.observed), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndiff(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrintPlan(t *testing.T) {
	cases := map[string]struct {
		reason string
		plan   *Plan
		want   string
	}{
		"WarningsAndFatal": {
			reason: "The plan against the observed resources says the reconcile's Warnings, as crossplane render does (an AKS system pool's cycling without a drain, say).",
			plan:   &Plan{Changed: map[string][]Change{"cluster": {{Path: "spec.forProvider.defaultNodePool.vmSize", Old: "a", New: "b"}}}, Warnings: []string{"the system pool cycles without draining"}},
			want: "\nPlan against the observed resources: 0 added, 1 changed, 0 held, 0 removed\n" +
				"  ~ cluster\n      spec.forProvider.defaultNodePool.vmSize: \"a\" -> \"b\"\n" +
				"Warning: the system pool cycles without draining\n",
		},
		"Fatal": {
			reason: "A refused reconcile says its Fatal.",
			plan:   &Plan{Fatal: "invalid Cluster x: spec.parameters.version: Invalid value"},
			want:   "\nPlan against the observed resources: 0 added, 0 changed, 0 held, 0 removed\nFatal: invalid Cluster x: spec.parameters.version: Invalid value\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := PrintPlan(&b, tc.plan); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("%s\nPrintPlan: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
