package cluster_test

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestRolloutCharts gates a new chart version in the environment's catalog
// like a Kubernetes minor: a production Cluster keeps its release's
// version while a staging Cluster runs the old one, and moves once every
// staging Cluster runs the new one Ready and the change is approved.
func TestRolloutCharts(t *testing.T) {
	type want struct {
		release   string // the cert-manager release's chart version
		condition string
		verdict   string
		charts    map[string]string // status.charts
		requires  bool
	}
	staging := func(charts map[string]any) fntest.Object {
		o := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)
		st := o["status"].(map[string]any)
		if charts == nil {
			delete(st, "charts")
		} else {
			st["charts"] = charts
		}
		return o
	}
	canary := map[string][]fntest.Object{"rollout-wave-canary": {fleetCluster("platform-canary", "c1", "gcp", "canary", "1.33", true)}}
	fleet := func(s fntest.Object) map[string][]fntest.Object {
		return map[string][]fntest.Object{"rollout-wave-canary": canary["rollout-wave-canary"], "rollout-wave-staging": {s}}
	}
	runs := map[string]string{"cert-manager": "v1.19.1", "external-dns": "1.19.0", "ingress-nginx": "4.13.3", "kube-prometheus-stack": "79.5.0"}
	cases := map[string]struct {
		reason   string
		approved []any
		world    func(w *fntest.World)
		want     want
	}{
		"StagingRunsOldChart": {
			reason:   "A staging Cluster runs cert-manager v1.19.1: production's release keeps v1.19.1.",
			approved: []any{"cert-manager=v1.19.2"},
			world:    func(w *fntest.World) { w.Extra = fleet(staging(map[string]any{"cert-manager": "v1.19.1"})) },
			want:     want{release: "v1.19.1", condition: "TRUE/Hold", verdict: "Hold", charts: runs, requires: true},
		},
		"StagingRunsNewChart": {
			reason:   "Every staging Cluster runs v1.19.2 Ready and the change is approved: production's release moves.",
			approved: []any{"cert-manager=v1.19.2"},
			world:    func(w *fntest.World) { w.Extra = fleet(staging(map[string]any{"cert-manager": "v1.19.2"})) },
			want:     want{release: "v1.19.2", condition: "FALSE/Adopted", verdict: "Adopt", charts: runs, requires: true},
		},
		"ChartNotApproved": {
			reason:   "Approving the Kubernetes minor does not approve the chart's new version.",
			approved: []any{"1.33"},
			world:    func(w *fntest.World) { w.Extra = fleet(staging(map[string]any{"cert-manager": "v1.19.2"})) },
			want:     want{release: "v1.19.1", condition: "TRUE/Approval", verdict: "Approval", charts: runs, requires: true},
		},
		"StagingReportsNoCharts": {
			reason:   "A staging Cluster that reports no charts has proven none: production holds.",
			approved: []any{"cert-manager=v1.19.2"},
			world:    func(w *fntest.World) { w.Extra = fleet(staging(nil)) },
			want:     want{release: "v1.19.1", condition: "TRUE/Hold", verdict: "Hold", charts: runs, requires: true},
		},
		"StagingDoesNotRunChart": {
			reason:   "A staging Cluster that does not run cert-manager proves nothing of it and holds nothing: production moves.",
			approved: []any{"cert-manager=v1.19.2"},
			world:    func(w *fntest.World) { w.Extra = fleet(staging(map[string]any{"ingress-nginx": "4.13.3"})) },
			want:     want{release: "v1.19.2", condition: "FALSE/Adopted", verdict: "Adopt", charts: runs, requires: true},
		},
		"ChartPinnedByXR": {
			reason:   "The XR pins cert-manager's version: it does not follow the environment, and nothing is gated.",
			approved: []any{"cert-manager=v1.19.2"},
			world: func(w *fntest.World) {
				fntest.Set("spec.parameters.charts", map[string]any{"cert-manager": map[string]any{"version": "v1.19.1"}})(w.XR)
				w.Extra = fleet(staging(map[string]any{"cert-manager": "v1.19.1"}))
			},
			want: want{release: "v1.19.1", condition: "FALSE/Adopted", verdict: "Keep",
				charts: map[string]string{"external-dns": "1.19.0", "ingress-nginx": "4.13.3", "kube-prometheus-stack": "79.5.0"}},
		},
		"NewRelease": {
			reason:   "A release that does not exist yet is created at the new version: nothing runs it.",
			approved: []any{"cert-manager=v1.19.2"},
			world: func(w *fntest.World) {
				w.Observed = maps.Clone(w.Observed)
				delete(w.Observed, "release-cert-manager")
				w.Extra = fleet(staging(map[string]any{"cert-manager": "v1.19.1"}))
			},
			want: want{release: "v1.19.2", condition: "FALSE/Adopted", verdict: "Keep", charts: runs},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := rolloutWorld(t, "production", map[string]any{"approved": tc.approved})
			fntest.EnvEdit("cluster-platform-baseline", "version", "1.33")(w)
			fntest.EnvEdit("cluster-platform-baseline", "charts.cert-manager.version", "v1.19.2")(w)
			tc.world(w)
			rsp := call(t, w)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, msg)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()
			got := want{
				release:   get(fntest.Desired(rsp)["release-cert-manager"], "spec.forProvider.chart.version"),
				condition: condition(rsp, "RolloutGated"),
				verdict:   get(st, "status.rollout.verdict"),
				charts:    map[string]string{},
				requires:  len(rsp.GetRequirements().GetResources()[requirementRuling].GetApiVersion()) > 0,
			}
			charts, _ := st["status"].(map[string]any)["charts"].(map[string]any)
			for k, v := range charts {
				got.charts[k], _ = v.(string)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if got.verdict != "Pinned" && get(st, "status.rollout.charts.cert-manager") == "" && tc.want.verdict != "Keep" {
				t.Errorf("%s\nstatus.rollout.charts does not name cert-manager's target", tc.reason)
			}
		})
	}
}
