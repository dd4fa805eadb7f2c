package budget_test

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

// The TTLs the tests run the module with.
const (
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

var update = flag.Bool("update", false, "rewrite the golden file and the example's observed-resource file")

func run(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, ttlConverging)
	if err := budget.Run(req, rsp, response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady}); err != nil {
		response.Fatal(rsp, err)
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
	fntest.GoldenExample(t, run, "budget-workloads", fntest.Request{XR: xr, Spend: spend}, observedPath, *update)
}
