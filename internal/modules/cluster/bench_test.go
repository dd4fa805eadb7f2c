package cluster_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// BenchmarkPlanAndRender plans an example XR and runs the registry's three
// layers over it, per cloud: the rendering work of a reconcile without the
// protocol around it.
func BenchmarkPlanAndRender(b *testing.B) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		b.Run(cloud, func(b *testing.B) {
			req, err := fntest.Request{
				XR:                 fntest.MustLoad(filepath.Join(examples, cloud, "cluster.yaml"))[0],
				EnvironmentConfigs: envs,
				Observed:           fntest.ObservedFile(filepath.Join(examples, cloud, "observed", "cluster.yaml")),
			}.Proto()
			if err != nil {
				b.Fatal(err)
			}
			x, errs := xr.Decode(req.GetObserved().GetComposite().GetResource())
			if len(errs) > 0 {
				b.Fatal(errs)
			}
			res, err := envcfg.Resolve(req, x.Cloud, x.PlaneType)
			if err != nil {
				b.Fatal(err)
			}
			c, _ := registry.Lookup(cloud)
			observed := map[string]*structpb.Struct{}
			for n, r := range req.GetObserved().GetResources() {
				observed[n] = r.GetResource()
			}
			b.ReportAllocs()
			for b.Loop() {
				plan, errs := cluster.Build(x, res.Env, cluster.CloudTraits[c.Name])
				if len(errs) > 0 {
					b.Fatal(errs)
				}
				if _, err := c.Render(registry.NewContext(&x.Composite, res.Env, c, observed), plan.Components); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRolloutGate is one reconcile of a production EKS Cluster that
// the rollout holds, with the fleet controller's ruling on it over a fleet
// of 10 or 100 staging Clusters (all but one on the new version), against
// the same Cluster converged with no waves: what gating costs a call. The
// Cluster reads one ruling, so the fleet's size must not show.
func BenchmarkRolloutGate(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("fleet-%d", n), func(b *testing.B) {
			w := rolloutWorld(b, "production", map[string]any{"approved": []any{"1.34"}})
			staging := []fntest.Object{fleetCluster("team-x", "behind", "gcp", "staging", "1.33", true)}
			for i := range n {
				staging = append(staging, fleetCluster(fmt.Sprintf("team-%d", i), "s", "azure", "staging", "1.34", true))
			}
			w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {}, "rollout-wave-staging": staging}
			if n == 0 {
				fntest.EnvEdit("cluster-platform-baseline", "rollout", nil)(w)
				fntest.EnvEdit("cluster-platform-baseline", "version", "1.33")(w)
				w.Extra = nil
			}
			ruled(b, w)
			req, err := w.Request().Proto()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if rsp := run(req); fntest.Fatal(rsp) != "" {
					b.Fatal(fntest.Fatal(rsp))
				}
			}
		})
	}
}
