package appenvironment_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

var update = flag.Bool("update", false, "rewrite golden files, the examples' observed files and the Cluster fixtures in examples/<cloud>/required")

const (
	examples      = "../../../examples"
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

var envs = fntest.MustLoad(filepath.Join(examples, "envconfigs"))

// run is what fn.go does for the environment module.
func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, ttlConverging)
	if err := appenvironmentrun.Run(req, rsp, response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady}); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp
}

// cloudOf is the cloud label of an example XR.
func cloudOf(x fntest.Object) string {
	return x["metadata"].(map[string]any)["labels"].(map[string]any)["cloud"].(string)
}

// required delivers the Cluster an AppEnvironment runs on, as Crossplane
// does once the function asked for it.
func required(x fntest.Object) map[string][]fntest.Object {
	out, err := fntest.Required(examples, cloudOf(x), x, clusterref.ForAppEnvironment)
	if err != nil {
		panic(err)
	}
	return out
}

// examplePaths are the example AppEnvironments: per cloud, and the seeds'.
func examplePaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, glob := range []string{"*/appenvironment*.yaml", "seeds/*.yaml"} {
		p, err := filepath.Glob(filepath.Join(examples, glob))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Fatal("no example AppEnvironment")
	}
	return paths
}

// TestGolden renders every example AppEnvironment twice, first render and
// converged, and compares the whole response with a reviewed golden file.
// With -update it first writes the Cluster fixtures and regenerates each
// example's observed-resource file by converging it.
func TestGolden(t *testing.T) {
	if *update {
		for _, cloud := range []string{"gcp", "aws", "azure"} {
			if err := fntest.WriteClusterFixtures(examples, cloud, clusterref.ForDatabase, clusterref.ForAppEnvironment); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, path := range examplePaths(t) {
		dir, file := filepath.Split(path)
		example := filepath.Base(dir) + "-" + strings.TrimSuffix(file, ".yaml")
		observedPath := filepath.Join(dir, "observed", file)
		x := fntest.MustLoad(path)[0]
		extra := required(x)

		fntest.GoldenExample(t, run, example, fntest.Request{XR: x, EnvironmentConfigs: envs, Extra: extra}, observedPath, *update)
	}
}
