package budget_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestWorkloadBudget covers the budget module: within budget, threshold
// crossed, exhausted with enforcement enabled and monitor-only, spend
// unknown, and an XR being deleted.
func TestWorkloadBudget(t *testing.T) {
	input := fntest.Object{"apiVersion": "platform.fn.example.org/v1beta1", "kind": "Input", "module": "budget"}
	wb := func(enforcement string, mutate ...func(fntest.Object)) fntest.Object {
		o := fntest.Object{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "WorkloadBudget",
			"metadata": map[string]any{"name": "wb", "namespace": "team-x"},
			"spec": map[string]any{
				"limitUsd": 200.0, "enforcement": enforcement, "thresholds": []any{75.0},
				"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
				"targets":  []any{map[string]any{"name": "api", "replicas": 3.0}, map[string]any{"name": "worker", "replicas": 2.0}},
			},
		}
		for _, m := range mutate {
			m(o)
		}
		return o
	}
	spend := func(v string) []fntest.Object { return []fntest.Object{fntest.SpendConfigMap("team-x", "spend", v)} }
	type want struct {
		status    map[string]any
		condition string
		replicas  [2]float64
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		spend  []fntest.Object
		want   want
	}{
		"WithinBudget": {
			reason: "Below every threshold the targets run at their stated replicas.",
			xr:     wb("enabled"), spend: spend("40"),
			want: want{status: map[string]any{"spentUsd": 40.0, "ratio": 20.0, "paused": false, "cause": "running"}, condition: "TRUE/WithinBudget", replicas: [2]float64{3, 2}},
		},
		"ThresholdCrossed": {
			reason: "Past a threshold, still running, reported.",
			xr:     wb("enabled"), spend: spend("160"),
			want: want{status: map[string]any{"spentUsd": 160.0, "ratio": 80.0, "paused": false, "cause": "running"}, condition: "TRUE/ThresholdCrossed", replicas: [2]float64{3, 2}},
		},
		"ExhaustedEnforced": {
			reason: "Exhausted with enforcement: every target at zero.",
			xr:     wb("enabled"), spend: spend("250"),
			want: want{status: map[string]any{"spentUsd": 250.0, "ratio": 125.0, "paused": true, "cause": "budget-exhausted"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{0, 0}},
		},
		"ExhaustedMonitorOnly": {
			reason: "Exhausted, monitor-only: reported, nothing scaled.",
			xr:     wb("monitor-only"), spend: spend("250"),
			want: want{status: map[string]any{"spentUsd": 250.0, "ratio": 125.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{3, 2}},
		},
		"SpendUnknown": {
			reason: "No spend object: fail open.",
			xr:     wb("enabled"),
			want:   want{status: map[string]any{"paused": false, "cause": "agent-unreachable", "warnings": []any{"budget: spend object ConfigMap team-x/spend not found (yet): the spend is unknown; nothing is paused"}}, condition: "UNKNOWN/AgentUnreachable", replicas: [2]float64{3, 2}},
		},
		"Deleting": {
			reason: "An XR being deleted never pauses.",
			xr:     wb("enabled", fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")), spend: spend("900"),
			want: want{status: map[string]any{"spentUsd": 900.0, "ratio": 450.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", replicas: [2]float64{3, 2}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := fntest.Request{XR: tc.xr, Spend: tc.spend, Input: input}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nunexpected Fatal: %s", tc.reason, msg)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
			if diff := cmp.Diff(tc.want.status, st); diff != "" {
				t.Errorf("%s\nstatus: -want, +got:\n%s", tc.reason, diff)
			}
			status, reason, _ := strings.Cut(tc.want.condition, "/")
			fntest.Condition("BudgetOK", status, reason)(t, rsp)
			d := fntest.Desired(rsp)
			var got [2]float64
			for i, target := range []string{"deployment-api", "deployment-worker"} {
				o := d[target]
				if pol := o["spec"].(map[string]any)["managementPolicies"]; !cmp.Equal(pol, []any{"Observe", "Update"}) {
					t.Errorf("%s\n%s managementPolicies = %v, want [Observe Update]", tc.reason, target, pol)
				}
				m := o["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)
				if keys := slices.Sorted(maps.Keys(m["spec"].(map[string]any))); !cmp.Equal(keys, []string{"replicas"}) {
					t.Errorf("%s\n%s manifest owns %v, want only spec.replicas", tc.reason, target, keys)
				}
				got[i] = m["spec"].(map[string]any)["replicas"].(float64)
			}
			if got != tc.want.replicas {
				t.Errorf("%s\nreplicas = %v, want %v", tc.reason, got, tc.want.replicas)
			}
		})
	}
}
