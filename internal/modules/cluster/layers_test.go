package cluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestPlaneTypeDefaults checks that the planeType layer's nodeDefaults
// size the environment's default pool ("bigger default pools" in
// production), over the baseline's, as the layering says.
func TestPlaneTypeDefaults(t *testing.T) {
	for planeType, want := range map[string][]any{"production": {3.0, 10.0}, "staging": {1.0, 3.0}} {
		t.Run(planeType, func(t *testing.T) {
			x := fntest.GCPXR(fntest.Set("spec.parameters.pools", nil), fntest.Set("metadata.labels.planeType", planeType))
			rsp, _, _, err := fntest.Converge(run, fntest.Request{XR: x, EnvironmentConfigs: envs}, 30)
			if err != nil {
				t.Fatal(err)
			}
			as, _ := at(rsp, "nodepool-default", "spec", "forProvider", "autoscaling").(map[string]any)
			if got := []any{as["minNodeCount"], as["maxNodeCount"]}; !cmp.Equal(got, want) {
				t.Errorf("planeType %s: default pool bounds %v, want %v", planeType, got, want)
			}
		})
	}
}
