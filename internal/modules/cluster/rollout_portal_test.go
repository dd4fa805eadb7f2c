package cluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/portal"
)

// TestRolloutPortalAgrees holds the portal's fleet view against the
// function: for the same fleet and environment, the gate the portal shows
// for wave production says what the function's status.rollout says for a
// production Cluster that has not moved yet (the verdict, and the changes
// an approval waits for), for a Kubernetes-only move, a chart-only move,
// and a chart move the environment approves, or approves only the minor
// of. The portal knows no old environment: its gate reads what the wave's
// Clusters ask for (rollout.AsksOf), here the production Cluster's.
func TestRolloutPortalAgrees(t *testing.T) {
	// withCharts is c with status.charts.
	withCharts := func(c fntest.Object, charts map[string]any) fntest.Object {
		c["status"].(map[string]any)["charts"] = charts
		return c
	}
	oldCM, newCM := map[string]any{"cert-manager": "v1.19.1"}, map[string]any{"cert-manager": "v1.19.2"}
	type args struct {
		version  string // the environment's version
		chart    string // the catalog's cert-manager version, "" to keep v1.19.1
		approved []any
		// canary and staging: the minor and the charts the earlier
		// waves' Clusters run.
		runs   string
		charts map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string // the function's verdict, which the portal must say too
	}{
		"KubernetesHold": {
			reason: "A Kubernetes-only move: staging runs 1.33, production holds.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.33", charts: oldCM},
			want:   "Hold",
		},
		"KubernetesAdopt": {
			reason: "A Kubernetes-only move the earlier waves run Ready, approved: production moves.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.34", charts: oldCM},
			want:   "Adopt",
		},
		"KubernetesApproval": {
			reason: "A Kubernetes-only move the earlier waves run Ready, not approved: production waits for it.",
			args:   args{version: "1.34", approved: []any{"cert-manager=v1.19.2"}, runs: "1.34", charts: oldCM},
			want:   "Approval",
		},
		"ChartHold": {
			reason: "A chart-only move: staging runs cert-manager v1.19.1, production holds.",
			args:   args{version: "1.33", chart: "v1.19.2", approved: []any{"cert-manager=v1.19.2"}, runs: "1.33", charts: oldCM},
			want:   "Hold",
		},
		"ChartAdopt": {
			reason: "A chart-only move the earlier waves run Ready, approved by name: production moves.",
			args:   args{version: "1.33", chart: "v1.19.2", approved: []any{"cert-manager=v1.19.2"}, runs: "1.33", charts: newCM},
			want:   "Adopt",
		},
		"ChartApproval": {
			reason: "A chart-only move the earlier waves run Ready, the minor approved and not the chart: production waits for the chart's approval.",
			args:   args{version: "1.33", chart: "v1.19.2", approved: []any{"1.33"}, runs: "1.33", charts: newCM},
			want:   "Approval",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := rolloutWorld(t, "production", map[string]any{"approved": tc.args.approved})
			fntest.EnvEdit("cluster-platform-baseline", "version", tc.args.version)(w)
			if tc.args.chart != "" {
				fntest.EnvEdit("cluster-platform-baseline", "charts.cert-manager.version", tc.args.chart)(w)
			}
			canary := withCharts(fleetCluster("platform-canary", "c1", "gcp", "canary", tc.args.runs, true), tc.args.charts)
			staging := withCharts(fleetCluster("team-edge", "s1", "azure", "staging", tc.args.runs, true), tc.args.charts)
			w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canary}, "rollout-wave-staging": {staging}}
			rsp := call(t, w)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, msg)
			}
			st := rolloutStatus(rsp)

			// The portal, reading the same EnvironmentConfigs and the same
			// Clusters: the two earlier waves' and this one, as its status
			// stood before this reconcile.
			var configs []*unstructured.Unstructured
			for _, e := range w.Envs {
				configs = append(configs, &unstructured.Unstructured{Object: e})
			}
			clusters := []*unstructured.Unstructured{{Object: canary}, {Object: staging}, {Object: w.XR}}
			view := portal.ViewOf(configs, clusters, func(string) bool { return true })
			var gate portal.GateView
			for _, wv := range view.Waves {
				if wv.Name == "production" {
					gate = wv.Gate
				}
			}
			fn, _ := st["verdict"].(string)
			if fn != tc.want {
				t.Errorf("%s\nthe function's verdict: want %s, got %s (%v)", tc.reason, tc.want, fn, st["message"])
			}
			if diff := cmp.Diff(fn, gate.Verdict); diff != "" {
				t.Errorf("%s\nthe portal's verdict for production against the function's: -function, +portal:\n%s\nfunction: %v\nportal: %s", tc.reason, diff, st["message"], gate.Message)
			}
			if fn == "Approval" {
				if diff := cmp.Diff(st["message"], gate.Message); diff != "" {
					t.Errorf("%s\nwhat waits for approval: -function, +portal:\n%s", tc.reason, diff)
				}
			}
		})
	}
}
