package appenvironment_test

import (
	"path/filepath"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// BenchmarkRun runs the environment module on each cloud's example
// AppEnvironment, converged, with the Cluster delivered: the work of a
// steady-state reconcile without the protocol around it.
func BenchmarkRun(b *testing.B) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		b.Run(cloud, func(b *testing.B) {
			x := fntest.MustLoad(filepath.Join(examples, cloud, "appenvironment.yaml"))[0]
			req, err := fntest.Request{
				XR: x, EnvironmentConfigs: envs, Extra: required(x),
				Observed: fntest.ObservedFile(filepath.Join(examples, cloud, "observed", "appenvironment.yaml")),
			}.Proto()
			if err != nil {
				b.Fatal(err)
			}
			if msg := fntest.Fatal(run(req)); msg != "" {
				b.Fatal(msg)
			}
			b.ReportAllocs()
			for b.Loop() {
				run(req)
			}
		})
	}
}
