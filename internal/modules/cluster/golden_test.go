package cluster_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

var update = flag.Bool("update", false, "rewrite golden files and the examples' observed-resource files")

const (
	examples      = "../../../examples"
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
	ttlGated      = 10 * time.Minute
)

// envs are the example EnvironmentConfigs, spend the example spend objects.
var (
	envs  = fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	spend = fntest.MustLoad(filepath.Join(examples, "spend"))
	// compatEnvs are the original platform's EnvironmentConfigs.
	compatEnvs = fntest.MustLoad(filepath.Join(examples, "compat", "envconfigs"))
)

// run is what fn.go does for the cluster module.
func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, ttlConverging)
	if err := cluster.Run(req, rsp, response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady, TTLGated: ttlGated}); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp
}

// TestGolden renders every example XR twice: first render (nothing
// observed) and converged (its observed-resource file), and compares the
// whole response with a reviewed golden file. With -update it first
// regenerates each example's observed-resource file by converging it.
func TestGolden(t *testing.T) {
	xrs, err := filepath.Glob(filepath.Join(examples, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range xrs {
		if filepath.Base(path) == "functions.yaml" || strings.Contains(path, "envconfigs") || strings.Contains(path, "/spend/") {
			continue
		}
		dir, file := filepath.Split(path)
		example := filepath.Base(dir) + "-" + strings.TrimSuffix(file, ".yaml")
		observedPath := filepath.Join(dir, "observed", file)
		xr := fntest.MustLoad(path)[0]
		if xr["kind"] != "Cluster" && xr["kind"] != "XCluster" {
			continue // not a Cluster XR: the budget module's example, install manifests
		}
		// The shipped Composition's way to the environment, or, for the
		// original platform's claims, the compat Composition's: its
		// original EnvironmentConfigs merged into the context.
		base := fntest.Request{XR: xr, EnvironmentConfigs: envs, Spend: spend}
		if filepath.Base(dir) == "compat" {
			labels := xr["metadata"].(map[string]any)["labels"].(map[string]any)
			base = fntest.Request{XR: fntest.ClaimComposite(xr), Spend: spend,
				Context: fntest.MergeEnvironment(compatEnvs, labels["cloud"].(string), labels["planeType"].(string), nil)}
		}

		fntest.GoldenExample(t, run, example, base, observedPath, *update)
	}
}
