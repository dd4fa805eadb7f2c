package cluster_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
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
