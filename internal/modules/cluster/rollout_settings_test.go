package cluster_test

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestRolloutSettingsInvalid refuses bad rollout keys with a Fatal naming
// each, before anything is rendered.
func TestRolloutSettingsInvalid(t *testing.T) {
	cases := map[string]struct {
		reason string
		waves  any
		want   []string
	}{
		"DuplicateAndNegative": {
			reason: "Two waves of one name, and a negative maxUnavailable.",
			waves: []any{
				map[string]any{"name": "canary", "maxUnavailable": -1.0},
				map[string]any{"name": "canary"},
			},
			want: []string{"environment.rollout.waves[0].maxUnavailable", "environment.rollout.waves[1].name"},
		},
		"BadNameAndNamespace": {
			reason: "A wave name that is no label value, and a namespace that is no DNS label.",
			waves:  []any{map[string]any{"name": "not a label", "namespaces": []any{"Team_A"}}},
			want:   []string{"environment.rollout.waves[0].name", "environment.rollout.waves[0].namespaces[0]"},
		},
		"ApprovalsWithoutGate": {
			reason: "Approvals of a wave that requires none are a mistake, not a no-op.",
			waves:  []any{map[string]any{"name": "production", "approved": []any{"1.34"}}},
			want:   []string{"environment.rollout.waves[0].approved"},
		},
		"NotAList": {
			reason: "waves must be a list.",
			waves:  "canary,staging",
			want:   []string{"environment.rollout.waves"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &fntest.World{XR: fntest.AWSXR(), Envs: envs, Observed: map[string]fntest.Object{}}
			fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", tc.waves)(w)
			rsp := call(t, w)
			fntest.FatalHas(tc.want...)(t, rsp)
			if len(rsp.GetDesired().GetResources()) > 0 {
				t.Errorf("%s\na Fatal response desires %d resources", tc.reason, len(rsp.GetDesired().GetResources()))
			}
		})
	}
}
