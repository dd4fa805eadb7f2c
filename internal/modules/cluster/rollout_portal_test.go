package cluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/portal"
)

// TestRolloutPortalAgrees holds the portal's fleet view against the
// function, for the same fleet and environment as a control plane holds
// them: the production Cluster's verdict and message in the portal (the
// fleet controller's ruling on it, fleet.Rule, at the controller's time)
// are those of the function's status.rollout once it reads that ruling
// (call delivers it, as ruled describes), and so is the gate the portal
// shows for wave production, whose Cluster has not moved yet. It covers a
// Kubernetes-only move, a chart-only move, and a move the environment
// approves, or approves only the minor of; held, adopted, waiting for
// approval, and halted; with the earlier waves' Clusters namespaced or
// legacy XClusters of a claim.
func TestRolloutPortalAgrees(t *testing.T) {
	// withCharts is c with status.charts.
	withCharts := func(c fntest.Object, charts map[string]any) fntest.Object {
		c["status"].(map[string]any)["charts"] = charts
		return c
	}
	// xcluster is c as a legacy XCluster of a claim in c's namespace.
	xcluster := func(c fntest.Object) fntest.Object {
		ns, _ := c["metadata"].(map[string]any)["namespace"].(string)
		fntest.Legacy(c)
		c["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/claim-namespace"] = ns
		return c
	}
	// refused is c with its Synced condition False: the function refused
	// its change.
	refused := func(c fntest.Object) fntest.Object {
		conds := c["status"].(map[string]any)["conditions"].([]any)
		conds[1] = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "the upgrade was refused"}
		return c
	}
	oldCM, newCM := map[string]any{"cert-manager": "v1.19.1"}, map[string]any{"cert-manager": "v1.19.2"}
	type args struct {
		version  string // the environment's version
		chart    string // the catalog's cert-manager version, "" to keep v1.19.1
		approved []any
		// canary and staging: the minor and the charts the earlier
		// waves' Clusters run; legacy makes staging's an XCluster, and
		// failed refuses its change.
		runs           string
		charts         map[string]any
		legacy, failed bool
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
		"KubernetesHoldXCluster": {
			reason: "The same, staging's Cluster a legacy XCluster of a claim: it holds production all the same.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.33", charts: oldCM, legacy: true},
			want:   "Hold",
		},
		"KubernetesAdopt": {
			reason: "A Kubernetes-only move the earlier waves run Ready, approved: production moves.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.34", charts: oldCM},
			want:   "Adopt",
		},
		"KubernetesAdoptXCluster": {
			reason: "The same, staging's Cluster a legacy XCluster of a claim that runs 1.34 Ready: production moves.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.34", charts: oldCM, legacy: true},
			want:   "Adopt",
		},
		"KubernetesApproval": {
			reason: "A Kubernetes-only move the earlier waves run Ready, not approved: production waits for it.",
			args:   args{version: "1.34", approved: []any{"cert-manager=v1.19.2"}, runs: "1.34", charts: oldCM},
			want:   "Approval",
		},
		"HaltedByXCluster": {
			reason: "Staging's XCluster failed on its way: production halts, and neither names it to its owner, another namespace's.",
			args:   args{version: "1.34", approved: []any{"1.34"}, runs: "1.33", charts: oldCM, legacy: true, failed: true},
			want:   "Halt",
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
			if tc.args.legacy {
				staging = xcluster(staging)
			}
			if tc.args.failed {
				staging = refused(staging)
			}
			// The fleet as the control plane holds it, the XR as it stood
			// before this reconcile: call rules on it as the fleet
			// controller does and delivers the XR's ruling.
			before := overlay.DeepCopy(w.XR)
			w.Extra = map[string][]fntest.Object{"rollout-fleet": {canary}, "xrollout-fleet": {staging}}
			rsp := call(t, w)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, msg)
			}
			st := rolloutStatus(rsp)
			fn, _ := st["verdict"].(string)
			if fn != tc.want {
				t.Errorf("%s\nthe function's verdict: want %s, got %s (%v)", tc.reason, tc.want, fn, st["message"])
			}

			// The portal, reading the same EnvironmentConfigs and the same
			// Clusters of both kinds, the XR with the status.rollout it
			// reports, at the controller's time, as the platform team (who
			// sees every namespace).
			var configs []*unstructured.Unstructured
			for _, e := range w.Envs {
				configs = append(configs, &unstructured.Unstructured{Object: e})
			}
			before["status"].(map[string]any)["rollout"] = st
			clusters := []*unstructured.Unstructured{{Object: canary}, {Object: staging}, {Object: before}}
			view := portal.ViewOf(configs, clusters, func(string) bool { return true }, rulingTime)
			meta, _ := before["metadata"].(map[string]any)
			var self *portal.ClusterView
			var gate portal.GateView
			for _, wv := range view.Waves {
				if wv.Name == "production" {
					gate = wv.Gate
				}
				for _, c := range wv.Clouds {
					for _, cl := range c.Clusters {
						if cl.Kind == before["kind"] && cl.Namespace == meta["namespace"] && cl.Name == meta["name"] {
							self = &cl
						}
					}
				}
			}
			if self == nil {
				t.Fatalf("%s\nthe portal does not show the production Cluster: %+v", tc.reason, view)
			}
			type verdict struct{ Verdict, Message any }
			if diff := cmp.Diff(verdict{st["verdict"], st["message"]}, verdict{self.Verdict, self.Message}); diff != "" {
				t.Errorf("%s\nthe production Cluster's verdict in the portal against the function's: -function, +portal:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(fn, gate.Verdict); diff != "" {
				t.Errorf("%s\nthe portal's gate of wave production against the function's verdict: -function, +portal:\n%s\nfunction: %v\nportal: %s", tc.reason, diff, st["message"], gate.Message)
			}
		})
	}
}
