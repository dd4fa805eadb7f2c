package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
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
			w, err := world(env, required)
			if err != nil {
				t.Fatal(err)
			}
			w.InContext = folder == "compat"
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
func goldenDesired(t *testing.T, path string) map[string]fntest.Object {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a golden file of this repository
	if err != nil {
		t.Fatal(err)
	}
	var rsp struct {
		Desired struct {
			Resources map[string]struct {
				Resource fntest.Object `json:"resource"`
			} `json:"resources"`
		} `json:"desired"`
	}
	if err := yaml.Unmarshal(b, &rsp); err != nil {
		t.Fatal(err)
	}
	out := map[string]fntest.Object{}
	for name, r := range rsp.Desired.Resources {
		out[name] = r.Resource
	}
	return out
}

// TestPreviewFleet writes 51 XRs that leave privateCluster to the
// environment (17 per cloud, namespaced and legacy), and previews a
// baseline that turns privateCluster off and raises the ingress replicas:
// every XR holds its NAT, router and private zone (only its spec may remove
// them), nothing is removed, the ingress releases change, and the JSON
// report says so.
func TestPreviewFleet(t *testing.T) {
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet")
	if err := os.MkdirAll(fleet, 0o750); err != nil {
		t.Fatal(err)
	}
	for i := range 51 {
		fixture := []func(...func(fntest.Object)) fntest.Object{fntest.GCPXR, fntest.AWSXR, fntest.AzureXR}[i%3]
		mutate := []func(fntest.Object){fntest.Set("metadata.name", fmt.Sprintf("team-%02d", i))}
		if i%2 == 1 {
			mutate = append(mutate, fntest.Legacy)
		}
		b, err := yaml.Marshal(fixture(mutate...))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fleet, fmt.Sprintf("xr-%02d.yaml", i)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	updated := filepath.Join(dir, "env-new")
	if err := os.MkdirAll(updated, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, o := range fntest.MustLoad("examples/envconfigs") {
		data := o["data"].(map[string]any)
		if o["metadata"].(map[string]any)["name"] == "cluster-platform-baseline" {
			data["privateCluster"] = false
		}
		if o["metadata"].(map[string]any)["name"] == "cluster-platform-planetype-production" {
			data["ingress"] = map[string]any{"replicas": 5.0}
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(updated, o["metadata"].(map[string]any)["name"].(string)+".yaml"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := &PreviewCmd{Fleet: fleet, Env: []string{"examples/envconfigs"}, EnvNew: []string{updated}, Required: []string{"examples/spend"}, JSON: true, out: &out, progress: &bytes.Buffer{}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var report preview.FleetReport
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if report.Total.XRs != 51 || report.Total.Removed != 0 || report.Total.Fatals != 0 {
		t.Fatalf("total: %+v, want 51 XRs, none removed, no Fatal", report.Total)
	}
	for _, im := range report.XRs {
		held := strings.Join(im.Held, ",")
		for _, want := range []string{"nat", "private-dns-zone"} {
			if !strings.Contains(","+held+",", ","+want+",") {
				t.Errorf("%s: held %v, want %s held", im.XR, im.Held, want)
			}
		}
		if !strings.Contains(strings.Join(im.Changed, ","), "release-ingress-nginx") {
			t.Errorf("%s: changed %v, want release-ingress-nginx (5 replicas)", im.XR, im.Changed)
		}
	}
	t.Logf("fleet of %d XRs: %d held, %d changed, %d added, %d removed", report.Total.XRs, report.Total.Held, report.Total.Changed, report.Total.Added, report.Total.Removed)
}
