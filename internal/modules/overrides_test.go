package modules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// forceNew reads the schema extract cmd/replacegen/schema/<cloud>.tsv
// (what the providers' source says, not the registry's tables): the
// spec.forProvider paths of each kind's ForceNew attributes, blocks left
// out, and so are the rows a custom diff replaces only on a condition
// (when), whose changes the provider may make in place: each cloud's
// TestConditions and TestConditionalOverride hold those.
func forceNew(t *testing.T, cloud string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "cmd", "replacegen", "schema", cloud+".tsv")) //nolint:gosec // a test's own testdata, by cloud name
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(cols) < 7 || cols[0] == "crd_kind" || cols[2] == "-" || cols[6] == "block" || len(cols) > 7 && cols[7] != "" {
			continue
		}
		out[cols[0]] = append(out[cols[0]], cols[2])
	}
	return out
}

// observedScalar is the value the observed resource has at a
// spec.forProvider path, from its spec or else its provider's report, when
// it is a string, number or bool reached through objects only.
func observedScalar(o fntest.Object, path string) (any, bool) {
	for _, root := range [][]string{{"spec", "forProvider"}, {"status", "atProvider"}} {
		var cur any = map[string]any(o)
		for _, seg := range append(slices.Clone(root), strings.Split(path, ".")...) {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[seg]
		}
		switch cur.(type) {
		case string, float64, bool:
			return cur, true
		}
	}
	return nil, false
}

// another is a value of the same type that differs.
func another(v any) any {
	switch t := v.(type) {
	case string:
		return t + "-changed"
	case float64:
		return t + 1
	case bool:
		return !t
	}
	return nil
}

// nested builds {a: {b: {c: v}}} from a dotted path.
func nested(path string, v any) map[string]any {
	segs := strings.Split(path, ".")
	out := map[string]any{segs[len(segs)-1]: v}
	for i := len(segs) - 2; i >= 0; i-- {
		out = map[string]any{segs[i]: out}
	}
	return out
}

// TestOverridesNeverReplaceInPlace is the invariant behind the generated
// tables, held without them: on each cloud's converged example Cluster,
// every ForceNew field (by the schema extract) of every composed resource
// that the observed resource has a value for, set through
// spec.parameters.overrides.<resource>.spec.forProvider to another value,
// is never rendered as an in-place change: the response is a Fatal naming
// the override's path (a refusal of the overrides policy names it too), or
// the resource keeps its value (a node pool rotates: a new generation
// takes the new value).
func TestOverridesNeverReplaceInPlace(t *testing.T) {
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	m, ok := modules.ForKind("Cluster")
	if !ok {
		t.Fatal("no module serves Cluster")
	}
	run := runner(m)
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		fields := forceNew(t, cloud)
		crds := loadCRDs(t, cloud)
		x := fntest.MustLoad(filepath.Join(examples, cloud, "cluster.yaml"))[0]
		observed := fntest.ObservedFile(filepath.Join(examples, cloud, "observed", "cluster.yaml"))
		checked, refused, rotated := 0, 0, 0
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for n := range observed {
				if !yield(n) {
					return
				}
			}
		}) {
			o := observed[name]
			for _, path := range fields[fmt.Sprint(o["kind"])] {
				old, ok := observedScalar(o, path)
				now := another(old)
				if !ok {
					// Any value is another than none: one of the CRD's type.
					if now, ok = crdValue(t, crds, o, path); !ok {
						continue
					}
				}
				t.Run(cloud+"/"+name+"/"+path, func(t *testing.T) {
					xr := overlay.DeepCopy(x)
					fntest.Set("spec.parameters.overrides", map[string]any{name: map[string]any{"spec": map[string]any{"forProvider": nested(path, now)}}})(xr)
					req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Observed: observed}.Proto()
					if err != nil {
						t.Fatal(err)
					}
					rsp := run(req)
					checked++
					override := "spec.parameters.overrides." + name + ".spec.forProvider." + path
					if msg := fntest.Fatal(rsp); msg != "" {
						if !strings.Contains(msg, override) {
							t.Errorf("Fatal does not name %s: %s", override, msg)
						}
						refused++
						return
					}
					desired := fntest.Desired(rsp)[name]
					if got, _ := observedScalar(fntest.Object(desired), path); desired != nil && fmt.Sprint(got) == fmt.Sprint(now) {
						t.Errorf("%s %v -> %v renders in place on %s (kind %v): its provider can change it only by replacement", override, old, now, name, o["kind"])
						return
					}
					if renamed(rsp, name) {
						rotated++
					}
				})
			}
		}
		t.Logf("%s: %d ForceNew fields set through overrides: %d refused, %d rotated, the rest kept", cloud, checked, refused, rotated)
		if checked == 0 {
			t.Errorf("%s: no ForceNew field of the converged example checked", cloud)
		}
	}
}

// crdSchema is the part of an OpenAPI v3 schema the test reads.
type crdSchema struct {
	Type       string               `json:"type"`
	Properties map[string]crdSchema `json:"properties"`
}

// loadCRDs reads the cloud's provider CRDs (../shared/crds/<cloud>): the
// spec.forProvider schema of each version, by apiVersion and kind.
func loadCRDs(t *testing.T, cloud string) map[string]crdSchema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "shared", "crds", cloud, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs of %s: %v", cloud, err)
	}
	out := map[string]crdSchema{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the shared provider CRDs
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Spec struct {
				Group    string                `json:"group"`
				Names    struct{ Kind string } `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema crdSchema `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		for _, v := range c.Spec.Versions {
			out[c.Spec.Group+"/"+v.Name+" "+c.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
		}
	}
	return out
}

// crdValue is a value of the type the observed resource's CRD gives a
// spec.forProvider path, reached through objects only.
func crdValue(t *testing.T, crds map[string]crdSchema, o fntest.Object, path string) (any, bool) {
	t.Helper()
	s, ok := crds[fmt.Sprint(o["apiVersion"])+" "+fmt.Sprint(o["kind"])]
	if !ok {
		return nil, false
	}
	for _, seg := range strings.Split(path, ".") {
		if s.Type != "" && s.Type != "object" {
			return nil, false
		}
		if s, ok = s.Properties[seg]; !ok {
			return nil, false
		}
	}
	switch s.Type {
	case "string":
		return "replacegen-invariant", true
	case "number", "integer":
		return float64(7), true
	case "boolean":
		return true, true
	}
	return nil, false
}

// renamed reports whether a new generation of a resource is desired
// beside it: a node pool rotating.
func renamed(rsp *fnv1.RunFunctionResponse, name string) bool {
	for n := range fntest.Desired(rsp) {
		if strings.HasPrefix(n, name+"-") && !strings.Contains(n, "-uses-") {
			return true
		}
	}
	return false
}

// TestOverrideNamed holds which input a refused replacement-only change
// is named after: the XR's overrides, its spec.forProvider passthrough or
// the environment's overrides, with old and new value and the Terraform
// attribute; a node pool's rotates instead.
func TestOverrideNamed(t *testing.T) {
	type args struct {
		xr  func(fntest.Object)
		env map[string]any
	}
	type want struct {
		fatal   []string
		rotates string
	}
	m, _ := modules.ForKind("Cluster")
	run := runner(m)
	observed := fntest.ObservedFile(filepath.Join(examples, "gcp", "observed", "cluster.yaml"))
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"TenantOverride": {
			reason: "A tenant's override of GKE's datapathProvider, which only a new cluster changes, is refused naming the override.",
			args:   args{xr: fntest.Set("spec.parameters.overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"datapathProvider": "ADVANCED_DATAPATH"}}}})},
			want: want{fatal: []string{
				`composed resource "cluster" has spec.forProvider.datapathProvider (none)`,
				"google_container_cluster.datapath_provider",
				`the override spec.parameters.overrides.cluster.spec.forProvider.datapathProvider now gives "ADVANCED_DATAPATH"`,
			}},
		},
		"Passthrough": {
			reason: "The Cluster's spec.forProvider passthrough is named by its own path.",
			args:   args{xr: fntest.Set("spec.forProvider", map[string]any{"datapathProvider": "ADVANCED_DATAPATH"})},
			want:   want{fatal: []string{`the override spec.forProvider.datapathProvider now gives "ADVANCED_DATAPATH"`}},
		},
		"Environment": {
			reason: "The platform team's environment overrides are named too.",
			args:   args{env: map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"description": "fleet"}}}}},
			want:   want{fatal: []string{`the override environment.overrides.cluster.spec.forProvider.description now gives "fleet"`, "google_container_cluster.description"}},
		},
		"NodePoolRotates": {
			reason: "A node pool's ForceNew field the examples never render (nodeConfig.localSsdCount) rotates the pool.",
			args:   args{xr: fntest.Set("spec.parameters.overrides", map[string]any{"nodepool-default": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"nodeConfig": map[string]any{"localSsdCount": 2.0}}}}})},
			want:   want{rotates: "nodepool-default"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, "gcp", "cluster.yaml"))[0])
			if tc.args.xr != nil {
				tc.args.xr(xr)
			}
			envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
			if tc.args.env != nil {
				for _, e := range envs {
					if e["metadata"].(map[string]any)["name"] == "cluster-platform-cloud-gcp" {
						fntest.Set("data.overrides", tc.args.env)(e)
					}
				}
			}
			req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			msg := fntest.Fatal(rsp)
			var missing []string
			for _, part := range tc.want.fatal {
				if !strings.Contains(msg, part) {
					missing = append(missing, part)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("%s\nFatal %q lacks: -want, +got:\n%s", tc.reason, msg, diff)
			}
			if tc.want.fatal == nil && msg != "" {
				t.Errorf("%s\nunexpected Fatal: %s", tc.reason, msg)
			}
			if diff := cmp.Diff(tc.want.rotates != "", tc.want.rotates != "" && renamed(rsp, tc.want.rotates)); diff != "" {
				t.Errorf("%s\n%s rotates: -want, +got:\n%s", tc.reason, tc.want.rotates, diff)
			}
		})
	}
}

// TestConditionalOverride holds a rule its provider replaces on a
// condition through the render, on Azure's converged example: raising an
// AKS pool's upgradeSettings.drainTimeoutInMinutes (30 -> 45), or setting
// one where none was, is rendered in place, while unsetting it (0, which
// azurerm replaces the pool for) rotates a user pool and is refused on the
// default pool, naming the override.
func TestConditionalOverride(t *testing.T) {
	type args struct {
		// resource is the composed resource, path its drain timeout
		// under spec.forProvider.
		resource, path string
		// observed is the timeout the resource has (nil: none), override
		// the one the XR's override asks for.
		observed, override any
	}
	type want struct {
		inPlace, rotates bool
		fatal            []string
	}
	const (
		pool   = "upgradeSettings.drainTimeoutInMinutes"
		system = "defaultNodePool.upgradeSettings.drainTimeoutInMinutes"
	)
	m, _ := modules.ForKind("Cluster")
	run := runner(m)
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"UserPoolRaised": {
			reason: "A user pool's drain timeout raised 30 -> 45, which azurerm makes in place, renders in place: no rotation.",
			args:   args{resource: "nodepool-default", path: pool, observed: 30.0, override: 45.0},
			want:   want{inPlace: true},
		},
		"UserPoolSet": {
			reason: "Setting one where the pool has none is made in place too.",
			args:   args{resource: "nodepool-default", path: pool, override: 30.0},
			want:   want{inPlace: true},
		},
		"UserPoolUnset": {
			reason: "Unsetting it (0) is what azurerm replaces the pool for: the pool rotates.",
			args:   args{resource: "nodepool-default", path: pool, observed: 30.0, override: 0.0},
			want:   want{rotates: true},
		},
		"DefaultPoolRaised": {
			reason: "The default pool's timeout raised renders in place on the cluster.",
			args:   args{resource: "cluster", path: system, observed: 30.0, override: 45.0},
			want:   want{inPlace: true},
		},
		"DefaultPoolUnset": {
			reason: "Unsetting it would replace the cluster: refused, naming the override and azurerm's condition.",
			args:   args{resource: "cluster", path: system, observed: 30.0, override: 0.0},
			want: want{fatal: []string{
				"the override spec.parameters.overrides.cluster.spec.forProvider." + system + " now gives 0",
				"azurerm_kubernetes_cluster.default_node_pool.upgrade_settings.drain_timeout_in_minutes",
				"replaced only when the timeout is unset",
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := fntest.ObservedFile(filepath.Join(examples, "azure", "observed", "cluster.yaml"))
			if tc.args.observed != nil {
				for _, root := range []string{"spec.forProvider.", "status.atProvider."} {
					fntest.Set(root+tc.args.path, tc.args.observed)(observed[tc.args.resource])
				}
			}
			xr := fntest.MustLoad(filepath.Join(examples, "azure", "cluster.yaml"))[0]
			fntest.Set("spec.parameters.overrides", map[string]any{tc.args.resource: map[string]any{"spec": map[string]any{"forProvider": nested(tc.args.path, tc.args.override)}}})(xr)
			req, err := fntest.Request{XR: xr, EnvironmentConfigs: envs, Observed: observed}.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			msg := fntest.Fatal(rsp)
			rendered, _ := observedScalar(fntest.Object(fntest.Desired(rsp)[tc.args.resource]), tc.args.path)
			// A rotated pool keeps its value; its new generation, under
			// another name, takes the new one.
			got := want{
				inPlace: msg == "" && rendered == tc.args.override,
				rotates: msg == "" && rendered != tc.args.override && renamed(rsp, tc.args.resource),
			}
			for _, part := range tc.want.fatal {
				if strings.Contains(msg, part) {
					got.fatal = append(got.fatal, part)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nFatal: %s", tc.reason, diff, msg)
			}
		})
	}
}
