package cluster_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// FuzzLifecycle converges a Cluster on one of the three clouds (GKE on a
// release channel or pinned) and then applies a sequence of day-2 changes
// between reconciles: requested versions from 1.29 to 1.37, providers that
// report everything, or everything but the control plane's new version,
// pools resized to other machine types, turned spot or on-demand, given
// other disks, generations turning not ready, and the environment mapping
// size classes to other machine types. After every reconcile it checks,
// independently of the function's own tables:
//
//   - no withdrawal (call): an observed resource stays desired, unless it
//     is an older generation of a pool whose new one was Ready;
//   - no skip, no downgrade, no pool ahead of the control plane
//     (checkVersions, from the CRDs' version fields);
//   - none of them either while the control plane reports no version
//     (checked against what the harness knows it runs);
//   - no in-place change of a field the wrapped Terraform provider can
//     change only by replacement (testdata/replacements, the same oracle
//     TestReplacements uses), but the AKS system pool's, which azurerm
//     cycles by design.
//
// Its seeds are the f.Add calls below.
func FuzzLifecycle(f *testing.F) {
	for c := range byte(4) {
		f.Add(c, []byte{0, 7, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 3, 1, 1, 0, 6, 0, 1, 0})
		f.Add(c, []byte{4, 0, 1, 0, 6, 1, 1, 0, 0, 5, 1, 0, 1, 0, 5, 30, 1, 0, 7, 2, 1, 0})
		f.Add(c, []byte{0, 2, 1, 0, 0, 6, 2, 0, 3, 2, 4, 1, 1, 0, 1, 0, 1, 0})
		f.Add(c, []byte{0, 6, 8, 0, 1, 0, 8, 0, 2, 0, 8, 0, 1, 0, 8, 0})
	}
	clouds := []string{"gcp", "aws", "azure", "gcp"}
	oracles := map[string]fntest.ReplacementOnly{}
	for _, c := range clouds[:3] {
		r, err := fntest.LoadReplacementOnly(filepath.Join("..", "testdata", "replacements"), c)
		if err != nil {
			f.Fatal(err)
		}
		oracles[c] = r
	}
	sizes := []string{"small", "medium", "large", "xlarge"}
	f.Fuzz(func(t *testing.T, which byte, ops []byte) {
		if len(ops) > 48 {
			return
		}
		cloud := clouds[which%4]
		xr := map[string]func(...func(fntest.Object)) fntest.Object{"gcp": fntest.GCPXR, "aws": fntest.AWSXR, "azure": fntest.AzureXR}[cloud]()
		w := &fntest.World{XR: xr, Envs: envs, Observed: map[string]fntest.Object{}}
		if which%4 == 3 {
			fntest.EnvEdit("cluster-platform-cloud-gcp", "gcp.releaseChannel", "UNSPECIFIED")(w)
		}
		last := converge(t, w)
		vp := versionPaths[cloud]
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%9, int(ops[i+1])
			switch op {
			case 0:
				fntest.Set("spec.parameters.version", fmt.Sprintf("1.%d", 29+arg%9))(w.XR)
			case 1:
				w.Observed = fntest.ObserveAll(last, w.Observed)
				w.Connections = fntest.Connections(last)
			case 2:
				// Everything is reported but the control plane's new version.
				prev := w.Observed["cluster"]
				w.Observed = fntest.ObserveAll(last, w.Observed)
				if prev != nil && w.Observed["cluster"] != nil {
					fntest.Set(vp.cpRuns, get(prev, vp.cpRuns))(w.Observed["cluster"])
				}
			case 3:
				fntest.Set("spec.parameters.pools.general.size", sizes[arg%len(sizes)])(w.XR)
			case 4:
				fntest.Set("spec.parameters.pools.general.spot", arg%2 == 0)(w.XR)
			case 5:
				fntest.Set("spec.parameters.pools.gpu.diskSizeGb", float64(50+arg%200))(w.XR)
			case 6:
				pool, status := "general", "False"
				if arg%2 == 1 {
					pool = "gpu"
				}
				if arg/2%2 == 1 {
					status = "True"
				}
				generationReady(pool, status)(w)
			case 7:
				fntest.EnvEdit("cluster-platform-cloud-"+cloud, "sizes.small", map[string]string{"gcp": "n2-standard-2", "aws": "m7i.large", "azure": "Standard_D2as_v5"}[cloud])(w)
			case 8:
				// For one call the control plane reports no version and is
				// not Ready (lost status, a restore): what it runs is known
				// here, not to the function.
				cp := w.Observed["cluster"]
				if cp == nil {
					continue
				}
				truth := minorOf(get(cp, vp.cpRuns))
				if truth < 0 {
					truth = minorOf(get(cp, vp.cpSpec))
				}
				saved := overlay.DeepCopy(cp)
				fntest.Set(vp.cpRuns, nil)(cp)
				fntest.ObservedCondition("cluster", "Ready", "False", "status lost")(w)
				rsp := call(t, w)
				w.Observed["cluster"] = saved
				if fntest.Fatal(rsp) != "" {
					continue
				}
				d := fntest.Desired(rsp)
				if m := minorOf(get(d["cluster"], vp.cpSpec)); m > truth+1 {
					t.Fatalf("op %d: the control plane runs 1.%d, reports nothing, and is asked for 1.%d", i/2, truth, m)
				}
				for name, o := range d {
					if m := minorOf(get(o, vp.poolSpec)); isPool(name) && m > truth {
						t.Fatalf("op %d: the control plane runs 1.%d, reports nothing, and pool %s is asked for 1.%d", i/2, truth, name, m)
					}
				}
				continue
			}
			rsp := call(t, w)
			if fntest.Fatal(rsp) != "" {
				continue
			}
			last = rsp
			where := fmt.Sprintf("op %d (%d %d)", i/2, op, arg)
			checkVersions(t, where, cloud, w.Observed, rsp)
			for name, d := range fntest.Desired(rsp) {
				obs, ok := w.Observed[name]
				if !ok {
					continue
				}
				for _, ch := range oracles[cloud].InPlaceReplacements(d, obs) {
					if cloud == "azure" && name == "cluster" && strings.HasPrefix(ch, "defaultNodePool.") {
						continue // the AKS system pool cycles, with a Warning
					}
					t.Fatalf("%s: IN-PLACE REPLACEMENT: %s would change %s in place", where, name, ch)
				}
			}
		}
	})
}
