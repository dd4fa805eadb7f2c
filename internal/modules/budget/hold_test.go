package budget_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// TestDeletionHold checks the Usage that keeps a WorkloadBudget from being
// deleted while a Deployment it scaled down is not back at its replicas,
// and what the function renders once the owner asked to delete it.
func TestDeletionHold(t *testing.T) {
	const dir = "../../../examples/budget"
	base := fntest.MustLoad(filepath.Join(dir, "workloads.yaml"))[0]
	overSpend := fntest.MustLoad("../../../examples/spend")
	spendUnder := make([]fntest.Object, 0, len(overSpend))
	for _, o := range overSpend {
		m := overlay.DeepCopy(o)
		if d, ok := m["data"].(map[string]any); ok {
			d["spentUsd"] = "120"
		}
		spendUnder = append(spendUnder, m)
	}
	// observedAt is the targets' Objects as provider-kubernetes reports
	// them with the Deployments at the given replicas.
	observedAt := func(worker, report float64) map[string]fntest.Object {
		obj := func(r float64) fntest.Object {
			return fntest.Object{
				"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
				"status": map[string]any{
					"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
					"atProvider": map[string]any{"manifest": map[string]any{"spec": map[string]any{"replicas": r}}},
				},
			}
		}
		return map[string]fntest.Object{"deployment-batch-worker": obj(worker), "deployment-report-generator": obj(report)}
	}
	deleting := overlay.DeepCopy(base)
	deleting["metadata"].(map[string]any)["annotations"] = map[string]any{xr.AnnotationDeletionAttempt: "Background"}

	// Every answer carries the short TTL: the spend comes from an object
	// Crossplane does not watch for the WorkloadBudget.
	type want struct {
		hold     bool
		replicas float64
		ttl      time.Duration
	}
	cases := map[string]struct {
		reason   string
		xr       fntest.Object
		spend    []fntest.Object
		observed map[string]fntest.Object
		want     want
	}{
		"Paused": {
			reason: "An exhausted budget with enforcement scales the targets to zero and holds its deletion.",
			xr:     base, spend: overSpend, observed: observedAt(4, 1),
			want: want{hold: true, replicas: 0, ttl: ttlConverging},
		},
		"Running": {
			reason: "Within budget, with the Deployments at their replicas, nothing is held.",
			xr:     base, spend: spendUnder, observed: observedAt(4, 1),
			want: want{hold: false, replicas: 4, ttl: ttlConverging},
		},
		"FirstRender": {
			reason: "Before any Object is observed, nothing is scaled down, so nothing is held.",
			xr:     base, spend: spendUnder,
			want: want{hold: false, replicas: 4, ttl: ttlConverging},
		},
		"Unpausing": {
			reason: "Once spend drops, the replicas are restored, and the hold stays until the Deployments are back.",
			xr:     base, spend: spendUnder, observed: observedAt(0, 0),
			want: want{hold: true, replicas: 4, ttl: ttlConverging},
		},
		"DeletionAttemptedWhilePaused": {
			reason: "When the owner asked to delete it, the budget stops pausing and restores the replicas, holding the deletion until they are back.",
			xr:     deleting, spend: overSpend, observed: observedAt(0, 0),
			want: want{hold: true, replicas: 4, ttl: ttlConverging},
		},
		"DeletionAttemptedRestored": {
			reason: "Once every Deployment is back at its replicas, the hold goes and Crossplane replays the deletion.",
			xr:     deleting, spend: overSpend, observed: observedAt(4, 1),
			want: want{hold: false, replicas: 4, ttl: ttlConverging},
		},
		"DeletionAttemptedPartlyRestored": {
			reason: "One Deployment still at zero keeps the hold.",
			xr:     deleting, spend: overSpend, observed: observedAt(4, 0),
			want: want{hold: true, replicas: 4, ttl: ttlConverging},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := fntest.Request{XR: overlay.DeepCopy(tc.xr), Spend: tc.spend, Observed: tc.observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			out := run(rsp)
			if f := fntest.Fatal(out); f != "" {
				t.Fatalf("%s\nunexpected Fatal: %s", tc.reason, f)
			}
			d := fntest.Desired(out)
			hold, held := d[budget.DeletionHold]
			replicas := d["deployment-batch-worker"]["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)["spec"].(map[string]any)["replicas"]
			got := want{hold: held, replicas: replicas.(float64), ttl: out.GetMeta().GetTtl().AsDuration()}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if held {
				of := hold["spec"].(map[string]any)["of"].(map[string]any)
				if of["kind"] != "WorkloadBudget" || of["resourceRef"].(map[string]any)["name"] != "team-a-batch" || hold["spec"].(map[string]any)["replayDeletion"] != true {
					t.Errorf("%s\nthe hold is not a replaying Usage of the WorkloadBudget itself: %v", tc.reason, hold["spec"])
				}
			}
		})
	}
}
