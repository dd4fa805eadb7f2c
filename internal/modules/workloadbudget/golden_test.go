package workloadbudget_test

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/module"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/workloadbudget"
)

var update = flag.Bool("update", false, "rewrite the golden file and the example's observed-resource file")

func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := module.NewResponse(req, 15*time.Second)
	if err := workloadbudget.Run(req, rsp, module.Options{TTLConverging: 15 * time.Second, TTLReady: 5 * time.Minute}); err != nil {
		module.Fatal(rsp, err)
	}
	return rsp
}

// TestGolden renders the budget module's example, first and converged, and
// compares the whole response with a reviewed golden file.
func TestGolden(t *testing.T) {
	const dir = "../../../examples/budget"
	xr := fntest.MustLoad(filepath.Join(dir, "workloads.yaml"))[0]
	spend := fntest.MustLoad("../../../examples/spend")
	observedPath := filepath.Join(dir, "observed", "workloads.yaml")
	if *update {
		_, observed, _, err := fntest.Converge(run, fntest.Request{XR: xr, Spend: spend}, 5)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fntest.YAML(observed)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fntest.Golden(observedPath, b, true); err != nil {
			t.Fatal(err)
		}
	}
	for stage, observed := range map[string]map[string]fntest.Object{"first-render": nil, "converged": fntest.ObservedFile(observedPath)} {
		t.Run(stage, func(t *testing.T) {
			req, err := fntest.Request{XR: xr, Spend: spend, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			got, err := fntest.ResponseYAML(run(req))
			if err != nil {
				t.Fatal(err)
			}
			want, err := fntest.Golden(filepath.Join("testdata", "golden", "budget-workloads."+stage+".yaml"), got, *update)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s: -golden +got (review, then go test ./internal/wastegate -update):\n%s", stage, diff)
			}
		})
	}
}
