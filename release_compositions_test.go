package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// releaseCompositions writes the shipped Cluster Compositions (namespaced
// and legacy; files names those of apis/) into a new folder, each
// rewritten by edit, and returns the folder.
func releaseCompositions(t *testing.T, edit func(xpsim.Object), files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		c := fntest.MustLoad(filepath.Join("apis", f))[0]
		edit(c)
		writeYAML(t, filepath.Join(dir, strings.ReplaceAll(f, "/", "-")), c)
	}
	return dir
}

// named has a Composition's step of this function name release rel in
// its Input.
func named(rel string) func(xpsim.Object) {
	return func(c xpsim.Object) {
		for _, s := range c["spec"].(map[string]any)["pipeline"].([]any) {
			if in, _ := s.(map[string]any)["input"].(map[string]any); in["apiVersion"] == "platform.fn.example.org/v1beta1" {
				in["release"] = rel
			}
		}
	}
}

// readsEnvironment has a Composition's step require the EnvironmentConfigs
// of another environment.
func readsEnvironment(env string) func(xpsim.Object) {
	return func(c xpsim.Object) {
		for _, s := range c["spec"].(map[string]any)["pipeline"].([]any) {
			rq, _ := s.(map[string]any)["requirements"].(map[string]any)
			reqs, _ := rq["requiredResources"].([]any)
			for _, r := range reqs {
				if r := r.(map[string]any); r["kind"] == "EnvironmentConfig" {
					r["matchLabels"] = map[string]any{"platform.example.org/environment": env}
				}
			}
		}
	}
}

// TestPreviewReleaseCompositions previews releases that change only their
// Compositions (preview --fleet --compositions --release-compositions,
// the current function rendering both) over six Clusters on three clouds,
// namespaced and legacy, and checks which XRs the report says differ, and
// how.
func TestPreviewReleaseCompositions(t *testing.T) {
	fleet := releaseFleet(t)
	shipped := []string{"cluster/composition.yaml", "cluster-legacy/composition.yaml"}
	same := func(xpsim.Object) {}
	// r3's environment: a copy of the examples' EnvironmentConfigs under
	// another environment label, whose GCP layer supports up to 1.32.
	r3env := t.TempDir()
	for _, o := range fntest.MustLoad("examples/envconfigs") {
		meta := o["metadata"].(map[string]any)
		labels := meta["labels"].(map[string]any)
		labels["platform.example.org/environment"] = "cluster-platform-r3"
		if labels["cloud"] == "gcp" {
			fntest.Set("data.lifecycle.versions", map[string]any{"min": "1.29", "max": "1.32"})(o)
		}
		meta["name"] = meta["name"].(string) + "-r3"
		writeYAML(t, filepath.Join(r3env, meta["name"].(string)+".yaml"), o)
	}
	envNames := []string{"status.environment.baseline", "status.environment.cloud", "status.environment.planeType"}
	// pinned is the fleet with the GCP Cluster pinned to its revision
	// (compositionUpdatePolicy Manual) and the Azure XCluster paused.
	pinned := releaseFleet(t)
	writeYAML(t, filepath.Join(pinned, "gcp.yaml"), fntest.GCPXR(fntest.Set("metadata.name", "gcp"), fntest.Set("spec.crossplane.compositionUpdatePolicy", "Manual")))
	writeYAML(t, filepath.Join(pinned, "azure-legacy.yaml"), fntest.AzureXR(fntest.Set("metadata.name", "azure-legacy"), fntest.Legacy, func(o xpsim.Object) {
		o["metadata"].(map[string]any)["annotations"] = map[string]any{"crossplane.io/paused": "true"}
	}))
	type want struct {
		differs []string
		status  map[string][]string
		fatal   []string
		pinned  []string
	}
	cases := map[string]struct {
		reason  string
		fleet   string
		current string
		next    string
		env     []string
		want    want
	}{
		"SameCompositions": {
			reason:  "A release whose Compositions are the current ones renders every XR the same.",
			current: releaseCompositions(t, same, shipped...),
			next:    releaseCompositions(t, same, shipped...),
		},
		"ReleaseName": {
			reason:  "A release that only names itself in its step's Input changes every XR's status.platformRelease and its PlatformRelease condition, and composes nothing differently.",
			current: releaseCompositions(t, named("r1"), shipped...),
			next:    releaseCompositions(t, named("r2"), shipped...),
			want: want{
				differs: []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp", "XCluster aws-legacy", "XCluster azure-legacy", "XCluster gcp-legacy"},
				status: map[string][]string{
					"Cluster team-edge/aws": {"status.platformRelease: r1 -> r2"}, "Cluster team-edge/azure": {"status.platformRelease: r1 -> r2"}, "Cluster team-edge/gcp": {"status.platformRelease: r1 -> r2"},
					"XCluster aws-legacy": {"status.platformRelease: r1 -> r2"}, "XCluster azure-legacy": {"status.platformRelease: r1 -> r2"}, "XCluster gcp-legacy": {"status.platformRelease: r1 -> r2"},
				},
			},
		},
		"Pinned": {
			reason:  "An XR that pins its revision (Manual) or pauses is marked pinned (the rollout will not move it) and compared all the same, for when its owner unpins it.",
			fleet:   pinned,
			current: releaseCompositions(t, named("r1"), shipped...),
			next:    releaseCompositions(t, named("r2"), shipped...),
			want: want{
				differs: []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp", "XCluster aws-legacy", "XCluster azure-legacy", "XCluster gcp-legacy"},
				status: map[string][]string{
					"Cluster team-edge/aws": {"status.platformRelease: r1 -> r2"}, "Cluster team-edge/azure": {"status.platformRelease: r1 -> r2"}, "Cluster team-edge/gcp": {"status.platformRelease: r1 -> r2"},
					"XCluster aws-legacy": {"status.platformRelease: r1 -> r2"}, "XCluster azure-legacy": {"status.platformRelease: r1 -> r2"}, "XCluster gcp-legacy": {"status.platformRelease: r1 -> r2"},
				},
				pinned: []string{"Cluster team-edge/gcp", "XCluster azure-legacy"},
			},
		},
		"TwoStepVariant": {
			reason:  "A release that moves the namespaced Clusters to the two-step Composition (function-environment-configs merges the environment into the context) composes them the same; their status no longer names the EnvironmentConfigs they read, which the function sees only merged.",
			current: releaseCompositions(t, same, shipped...),
			next:    releaseCompositions(t, same, "cluster/composition-environment.yaml", "cluster-legacy/composition.yaml"),
			want: want{
				differs: []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp"},
				status:  map[string][]string{"Cluster team-edge/aws": {"status.environment"}, "Cluster team-edge/azure": {"status.environment"}, "Cluster team-edge/gcp": {"status.environment"}},
			},
		},
		"EnvironmentStepFails": {
			reason:  "A release whose function-environment-configs step references a config that does not exist fails each XR of that Composition before this function runs: a Fatal on the namespaced Clusters.",
			current: releaseCompositions(t, same, shipped...),
			next: releaseCompositions(t, func(c xpsim.Object) {
				if env, _ := c["spec"].(map[string]any)["pipeline"].([]any)[0].(map[string]any)["input"].(map[string]any); env["apiVersion"] == xpsim.EnvStepAPIVersion {
					env["spec"] = map[string]any{"environmentConfigs": []any{map[string]any{"ref": map[string]any{"name": "gone"}}}}
				}
			}, "cluster/composition-environment.yaml", "cluster-legacy/composition.yaml"),
			want: want{
				differs: []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp"},
				fatal:   []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp"},
			},
		},
		"OtherEnvironment": {
			reason:  "A release whose Compositions read another environment, whose GCP layer no longer supports the GKE minor the Clusters run, is refused on both GCP Clusters; the others compose the same, from EnvironmentConfigs of other names.",
			current: releaseCompositions(t, same, shipped...),
			next:    releaseCompositions(t, readsEnvironment("cluster-platform-r3"), shipped...),
			env:     []string{r3env},
			want: want{
				differs: []string{"Cluster team-edge/aws", "Cluster team-edge/azure", "Cluster team-edge/gcp", "XCluster aws-legacy", "XCluster azure-legacy", "XCluster gcp-legacy"},
				status: map[string][]string{
					"Cluster team-edge/aws": envNames, "Cluster team-edge/azure": envNames, "XCluster aws-legacy": envNames, "XCluster azure-legacy": envNames,
				},
				fatal: []string{"Cluster team-edge/gcp", "XCluster gcp-legacy"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if tc.fleet == "" {
				tc.fleet = fleet
			}
			cmd := &PreviewCmd{
				Fleet: tc.fleet, Env: append([]string{"examples/envconfigs"}, tc.env...), Required: []string{"examples/spend"}, JSON: true,
				Compositions: []string{tc.current}, ReleaseCompositions: []string{tc.next}, out: &out, progress: &bytes.Buffer{},
			}
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			var report preview.ReleaseReport
			if err := json.Unmarshal(out.Bytes(), &report); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			got := want{status: map[string][]string{}}
			for _, im := range report.XRs {
				if im.Refused != "" {
					t.Errorf("%s: the current release refuses it: %s", im.XR, im.Refused)
				}
				if len(im.Added)+len(im.Changed)+len(im.Dropped)+len(im.Removed)+len(im.Held) > 0 {
					t.Errorf("%s: added %v, changed %v, dropped %v, removed %v, held %v: the releases compose the same", im.XR, im.Added, im.Changed, im.Dropped, im.Removed, im.Held)
				}
				if im.Differs {
					got.differs = append(got.differs, im.XR)
				}
				for _, f := range im.Status {
					switch {
					case f.Path == "status.platformRelease":
						got.status[im.XR] = append(got.status[im.XR], f.String())
					case !strings.HasPrefix(f.Path, "status.conditions"):
						got.status[im.XR] = append(got.status[im.XR], f.Path)
					}
				}
				if im.Fatal != "" {
					got.fatal = append(got.fatal, im.XR)
				}
				if im.Pinned {
					got.pinned = append(got.pinned, im.XR)
				}
			}
			slices.Sort(got.differs)
			slices.Sort(got.fatal)
			slices.Sort(got.pinned)
			if len(got.status) == 0 {
				got.status = nil
			}
			if report.Total.XRs != 6 {
				t.Errorf("%s\ntotal %+v, want 6 XRs", tc.reason, report.Total)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\npreview --fleet --compositions --release-compositions: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPreviewReleaseCompositionsRefused names what is wrong with a release
// preview's Compositions.
func TestPreviewReleaseCompositionsRefused(t *testing.T) {
	fleet := releaseFleet(t)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "xrd.yaml"), []byte("apiVersion: apiextensions.crossplane.io/v2\nkind: CompositeResourceDefinition\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	shipped := releaseCompositions(t, func(xpsim.Object) {}, "cluster/composition.yaml", "cluster-legacy/composition.yaml")
	cases := map[string]struct {
		reason       string
		noFleet      bool
		current, new []string
		want         string
	}{
		"NoFleet": {
			reason:  "A release's Compositions are previewed over a fleet.",
			noFleet: true,
			current: []string{shipped},
			new:     []string{shipped},
			want:    "--release, --compositions and --release-compositions preview a release over a fleet: name its folder with --fleet",
		},
		"CurrentOnly": {
			reason:  "The current release's Compositions alone preview nothing.",
			current: []string{shipped},
			want:    "--compositions are the current release's: name the new one with --release or --release-compositions",
		},
		"NoCurrent": {
			reason: "New Compositions are compared with the current ones, which must be named.",
			new:    []string{shipped},
			want:   "--release-compositions needs --compositions, the current release's Compositions, to render both releases alike",
		},
		"NoComposition": {
			reason:  "A folder with no Composition in it is named.",
			current: []string{shipped},
			new:     []string{empty},
			want:    "--release-compositions: no apiextensions.crossplane.io/v1 Composition in " + empty,
		},
		"KindNotComposed": {
			reason:  "Compositions that leave out a kind of the fleet name the XR and the kind.",
			current: []string{shipped},
			new:     []string{releaseCompositions(t, func(xpsim.Object) {}, "cluster/composition.yaml")},
			want:    "aws-legacy.yaml: the new release: these Compositions hold none for legacy.platform.example.org/XCluster",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := &PreviewCmd{Fleet: fleet, Env: []string{"examples/envconfigs"}, Required: []string{"examples/spend"}, Compositions: tc.current, ReleaseCompositions: tc.new, out: &bytes.Buffer{}, progress: &bytes.Buffer{}}
			if tc.noFleet {
				cmd.Fleet, cmd.Files = "", []string{"examples/gcp/cluster.yaml"}
			}
			err := cmd.Run()
			if diff := cmp.Diff(tc.want, errString(err)); diff != "" {
				t.Errorf("%s\nRun(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
