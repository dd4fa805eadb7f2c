package compose_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// FuzzRun renders arbitrary XRs with the example environment through the
// whole cluster module: decoding, validation, planning, every cloud layer,
// overlays and the gating. It may return a Fatal but must never panic
// (RunFunction would recover a panic into a Fatal and hide it from the
// fuzzer, so this target calls the module directly). The seed corpus lives
// in testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	for _, ex := range []string{"gcp/cluster.yaml", "aws/cluster.yaml", "azure/cluster.yaml", "gcp/legacy.yaml", "aws/legacy.yaml"} {
		b, err := json.Marshal(fntest.MustLoad(filepath.Join(examples, ex))[0])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var xr map[string]any
		if json.Unmarshal(data, &xr) != nil || xr == nil {
			return
		}
		req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs}.Proto()
		if err != nil {
			return
		}
		run(req)
	})
}
