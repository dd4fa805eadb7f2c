package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// TestPreviewExamples previews every example XR (each module, each cloud,
// namespaced and legacy, the seeds', the original platform's claims with
// their EnvironmentConfigs in the context) from nothing and checks that the
// converged stack is the one the golden files hold for the example's
// converged render: preview runs the same function, so what it shows is
// what Crossplane will get.
func TestPreviewExamples(t *testing.T) {
	run := runner()
	goldens, err := filepath.Glob("internal/modules/*/testdata/golden/*.converged.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, golden := range goldens {
		name := strings.TrimSuffix(filepath.Base(golden), ".converged.yaml")
		folder, file, _ := strings.Cut(name, "-")
		example := filepath.Join("examples", folder, file+".yaml")
		if !exists(example) {
			continue // a module's golden of no example file, e.g. the budget module's
		}
		n++
		t.Run(example, func(t *testing.T) {
			x := fntest.MustLoad(example)[0]
			labels, _ := x["metadata"].(map[string]any)["labels"].(map[string]any)
			cloud, _ := labels["cloud"].(string)
			env := []string{"examples/envconfigs"}
			if folder == "compat" {
				env = []string{"examples/compat/envconfigs"}
			}
			required := []string{"examples/spend"}
			if exists(filepath.Join("examples", cloud, "required")) {
				required = append(required, filepath.Join("examples", cloud, "required"))
			}
			w, err := world(env, required, folder == "compat", io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			st, err := preview.Converge(run, w, x, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Converged || st.Fatal != "" {
				t.Fatalf("not converged after %d rounds: %s", st.Rounds, st.Fatal)
			}
			if diff := cmp.Diff(goldenDesired(t, golden), st.Resources); diff != "" {
				t.Errorf("preview of %s: -golden +preview:\n%s", example, diff)
			}
		})
	}
	if n < 24 {
		t.Errorf("previewed %d examples, want every one of the 24 example XRs", n)
	}
}

// goldenDesired reads the desired composed resources of a golden response.
func goldenDesired(t *testing.T, path string) map[string]xpsim.Object {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a golden file of this repository
	if err != nil {
		t.Fatal(err)
	}
	var rsp struct {
		Desired struct {
			Resources map[string]struct {
				Resource xpsim.Object `json:"resource"`
			} `json:"resources"`
		} `json:"desired"`
	}
	if err := yaml.Unmarshal(b, &rsp); err != nil {
		t.Fatal(err)
	}
	out := map[string]xpsim.Object{}
	for name, r := range rsp.Desired.Resources {
		out[name] = r.Resource
	}
	return out
}

// TestPreviewFleet writes 51 XRs that leave privateCluster to the
// environment (17 per cloud, namespaced and legacy), and previews a
// baseline that turns privateCluster off and raises the ingress replicas:
// nothing is removed, nothing is refused; every cluster holds its private
// zone (only its spec may remove it) and keeps its NAT while its nodes
// still use it (GKE's keep their private nodes, and with them their Cloud
// NAT), and its ingress release changes; and the JSON report says so.
func TestPreviewFleet(t *testing.T) {
	dir, fleet := fleetDir(t)
	for i := range 51 {
		fixture := []func(...func(xpsim.Object)) xpsim.Object{fntest.GCPXR, fntest.AWSXR, fntest.AzureXR}[i%3]
		mutate := []func(xpsim.Object){fntest.Set("metadata.name", fmt.Sprintf("team-%02d", i))}
		if i%2 == 1 {
			mutate = append(mutate, fntest.Legacy)
		}
		writeYAML(t, filepath.Join(fleet, fmt.Sprintf("xr-%02d.yaml", i)), fixture(mutate...))
	}
	updated := changedEnvironment(t, filepath.Join(dir, "env-new"), map[string]func(data map[string]any){
		"cluster-platform-baseline":             func(data map[string]any) { data["privateCluster"] = false },
		"cluster-platform-planetype-production": func(data map[string]any) { data["ingress"] = map[string]any{"replicas": 5.0} },
	})
	report, _ := previewFleet(t, fleet, updated)
	if report.Total.XRs != 51 || report.Total.Removed != 0 || report.Total.Fatals != 0 {
		t.Fatalf("total: %+v, want 51 XRs, none removed, no Fatal", report.Total)
	}
	for _, im := range report.XRs {
		if held := strings.Join(im.Held, ","); !strings.Contains(","+held+",", ",private-dns-zone,") {
			t.Errorf("%s: held %v, want private-dns-zone held", im.XR, im.Held)
		}
		if !strings.Contains(strings.Join(im.Changed, ","), "release-ingress-nginx") {
			t.Errorf("%s: changed %v, want release-ingress-nginx (5 replicas)", im.XR, im.Changed)
		}
	}
	t.Logf("fleet of %d XRs: %d held, %d changed, %d added, %d removed", report.Total.XRs, report.Total.Held, report.Total.Changed, report.Total.Added, report.Total.Removed)
}

// fleetDir is a new folder for a fleet's XRs, and the temporary folder it
// is in.
func fleetDir(t *testing.T) (dir, fleet string) {
	t.Helper()
	dir = t.TempDir()
	fleet = filepath.Join(dir, "fleet")
	if err := os.MkdirAll(fleet, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir, fleet
}

// previewFleet runs preview --fleet --json over the XRs of fleet, from the
// example environment to updated, and returns the report and the output.
func previewFleet(t *testing.T, fleet, updated string) (preview.FleetReport, string) {
	t.Helper()
	return previewFleetAt(t, fleet, "examples/envconfigs", updated, "")
}

// previewFleetAt runs preview --fleet --json --now now over the XRs of
// fleet, from the environment old to updated, and returns the report and
// the output.
func previewFleetAt(t *testing.T, fleet, old, updated, now string) (preview.FleetReport, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := &PreviewCmd{Fleet: fleet, Env: []string{old}, EnvNew: []string{updated}, Required: []string{"examples/spend"}, JSON: true, Now: now, out: &out, progress: &bytes.Buffer{}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var report preview.FleetReport
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	return report, out.String()
}

// writeYAML writes o as YAML to path.
func writeYAML(t *testing.T, path string, o any) {
	t.Helper()
	b, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// changedEnvironment writes the example EnvironmentConfigs into dir, each
// config's data changed by change[its name], and returns dir.
func changedEnvironment(t *testing.T, dir string, change map[string]func(data map[string]any)) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, o := range fntest.MustLoad("examples/envconfigs") {
		name := o["metadata"].(map[string]any)["name"].(string)
		if f, ok := change[name]; ok {
			f(o["data"].(map[string]any))
		}
		writeYAML(t, filepath.Join(dir, name+".yaml"), o)
	}
	return dir
}

// TestPreviewFleetRollout previews a fleet of Clusters on the three clouds
// under an environment that moves the Kubernetes version and sets three
// waves, preview standing in for the fleet controller as a control plane
// would: it plans each XR under the new environment, rules on the fleet as
// the API server then holds it (fleet.Rule, at --now), and plans each
// Cluster again with its ruling, delivered as the function requires it.
// preview --fleet --json places each Cluster in its wave as rollout.WaveOf
// does (an unlabelled legacy XCluster, and one labelled with a wave that
// does not admit its namespace, in the last), with what it runs and the
// controller's ruling on it; each wave's gate is rollout.GateOf's on the
// same fleet; and each XR's counts are what its ruling lets through: a
// control plane changes only where the ruling is Adopt.
func TestPreviewFleetRollout(t *testing.T) {
	wave := func(w string) func(xpsim.Object) {
		return func(o xpsim.Object) { o["metadata"].(map[string]any)["labels"].(map[string]any)[rollout.Label] = w }
	}
	// readySince is the status of a Cluster as kubectl prints it: Ready
	// since 10:00.
	readySince := fntest.Set("status", map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-30T10:00:00Z"},
	}})
	noDomain := fntest.Set("spec.parameters.domain", nil)
	fleetXRs := map[string]xpsim.Object{
		"canary.yaml":       fntest.GCPXR(wave("canary"), readySince),
		"staging.yaml":      fntest.AzureXR(fntest.Set("metadata.namespace", "team-a"), fntest.Set("metadata.name", "web"), noDomain, wave("staging")),
		"not-admitted.yaml": fntest.AWSXR(fntest.Set("metadata.name", "api"), wave("staging")),
		"unlabelled.yaml":   fntest.AWSXR(fntest.Set("metadata.name", "legacy"), fntest.Legacy),
	}
	// waves are the new environment's: canary soaks for soak.
	waves := func(soak string) []any {
		return []any{
			map[string]any{"name": "canary", "namespaces": []any{"team-edge"}, "soak": soak},
			map[string]any{"name": "staging", "namespaces": []any{"team-a"}, "maxUnavailable": 1.0},
			map[string]any{"name": "production", "requiresApproval": true},
		}
	}
	type args struct {
		// canaryAhead makes the GCP layer ask for 1.34 in both
		// environments: the canary runs it before the change.
		canaryAhead bool
		soak, now   string
	}
	type cluster struct{ Wave, Cloud, Key, Runs, Verdict string }
	// clusters are the fleet's Clusters in wave order: the canary running
	// canaryRuns and ruled canary, staging's ruled staging, and
	// production's two, which hold.
	clusters := func(canaryRuns, canary, staging string) []cluster {
		return []cluster{
			{"canary", "gcp", "team-edge/edge", canaryRuns, canary},
			{"staging", "azure", "team-a/web", "1.33", staging},
			{"production", "aws", "/legacy", "1.33", "Hold"},
			{"production", "aws", "team-edge/api", "1.33", "Hold"},
		}
	}
	// moved says whose control plane moves: the canary's or staging's.
	moved := func(canary, staging bool) map[string]bool {
		return map[string]bool{"Cluster team-edge/edge": canary, "Cluster team-a/web": staging, "Cluster team-edge/api": false, "XCluster legacy": false}
	}
	type want struct {
		gates    []string
		clusters []cluster
		// moved are the XRs whose control plane the change moves now.
		moved map[string]bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"CanaryFirst": {
			reason: "Every Cluster runs 1.33: the canary adopts 1.34 and its control plane moves; staging holds for it; production holds too, the unlabelled legacy XCluster and the Cluster labelled staging from a namespace staging does not admit with it.",
			args:   args{},
			want: want{
				gates:    []string{"Adopt", "Hold", "Hold"},
				clusters: clusters("1.33", "Adopt", "Hold"),
				moved:    moved(true, false),
			},
		},
		"CanaryDone": {
			reason: "The canary runs 1.34 Ready already (its cloud's layer asks for it): it keeps it, staging adopts 1.34 and its control plane moves; production holds for staging.",
			args:   args{canaryAhead: true},
			want: want{
				gates:    []string{"Keep", "Adopt", "Hold"},
				clusters: clusters("1.34", "Keep", "Adopt"),
				moved:    moved(false, true),
			},
		},
		"CanarySoaking": {
			reason: "The canary runs 1.34, Ready since 10:00, and soaks for an hour: at 10:30 (--now) staging holds until 11:00, and nothing moves.",
			args:   args{canaryAhead: true, soak: "1h", now: "2026-11-30T10:30:00Z"},
			want: want{
				gates:    []string{"Keep", "Hold", "Hold"},
				clusters: clusters("1.34", "Keep", "Hold until 2026-11-30T11:00:00Z"),
				moved:    moved(false, false),
			},
		},
		"CanarySoaked": {
			reason: "At noon (--now) the canary's hour has passed: staging adopts 1.34.",
			args:   args{canaryAhead: true, soak: "1h", now: "2026-11-30T12:00:00Z"},
			want: want{
				gates:    []string{"Keep", "Adopt", "Hold"},
				clusters: clusters("1.34", "Keep", "Adopt"),
				moved:    moved(false, true),
			},
		},
		"NoClock": {
			reason: "Without a clock (--now 0001-01-01T00:00:00Z) no soak has passed: staging holds.",
			args:   args{canaryAhead: true, soak: "1h", now: "0001-01-01T00:00:00Z"},
			want: want{
				gates:    []string{"Keep", "Hold", "Hold"},
				clusters: clusters("1.34", "Keep", "Hold until 2026-11-30T11:00:00Z"),
				moved:    moved(false, false),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir, fleet := fleetDir(t)
			for file, x := range fleetXRs {
				writeYAML(t, filepath.Join(fleet, file), x)
			}
			ahead := func(data map[string]any) {
				if tc.args.canaryAhead {
					data["version"] = "1.34"
				}
			}
			old := changedEnvironment(t, filepath.Join(dir, "env-old"), map[string]func(data map[string]any){"cluster-platform-cloud-gcp": ahead})
			updated := changedEnvironment(t, filepath.Join(dir, "env-new"), map[string]func(data map[string]any){
				"cluster-platform-cloud-gcp": ahead,
				"cluster-platform-baseline": func(data map[string]any) {
					data["version"] = "1.34"
					data["rollout"] = map[string]any{"waves": waves(tc.args.soak)}
				},
			})
			report, out := previewFleetAt(t, fleet, old, updated, tc.args.now)
			if report.Total.Fatals != 0 || report.Rollout == nil {
				t.Fatalf("want no Fatal and a rollout, got:\n%s", out)
			}
			got := want{moved: map[string]bool{}}
			for _, w := range report.Rollout.Waves {
				got.gates = append(got.gates, w.Verdict)
				for _, c := range w.Clouds {
					for _, m := range c.Clusters {
						if !m.Ready {
							t.Errorf("%s/%s: not Ready: %s", m.Namespace, m.Name, m.Reason)
						}
						got.clusters = append(got.clusters, cluster{w.Name, c.Cloud, m.Namespace + "/" + m.Name, m.Runs, strings.TrimSuffix(m.Verdict+" until "+m.Until, " until ")})
					}
				}
			}
			for _, im := range report.XRs {
				got.moved[im.XR] = slices.Contains(im.Changed, "cluster")
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\n%s", tc.reason, diff, out)
			}
			if r := report.Rollout; r.From != "1.33" || r.Target != "1.34" || !r.Waves[2].RequiresApproval || r.Waves[2].Approved {
				t.Errorf("rollout from %s to %s, production requires approval %t, approved %t: want 1.33 to 1.34, approval required, not given", r.From, r.Target, r.Waves[2].RequiresApproval, r.Waves[2].Approved)
			}
		})
	}
}

// TestPreviewEnvironmentAPIVersion checks what preview does with
// EnvironmentConfigs written as apiextensions.crossplane.io/v1alpha1:
// delivered as required resources, crossplane render would not find them,
// so preview refuses them, naming the file, the object and the fix; merged
// into the context (--env-context, the original platform's configs of
// examples/compat) it previews with a warning for each.
func TestPreviewEnvironmentAPIVersion(t *testing.T) {
	dir := t.TempDir()
	for _, o := range fntest.MustLoad("examples/envconfigs") {
		name := o["metadata"].(map[string]any)["name"].(string)
		if name == "cluster-platform-cloud-gcp" {
			o["apiVersion"] = envcfg.OldAPIVersion
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := func(file, name string) string {
		return fmt.Sprintf("%s: EnvironmentConfig %q is apiextensions.crossplane.io/v1alpha1", file, name)
	}
	type want struct {
		err      string
		warnings []string
		output   string
	}
	cases := map[string]struct {
		reason string
		cmd    PreviewCmd
		want   want
	}{
		"RequiredRefused": {
			reason: "As required resources (the shipped Composition, crossplane render --required-resources), a v1alpha1 config is never found: preview refuses it and says how to fix it.",
			cmd:    PreviewCmd{Files: []string{"examples/gcp/cluster.yaml"}, Env: []string{dir}, Required: []string{"examples/spend"}},
			want:   want{err: "cannot use the EnvironmentConfigs: " + old(filepath.Join(dir, "cluster-platform-cloud-gcp.yaml"), "cluster-platform-cloud-gcp") + ". " + envcfg.APIVersionHint},
		},
		"ContextWarns": {
			reason: "Merged into the context, the original platform's v1alpha1 configs preview, with one warning naming each.",
			cmd:    PreviewCmd{Files: []string{"examples/compat/cluster-gcp.yaml"}, Env: []string{"examples/compat/envconfigs"}, EnvContext: true, Required: []string{"examples/spend"}},
			want: want{
				warnings: []string{"Warning: " + strings.Join([]string{
					old("examples/compat/envconfigs/baseline.yaml", "defaults"),
					old("examples/compat/envconfigs/cloud-aws.yaml", "aws-defaults"),
					old("examples/compat/envconfigs/cloud-azure.yaml", "azure-defaults"),
					old("examples/compat/envconfigs/cloud-gcp.yaml", "gcp-defaults"),
					old("examples/compat/envconfigs/planetype-production.yaml", "production"),
				}, "; ") + ". " + envcfg.APIVersionHint + " (--env-context merges them into the pipeline context all the same)"},
				output: "XCluster prod-cluster-",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, progress bytes.Buffer
			cmd := tc.cmd
			cmd.Output, cmd.out, cmd.progress = "table", &out, &progress
			got := ""
			if err := cmd.Run(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, got); diff != "" {
				t.Errorf("%s\nRun(): error: -want, +got:\n%s", tc.reason, diff)
			}
			var warnings []string
			for l := range strings.Lines(progress.String()) {
				warnings = append(warnings, strings.TrimSuffix(l, "\n"))
			}
			if diff := cmp.Diff(tc.want.warnings, warnings); diff != "" {
				t.Errorf("%s\nRun(): warnings: -want, +got:\n%s", tc.reason, diff)
			}
			if !strings.HasPrefix(out.String(), tc.want.output) {
				t.Errorf("%s\nRun(): output starts %q, want %q", tc.reason, firstLine(out.String()), tc.want.output)
			}
		})
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestPreviewMatchesRender renders the converged stacks of three examples
// with the crossplane CLI (bin/crossplane, built by make tools; skipped
// without it), the function served in process, and checks that preview -o
// yaml printed the same objects: the metadata Crossplane sets included.
// The only difference allowed is what crossplane render cannot know, the
// XR status the function reads from connection details (AKS's CA). make
// render checks every example the same way.
func TestPreviewMatchesRender(t *testing.T) {
	const crossplane = "bin/crossplane"
	if !exists(crossplane) {
		t.Skip("no " + crossplane + ": make tools builds it")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, NewFunction(logging.NewNopLogger(), response.Options{TTLConverging: 15 * time.Second, TTLReady: 5 * time.Minute}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	dir := t.TempDir()
	functions := fntest.MustLoad("examples/functions.yaml")[0]
	functions["metadata"].(map[string]any)["annotations"].(map[string]any)["render.crossplane.io/runtime-development-target"] = lis.Addr().String()
	b, err := yaml.Marshal(functions)
	if err != nil {
		t.Fatal(err)
	}
	functionsFile := filepath.Join(dir, "functions.yaml")
	if err := os.WriteFile(functionsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// crossplane render takes one folder of required resources.
	required := func(cloud string) string {
		d := filepath.Join(dir, "required-"+cloud)
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
		objs := fntest.MustLoad("examples/envconfigs", "examples/spend", filepath.Join("examples", cloud, "required"))
		b, err := xpsim.YAMLList(objs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "all.yaml"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}

	cases := map[string]struct {
		reason      string
		xr          string
		composition string
		cloud       string
		extra       []string
	}{
		"Namespaced": {
			reason: "A namespaced Cluster: names, namespace, annotations, labels, owner references and the XR's conditions as crossplane render sets them.",
			xr:     "examples/gcp/cluster.yaml", composition: "apis/cluster/composition.yaml", cloud: "gcp",
		},
		"Legacy": {
			reason: "A claim's cluster-scoped XR: its claim labels pass to every composed resource.",
			xr:     "examples/gcp/legacy.yaml", composition: "apis/cluster-legacy/composition.yaml", cloud: "gcp",
		},
		"ConnectionDetails": {
			reason: "AKS's CA comes from the cluster's connection details, which crossplane render does not pass: only preview has it.",
			xr:     "examples/azure/cluster.yaml", composition: "apis/cluster/composition.yaml", cloud: "azure",
			extra: []string{"status.clusterCA"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := required(tc.cloud)
			previewAs := func(output string) []byte {
				var out bytes.Buffer
				cmd := &PreviewCmd{Files: []string{tc.xr}, Env: []string{"examples/envconfigs"}, Required: []string{req}, Output: output, out: &out, progress: io.Discard}
				if err := cmd.Run(); err != nil {
					t.Fatal(err)
				}
				return out.Bytes()
			}
			observed := filepath.Join(t.TempDir(), "observed.yaml")
			if err := os.WriteFile(observed, previewAs("observed"), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			render := exec.Command(crossplane, "render", tc.xr, tc.composition, functionsFile, //nolint:gosec // our own CLI and examples
				"--required-resources="+req, "--include-full-xr", "--observed-resources="+observed)
			render.Stdout, render.Stderr = &stdout, &stderr
			if err := render.Run(); err != nil {
				t.Fatalf("crossplane render: %v\n%s", err, stderr.String())
			}
			previewed, err := xpsim.Parse(previewAs("yaml"))
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := xpsim.Parse(stdout.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			extra, err := preview.SameAsRender(previewed, rendered)
			if err != nil {
				t.Fatalf("%s\npreview -o yaml is not crossplane render's: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.extra, extra); diff != "" {
				t.Errorf("%s\nXR status only preview has: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
