package cluster_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestRolloutSelectors holds the one requirement of a gated Cluster to
// what Crossplane can serve and what no tenant can forge: the fleet
// controller's ruling, a ConfigMap selected by name in the platform's
// namespace (rollout.namespace), whatever the fleet's size; no list of
// Clusters by label.
func TestRolloutSelectors(t *testing.T) {
	cases := map[string]struct {
		reason    string
		world     func(w *fntest.World)
		namespace string
		name      string
	}{
		"Default": {
			reason:    "The ruling of Cluster team-edge/edge, in crossplane-system.",
			namespace: "crossplane-system", name: "cluster.team-edge.edge",
		},
		"Namespace": {
			reason:    "The environment's rollout.namespace names where rulings live.",
			world:     fntest.EnvEdit("cluster-platform-baseline", "rollout.namespace", "platform-rollout"),
			namespace: "platform-rollout", name: "cluster.team-edge.edge",
		},
		"LimitedLastWave": {
			reason:    "A last wave with maxUnavailable reads no more than one object either.",
			world:     fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", rolloutWaves(map[string]any{"approved": []any{"1.34"}, "maxUnavailable": 1.0})),
			namespace: "crossplane-system", name: "cluster.team-edge.edge",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := rolloutWorld(t, "production", map[string]any{"approved": []any{"1.34"}})
			if tc.world != nil {
				tc.world(w)
			}
			rsp := call(t, w)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, msg)
			}
			want := map[string]string{requirementRuling: "v1 ConfigMap " + tc.namespace + "/" + tc.name}
			got := map[string]string{}
			for name, sel := range rsp.GetRequirements().GetResources() {
				if strings.Contains(name, "rollout") {
					got[name] = sel.GetApiVersion() + " " + sel.GetKind() + " " + sel.GetNamespace() + "/" + sel.GetMatchName()
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
