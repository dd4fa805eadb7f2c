package cluster_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestCompat renders the original platform's claim with its original
// EnvironmentConfigs (examples/compat, merged into the pipeline context as
// function-environment-configs does through the compat Composition) and
// their modern form (examples/compat/modern, delivered as the shipped
// Composition does) on each cloud, converges both, and checks that they
// compose the same resources with the same bodies and status, and that
// the original form says, once each, which old field or key it read under
// which new name.
func TestCompat(t *testing.T) {
	oldEnvs := fntest.MustLoad(glob(t, "../../../examples/compat/envconfigs/*.yaml")...)
	newEnvs := fntest.MustLoad(glob(t, "../../../examples/compat/modern/envconfigs/*.yaml")...)
	renamed := []string{
		"spec.forProvider.location is the original platform's field; it is read as spec.parameters.location",
		"spec.forProvider.pools[default].autoscaling.minNodeCount is the original platform's field; it is read as spec.parameters.pools[default].minNodes",
		"spec.forProvider.pools[default].autoscaling.maxNodeCount is the original platform's field; it is read as spec.parameters.pools[default].maxNodes",
		"spec.forProvider.pools[default].nodeConfig.machineType is the original platform's field; it is read as spec.parameters.pools[default].machineType",
		"environment key defaultMachineType is the original platform's; it is read as nodeDefaults.machineType",
		"environment key defaultDiskSizeGb is the original platform's; it is read as nodeDefaults.diskSizeGb",
		"environment key defaultNodeCount is the original platform's; it is read as nodeDefaults.minNodes",
		"environment key defaultRegion is the original platform's; it is read as location",
		"environment key ingress_replicas is the original platform's; it is read as ingress.replicas",
	}
	cases := map[string]struct {
		reason   string
		machine  string
		replicas float64
	}{
		"gcp":   {reason: "The original GKE claim renders as its modern form.", machine: "e2-standard-4", replicas: 3},
		"aws":   {reason: "The original claim on EKS renders as its modern form.", machine: "m5.xlarge", replicas: 3},
		"azure": {reason: "The original claim on AKS renders as its modern form; the AKS system pool takes the environment's default machine type.", machine: "Standard_D4s_v5", replicas: 3},
	}
	for cloud, tc := range cases {
		t.Run(cloud, func(t *testing.T) {
			claim := fntest.MustLoad("../../../examples/compat/cluster-" + cloud + ".yaml")[0]
			modern := fntest.MustLoad("../../../examples/compat/modern/cluster-" + cloud + ".yaml")[0]
			labels := claim["metadata"].(map[string]any)["labels"].(map[string]any)
			old, _, _, err := fntest.Converge(run, fntest.Request{
				XR:      fntest.ClaimComposite(claim),
				Context: fntest.MergeEnvironment(oldEnvs, cloud, labels["planeType"].(string), nil),
			}, 30)
			if err != nil {
				t.Fatalf("%s\noriginal form: %v", tc.reason, err)
			}
			now, _, _, err := fntest.Converge(run, fntest.Request{XR: fntest.ClaimComposite(modern), EnvironmentConfigs: newEnvs}, 30)
			if err != nil {
				t.Fatalf("%s\nmodern form: %v", tc.reason, err)
			}
			if diff := cmp.Diff(fntest.Desired(now), fntest.Desired(old)); diff != "" {
				t.Errorf("%s\ncomposed resources: -modern +original:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(statusOf(now), statusOf(old)); diff != "" {
				t.Errorf("%s\nstatus: -modern +original:\n%s", tc.reason, diff)
			}
			got := warnings(old)
			for _, w := range renamed {
				n := 0
				for _, g := range got {
					if strings.HasPrefix(g, w) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%s\n%d warnings starting %q, want 1; warnings: %q", tc.reason, n, w, got)
				}
			}
			for _, g := range warnings(now) {
				if strings.Contains(g, "original platform") {
					t.Errorf("%s\nmodern form warns %q", tc.reason, g)
				}
			}
			pool := fntest.Desired(old)["nodepool-default"]
			if s := fmtAll(pool); !strings.Contains(s, tc.machine) {
				t.Errorf("%s\nnodepool-default does not run %s: %s", tc.reason, tc.machine, s)
			}
			if got := at(old, "release-ingress-nginx", "spec", "forProvider", "values", "controller", "replicaCount"); got != tc.replicas {
				t.Errorf("%s\ningress replicas = %v, want %v (ingress_replicas of the production config)", tc.reason, got, tc.replicas)
			}
			if fp, _ := at(old, "cluster", "spec", "forProvider").(map[string]any); fp["pools"] != nil {
				t.Errorf("%s\nthe original pools leaked into the managed cluster's forProvider: %v", tc.reason, fp)
			}
		})
	}
}

// statusOf is the XR's status in a response without what differs by
// design: the warnings and the EnvironmentConfigs used.
func statusOf(rsp *fnv1.RunFunctionResponse) map[string]any {
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	delete(st, "warnings")
	delete(st, "environment")
	return st
}

// warnings are the messages of a response's Warning results and of its
// status.warnings.
func warnings(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	for _, w := range st["warnings"].([]any) {
		out = append(out, w.(string))
	}
	return out
}

// glob returns the files matching pattern, failing the test on none.
func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s: %v", pattern, err)
	}
	return files
}

// fmtAll prints an object, for substring checks.
func fmtAll(o fntest.Object) string { return fmt.Sprint(map[string]any(o)) }
