package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

func TestBaselineOf(t *testing.T) {
	catalog := func(moved map[string]string) map[string]string {
		out := map[string]string{}
		for name, c := range DefaultCharts {
			out[name] = c.Version
		}
		for k, v := range moved {
			if v == "" {
				delete(out, k)
				continue
			}
			out[k] = v
		}
		return out
	}
	type want struct {
		target rollout.Target
		errs   int
	}
	cases := map[string]struct {
		reason string
		env    map[string]any
		want   want
	}{
		"Defaults": {
			reason: "An environment that sets nothing asks for the default minor and the built-in catalog.",
			env:    map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"},
			want:   want{target: rollout.Target{Kubernetes: DefaultVersion, Charts: catalog(nil)}},
		},
		"VersionAndChart": {
			reason: "The version's minor and the catalog's chart versions make the target.",
			env:    map[string]any{"version": "1.34.2", "charts": map[string]any{"cert-manager": map[string]any{"version": "v1.19.2"}}},
			want:   want{target: rollout.Target{Kubernetes: "1.34", Charts: catalog(map[string]string{"cert-manager": "v1.19.2"})}},
		},
		"DisabledChart": {
			reason: "A chart the environment disables is no part of the target.",
			env:    map[string]any{"charts": map[string]any{"external-dns": map[string]any{"disabled": true}}},
			want:   want{target: rollout.Target{Kubernetes: DefaultVersion, Charts: catalog(map[string]string{"external-dns": ""})}},
		},
		"BadRolloutKeys": {
			reason: "What is wrong with the rollout keys is returned, naming each key.",
			env:    map[string]any{"rollout": map[string]any{"waves": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}},
			want:   want{target: rollout.Target{Kubernetes: DefaultVersion, Charts: catalog(nil)}, errs: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, errs := BaselineOf(tc.env)
			got := want{target: s.RolloutTarget(), errs: len(errs)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nBaselineOf(...).RolloutTarget(): -want, +got:\n%s\nerrors: %v", tc.reason, diff, errs)
			}
		})
	}
}
