package cluster_test

import (
	"path/filepath"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// environmentConfigsStep is what the first step of the two-step Composition
// (apis/cluster/composition-environment.yaml) writes into the pipeline
// context: function-environment-configs selects, for each of its three
// selectors in order, the platform configs that match (sorted by name) and
// merges their data, later over earlier.
func environmentConfigsStep(configs []fntest.Object, xr fntest.Object) fntest.Object {
	labels := xr["metadata"].(map[string]any)["labels"].(map[string]any)
	return fntest.MergeEnvironment(configs, labels["cloud"].(string), labels["planeType"].(string), map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue})
}

// TestCompositionVariants renders every example Cluster both ways, first and
// converged: with the one-step Composition (the function selects the
// EnvironmentConfigs from its step's requirement) and with the two-step one
// (the environment arrives in the context). The desired resources, the XR's
// status (but for warnings about which configs were found, and the config
// names of each layer, which only the one-step variant sees) and the
// conditions must be the same.
func TestCompositionVariants(t *testing.T) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		for _, file := range []string{"cluster.yaml", "legacy.yaml"} {
			xr := fntest.MustLoad(filepath.Join(examples, cloud, file))[0]
			for stage, observed := range map[string]map[string]fntest.Object{
				"first-render": nil,
				"converged":    fntest.ObservedFile(filepath.Join(examples, cloud, "observed", file)),
			} {
				t.Run(cloud+"-"+file+"/"+stage, func(t *testing.T) {
					oneStep, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: spend, Observed: observed}.Proto()
					if err != nil {
						t.Fatal(err)
					}
					twoStep, err := fntest.Request{XR: xr, Context: environmentConfigsStep(envs, xr), Spend: spend, Observed: observed}.Proto()
					if err != nil {
						t.Fatal(err)
					}
					a, b := run(oneStep), run(twoStep)
					if msg := fntest.Fatal(a) + fntest.Fatal(b); msg != "" {
						t.Fatalf("Fatal: %s", msg)
					}
					if diff := cmp.Diff(fntest.Desired(a), fntest.Desired(b)); diff != "" {
						t.Errorf("desired resources: -one-step, +two-step:\n%s", diff)
					}
					sa := a.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
					sb := b.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
					for _, k := range []string{"warnings", "environment"} {
						delete(sa, k)
						delete(sb, k)
					}
					if diff := cmp.Diff(sa, sb); diff != "" {
						t.Errorf("XR status: -one-step, +two-step:\n%s", diff)
					}
					if diff := cmp.Diff(summariseConditions(a), summariseConditions(b)); diff != "" {
						t.Errorf("conditions: -one-step, +two-step:\n%s", diff)
					}
					if len(fntest.Desired(a)) == 0 {
						t.Error("nothing rendered")
					}
				})
			}
		}
	}
}

func summariseConditions(rsp *fnv1.RunFunctionResponse) map[string]string {
	out := map[string]string{}
	for _, c := range rsp.GetConditions() {
		out[c.GetType()] = c.GetStatus().String() + "/" + c.GetReason() + "/" + c.GetMessage()
	}
	return out
}
