package cluster_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// versionPaths are where each cloud's cluster and pool resources ask for a
// version and report the one they run: written down here from the CRDs,
// apart from the function's own tables, for the tests to read what the
// function renders.
var versionPaths = map[string]struct {
	cpSpec, cpRuns, poolSpec, poolRuns, systemSpec string
}{
	"gcp":   {cpSpec: "spec.forProvider.minMasterVersion", cpRuns: "status.atProvider.masterVersion", poolSpec: "spec.forProvider.version", poolRuns: "status.atProvider.version"},
	"aws":   {cpSpec: "spec.forProvider.version", cpRuns: "status.atProvider.version", poolSpec: "spec.forProvider.version", poolRuns: "status.atProvider.version"},
	"azure": {cpSpec: "spec.forProvider.kubernetesVersion", cpRuns: "status.atProvider.currentKubernetesVersion", poolSpec: "spec.forProvider.orchestratorVersion", poolRuns: "status.atProvider.orchestratorVersion", systemSpec: "spec.forProvider.defaultNodePool.orchestratorVersion"},
}

// get reads a dotted path of an object as a string.
func get(o fntest.Object, path string) string {
	var cur any = map[string]any(o)
	for _, p := range strings.Split(path, ".") {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// minorOf is the minor of a version string, -1 when there is none.
func minorOf(s string) int {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 {
		return -1
	}
	n, err := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err != nil {
		return -1
	}
	return n
}

// isPool reports whether a composed resource is a node pool.
func isPool(name string) bool {
	return strings.HasPrefix(name, "nodepool-") && !strings.Contains(name, "-uses-")
}

// checkVersions holds a response against the observed resources, from the
// versions alone: the control plane is asked for the minor it runs or the
// next, never less (a skip, a downgrade); a pool is asked for no more than
// the control plane runs and no less than the pool runs. It returns the
// control plane's running minor and whether any pool was asked for more
// than it runs.
func checkVersions(t *testing.T, where, cloud string, observed map[string]fntest.Object, rsp *fnv1.RunFunctionResponse) (int, bool) {
	t.Helper()
	vp := versionPaths[cloud]
	desired := fntest.Desired(rsp)
	cp := observed["cluster"]
	runs := minorOf(get(cp, vp.cpRuns))
	if runs < 0 {
		runs = minorOf(get(cp, vp.cpSpec))
	}
	if d, ok := desired["cluster"]; ok && cp != nil {
		if m := minorOf(get(d, vp.cpSpec)); m > runs+1 || m < runs {
			t.Fatalf("%s: the control plane runs 1.%d and is asked for %s: a skip or a downgrade", where, runs, get(d, vp.cpSpec))
		}
	}
	moved := false
	check := func(name, asked, running string) {
		if asked == "" {
			return
		}
		if m := minorOf(asked); m > runs {
			t.Fatalf("%s: %s is asked for %s, ahead of the control plane's 1.%d", where, name, asked, runs)
		}
		if r := minorOf(running); r >= 0 && minorOf(asked) < r {
			t.Fatalf("%s: %s runs %s and is asked for %s: a downgrade", where, name, running, asked)
		}
		if r := minorOf(running); r >= 0 && minorOf(asked) > r {
			moved = true
		}
	}
	for name, d := range desired {
		if isPool(name) {
			check(name, get(d, vp.poolSpec), get(observed[name], vp.poolRuns))
		}
	}
	if vp.systemSpec != "" && cp != nil {
		if d, ok := desired["cluster"]; ok {
			check("the system pool", get(d, vp.systemSpec), get(cp, strings.Replace(vp.systemSpec, "spec.forProvider", "status.atProvider", 1)))
		}
	}
	return runs, moved
}

// condition returns a condition's status and reason.
func condition(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + "/" + c.GetReason()
		}
	}
	return ""
}

// converge brings a world's stack up.
func converge(t testing.TB, w *fntest.World) *fnv1.RunFunctionResponse {
	t.Helper()
	var rsp *fnv1.RunFunctionResponse
	prev := -1
	for range 30 {
		rsp = call(t, w)
		if msg := fntest.Fatal(rsp); msg != "" {
			t.Fatalf("converging: %s", msg)
		}
		n := len(rsp.GetDesired().GetResources())
		if n == prev && fntest.AllReady(rsp) {
			return rsp
		}
		prev = n
		w.Observed = fntest.ObserveAll(rsp, w.Observed)
		w.Connections = fntest.Connections(rsp)
	}
	t.Fatal("did not converge")
	return nil
}

// TestUpgradeWalk upgrades a converged Cluster from 1.33 to 1.35 on each
// cloud, with a provider that reports the control plane's new version only
// some reconciles after it was asked for, and checks every reconcile from
// the versions alone (checkVersions): one minor at a time, never down, no
// pool asked for more than the control plane runs, and no pool moves
// before the control plane reported the minor. GKE is on pinned versions
// (releaseChannel UNSPECIFIED), where the function moves the pools; on a
// release channel GKE moves them itself.
func TestUpgradeWalk(t *testing.T) {
	cases := map[string]struct {
		reason string
		cloud  string
		xr     fntest.Object
		env    func(*fntest.World)
		pools  int
	}{
		"GKEPinned": {
			reason: "GKE without a release channel: control plane, then each pool, a minor at a time.",
			cloud:  "gcp", xr: fntest.GCPXR(), pools: 2,
			env: fntest.EnvEdit("cluster-platform-cloud-gcp", "gcp.releaseChannel", "UNSPECIFIED"),
		},
		"EKS": {
			reason: "EKS: node groups carry explicit versions and follow the control plane.",
			cloud:  "aws", xr: fntest.AWSXR(), pools: 2,
		},
		"AKS": {
			reason: "AKS: user pools and the system pool carry explicit versions and follow the control plane.",
			cloud:  "azure", xr: fntest.AzureXR(), pools: 3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Log(tc.reason)
			w := &fntest.World{XR: overlay.DeepCopy(tc.xr), Envs: envs, Observed: map[string]fntest.Object{}}
			if tc.env != nil {
				tc.env(w)
			}
			converge(t, w)
			fntest.Set("spec.parameters.version", "1.35")(w.XR)

			vp := versionPaths[tc.cloud]
			const delay = 3 // reconciles before the provider reports a new control plane version
			asked, since := get(w.Observed["cluster"], vp.cpSpec), 0
			cpSteps, reported := []string{}, map[int]int{}
			var events []string
			poolMoves := map[int][]int{}
			for round := 1; ; round++ {
				if round > 60 {
					t.Fatal("the upgrade did not finish in 60 reconciles")
				}
				rsp := call(t, w)
				if msg := fntest.Fatal(rsp); msg != "" {
					t.Fatalf("round %d: Fatal: %s", round, msg)
				}
				where := fmt.Sprintf("round %d", round)
				runs, moved := checkVersions(t, where, tc.cloud, w.Observed, rsp)
				if moved {
					poolMoves[runs] = append(poolMoves[runs], round)
				}
				// Crossplane writes the status the function desires, and
				// emits its events: one per step.
				if st, ok := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]; ok {
					w.XR["status"] = st
				}
				for _, r := range rsp.GetResults() {
					if r.GetReason() == "UpgradeStep" {
						events = append(events, r.GetMessage())
					}
				}
				desired := fntest.Desired(rsp)
				if got := get(desired["cluster"], vp.cpSpec); got != asked {
					cpSteps = append(cpSteps, got)
					asked, since = got, 0
				}
				if condition(rsp, "Upgrading") == "FALSE/UpToDate" {
					break
				}
				if round == 1 {
					fntest.Warns("2 minors ahead of the control plane's 1.33")(t, rsp)
					fntest.Condition("Upgrading", "TRUE", "ControlPlaneUpgrade")(t, rsp)
				}
				// The providers act; the control plane reports its new
				// version only delay reconciles after it was asked for.
				prev := w.Observed["cluster"]
				w.Observed = fntest.ObserveAll(rsp, w.Observed)
				if since++; since <= delay && prev != nil {
					fntest.Set(vp.cpRuns, get(prev, vp.cpRuns))(w.Observed["cluster"])
				} else if _, ok := reported[minorOf(asked)]; !ok {
					reported[minorOf(asked)] = round
				}
			}
			if want := []string{"1.34", "1.35"}; !slices.Equal(cpSteps, want) {
				t.Errorf("the control plane was asked for %v, want %v", cpSteps, want)
			}
			for minor, rounds := range poolMoves {
				for _, r := range rounds {
					if at, ok := reported[minor]; !ok || r <= at {
						t.Errorf("a pool was asked for 1.%d in round %d, before the control plane reported it (round %d)", minor, r, at)
					}
				}
			}
			if got := len(poolMoves[34]); got != tc.pools {
				t.Errorf("%d pool moves to 1.34, want %d (one at a time, each once)", got, tc.pools)
			}
			for name, o := range w.Observed {
				if isPool(name) && get(o, vp.poolSpec) != "" && minorOf(get(o, vp.poolSpec)) != 35 {
					t.Errorf("%s ends at %s, want 1.35", name, get(o, vp.poolSpec))
				}
			}
			// Control plane 1.34, its pools, control plane 1.35, its pools:
			// an event for each step as it starts, none twice.
			if len(events) != 4 {
				t.Errorf("%d UpgradeStep events, want one per step (4): %q", len(events), events)
			}
			t.Logf("control plane steps %v; pool moves by minor %v; control plane reported %v; events %q", cpSteps, poolMoves, reported, events)
		})
	}
}

// nextGeneration is the desired resource of a pool's rotated generation:
// nodepool-<pool>-<generation>, "" when there is none.
func nextGeneration(desired map[string]*fnv1.Resource, pool string) string {
	for name := range desired {
		if rest, ok := strings.CutPrefix(name, "nodepool-"+pool+"-"); ok && !strings.Contains(rest, "-") {
			return name
		}
	}
	return ""
}

// generalRotates checks that pool general rotates: its resource is kept
// while a new generation is desired beside it with want at path and a
// minimum of at least minNodes at minPath, and the Upgrading condition says
// so.
func generalRotates(path string, want any, minPath string, minNodes float64) fntest.Check {
	const pool = "general"
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		desired := rsp.GetDesired().GetResources()
		gen := nextGeneration(desired, pool)
		if gen == "" {
			t.Fatalf("no new generation of pool %s is desired: %v", pool, slices.Sorted(maps.Keys(desired)))
		}
		fntest.Field(gen, path, want)(t, rsp)
		d := fntest.Desired(rsp)
		if got, _ := lookupNumber(d[gen], minPath); got < minNodes {
			t.Errorf("%s %s = %v, want at least %v (the old pool's nodes)", gen, minPath, got, minNodes)
		}
		if _, ok := desired["nodepool-"+pool]; !ok {
			t.Errorf("the old pool nodepool-%s is not kept while %s is not Ready", pool, gen)
		}
		fntest.Condition("Upgrading", "TRUE", "NodePoolRotation")(t, rsp)
		fntest.ConditionMentions("Upgrading", "node pool "+pool+" rotates")(t, rsp)
	}
}

// lookupNumber reads a dotted path as a number.
func lookupNumber(o fntest.Object, path string) (float64, bool) {
	var cur any = map[string]any(o)
	for _, p := range strings.Split(path, ".") {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	f, ok := cur.(float64)
	return f, ok
}

// keptAsObserved checks that the named resource is desired exactly as it
// is observed: its spec unchanged.
func keptAsObserved(w *fntest.World, name string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		d, ok := fntest.Desired(rsp)[name]
		if !ok {
			t.Fatalf("%s is not desired", name)
		}
		if diff := cmpSpec(w.Observed[name], d); diff != "" {
			t.Errorf("%s is changed while it waits: %s", name, diff)
		}
	}
}

// cmpSpec is where two objects' specs differ, or "".
func cmpSpec(a, b fntest.Object) string {
	sa, sb := fmt.Sprint(a["spec"]), fmt.Sprint(b["spec"])
	if sa == sb {
		return ""
	}
	return sa + " -> " + sb
}

// observe sets a dotted path of an observed resource.
func observe(name, path string, v any) func(*fntest.World) {
	return func(w *fntest.World) {
		if o := w.Observed[name]; o != nil {
			fntest.Set(path, v)(o)
		}
	}
}

// generationReady sets the Ready condition of a pool's new generation.
func generationReady(pool, status string) func(*fntest.World) {
	return func(w *fntest.World) {
		for name := range w.Observed {
			if rest, ok := strings.CutPrefix(name, "nodepool-"+pool+"-"); ok && !strings.Contains(rest, "-") {
				fntest.ObservedCondition(name, "Ready", status, "nodes joining")(w)
			}
		}
	}
}

// refusal is the message upjet providers refuse a replacing update with.
const refusal = `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "instance_types" from "[m6i.large]" to "[m6i.xlarge]"`

func TestLifecycle(t *testing.T) {
	var w0 *fntest.World // the world of the scenario whose checks need it
	scenarios := map[string]fntest.Scenario{
		"Downgrade": {
			Reason: "A version below the running control plane is a Fatal naming the field, the running version and the allowed targets; nothing changes.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "1.31", Spec: fntest.Edit("spec.parameters.version", "1.31"), Fatal: `spec.parameters.version: Invalid value: "1.31": the control plane runs 1.33 and is never downgraded; allowed targets: 1.33, 1.34, 1.35, 1.36`},
				{Name: "back", Spec: fntest.Edit("spec.parameters.version", "1.33"), Check: fntest.Condition("Upgrading", "FALSE", "UpToDate")},
			},
		},
		"OutsideWindow": {
			Reason: "A version the environment does not support is refused, on every cloud.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "1.37", Spec: fntest.Edit("spec.parameters.version", "1.37"), Fatal: `the environment supports 1.29 to 1.36 (environment key lifecycle.versions); the control plane runs 1.33; allowed targets: 1.33, 1.34, 1.35, 1.36`},
			},
		},
		"WindowMovedPast": {
			Reason: "When the environment stops supporting what runs, the owner is told which targets are allowed.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "window 1.34+", World: fntest.EnvEdit("cluster-platform-cloud-gcp", "lifecycle.versions.min", "1.34"), Fatal: `environment.version: Invalid value: "1.33": the environment supports 1.34 to 1.36 (environment key lifecycle.versions); the control plane runs 1.33; allowed targets: 1.34, 1.35, 1.36`},
				{Name: "owner moves on", Spec: fntest.Edit("spec.parameters.version", "1.34"), Check: fntest.Condition("Upgrading", "TRUE", "ControlPlaneUpgrade")},
			},
		},
		"EnvironmentOutsideKubernetes1": {
			Reason: "The environment's version and window are read as Kubernetes 1.x minors of at most three digits, as the XR's version is: another major, or a minor no walk of steps ends at, is a Fatal naming the environment's key, not a render that never returns.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "version 2.0", World: fntest.EnvEdit("cluster-platform-baseline", "version", "2.0"), Fatal: `environment.version: Invalid value: "2.0": must be a Kubernetes minor version such as "1.33"`},
				{Name: "version 1.2000000000", World: fntest.EnvEdit("cluster-platform-baseline", "version", "1.2000000000"), Fatal: `environment.version: Invalid value: "1.2000000000": must be a Kubernetes minor version such as "1.33"`},
				{Name: "window up to 2.0", World: func(w *fntest.World) {
					fntest.EnvEdit("cluster-platform-baseline", "version", "1.33")(w)
					fntest.EnvEdit("cluster-platform-cloud-gcp", "lifecycle.versions.max", "2.0")(w)
				}, Fatal: `environment.lifecycle.versions.max: Invalid value: "2.0": must be a Kubernetes minor version such as "1.33"`},
				{Name: "window back", World: fntest.EnvEdit("cluster-platform-cloud-gcp", "lifecycle.versions.max", "1.36"), Check: fntest.Condition("Upgrading", "FALSE", "UpToDate")},
			},
		},
		"NewClusterWindowOfAnotherMajor": {
			Reason: "On a first render too, a window that ends in another major is a Fatal naming it.",
			XR:     fntest.AWSXR(fntest.Set("spec.parameters.version", "1.33")),
			Steps: []fntest.Step{
				{Name: "window up to 2.0", World: fntest.EnvEdit("cluster-platform-cloud-aws", "lifecycle.versions.max", "2.0"), Fatal: `environment.lifecycle.versions.max: Invalid value: "2.0": must be a Kubernetes minor version such as "1.33"`},
			},
		},
		"EKSAheadAfterEndOfSupport": {
			Reason: "EKS upgraded the control plane on its own: it is asked for what it runs (asking less would be refused), with a Warning; the node groups stay.",
			XR:     fntest.AWSXR(fntest.Set("spec.parameters.version", "1.33")),
			Steps: []fntest.Step{converged,
				{Name: "EKS reports 1.34", World: observe("cluster", "status.atProvider.version", "1.34"), Hold: true, Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.version", "1.34"),
					fntest.Field("nodepool-general", "spec.forProvider.version", "1.33"),
					fntest.Warns("the control plane runs 1.34, ahead of spec.parameters.version 1.33"))},
			},
		},
		"EKSAddonsFollowTheControlPlane": {
			Reason: "EKS add-ons move to the environment's builds for a minor once the control plane reports it, not before.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "1.34 asked", Spec: fntest.Edit("spec.parameters.version", "1.34"), Hold: true, Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.version", "1.34"),
					fntest.Field("addon-kube-proxy", "spec.forProvider.addonVersion", "v1.33.5-eksbuild.2"))},
				{Name: "1.34 reported", World: observe("cluster", "status.atProvider.version", "1.34"), Hold: true, Check: fntest.All(
					fntest.Field("addon-kube-proxy", "spec.forProvider.addonVersion", "v1.34.1-eksbuild.2"),
					fntest.Condition("Upgrading", "TRUE", "NodePoolUpgrade"))},
			},
		},
		"GKEChannelKeepsAutoUpgrade": {
			Reason: "On a release channel GKE pools carry no version and keep auto-upgrade; the control plane's minimum moves one minor at a time.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "1.35 asked", Spec: fntest.Edit("spec.parameters.version", "1.35"), Hold: true, Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.minMasterVersion", "1.34"),
					fntest.Field("nodepool-general", "spec.forProvider.management.autoUpgrade", true),
					fntest.Field("nodepool-general", "spec.forProvider.version", nil),
					fntest.Warns("2 minors ahead of the control plane's 1.33"))},
			},
		},
		"RotateEKSNodeGroup": {
			Reason: "A new instance type is made by a new node group beside the old, holding the old one's nodes; the old one goes once the new one is Ready.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "size medium", World: observe("nodepool-general", "status.atProvider.scalingConfig.desiredSize", 4.0), Spec: fntest.Edit("spec.parameters.pools.general.size", "medium"),
					Check: fntest.All(generalRotates("spec.forProvider.instanceTypes", []any{"m6i.xlarge"}, "spec.forProvider.scalingConfig.minSize", 4),
						fntest.Field("nodepool-general", "spec.forProvider.instanceTypes", []any{"m6i.large"}))},
				{Name: "new one not Ready yet", World: generationReady("general", "False"), Hold: true, Check: fntest.All(fntest.Desires("nodepool-general"), fntest.IsReady(false))},
				{Name: "new one Ready", World: generationReady("general", "True"), Removes: []string{"nodepool-general"}, Check: fntest.All(fntest.Lacks("nodepool-general", "nodepool-general-uses-cluster"), fntest.Condition("Upgrading", "TRUE", "NodePoolRotation"))},
				{Name: "settled", Converge: true, Check: fntest.All(fntest.Condition("Upgrading", "FALSE", "UpToDate"), fntest.IsReady(true))},
			},
		},
		"RotateAKSNodePool": {
			Reason: "A new VM size is made by a new AKS pool under a name of at most 12 letters and digits, not by azurerm's cycling, which does not drain.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "size medium", Spec: fntest.Edit("spec.parameters.pools.general.size", "medium"), Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					generalRotates("spec.forProvider.vmSize", "Standard_D4s_v5", "spec.forProvider.minCount", 2)(t, rsp)
					gen := nextGeneration(rsp.GetDesired().GetResources(), "general")
					d := fntest.Desired(rsp)[gen]
					meta, _ := d["metadata"].(map[string]any)
					ann, _ := meta["annotations"].(map[string]any)
					if ext, _ := ann["crossplane.io/external-name"].(string); len(ext) > 12 || strings.ContainsAny(ext, "-_") || ext == "general" {
						t.Errorf("the new AKS pool is named %q", ext)
					}
				}},
				{Name: "new one Ready", Removes: []string{"nodepool-general"}, Check: fntest.Lacks("nodepool-general")},
			},
		},
		"RotateGKESpot": {
			Reason: "GKE changes a machine type in place (surging), but spot only by a new pool.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "size medium in place", Spec: fntest.Edit("spec.parameters.pools.general.size", "medium"), Check: fntest.All(
					fntest.Field("nodepool-general", "spec.forProvider.nodeConfig.machineType", "e2-standard-4"),
					fntest.Condition("Upgrading", "FALSE", "UpToDate"))},
				{Name: "spot", Spec: fntest.Edit("spec.parameters.pools.general.spot", true), Check: generalRotates("spec.forProvider.nodeConfig.spot", true, "spec.forProvider.autoscaling.minNodeCount", 2)},
				{Name: "new one Ready", Removes: []string{"nodepool-general"}, Check: fntest.Lacks("nodepool-general")},
				{Name: "settled", Converge: true, Check: fntest.Condition("Upgrading", "FALSE", "UpToDate")},
				{Name: "back to on-demand rotates again", Spec: fntest.Edit("spec.parameters.pools.general.spot", false), Check: fntest.Condition("Upgrading", "TRUE", "NodePoolRotation")},
			},
		},
		"FieldAddedToPoolRotates": {
			Reason: "A replacement-only field the pool's cloud resource does not have (neither its spec nor its provider's report holds it), added by an override, is a change from nothing: the pool rotates instead of being edited in place.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "maxPodsPerNode added", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"nodepool-general": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"maxPodsPerNode": 32.0}}}}),
					Check: generalRotates("spec.forProvider.maxPodsPerNode", 32.0, "spec.forProvider.autoscaling.minNodeCount", 2)},
			},
		},
		"OnePoolRotatesAtATime": {
			Reason: "With lifecycle.parallelPools 1, a second pool's rotation waits, its resource kept as it is.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "both change", Spec: func(w *fntest.World) {
					w0 = w
					fntest.Set("spec.parameters.pools.general.size", "medium")(w.XR)
					fntest.Set("spec.parameters.pools.gpu.machineType", "g5.2xlarge")(w.XR)
				}, Hold: true, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					desired := rsp.GetDesired().GetResources()
					if nextGeneration(desired, "general") == "" || nextGeneration(desired, "gpu") != "" {
						t.Errorf("want general to rotate and gpu to wait: %v", slices.Sorted(maps.Keys(desired)))
					}
					keptAsObserved(w0, "nodepool-gpu")(t, rsp)
				}},
			},
		},
		"ImportedPoolNeverReplaced": {
			Reason: "An imported pool is never replaced: a replacement-only change of it is a Fatal.",
			XR: fntest.AWSXR(fntest.Set("spec.parameters.import", map[string]any{"enabled": true, "mode": "manage",
				"resources": map[string]any{"nodepool-general": "general"}})),
			Steps: []fntest.Step{fntest.Granted(converged, edgeGrant),
				{Name: "size medium", Spec: fntest.Edit("spec.parameters.pools.general.size", "medium"), Fatal: "node pool general is imported"},
			},
		},
		"AKSSystemPoolCycles": {
			Reason: "The AKS system pool cannot be renamed; azurerm cycles it for a new VM size, which a Warning says does not drain it.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "system pool medium", World: fntest.EnvEdit("cluster-platform-cloud-azure", "azure.systemPool.size", "medium"), Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.defaultNodePool.vmSize", "Standard_D4s_v5"),
					fntest.Warns("not cordoned and drained"))},
			},
		},
		"StuckPoolUnstuck": {
			Reason: "A node group an earlier render edited in place, which the provider refuses forever, is found from what runs and rotated; once its replacement exists, the old one is never preferred to it, whatever its provider's message says this time.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "stuck", World: func(w *fntest.World) {
					fntest.Set("spec.parameters.pools.general.size", "medium")(w.XR)
					observe("nodepool-general", "spec.forProvider.instanceTypes", []any{"m6i.xlarge"})(w)
					fntest.ObservedCondition("nodepool-general", "Synced", "False", refusal)(w)
				}, Check: fntest.All(generalRotates("spec.forProvider.instanceTypes", []any{"m6i.xlarge"}, "spec.forProvider.scalingConfig.minSize", 2),
					fntest.Warns(`the provider refuses to update composed resource "nodepool-general"`))},
				{Name: "the refusal turns into throttling", World: func(w *fntest.World) {
					// The old node group still runs the old type.
					observe("nodepool-general", "status.atProvider.instanceTypes", []any{"m6i.large"})(w)
					fntest.ObservedCondition("nodepool-general", "Synced", "False", "ThrottlingException: Rate exceeded")(w)
				},
					Removes: []string{"nodepool-general"}, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
						if nextGeneration(rsp.GetDesired().GetResources(), "general") == "" {
							t.Errorf("the new generation is not desired: the pool flapped back")
						}
						fntest.Lacks("nodepool-general")(t, rsp)
					}},
			},
		},
		"ControlPlaneStatusLost": {
			Reason: "A control plane that reports no version is not a new one: nothing is asked for a skip, no pool moves ahead.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "1.35 asked, status lost", Spec: fntest.Edit("spec.parameters.version", "1.35"), World: func(w *fntest.World) {
					observe("cluster", "status.atProvider.currentKubernetesVersion", nil)(w)
					fntest.ObservedCondition("cluster", "Ready", "False", "status lost")(w)
				}, Hold: true, Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.kubernetesVersion", "1.33"),
					fntest.Field("cluster", "spec.forProvider.defaultNodePool.orchestratorVersion", "1.33"),
					fntest.Field("nodepool-general", "spec.forProvider.orchestratorVersion", "1.33"),
					fntest.Condition("Upgrading", "TRUE", "ControlPlaneUpgrade"),
					fntest.ConditionMentions("Upgrading", "the control plane to report the version it runs"))},
			},
		},
		"TwoPoolsRotateApart": {
			Reason: "Two AKS pools whose names share their first eight letters rotate to the same VM size under different names.",
			XR: fntest.AzureXR(func(o fntest.Object) {
				fntest.Set("spec.parameters.pools", map[string]any{
					"workers1a": map[string]any{"size": "small", "minNodes": 1.0, "maxNodes": 3.0},
					"workers1b": map[string]any{"size": "small", "minNodes": 1.0, "maxNodes": 3.0},
				})(o)
			}),
			Steps: []fntest.Step{converged,
				{Name: "both medium, two at a time", World: func(w *fntest.World) {
					fntest.EnvEdit("cluster-platform-baseline", "lifecycle.parallelPools", 2.0)(w)
					fntest.Set("spec.parameters.pools.workers1a.size", "medium")(w.XR)
					fntest.Set("spec.parameters.pools.workers1b.size", "medium")(w.XR)
				}, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					desired := rsp.GetDesired().GetResources()
					a, b := nextGeneration(desired, "workers1a"), nextGeneration(desired, "workers1b")
					if a == "" || b == "" {
						t.Fatalf("want both pools rotating: %v", slices.Sorted(maps.Keys(desired)))
					}
					names := map[string]bool{}
					for _, n := range []string{a, b} {
						meta, _ := fntest.Desired(rsp)[n]["metadata"].(map[string]any)
						ann, _ := meta["annotations"].(map[string]any)
						names[fmt.Sprint(ann["crossplane.io/external-name"])] = true
					}
					if len(names) != 2 {
						t.Errorf("the two new pools share a cloud name: %v", names)
					}
				}},
			},
		},
		"StuckNetworkRefused": {
			Reason: "A VPC whose range an earlier render changed in place is a Fatal saying the cloud resource still has the old range.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "stuck", World: func(w *fntest.World) {
					observe("network", "status.atProvider.cidrBlock", "10.9.0.0/16")(w)
					fntest.ObservedCondition("network", "Synced", "False", `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "cidr_block"`)(w)
				}, Fatal: `composed resource "network" asks for spec.forProvider.cidrBlock "10.0.0.0/16", but the cloud resource still has "10.9.0.0/16"`},
			},
		},
		"RefusalNeverReady": {
			Reason: "Whatever the provider refuses to replace, the resource is not Ready and a Warning names it.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "refused", World: fntest.ObservedCondition("cluster", "Synced", "False", `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "node_config.#"`),
					Hold: true, Check: fntest.All(fntest.IsReady(false), fntest.Warns(`the provider refuses to update composed resource "cluster"`), fntest.Condition("ClusterReady", "FALSE", "ReconcileError"))},
			},
		},
		"MaintenanceGKE": {
			Reason: "A weekly window becomes GKE's recurring maintenance window; a window GKE would refuse is a Fatal naming the field.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.maintenance", map[string]any{"day": "Sunday", "startTime": "22:00", "durationHours": 12.0})),
			Steps: []fntest.Step{converged,
				{Name: "rendered", Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.maintenancePolicy.recurringWindow.startTime", "2025-01-06T22:00:00Z"),
					fntest.Field("cluster", "spec.forProvider.maintenancePolicy.recurringWindow.endTime", "2025-01-07T10:00:00Z"),
					fntest.Field("cluster", "spec.forProvider.maintenancePolicy.recurringWindow.recurrence", "FREQ=WEEKLY;BYDAY=SU"))},
				{Name: "4 hours", Spec: fntest.Edit("spec.parameters.maintenance.durationHours", 4.0), Fatal: "spec.parameters.maintenance.durationHours: Invalid value: 4: GKE needs maintenance windows that allow at least 48 hours in any 32 days"},
				{Name: "bad day", Spec: fntest.Edit("spec.parameters.maintenance.day", "Funday"), Fatal: `spec.parameters.maintenance.day: Unsupported value: "Funday"`},
			},
		},
		"MaintenanceAKS": {
			Reason: "A weekly window becomes AKS's auto-upgrade and node-OS windows.",
			XR:     fntest.AzureXR(fntest.Set("spec.parameters.maintenance", map[string]any{"day": "Saturday", "startTime": "02:00", "durationHours": 6.0})),
			Steps: []fntest.Step{converged,
				{Name: "rendered", Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.maintenanceWindowAutoUpgrade", map[string]any{"frequency": "Weekly", "interval": 1.0, "dayOfWeek": "Saturday", "startTime": "02:00", "duration": 6.0, "utcOffset": "+00:00"}),
					fntest.Field("cluster", "spec.forProvider.maintenanceWindowNodeOs.dayOfWeek", "Saturday"))},
			},
		},
		"MaintenanceEKS": {
			Reason: "EKS has no maintenance window: a Warning says the field is not applied.",
			XR:     fntest.AWSXR(fntest.Set("spec.parameters.maintenance", map[string]any{"day": "Saturday", "startTime": "02:00", "durationHours": 6.0})),
			Steps:  []fntest.Step{converged, {Name: "warned", Check: fntest.Warns("EKS has no maintenance window")}},
		},
	}
	fntest.RunAll(t, "lifecycle scenarios", run, envs, scenarios)
}
