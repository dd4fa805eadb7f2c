package gitops

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds" // the clouds the form offers
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

const root = "../.."

func load(t *testing.T, path string) xpsim.Object {
	t.Helper()
	objs, err := xpsim.Load(filepath.Join(root, path))
	if err != nil || len(objs) == 0 {
		t.Fatalf("cannot load %s: %v", path, err)
	}
	return objs[0]
}

// dig walks a schema by property names; "*" enters additionalProperties.
func dig(schema map[string]any, path ...string) map[string]any {
	cur := schema
	for _, p := range path {
		if p == "*" {
			cur, _ = cur["additionalProperties"].(map[string]any)
			continue
		}
		props, _ := cur["properties"].(map[string]any)
		cur, _ = props[p].(map[string]any)
	}
	return cur
}

// TestBackstageForm checks that every field of each Backstage template's
// form exists in its XRD with the same type, enum, pattern and bounds, and
// that fields the XRD cannot constrain (labels) offer only what the function
// accepts.
func TestBackstageForm(t *testing.T) {
	params := []string{"spec", "parameters"}
	cases := map[string]struct {
		template, xrd string
		// paths say where each form field goes in the XR.
		paths map[string][]string
		// sizes checks the size classes a field offers.
		sizes map[string]func(t *testing.T, field, xrd map[string]any)
	}{
		"Cluster": {
			template: "examples/gitops/backstage/template.yaml", xrd: "apis/cluster/definition.yaml",
			paths: map[string][]string{
				"location":    append(params, "location"),
				"version":     append(params, "version"),
				"domain":      append(params, "domain"),
				"size":        append(params, "pools", "*", "size"),
				"minNodes":    append(params, "pools", "*", "minNodes"),
				"maxNodes":    append(params, "pools", "*", "maxNodes"),
				"limitUsd":    append(params, "budget", "limitUsd"),
				"enforcement": append(params, "budget", "enforcement"),
			},
			sizes: map[string]func(t *testing.T, field, xrd map[string]any){"size": checkSizes("sizes")},
		},
		"AppEnvironment": {
			template: "examples/gitops/backstage/appenvironment-template.yaml", xrd: "apis/appenvironment/definition.yaml",
			paths: map[string][]string{
				"cluster":      append(params, "clusterRef", "name"),
				"image":        append(params, "backend", "image"),
				"port":         append(params, "backend", "port"),
				"replicas":     append(params, "backend", "replicas"),
				"host":         append(params, "ingress", "host"),
				"databaseSize": append(params, "database", "size"),
				"bucket":       nil, // present or not: an empty object
				"limitUsd":     append(params, "budget", "limitUsd"),
				"enforcement":  append(params, "budget", "enforcement"),
			},
			sizes: map[string]func(t *testing.T, field, xrd map[string]any){"databaseSize": checkSizes("database", "tiers")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xrd := load(t, tc.xrd)
			schema := xrd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
			checkForm(t, load(t, tc.template), schema, tc.paths, tc.sizes)
		})
	}
}

// checkForm checks a template's form against an XRD's schema.
func checkForm(t *testing.T, tmpl, schema map[string]any, paths map[string][]string, sizes map[string]func(t *testing.T, field, xrd map[string]any)) {
	t.Helper()
	labels := map[string]bool{"cloud": true, "planeId": true, "planeType": true}
	seen := map[string]bool{}
	for _, page := range tmpl["spec"].(map[string]any)["parameters"].([]any) {
		for name, f := range page.(map[string]any)["properties"].(map[string]any) {
			field := f.(map[string]any)
			seen[name] = true
			p, mapped := paths[name]
			switch {
			case name == "name":
				// metadata.name, the cloud name every cloud layer checks.
				if field["pattern"] != "^[a-z]([-a-z0-9]*[a-z0-9])?$" || field["maxLength"] != 40.0 {
					t.Errorf("form field name: pattern %v, maxLength %v; want the name rule of every cloud (^[a-z]([-a-z0-9]*[a-z0-9])?$, 40)", field["pattern"], field["maxLength"])
				}
			case name == "cloud":
				if diff := cmp.Diff(registry.Clouds(), strings.Fields(strings.Trim(fmt.Sprint(field["enum"]), "[]"))); diff != "" {
					t.Errorf("form field cloud: enum must be the registered clouds: -want, +got:\n%s", diff)
				}
			case labels[name]:
				// A label the XRD does not constrain.
			case !mapped:
				t.Errorf("form field %s has no place in the XRD", name)
			case p == nil:
				// A switch for a part the XRD takes as an empty object.
			default:
				x := draft07(dig(schema, p...))
				if x == nil {
					t.Errorf("form field %s: %s is not in the XRD", name, strings.Join(p, "."))
					continue
				}
				for _, k := range []string{"type", "enum", "pattern", "minimum", "exclusiveMinimum", "maximum", "minLength", "maxLength"} {
					if x[k] == nil {
						continue
					}
					if diff := cmp.Diff(x[k], field[k]); diff != "" {
						t.Errorf("form field %s: %s differs from the XRD's %s: -xrd, +form:\n%s", name, k, strings.Join(p, "."), diff)
					}
				}
				if check, ok := sizes[name]; ok {
					check(t, field, x)
				}
			}
		}
	}
	for name := range paths {
		if !seen[name] {
			t.Errorf("the form lacks field %s", name)
		}
	}
}

// draft07 turns an OpenAPI 3.0 bound (minimum with a boolean
// exclusiveMinimum), as XRDs write it, into the JSON Schema draft-07 form
// Backstage's forms use (exclusiveMinimum as the number).
func draft07(s map[string]any) map[string]any {
	if s == nil || s["exclusiveMinimum"] != true {
		return s
	}
	out := maps.Clone(s)
	out["exclusiveMinimum"] = out["minimum"]
	delete(out, "minimum")
	return out
}

// checkSizes checks that every size a form offers matches the XRD's
// pattern and is a size class of every cloud's example EnvironmentConfig at
// the supplied key.
func checkSizes(key ...string) func(t *testing.T, field, xrd map[string]any) {
	return func(t *testing.T, field, xrd map[string]any) {
		t.Helper()
		re := regexp.MustCompile(xrd["pattern"].(string))
		for _, s := range field["enum"].([]any) {
			if !re.MatchString(s.(string)) {
				t.Errorf("form size %q does not match the XRD's pattern %s", s, re)
			}
			for _, cloud := range registry.Clouds() {
				sizes := load(t, "examples/envconfigs/cloud-"+cloud+".yaml")["data"]
				for _, k := range key {
					sizes = sizes.(map[string]any)[k]
				}
				if _, ok := sizes.(map[string]any)[s.(string)]; !ok {
					t.Errorf("form size %q is not a size class of cloud %s (%s: %v)", s, cloud, strings.Join(key, "."), slices.Sorted(maps.Keys(sizes.(map[string]any))))
				}
			}
		}
	}
}

// TestArgoApplications checks the Argo CD Applications: each syncs a path
// that exists, the waves order the function before the APIs before the
// environment before the XRs, and the XRs skip the dry run of kinds that do
// not exist yet.
func TestArgoApplications(t *testing.T) {
	rootApp := load(t, "examples/gitops/argocd/root.yaml")
	apps, err := xpsim.Load(filepath.Join(root, rootApp["spec"].(map[string]any)["source"].(map[string]any)["path"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	waves := map[string]int{}
	for _, a := range append(apps, rootApp) {
		if a["apiVersion"] != "argoproj.io/v1alpha1" || a["kind"] != "Application" {
			t.Errorf("not an Argo CD Application: %v %v", a["apiVersion"], a["kind"])
			continue
		}
		meta := a["metadata"].(map[string]any)
		spec := a["spec"].(map[string]any)
		src := spec["source"].(map[string]any)
		if fi, err := os.Stat(filepath.Join(root, src["path"].(string))); err != nil || !fi.IsDir() {
			t.Errorf("Application %s syncs %s, which is not a folder of the repository", meta["name"], src["path"])
		}
		if spec["destination"] == nil || spec["project"] == nil {
			t.Errorf("Application %s needs a destination and a project", meta["name"])
		}
		if a, ok := meta["annotations"].(map[string]any); ok {
			w, err := strconv.Atoi(a["argocd.argoproj.io/sync-wave"].(string))
			if err != nil {
				t.Errorf("Application %s: sync wave: %v", meta["name"], err)
			}
			waves[src["path"].(string)] = w
		}
	}
	want := []string{"examples/install", "apis", "examples/envconfigs", "examples/gitops/clusters", "examples/gitops/environments"}
	got := slices.SortedFunc(maps.Keys(waves), func(a, b string) int { return waves[a] - waves[b] })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sync order of the synced paths: -want, +got:\n%s", diff)
	}
	for _, a := range apps {
		if p := a["spec"].(map[string]any)["source"].(map[string]any)["path"]; p != "examples/gitops/clusters" && p != "examples/gitops/environments" {
			continue
		}
		opts := fmt.Sprint(a["spec"].(map[string]any)["syncPolicy"].(map[string]any)["syncOptions"])
		if !strings.Contains(opts, "SkipDryRunOnMissingResource=true") {
			t.Errorf("the XRs' Application must skip the dry run of kinds that do not exist yet; syncOptions: %s", opts)
		}
	}
}

// TestScaffoldedClusters renders the XRs of the GitOps folder and what the
// Backstage skeleton scaffolds from the form's defaults: each must render a
// platform without a Fatal.
func TestScaffoldedClusters(t *testing.T) {
	envs := fntest.MustLoad(filepath.Join(root, "examples/envconfigs"))
	xrs := fntest.MustLoad(filepath.Join(root, "examples/gitops/clusters"))
	skeleton, err := os.ReadFile(filepath.Join(root, "examples/gitops/backstage/skeleton/${{ values.name }}.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cloud := range registry.Clouds() {
		values := map[string]string{
			"name": "scaffolded", "cloud": cloud, "planeType": "production", "version": "1.33",
			"domain": "scaffolded.prod.example.com", "size": "medium", "minNodes": "3", "maxNodes": "10",
			"limitUsd": "2500", "enforcement": "monitor-only",
			"planeId":  map[string]string{"gcp": "scaffold-project", "aws": "123456789012", "azure": "00000000-0000-0000-0000-000000000000"}[cloud],
			"location": map[string]string{"gcp": "europe-west4", "aws": "eu-west-1", "azure": "westeurope"}[cloud],
		}
		objs, err := xpsim.Parse([]byte(scaffold(string(skeleton), values)))
		if err != nil {
			t.Fatalf("the skeleton for %s does not render YAML: %v", cloud, err)
		}
		xrs = append(xrs, objs...)
	}
	for _, xr := range xrs {
		name := fmt.Sprintf("%s/%s", xr["metadata"].(map[string]any)["labels"].(map[string]any)["cloud"], xr["metadata"].(map[string]any)["name"])
		t.Run(name, func(t *testing.T) {
			req, err := xpsim.Request{XR: xr, EnvironmentConfigs: envs}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := response.New(req, 0)
			if err := cluster.Run(req, rsp, response.Options{}); err != nil {
				t.Fatalf("%s does not render: %v", name, err)
			}
			if len(rsp.GetDesired().GetResources()) == 0 {
				t.Errorf("%s renders nothing", name)
			}
		})
	}
}

var (
	reValue = regexp.MustCompile(`\$\{\{ values\.(\w+) \}\}`)
	reIf    = regexp.MustCompile(`(?s)\{%- if values\.(\w+) %\}(.*?)\{%- endif %\}`)
)

// scaffold renders the skeleton the way the template's fetch:template step
// does, for the subset of Nunjucks it uses.
func scaffold(s string, values map[string]string) string {
	s = reIf.ReplaceAllStringFunc(s, func(m string) string {
		g := reIf.FindStringSubmatch(m)
		if values[g[1]] == "" {
			return ""
		}
		return g[2]
	})
	return reValue.ReplaceAllStringFunc(s, func(m string) string { return values[reValue.FindStringSubmatch(m)[1]] })
}

// TestScaffoldedEnvironments renders the AppEnvironments of the GitOps
// folder and what the Backstage skeleton scaffolds, from the form's
// defaults and with every part, on each cloud's example Cluster: each must
// render without a Fatal.
func TestScaffoldedEnvironments(t *testing.T) {
	envs := fntest.MustLoad(filepath.Join(root, "examples/envconfigs"))
	xrs := fntest.MustLoad(filepath.Join(root, "examples/gitops/environments"))
	skeleton, err := os.ReadFile(filepath.Join(root, "examples/gitops/backstage/appenvironment-skeleton/${{ values.name }}.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cloud := range registry.Clouds() {
		for variant, extra := range map[string]map[string]string{
			"defaults": {},
			"all":      {"host": "scaffolded.prod.example.com", "databaseSize": "small", "bucket": "true", "limitUsd": "300", "enforcement": "enabled"},
		} {
			values := map[string]string{
				"name": "scaffolded-" + variant, "cloud": cloud, "planeType": "production", "cluster": "prod-cluster",
				"image": "ghcr.io/acme/app:1.0.0", "port": "8000", "replicas": "1",
				"planeId": fntest.PlaneIDs[cloud],
			}
			maps.Copy(values, extra)
			objs, err := xpsim.Parse([]byte(scaffold(string(skeleton), values)))
			if err != nil {
				t.Fatalf("the skeleton for %s does not render YAML: %v", cloud, err)
			}
			xrs = append(xrs, objs...)
		}
	}
	examples := filepath.Join(root, "examples")
	for _, xr := range xrs {
		labels := xr["metadata"].(map[string]any)["labels"].(map[string]any)
		name := fmt.Sprintf("%s/%s", labels["cloud"], xr["metadata"].(map[string]any)["name"])
		t.Run(name, func(t *testing.T) {
			extra, err := fntest.Required(examples, labels["cloud"].(string), xr, clusterref.ForAppEnvironment)
			if err != nil {
				t.Fatal(err)
			}
			req, err := xpsim.Request{XR: xr, EnvironmentConfigs: envs, Extra: extra}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := response.New(req, 0)
			if err := appenvironmentrun.Run(req, rsp, response.Options{}); err != nil {
				t.Fatalf("%s does not render: %v", name, err)
			}
			if len(rsp.GetDesired().GetResources()) == 0 {
				t.Errorf("%s renders nothing", name)
			}
		})
	}
}
