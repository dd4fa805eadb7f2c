package cluster_test

import (
	"fmt"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// FuzzRolloutGate renders a converged EKS Cluster of wave production,
// whose environment moves from 1.33 to 1.34 (and cert-manager from
// v1.19.1 to v1.19.2), against random fleets delivered as required
// resources: Clusters of random namespaces and wave labels that run either
// version, Ready or not, failed or not, pinned or not, reporting their
// charts or not, Ready at an older generation or not, being deleted or
// not; and random approvals. The fleet controller's ruling is what
// ruled computes with the controller's own code. It checks, from the
// render alone and a reference of its own for who counts in which wave,
// that the control plane is asked for 1.34, or the cert-manager release
// for v1.19.2, only when every Cluster of canary (namespace
// platform-canary only) and staging that pins nothing and is not being
// deleted runs it and is Ready at its generation, when each of the two
// waves has at least one such Cluster, and only when production's
// approvals list the change.
func FuzzRolloutGate(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 5, 9, 200, 17, 4, 4, 4, 4, 1, 2, 3, 0, 0, 0, 9, 8, 7})
	f.Add([]byte{0, 0, 6, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0})
	f.Add([]byte{1, 1, 2, 1, 0, 1, 1, 1, 0, 2, 1, 1, 1, 1, 0, 3, 1, 1, 1, 1})
	// One staging Cluster that runs 1.34 Ready, 1.34 approved: it moves.
	f.Add([]byte{1, 0, 0, 1, 1, 0, 1, 1, 1, 1})
	// The same for cert-manager v1.19.2.
	f.Add([]byte{0, 0, 0, 1, 1, 0, 1, 1, 1, 1})
	base := map[bool]*fntest.World{}
	namespaces := []string{"platform-canary", "team-a", "team-edge"}
	labels := []string{"canary", "staging", "production", "", "qa"}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		chart := next()%2 == 0
		if base[chart] == nil {
			w := rolloutWorld(t, "production", map[string]any{"approved": []any{}})
			if chart {
				fntest.EnvEdit("cluster-platform-baseline", "version", "1.33")(w)
				fntest.EnvEdit("cluster-platform-baseline", "charts.cert-manager.version", "v1.19.2")(w)
			}
			base[chart] = w
		}
		b := base[chart]
		change := map[bool]string{false: "1.34", true: "cert-manager=v1.19.2"}[chart]
		var approved []any
		switch next() % 3 {
		case 0:
			approved = []any{change}
		case 1:
			approved = []any{"1.35", "cert-manager=v1.19.1"}
		}
		w := &fntest.World{XR: overlay.DeepCopy(b.XR), Envs: b.Envs, Observed: b.Observed}
		fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", rolloutWaves(map[string]any{"approved": approved}))(w)

		type member struct {
			ns, label             string
			moved, ready, failed  bool
			pinned, reportsCharts bool
			stale, deleting       bool
		}
		var fleet []member
		w.Extra = map[string][]fntest.Object{"rollout-fleet": {}}
		for i := range 1 + next()%6 {
			m := member{ns: namespaces[next()%len(namespaces)], label: labels[next()%len(labels)],
				moved: next()%2 == 0, ready: next()%4 != 0, failed: next()%5 == 0, pinned: next()%6 == 0, reportsCharts: next()%4 != 0,
				stale: next()%7 == 0, deleting: next()%9 == 0}
			runs, charts := "1.33", map[string]any{"cert-manager": "v1.19.1"}
			if m.moved && !chart {
				runs = "1.34"
			}
			if m.moved && chart {
				charts["cert-manager"] = "v1.19.2"
			}
			var conds [][3]string
			if m.failed {
				conds = append(conds, [3]string{"ClusterReady", "False", "ReconcileError"})
			}
			o := fleetCluster(m.ns, fmt.Sprintf("c%d", i), []string{"gcp", "aws", "azure"}[i%3], m.label, runs, m.ready, conds...)
			st := o["status"].(map[string]any)
			if m.reportsCharts {
				st["charts"] = charts
			} else {
				delete(st, "charts")
			}
			if m.pinned {
				o["spec"] = map[string]any{"parameters": map[string]any{"version": runs}}
			}
			if m.stale {
				o["metadata"].(map[string]any)["generation"] = 2.0
				for _, c := range st["conditions"].([]any) {
					c.(map[string]any)["observedGeneration"] = 1.0
				}
			}
			if m.deleting {
				o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T11:00:00Z"
			}
			w.Extra["rollout-fleet"] = append(w.Extra["rollout-fleet"], o)
			fleet = append(fleet, m)
		}
		rsp := call(t, w)
		if msg := fntest.Fatal(rsp); msg != "" {
			t.Fatalf("Fatal: %s", msg)
		}
		desired := fntest.Desired(rsp)
		moved := get(desired["cluster"], "spec.forProvider.version") == "1.34"
		if chart {
			moved = get(desired["release-cert-manager"], "spec.forProvider.chart.version") == "v1.19.2"
		}
		if !moved {
			return
		}
		t.Logf("moved: %s", change)
		// The reference: canary counts only in platform-canary, staging
		// everywhere; anything else is production's own wave or later.
		counted := map[string]bool{}
		for i, m := range fleet {
			earlier := (m.label == "canary" && m.ns == "platform-canary") || m.label == "staging"
			if !earlier || m.pinned || m.deleting {
				continue
			}
			proven := m.moved && m.ready && !m.failed && !m.stale && (!chart || m.reportsCharts)
			if !proven {
				t.Fatalf("production moved (%s) while c%d (%s, label %q) %+v has not run it Ready", change, i, m.ns, m.label, m)
			}
			counted[m.label] = true
		}
		if !counted["canary"] || !counted["staging"] {
			t.Fatalf("production moved (%s) while an earlier wave had no Cluster to prove it: %v", change, counted)
		}
		if len(approved) != 1 || approved[0] != change {
			t.Fatalf("production moved (%s) with approvals %v", change, approved)
		}
	})
}
