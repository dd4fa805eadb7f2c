package database_test

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
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

var update = flag.Bool("update", false, "rewrite golden files, the examples' observed files and the Cluster fixtures in examples/<cloud>/required")

const (
	examples      = "../../../examples"
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

var envs = fntest.MustLoad(filepath.Join(examples, "envconfigs"))

// run is what fn.go does for the database module.
func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, ttlConverging)
	if err := database.Run(req, rsp, response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady}); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp
}

// TestGolden renders every example Database twice, first render and
// converged, and compares the whole response with a reviewed golden file.
// With -update it first writes the Cluster fixtures and regenerates each
// example's observed-resource file by converging it.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(examples, "*", "database*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no example Database")
	}
	if *update {
		for _, cloud := range []string{"gcp", "aws", "azure"} {
			if err := fntest.WriteClusterFixtures(examples, cloud, clusterref.ForDatabase, clusterref.ForAppEnvironment); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, path := range paths {
		dir, file := filepath.Split(path)
		cloud := filepath.Base(dir)
		example := cloud + "-" + strings.TrimSuffix(file, ".yaml")
		observedPath := filepath.Join(dir, "observed", file)
		x := fntest.MustLoad(path)[0]
		extra := required(cloud, x)

		fntest.GoldenExample(t, run, example, fntest.Request{XR: x, EnvironmentConfigs: envs, Extra: extra}, observedPath, *update)
	}
}

// required delivers the Cluster a Database names, as Crossplane does once
// the function asked for it.
func required(cloud string, x fntest.Object) map[string][]fntest.Object {
	out, err := fntest.Required(examples, cloud, x, clusterref.ForDatabase)
	if err != nil {
		panic(err)
	}
	return out
}
