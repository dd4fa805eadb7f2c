package cluster_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// TestBudgetFromPrometheus configures the environment's Prometheus spend
// source and a Cluster budget without spendRef (that the first reconcile
// does not wait for the query is TestPrometheusNeverBlocks's): once the
// query answered, node-hours times the environment's price table are the
// spend, and an exhausted, enforced budget holds the pools at their floor.
// A source that fails keeps failing open.
func TestBudgetFromPrometheus(t *testing.T) {
	hours := `{"status":"success","data":{"resultType":"vector","result":[` +
		`{"metric":{"label_node_kubernetes_io_instance_type":"e2-standard-2"},"value":[0,"10000"]}]}}`
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(hours)) }))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer down.Close()

	cases := map[string]struct {
		reason string
		url    string
		want   map[string]any
		pool   []any
	}{
		"Answers": {
			reason: "10000 node-hours of e2-standard-2 at $0.067 are $670 of a $500 budget: exhausted, enforced, paused.",
			url:    ok.URL,
			want:   map[string]any{"limitUsd": 500.0, "spentUsd": 670.0, "ratio": 134.0, "paused": true, "cause": "budget-exhausted"},
			pool:   []any{2.0, 2.0},
		},
		"Unreachable": {
			reason: "A source that fails is an unreachable agent: fail open, the pools keep their bounds.",
			url:    down.URL,
			want:   map[string]any{"limitUsd": 500.0, "paused": false, "cause": "agent-unreachable"},
			pool:   []any{2.0, 4.0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := fntest.GCPXR(fntest.Set("spec.parameters.budget", map[string]any{"limitUsd": 500.0, "enforcement": "enabled"}))
			world := append([]fntest.Object{}, envs...)
			w := &fntest.World{XR: x, Envs: world}
			fntest.EnvEdit("cluster-platform-baseline", "budget", map[string]any{"prometheus": map[string]any{
				"url": tc.url, "query": `sum by (label_node_kubernetes_io_instance_type) (node_hours{cluster="$cluster"})`,
			}})(w)
			_, observed, _, err := fntest.Converge(run, fntest.Request{XR: x, EnvironmentConfigs: w.Envs}, 30)
			if err != nil {
				t.Fatal(err)
			}
			var rsp *fnv1.RunFunctionResponse
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				req, err := fntest.Request{XR: x, EnvironmentConfigs: w.Envs, Observed: observed}.Proto()
				if err != nil {
					t.Fatal(err)
				}
				rsp = run(req)
				if cmp.Equal(budgetStatus(rsp), tc.want) {
					break
				}
			}
			if diff := cmp.Diff(tc.want, budgetStatus(rsp)); diff != "" {
				t.Fatalf("%s\nstatus.budget: -want, +got:\n%s", tc.reason, diff)
			}
			as, _ := at(rsp, "nodepool-general", "spec", "forProvider", "autoscaling").(map[string]any)
			if got := []any{as["minNodeCount"], as["maxNodeCount"]}; !cmp.Equal(got, tc.pool) {
				t.Errorf("%s\npool general bounds = %v, want %v", tc.reason, got, tc.pool)
			}
		})
	}
}

// budgetStatus is status.budget of a response.
func budgetStatus(rsp *fnv1.RunFunctionResponse) map[string]any {
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	b, _ := st["budget"].(map[string]any)
	return b
}

// TestClusterBudget covers the budget states of a Cluster: within budget,
// threshold crossed, exhausted with enforcement enabled and monitor-only,
// spend unknown, and an XR being deleted.
func TestClusterBudget(t *testing.T) {
	spendCM := func(v string) fntest.Object { return fntest.SpendConfigMap("team-edge", "spend", v) }
	withBudget := func(enforcement string) func(fntest.Object) {
		return fntest.Set("spec.parameters.budget", map[string]any{
			"limitUsd": 1000.0, "thresholds": []any{50.0, 90.0}, "contacts": []any{"ops@example.com"}, "enforcement": enforcement,
			"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
		})
	}
	type want struct {
		budget    map[string]any
		condition string
		// pool is the general pool's node group scaling (min, max).
		pool [2]float64
	}
	cases := map[string]struct {
		reason string
		xr     fntest.Object
		spend  []fntest.Object
		want   want
	}{
		"WithinBudget": {
			reason: "Spend below every threshold: running, pools untouched.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("120")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 120.0, "ratio": 12.0, "paused": false, "cause": "running"}, condition: "TRUE/WithinBudget", pool: [2]float64{2, 4}},
		},
		"ThresholdCrossed": {
			reason: "Spend past a threshold but below the limit: running, reported.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("910.5")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 910.5, "ratio": 91.05, "paused": false, "cause": "running"}, condition: "TRUE/ThresholdCrossed", pool: [2]float64{2, 4}},
		},
		"ExhaustedEnforced": {
			reason: "Spend at or over the limit with enforcement enabled: paused, pools held at their floor.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("1000")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 1000.0, "ratio": 100.0, "paused": true, "cause": "budget-exhausted"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 2}},
		},
		"ExhaustedMonitorOnly": {
			reason: "Spend over the limit with monitor-only: reported, nothing scaled.",
			xr:     fntest.AWSXR(withBudget("monitor-only")),
			spend:  []fntest.Object{spendCM("1500")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 1500.0, "ratio": 150.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 4}},
		},
		"SpendUnknown": {
			reason: "The spend object is missing: the agent that writes it is unreachable; fail open, nothing scaled.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "paused": false, "cause": "agent-unreachable"}, condition: "UNKNOWN/AgentUnreachable", pool: [2]float64{2, 4}},
		},
		"SpendUnreadable": {
			reason: "A spend that is not a number: fail open.",
			xr:     fntest.AWSXR(withBudget("enabled")),
			spend:  []fntest.Object{spendCM("lots")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "paused": false, "cause": "unknown"}, condition: "UNKNOWN/SpendUnknown", pool: [2]float64{2, 4}},
		},
		"Deleting": {
			reason: "An XR being deleted is never paused.",
			xr:     fntest.AWSXR(withBudget("enabled"), fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")),
			spend:  []fntest.Object{spendCM("5000")},
			want:   want{budget: map[string]any{"limitUsd": 1000.0, "spentUsd": 5000.0, "ratio": 500.0, "paused": false, "cause": "running"}, condition: "FALSE/BudgetExhausted", pool: [2]float64{2, 4}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Converge first without the deletion, so the pools exist.
			xr := overlay.DeepCopy(tc.xr)
			meta := xr["metadata"].(map[string]any)
			deleting := meta["deletionTimestamp"]
			delete(meta, "deletionTimestamp")
			_, observed, _, err := fntest.Converge(run, fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: tc.spend}, 30)
			if err != nil {
				t.Fatalf("Converge: %v", err)
			}
			if deleting != nil {
				meta["deletionTimestamp"] = deleting
			}
			req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: tc.spend, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if diff := cmp.Diff(tc.want.budget, st["budget"]); diff != "" {
				t.Errorf("%s\nstatus.budget: -want, +got:\n%s", tc.reason, diff)
			}
			status, reason, _ := strings.Cut(tc.want.condition, "/")
			fntest.Condition("BudgetOK", status, reason)(t, rsp)
			sc := fntest.Desired(rsp)["nodepool-general"]["spec"].(map[string]any)["forProvider"].(map[string]any)["scalingConfig"].(map[string]any)
			if gotPool := [2]float64{sc["minSize"].(float64), sc["maxSize"].(float64)}; gotPool != tc.want.pool {
				t.Errorf("%s\nnodepool-general scaling (min, max) = %v, want %v", tc.reason, gotPool, tc.want.pool)
			}
		})
	}
}

// TestEstimate checks status.estimatedMonthlyUsd against a hand computation
// from the example price table: (control plane + Σ price × nodes) × 730.
func TestEstimate(t *testing.T) {
	req, err := fntest.Request{XR: fntest.AWSXR(), EnvironmentConfigs: envs}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	// general: 2..4 × m6i.large (0.096); gpu: 0..2 spot g5.xlarge, at its
	// spot price (0.400).
	want := map[string]any{
		"min": math.Round((0.10+2*0.096)*730*100) / 100,
		"max": math.Round((0.10+4*0.096+2*0.400)*730*100) / 100,
	}
	got := run(req).GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["estimatedMonthlyUsd"]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimatedMonthlyUsd: -want, +got:\n%s", diff)
	}
}

// TestSpendRequested checks that a spend object the step did not deliver
// is asked for by name, and read once Crossplane delivers it.
func TestSpendRequested(t *testing.T) {
	xr := fntest.AWSXR(fntest.Set("spec.parameters.budget", map[string]any{
		"limitUsd": 100.0, "enforcement": "enabled",
		"spendRef": map[string]any{"apiVersion": "finops.example.org/v1", "kind": "Spend", "name": "edge", "namespace": "finops", "fieldPath": "status.monthToDateUsd"},
	}))
	first, err := fntest.Request{XR: xr, EnvironmentConfigs: envs}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	ns := "finops"
	want := &fnv1.ResourceSelector{ApiVersion: "finops.example.org/v1", Kind: "Spend", Match: &fnv1.ResourceSelector_MatchName{MatchName: "edge"}, Namespace: &ns}
	rsp := run(first)
	if diff := cmp.Diff(want, rsp.GetRequirements().GetResources()["budget-spend"], protocmp.Transform()); diff != "" {
		t.Fatalf("requirement for the spend object: -want, +got:\n%s", diff)
	}
	second, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Extra: map[string][]fntest.Object{"budget-spend": {{
		"apiVersion": "finops.example.org/v1", "kind": "Spend",
		"metadata": map[string]any{"name": "edge", "namespace": "finops"},
		"status":   map[string]any{"monthToDateUsd": 250.0},
	}}}}.Proto()
	if err != nil {
		t.Fatal(err)
	}
	rsp = run(second)
	if diff := cmp.Diff(want, rsp.GetRequirements().GetResources()["budget-spend"], protocmp.Transform()); diff != "" {
		t.Errorf("the requirement must stay stable once answered: -want, +got:\n%s", diff)
	}
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["budget"]
	if diff := cmp.Diff(map[string]any{"limitUsd": 100.0, "spentUsd": 250.0, "ratio": 250.0, "paused": true, "cause": "budget-exhausted"}, st); diff != "" {
		t.Errorf("status.budget once the spend object is delivered: -want, +got:\n%s", diff)
	}
}
