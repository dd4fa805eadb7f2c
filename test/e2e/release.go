package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// releaseFleet are the release scenario's Clusters: two per wave, on mixed
// clouds, each in a namespace of its own, on a Composition of their own
// (releaseComposition), so that no other scenario's XR follows its
// revisions; and a claim's (releaseClaim).
var releaseFleet = []rolloutCluster{
	{"release-canary-gcp", "release-a", "gcp", "canary"},
	{"release-canary-aws", "release-b", "aws", "canary"},
	{"release-staging-azure", "release-c", "azure", "staging"},
	{"release-staging-gcp", "release-d", "gcp", "staging"},
	{"release-production-aws", "release-e", "aws", "production"},
	{"release-production-azure", "release-f", "azure", "production"},
	releaseClaim,
}

// releaseClaim is a legacy Cluster claim of the staging wave: its XCluster
// (cluster-scoped, on the legacy release Composition) is moved through the
// claim, whose revision selector the fleet controller writes and
// Crossplane's claim syncer copies onto the XR. Its key is the claim's
// namespace/name, as for the namespaced Clusters.
var releaseClaim = rolloutCluster{"release-staging-claim", "release-g", "aws", "staging"}

// claimKind is the legacy Cluster claim's kind.
var claimKind = kindRef{xr.LegacyClusterAPIVersion, xr.ClusterKind}

// legacyXR is the legacy Cluster XR's kind.
var legacyXR = kindRef{xr.LegacyClusterAPIVersion, xr.LegacyClusterKind}

// releaseRefused is the Cluster that release r3 cannot render: its
// environment's GCP layer no longer supports the minor it runs.
var releaseRefused = releaseFleet[0]

// releaseComposition is the Composition of the release scenario's Clusters,
// releaseLegacyComposition its claim's XCluster's.
const (
	releaseComposition       = "cluster-platform-release"
	releaseLegacyComposition = "cluster-platform-release-legacy"
)

// releaseCuts are the release scenario's Compositions, each a cut of the
// Cluster Composition of apis/<dir>.
var releaseCuts = []struct{ dir, name string }{{"cluster", releaseComposition}, {"cluster-legacy", releaseLegacyComposition}}

// releaseLabel marks the release scenario's XRs and EnvironmentConfigs.
const releaseLabel = "e2e.platform.example.org/release"

// releaseSoak is the canary wave's soak: staging moves no sooner than this
// after the last canary XR first rendered Ready on the new release.
const releaseSoak = 15 * time.Second

// releaseHeldFor is how long the scenario watches a wave that must not move
// (production waiting for its approval; staging after a halt) before it
// acts.
const releaseHeldFor = 20 * time.Second

// releaseFunctions are the Functions of the releases: r1 is the function
// run.sh registers for every scenario; r2 and r3 are a second process of
// the same binary that run.sh registers under two more names
// (start-function-r2.sh), as a platform team installs a new release's
// Function beside the current one.
var releaseFunctions = map[string]string{
	"r1": "function-cluster-platform",
	"r2": "function-cluster-platform-r2",
	"r3": "function-cluster-platform-r3",
}

// releaseMetrics is the second function process's metrics.
const releaseMetrics = "http://127.0.0.1:18091/metrics"

// releaseXR is a release scenario Cluster as its owner writes it, in the
// release's Composition, selecting release r1 (as an XRD's default
// selector would give it).
// The claim (releaseClaim) says the same at the top of its spec, on the
// legacy Composition.
func releaseXR(c rolloutCluster) object {
	o := c.xr()
	labels := o["metadata"].(map[string]any)["labels"].(map[string]any)
	labels["planeType"] = "release"
	labels[releaseLabel] = "true"
	selection := map[string]any{
		"compositionRef":              map[string]any{"name": releaseComposition},
		"compositionRevisionSelector": map[string]any{"matchLabels": map[string]any{rollout.LabelRelease: "r1"}},
	}
	if c != releaseClaim {
		o["spec"].(map[string]any)["crossplane"] = selection
		return o
	}
	o["apiVersion"], o["kind"] = claimKind.apiVersion, claimKind.kind
	selection["compositionRef"] = map[string]any{"name": releaseLegacyComposition}
	maps.Copy(o["spec"].(map[string]any), selection)
	return o
}

// releaseCompositionsOf are the release scenario's Compositions as release
// rel cuts them: the Cluster Compositions of apis/cluster and
// apis/cluster-legacy, renamed, labelled with the release, calling the
// release's Function with the release in its Input, and reading the
// EnvironmentConfigs labelled with env.
func releaseCompositionsOf(rel, env string) ([]object, error) {
	var out []object
	for _, c := range releaseCuts {
		o, err := releaseCompositionOf(c.dir, c.name, rel, env)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// releaseCompositionOf is one of releaseCompositionsOf: apis/<dir>'s, named
// name.
func releaseCompositionOf(dir, name, rel, env string) (object, error) {
	b, err := fs.ReadFile(os.DirFS("apis"), dir+"/composition.yaml")
	if err != nil {
		return nil, fmt.Errorf("cannot read the Composition of apis/%s: %w", dir, err)
	}
	var o object
	if err := yaml.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("cannot read the Composition of apis/%s: %w", dir, err)
	}
	o["metadata"] = map[string]any{"name": name, "labels": map[string]any{rollout.LabelRelease: rel, releaseLabel: "true"}}
	pipeline, _ := at(o, "spec", "pipeline").([]any)
	if len(pipeline) != 1 {
		return nil, fmt.Errorf("the Composition of apis/%s has %d pipeline steps, want 1", dir, len(pipeline))
	}
	step := pipeline[0].(map[string]any)
	step["functionRef"] = map[string]any{"name": releaseFunctions[rel]}
	step["input"].(map[string]any)["release"] = rel
	reqs, _ := at(step, "requirements", "requiredResources").([]any)
	for _, r := range reqs {
		rm := r.(map[string]any)
		if rm["kind"] == "EnvironmentConfig" {
			rm["matchLabels"] = map[string]any{"platform.example.org/environment": env}
		}
	}
	return o, nil
}

// releaseEnv is what the release scenario's waves EnvironmentConfig says:
// the release keys (none when target is ""), and production's approvals.
type releaseEnv struct {
	target, from string
	rollback     bool
	approved     []string
}

// object is the waves' baseline EnvironmentConfig: canary, staging and
// production, each admitting its Clusters' namespaces, the canary with a
// soak, production requiring approval.
func (e releaseEnv) object() object {
	waves := make([]any, 0, len(rolloutWaves))
	for i, w := range rolloutWaves {
		var ns []any
		for _, c := range releaseFleet {
			if c.wave == w {
				ns = append(ns, c.namespace)
			}
		}
		wave := map[string]any{"name": w, "namespaces": ns}
		if w == "canary" {
			wave["soak"] = releaseSoak.String()
		}
		if i == len(rolloutWaves)-1 {
			wave["requiresApproval"] = true
			if len(e.approved) > 0 {
				wave["approved"] = anyList(e.approved)
			}
		}
		waves = append(waves, wave)
	}
	ro := map[string]any{"waves": waves}
	if e.target != "" {
		ro["release"] = map[string]any{"target": e.target, "from": e.from, "rollback": e.rollback}
	}
	return object{
		"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"metadata": map[string]any{"name": rolloutWavesName, "labels": map[string]any{
			"platform.example.org/environment": "cluster-platform", "baseline": "default", releaseLabel: "true",
		}},
		"data": map[string]any{"rollout": ro},
	}
}

// releasePlaneEnv is the EnvironmentConfig of the release scenario's plane
// type: GKE off a release channel, as in the rollout scenario, so that
// every pool of every cloud reports the version it runs.
const releasePlaneEnv = "cluster-platform-planetype-release"

// release proves platform releases in waves on the real control plane: six
// Clusters on three clouds in three waves, on a Composition whose
// revisions are labelled with the release that cut them, move from
// release r1 (the function run.sh registers) to r2 (a second Function,
// served by a second process) as the fleet controller writes their
// revision selectors; from the API server's records, no XR of a wave
// changes revision before every XR of the earlier waves ran r2 Ready and
// Synced at its generation, staging not before the canary's soak, and
// production not before its approval. Then r3, whose Compositions read
// an environment that no longer supports the GKE minor the Clusters run,
// halts in the canary wave and is rolled back. Nothing the XRs compose is
// deleted or replaced at any step.
func (s *scenarios) release() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range releaseFleet {
		if err := s.k.apply(object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": c.namespace}}); err != nil {
			return err
		}
	}
	plane := object{
		"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"metadata": map[string]any{"name": releasePlaneEnv, "labels": map[string]any{
			"platform.example.org/environment": "cluster-platform", "planeType": "release", releaseLabel: "true",
		}},
		"data": map[string]any{"gcp": map[string]any{"releaseChannel": "UNSPECIFIED"}},
	}
	if err := s.k.apply(plane); err != nil {
		return err
	}
	if err := s.k.apply(releaseEnv{}.object()); err != nil {
		return err
	}
	if err := s.applyRelease("r1", "cluster-platform"); err != nil {
		return err
	}
	if _, err := s.waitFor("release r1's Composition revisions", func() (bool, error) {
		revs, err := s.releaseRevisions()
		n := 0
		for _, r := range revs {
			if r == "r1" {
				n++
			}
		}
		return n == len(releaseCuts), err
	}); err != nil {
		return err
	}
	for _, c := range releaseFleet {
		if err := s.k.apply(releaseXR(c)); err != nil {
			return err
		}
	}
	readyIn, err := s.waitRelease("the release's Clusters Ready on r1", inWave(), func(st releaseState, revs map[string]string) bool { return st.proves("r1", revs) })
	if err != nil {
		return err
	}
	before, err := s.releaseComposed()
	if err != nil {
		return err
	}
	rec, err := s.recordRelease(ctx)
	if err != nil {
		return err
	}

	// Cut r2: its Composition revision appears, and no XR moves, since
	// each selects r1.
	if err := s.applyRelease("r2", "cluster-platform"); err != nil {
		return err
	}
	time.Sleep(releaseHeldFor / 2)
	if _, err := s.waitRelease("every XR still on r1 with r2 cut", inWave(), func(st releaseState, revs map[string]string) bool {
		return st.proves("r1", revs) && st.selects == "r1"
	}); err != nil {
		return err
	}
	fmt.Printf("  %d Clusters (one a claim's) Ready on r1 in %.1f s; r2 cut (a second Function and Composition revisions labelled r2): none moved\n", len(releaseFleet), readyIn.Seconds())

	forward, err := s.releaseForward(rec)
	if err != nil {
		return fmt.Errorf("r1 -> r2: %w", err)
	}
	now, err := s.releaseComposed()
	if err != nil {
		return err
	}
	if err := sameComposed("r1 -> r2", before, now); err != nil {
		return err
	}
	halt, err := s.releaseHaltAndRollback(rec)
	if err != nil {
		return fmt.Errorf("r2 -> r3: %w", err)
	}
	if now, err = s.releaseComposed(); err != nil {
		return err
	}
	if err := sameComposed("r3 halted and rolled back", before, now); err != nil {
		return err
	}
	cancel()
	gone, err := s.deleteClusters("the release's Clusters", slices.DeleteFunc(slices.Clone(releaseFleet), func(c rolloutCluster) bool { return c == releaseClaim }))
	if err != nil {
		return err
	}
	claimGone, err := s.deleteClaim(releaseClaim)
	if err != nil {
		return err
	}
	envs, err := s.k.list("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "", releaseLabel+"=true")
	if err != nil {
		return err
	}
	for _, o := range envs {
		if err := s.k.delete("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "", str(o, "metadata", "name")); err != nil && !errors.Is(err, errNotFound) {
			return err
		}
	}
	for _, c := range releaseCuts {
		if err := s.k.delete("apiextensions.crossplane.io/v1", "Composition", "", c.name); err != nil {
			return err
		}
	}
	if err := s.deleteNamespaces(releaseFleet); err != nil {
		return err
	}
	fmt.Printf("  the %d namespaced Clusters deleted with everything they composed in %.1f s, the claim with its XCluster's in %.1f s\n", len(releaseFleet)-1, gone.Seconds(), claimGone.Seconds())
	s.results = append(s.results, fmt.Sprintf("%-30s %d Clusters (one a claim's) Ready on r1 in %.1f s; %s; %s; nothing composed deleted or replaced (%d resources)", "platform releases", len(releaseFleet), readyIn.Seconds(), forward, halt, len(before)))
	return nil
}

// releaseForward moves the fleet from r1 to r2: the release keys set,
// production approved once it has held for releaseHeldFor; then it
// checks the records. It returns the time each wave took and the calls
// each function served.
func (s *scenarios) releaseForward(rec *releaseRecord) (string, error) {
	calls1, _, _, err := runFunctionLatency(s.metrics)
	if err != nil {
		return "", err
	}
	calls2, _, _, _ := runFunctionLatency(releaseMetrics) // none yet: no histogram
	start := time.Now()
	if err := s.k.apply(releaseEnv{target: "r2", from: "r1"}.object()); err != nil {
		return "", err
	}
	var times []string
	for _, w := range rolloutWaves[:2] {
		took, err := s.waitRelease(w+" on r2", inWave(w), func(st releaseState, revs map[string]string) bool { return st.proves("r2", revs) })
		if err != nil {
			return "", err
		}
		times = append(times, fmt.Sprintf("%s %.1f s", w, took.Seconds()))
	}
	// Production requires approval: it holds on r1.
	time.Sleep(releaseHeldFor)
	if _, err := s.waitRelease("production held on r1 for its approval", inWave("production"), func(st releaseState, revs map[string]string) bool {
		return st.proves("r1", revs) && st.selects == "r1"
	}); err != nil {
		return "", err
	}
	approvedAt := time.Now()
	if err := s.k.apply(releaseEnv{target: "r2", from: "r1", approved: []string{"release=r2"}}.object()); err != nil {
		return "", err
	}
	took, err := s.waitRelease("production on r2", inWave("production"), func(st releaseState, revs map[string]string) bool { return st.proves("r2", revs) })
	if err != nil {
		return "", err
	}
	times = append(times, fmt.Sprintf("production %.1f s after its approval", took.Seconds()))
	total := time.Since(start)
	c1, _, _, err := runFunctionLatency(s.metrics)
	if err != nil {
		return "", err
	}
	c2, _, _, err := runFunctionLatency(releaseMetrics)
	if err != nil {
		return "", fmt.Errorf("release r2's function served no call: %w", err)
	}
	revs, err := s.releaseRevisions()
	if err != nil {
		return "", err
	}
	if err := rec.verifyWaves("r2", revs, approvedAt); err != nil {
		return "", err
	}
	sum := fmt.Sprintf("r1 -> r2 in %.1f s (%s; RunFunction calls: r1 %.0f, r2 %.0f)", total.Seconds(), strings.Join(times, ", "), c1-calls1, c2-calls2)
	fmt.Println("  " + sum)
	return sum, nil
}

// releaseHaltAndRollback cuts r3, whose Compositions read a copy of the
// environment whose GCP layer supports Kubernetes up to 1.32 only, and
// moves to it: the canary's GCP Cluster (1.33) is refused with a Fatal,
// the canary's AWS one runs r3, and staging and production keep r2 and
// never select r3. Then it rolls back to r2: the canary moves back and
// every XR runs r2, Ready, again. It returns what it saw.
func (s *scenarios) releaseHaltAndRollback(rec *releaseRecord) (string, error) {
	envs, err := s.k.list("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "", "platform.example.org/environment=cluster-platform")
	if err != nil {
		return "", err
	}
	for _, o := range envs {
		name := str(o, "metadata", "name")
		labels, _ := at(o, "metadata", "labels").(map[string]any)
		labels["platform.example.org/environment"] = "cluster-platform-r3"
		labels[releaseLabel] = "true"
		cp := object{"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": map[string]any{"name": name + "-r3", "labels": labels}, "data": o["data"]}
		if name == "cluster-platform-cloud-gcp" {
			data, _ := o["data"].(map[string]any)
			lc, _ := data["lifecycle"].(map[string]any)
			if lc == nil {
				lc = map[string]any{}
				data["lifecycle"] = lc
			}
			lc["versions"] = map[string]any{"min": "1.29", "max": "1.32"}
		}
		if err := s.k.apply(cp); err != nil {
			return "", err
		}
	}
	if err := s.applyRelease("r3", "cluster-platform-r3"); err != nil {
		return "", err
	}
	if err := s.k.apply(releaseEnv{target: "r3", from: "r2", approved: []string{"release=r2"}}.object()); err != nil {
		return "", err
	}
	start := time.Now()
	refused := func(c rolloutCluster) bool { return c == releaseRefused }
	if _, err := s.waitRelease(releaseRefused.key()+" refused by r3", refused, func(st releaseState, _ map[string]string) bool {
		return st.selects == "r3" && !st.synced && strings.Contains(st.message, "lifecycle.versions")
	}); err != nil {
		return "", err
	}
	haltedIn := time.Since(start)
	states, err := s.releaseStates()
	if err != nil {
		return "", err
	}
	said := states[releaseRefused.key()].message
	if _, err := s.waitRelease("the canary's other Cluster on r3", func(c rolloutCluster) bool { return c.wave == "canary" && c != releaseRefused }, func(st releaseState, revs map[string]string) bool {
		return st.proves("r3", revs)
	}); err != nil {
		return "", err
	}
	time.Sleep(releaseHeldFor)
	if _, err := s.waitRelease("staging and production held on r2", inWave("staging", "production"), func(st releaseState, revs map[string]string) bool {
		return st.proves("r2", revs) && st.selects == "r2"
	}); err != nil {
		return "", err
	}
	if err := s.controllerSaid("Halt", releaseFleet[2].key()); err != nil {
		return "", err
	}
	// Roll back.
	if err := s.k.apply(releaseEnv{target: "r2", from: "r3", rollback: true, approved: []string{"release=r2"}}.object()); err != nil {
		return "", err
	}
	back, err := s.waitRelease("every XR back on r2", inWave(), func(st releaseState, revs map[string]string) bool {
		return st.proves("r2", revs) && st.selects == "r2"
	})
	if err != nil {
		return "", err
	}
	revs, err := s.releaseRevisions()
	if err != nil {
		return "", err
	}
	for _, e := range rec.sorted() {
		if c := slices.IndexFunc(releaseFleet, func(c rolloutCluster) bool { return c.key() == e.of }); c >= 0 && releaseFleet[c].wave != "canary" && (e.st.selects == "r3" || revs[e.st.revision] == "r3") {
			return "", fmt.Errorf("%s of wave %s selected r3 (resource version %d) while the canary had not proven it", e.of, releaseFleet[c].wave, e.rv)
		}
	}
	sum := fmt.Sprintf("r3 halted in the canary in %.1f s (%s: %q), staging and production kept r2; rolled back to r2 in %.1f s", haltedIn.Seconds(), releaseRefused.key(), said, back.Seconds())
	fmt.Println("  " + sum)
	return sum, nil
}

// controllerSaid checks that the fleet controller's log holds a release
// decision of verdict on the XR named key.
func (s *scenarios) controllerSaid(verdict, key string) error {
	b, err := os.ReadFile(filepath.Join(s.work, "fleet.log"))
	if err != nil {
		return fmt.Errorf("cannot read the fleet controller's log: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "release decision") && strings.Contains(l, key) && (strings.Contains(l, "verdict="+verdict) || strings.Contains(l, `"verdict":"`+verdict+`"`)) {
			return nil
		}
	}
	return fmt.Errorf("the fleet controller's log has no release decision %s of %s", verdict, key)
}

// applyRelease cuts release rel: applies its Compositions, which read the
// EnvironmentConfigs labelled with env.
func (s *scenarios) applyRelease(rel, env string) error {
	comps, err := releaseCompositionsOf(rel, env)
	if err != nil {
		return err
	}
	for _, o := range comps {
		if err := s.k.apply(o); err != nil {
			return err
		}
	}
	return nil
}
