package cluster_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// The attacks of a review of the rollout gate, kept as tests: each failed
// before its fix.

// A tenant in any namespace pins its own unlabelled Cluster (last wave) at
// the old version, named to sort first: every other production Cluster of a
// wave with maxUnavailable 1 held forever, the message naming nobody.
// Fixed: a pinned Cluster takes no place in a wave and queues for none.
func TestRolloutAttackPinnedTenant(t *testing.T) {
	w := rolloutWorld(t, "production", map[string]any{"approved": []any{"1.34"}, "maxUnavailable": 1.0})
	canary := fleetCluster("platform-canary", "c1", "gcp", "canary", "1.34", true)
	s1 := fleetCluster("team-edge", "s1", "azure", "staging", "1.34", true)
	attacker := fleetCluster("aaaa", "a", "aws", "", "1.33", true)
	attacker["spec"] = map[string]any{"parameters": map[string]any{"version": "1.33"}}
	w.Extra = map[string][]fntest.Object{"rollout-fleet": {canary, s1, attacker}}
	rsp := call(t, w)
	got := get(fntest.Desired(rsp)["cluster"], "spec.forProvider.version")
	t.Logf("XR %v; asks %s; rollout %v", w.XR["metadata"], got, rolloutStatus(rsp))
	if got != "1.34" {
		t.Errorf("a pinned Cluster of another tenant holds production: control plane asks %s, %v", got, rolloutStatus(rsp)["message"])
	}
}

// Production's cert-manager release is momentarily not Synced (its
// provider failed a reconcile) and the XR's status.charts has no entry for
// it (waves just introduced): the gate reads "runs every chart" and the
// release moved to v1.19.2 while staging runs v1.19.1. Fixed: a release
// whose version is unknown runs nothing of the target.
func TestRolloutOwnReleaseUnknown(t *testing.T) {
	w := rolloutWorld(t, "production", map[string]any{"approved": []any{"cert-manager=v1.19.2"}})
	fntest.EnvEdit("cluster-platform-baseline", "version", "1.33")(w)
	fntest.EnvEdit("cluster-platform-baseline", "charts.cert-manager.version", "v1.19.2")(w)
	st := w.XR["status"].(map[string]any)
	delete(st, "charts")
	obs := map[string]fntest.Object{}
	for k, v := range w.Observed {
		obs[k] = v
	}
	rel := overlay.DeepCopy(obs["release-cert-manager"])
	rs, _ := rel["status"].(map[string]any)
	if rs == nil {
		rs = map[string]any{}
		rel["status"] = rs
	}
	rs["conditions"] = []any{map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError"}, map[string]any{"type": "Ready", "status": "True", "reason": "Available"}}
	obs["release-cert-manager"] = rel
	w.Observed = obs
	w.Extra = map[string][]fntest.Object{
		"rollout-wave-canary": {fleetCluster("platform-canary", "c1", "gcp", "canary", "1.33", true)},
		"rollout-wave-staging": {func() fntest.Object {
			o := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)
			o["status"].(map[string]any)["charts"] = map[string]any{"cert-manager": "v1.19.1"}
			return o
		}()},
	}
	rsp := call(t, w)
	got := get(fntest.Desired(rsp)["release-cert-manager"], "spec.forProvider.chart.version")
	t.Logf("release %s; rollout %v", got, rolloutStatus(rsp))
	if got != "v1.19.1" {
		t.Errorf("production's release moves to %s while staging runs v1.19.1", got)
	}
}

// A tenant's broken (never Ready, Fatal) unlabelled Cluster in its own
// namespace filled production's maxUnavailable forever. Fixed: a broken or
// failed Cluster takes no place.
func TestRolloutAttackBrokenTenant(t *testing.T) {
	w := rolloutWorld(t, "production", map[string]any{"approved": []any{"1.34"}, "maxUnavailable": 1.0})
	canary := fleetCluster("platform-canary", "c1", "gcp", "canary", "1.34", true)
	s1 := fleetCluster("team-edge", "s1", "azure", "staging", "1.34", true)
	attacker := fleetCluster("zzz-tenant", "broken", "aws", "", "", false, [3]string{"Synced", "False", "ReconcileError"})
	w.Extra = map[string][]fntest.Object{"rollout-fleet": {canary, s1, attacker}}
	rsp := call(t, w)
	got := get(fntest.Desired(rsp)["cluster"], "spec.forProvider.version")
	t.Logf("asks %s; rollout %v", got, rolloutStatus(rsp))
	if got != "1.34" {
		t.Errorf("another tenant's broken Cluster holds production: %v", rolloutStatus(rsp)["message"])
	}
}

// The EKS control plane runs 1.34 (ahead of status.upgrade.target 1.33:
// upgraded out of band / by the cloud), the environment asks 1.35 and
// staging is behind: the held Cluster asks for what its control plane
// runs, never less (no downgrade), and no more.
func TestRolloutHeldBehindRunning(t *testing.T) {
	w := rolloutWorld(t, "production", map[string]any{"approved": []any{"1.35"}})
	fntest.EnvEdit("cluster-platform-baseline", "version", "1.35")(w)
	obs := map[string]fntest.Object{}
	for k, v := range w.Observed {
		obs[k] = v
	}
	cl := overlay.DeepCopy(obs["cluster"])
	cl["status"].(map[string]any)["atProvider"].(map[string]any)["version"] = "1.34"
	obs["cluster"] = cl
	w.Observed = obs
	w.Extra = map[string][]fntest.Object{
		"rollout-wave-canary":  {fleetCluster("platform-canary", "c1", "gcp", "canary", "1.33", true)},
		"rollout-wave-staging": {fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)},
	}
	rsp := call(t, w)
	if msg := fntest.Fatal(rsp); msg != "" {
		t.Fatalf("Fatal: %s", msg)
	}
	if got := get(fntest.Desired(rsp)["cluster"], "spec.forProvider.version"); got != "1.34" || rolloutStatus(rsp)["verdict"] != "Hold" {
		t.Errorf("the held control plane runs 1.34 and is asked for %s (verdict %v), want 1.34 (Hold)", got, rolloutStatus(rsp)["verdict"])
	}
}

// maxGatedRequest is the largest RunFunctionRequest a gated Cluster may
// get, whatever the fleet's size: a sixteenth of Crossplane's 4 MiB.
const maxGatedRequest = 256 << 10

// The rollout at the size of a real fleet, and a hostile tenant's
// thousand Clusters labelled with an earlier wave: before the fleet
// controller, every gated Cluster was delivered every Cluster of the
// earlier waves' labels in every namespace (a thousand such Clusters made
// a production Cluster's request 10.3 MB, which Crossplane refused, so
// production could not reconcile at all). Now it is delivered one ruling.
// Checked: the request of the production Cluster stays under
// maxGatedRequest, and its verdict is the same with and without the
// tenant's Clusters.
func TestRolloutAttackThousandLabelled(t *testing.T) {
	waves := []any{
		map[string]any{"name": "canary", "namespaces": []any{"platform-canary"}},
		map[string]any{"name": "staging", "namespaces": []any{"team-edge", "team-stg"}},
		map[string]any{"name": "production", "requiresApproval": true, "approved": []any{"1.34"}},
	}
	// A whole fleet of a thousand staging Clusters that run 1.34 Ready,
	// and a tenant's thousand broken ones labelled staging in namespaces
	// the staging wave does not admit.
	staging := func(n int) []fntest.Object {
		out := []fntest.Object{fleetCluster("platform-canary", "c1", "gcp", "canary", "1.34", true)}
		for i := range n {
			out = append(out, fleetCluster("team-stg", fmt.Sprintf("s%04d", i), []string{"gcp", "aws", "azure"}[i%3], "staging", "1.34", true))
		}
		return out
	}
	hostile := func(n int) []fntest.Object {
		var out []fntest.Object
		for i := range n {
			out = append(out, fleetCluster(fmt.Sprintf("tenant-%04d", i), "evil", "aws", "staging", "1.33", false, [3]string{"ClusterReady", "False", "ReconcileError"}))
		}
		return out
	}
	cases := map[string]struct {
		reason string
		fleet  []fntest.Object
		want   string
	}{
		"Small":            {reason: "One staging Cluster done: production moves.", fleet: staging(1), want: "Adopt"},
		"ThousandStaging":  {reason: "A thousand staging Clusters done: production moves, on a request the size of one ruling.", fleet: staging(1000), want: "Adopt"},
		"ThousandHostile":  {reason: "A tenant's thousand broken Clusters labelled staging, in namespaces staging does not admit: production's verdict is unchanged.", fleet: append(staging(1), hostile(1000)...), want: "Adopt"},
		"ThousandBehind":   {reason: "A thousand staging Clusters, the last one behind: production holds.", fleet: append(staging(999), fleetCluster("team-stg", "s9999", "gcp", "staging", "1.33", true)), want: "Hold"},
		"HostileAndBehind": {reason: "Both: production holds, as it would without the tenant.", fleet: append(append(staging(500), fleetCluster("team-stg", "s9999", "gcp", "staging", "1.33", true)), hostile(1000)...), want: "Hold"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := rolloutWorld(t, "production", map[string]any{"approved": []any{"1.34"}})
			fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", waves)(w)
			w.Extra = map[string][]fntest.Object{"rollout-fleet": tc.fleet}
			ruled(t, w)
			req, err := w.Request().Proto()
			if err != nil {
				t.Fatal(err)
			}
			n := proto.Size(req)
			t.Logf("the gated Cluster's request: %d bytes", n)
			if n > maxGatedRequest {
				t.Errorf("%s\nthe gated Cluster's request is %d bytes, want at most %d", tc.reason, n, maxGatedRequest)
			}
			rsp := run(req)
			if got := rolloutStatus(rsp)["verdict"]; got != tc.want {
				t.Errorf("%s\nverdict %v, want %s: %v", tc.reason, got, tc.want, rolloutStatus(rsp)["message"])
			}
		})
	}
}
