package modules_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds" // the reads are the clouds'
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

const (
	examples      = "../../examples"
	ttlConverging = 15 * time.Second
	ttlReady      = 5 * time.Minute
)

// runner is what fn.go does for the module.
func runner(m modules.Module) fntest.Runner {
	return func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		rsp := response.New(req, ttlConverging)
		if err := m.Run(req, rsp, response.Options{TTLConverging: ttlConverging, TTLReady: ttlReady}); err != nil {
			response.Fatal(rsp, err)
		}
		return rsp
	}
}

// settle reconciles x with the required resources extra, the providers
// making everything desired ready after each call, until a call desires
// exactly what was observed before it: converged, or stuck on what extra
// lacks. It returns that last response.
func settle(run fntest.Runner, x fntest.Object, envs []fntest.Object, extra map[string][]fntest.Object) (*fnv1.RunFunctionResponse, error) {
	return settleWorld(run, &fntest.World{XR: x, Envs: envs, Observed: map[string]fntest.Object{}, Extra: extra})
}

// withheld are the ways a read of the Cluster can be missing: not
// delivered (Crossplane found nothing with its labels yet), or delivered
// before its provider reported anything (no status).
var withheld = map[string]func(fntest.Object) fntest.Object{
	"not delivered": nil,
	"unreported": func(o fntest.Object) fntest.Object {
		out := maps.Clone(o)
		delete(out, "status")
		return out
	},
}

// TestWaitsForAnotherXR fails when an XR that waits for a resource of the
// Cluster it names does not answer with the converging TTL. Crossplane
// re-runs an XR when its own composed resources change, not another XR's:
// with the ready TTL such a wait would last up to five minutes after the
// Cluster reported. The waits are found from the registry, not from the
// code under test: for every example XR in examples/<cloud>/ of a module
// that names a Cluster (Module.Clusters), and every resource the cloud
// registered that it reads of the Cluster, the XR is converged with that
// resource missing; an XR that then composes fewer resources than its
// converged stack must not be ready and must answer with the converging
// TTL. (A read that changes a resource's content rather than holding it
// back is the golden files' to show.) Every registered read must hold
// something back in some example, or it checks nothing; a read a cloud
// did not register is never delivered, so the XR does not converge even
// with everything delivered.
func TestWaitsForAnotherXR(t *testing.T) {
	if len(registry.Clouds()) == 0 {
		t.Fatal("no cloud is registered")
	}
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	examplesFound, held := map[string]int{}, map[string]int{}
	for _, cloud := range registry.Clouds() {
		paths, err := filepath.Glob(filepath.Join(examples, cloud, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			x := fntest.MustLoad(path)[0]
			kind, _ := x["kind"].(string)
			m, ok := modules.ForKind(kind)
			spec, _ := x["spec"].(map[string]any)
			params, _ := spec["parameters"].(map[string]any)
			if !ok || params["clusterRef"] == nil {
				continue
			}
			if m.Clusters == nil {
				t.Errorf("%s names a Cluster, but module %s has no Clusters reader (modules.Module.Clusters)", path, m.Name)
				continue
			}
			examplesFound[m.Name+" on "+cloud]++
			name := cloud + "/" + filepath.Base(path)
			full, err := fntest.Required(examples, cloud, x, m.Clusters)
			if err != nil {
				t.Fatal(err)
			}
			run := runner(m)
			converged, err := settle(run, x, envs, full)
			if err != nil {
				t.Errorf("%s with everything delivered: %v", name, err)
				continue
			}
			if !fntest.AllReady(converged) || converged.GetMeta().GetTtl().AsDuration() != ttlReady {
				t.Errorf("%s with everything delivered: ready %t, TTL %s; want ready with the TTL %s (a read the cloud did not register with Clusters.Reads is never delivered)", name, fntest.AllReady(converged), converged.GetMeta().GetTtl().AsDuration(), ttlReady)
				continue
			}
			for _, rd := range m.Clusters.ReadsOf(cloud) {
				req := m.Clusters.ResourceRequirement(rd.Resource)
				for _, how := range slices.Sorted(maps.Keys(withheld)) {
					extra := maps.Clone(full)
					delete(extra, req)
					if f := withheld[how]; f != nil {
						extra[req] = []fntest.Object{f(full[req][0])}
					}
					rsp, err := settle(run, x, envs, extra)
					if err != nil {
						t.Errorf("%s with the Cluster's %s %s: %v", name, rd.Resource, how, err)
						continue
					}
					missing := []string{}
					for r := range converged.GetDesired().GetResources() {
						if _, ok := rsp.GetDesired().GetResources()[r]; !ok {
							missing = append(missing, r)
						}
					}
					if len(missing) == 0 {
						continue
					}
					held[m.Name+" on "+cloud+" reads "+rd.Resource]++
					slices.Sort(missing)
					if fntest.AllReady(rsp) {
						t.Errorf("%s with the Cluster's %s %s: ready, though %v wait for it", name, rd.Resource, how, missing)
					}
					if got := rsp.GetMeta().GetTtl().AsDuration(); got != ttlConverging {
						t.Errorf("%s with the Cluster's %s %s: TTL %s while %v wait for it, want the converging %s: mark the wait with clusterref's Cluster.Await (or a Use)", name, rd.Resource, how, got, missing, ttlConverging)
					}
				}
			}
		}
	}
	for _, m := range modules.All {
		if m.Clusters == nil {
			continue
		}
		for _, cloud := range registry.Clouds() {
			if examplesFound[m.Name+" on "+cloud] == 0 {
				t.Errorf("no example XR of module %s on %s names a Cluster: add one to examples/%s", m.Name, cloud, cloud)
			}
			for _, rd := range m.Clusters.ReadsOf(cloud) {
				if held[m.Name+" on "+cloud+" reads "+rd.Resource] == 0 {
					t.Errorf("module %s on %s reads the Cluster's %s, but no example waits for it: a read nothing needs, or an example missing", m.Name, cloud, rd.Resource)
				}
			}
		}
	}
	if len(held) == 0 {
		t.Error("no read of a Cluster held anything back: the test checked nothing")
	}
	t.Logf("reads that hold something back, by module, cloud and resource: %v", held)
}
