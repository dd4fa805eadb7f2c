package simulate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// crds are the provider CRDs the simulated providers write status to.
const crds = "../../../shared/crds"

// schemas indexes the CRDs' status.atProvider schemas by apiVersion and
// kind.
func schemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(crds, "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under %s: %v", crds, err)
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the shared CRDs
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Group    string
				Names    struct{ Kind string }
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			at, _ := dig(v.Schema.OpenAPIV3Schema, "status", "atProvider").(map[string]any)
			if at != nil {
				out[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = at
			}
		}
	}
	return out
}

// dig walks an OpenAPI schema's properties.
func dig(s map[string]any, path ...string) any {
	var cur any = s
	for _, p := range path {
		m, _ := cur.(map[string]any)
		props, _ := m["properties"].(map[string]any)
		cur = props[p]
	}
	return cur
}

// TestOutputsMatchTheCRDs holds what the simulated providers report in
// status.atProvider, for every composed resource of every example's
// converged stack, to the types its CRD declares: a status a real API
// server would refuse to store (a string where the schema says number)
// would leave the resource unready in make e2e, never in a unit test.
func TestOutputsMatchTheCRDs(t *testing.T) {
	idx := schemas(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "observed", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no observed example: %v", err)
	}
	checked := 0
	for _, file := range files {
		objs, err := xpsim.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			av, _ := o["apiVersion"].(string)
			kind, _ := o["kind"].(string)
			schema, ok := idx[av+"/"+kind]
			if !ok {
				continue
			}
			st, _ := o["status"].(map[string]any)
			at, _ := st["atProvider"].(map[string]any)
			for _, msg := range conform("status.atProvider", at, schema) {
				t.Errorf("%s: %s %s: %s", file, av, kind, msg)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no observed resource had a CRD to check against")
	}
}

// conform lists where v does not have the type schema declares, as the
// API server's structural schema checks it on a status write.
func conform(path string, v any, schema map[string]any) []string {
	if v == nil || schema == nil {
		return nil
	}
	typ, _ := schema["type"].(string)
	var out []string
	switch t := v.(type) {
	case map[string]any:
		if typ != "" && typ != "object" {
			return []string{fmt.Sprintf("%s is an object, the CRD says %s", path, typ)}
		}
		props, _ := schema["properties"].(map[string]any)
		extra, _ := schema["additionalProperties"].(map[string]any)
		for k, c := range t {
			sub, _ := props[k].(map[string]any)
			if sub == nil {
				sub = extra
			}
			if sub == nil {
				// The API server prunes fields its schema does not
				// declare; only a wrong type makes it refuse the write.
				continue
			}
			out = append(out, conform(path+"."+k, c, sub)...)
		}
	case []any:
		if typ != "array" {
			return []string{fmt.Sprintf("%s is a list, the CRD says %s", path, typ)}
		}
		items, _ := schema["items"].(map[string]any)
		for i, c := range t {
			out = append(out, conform(fmt.Sprintf("%s[%d]", path, i), c, items)...)
		}
	case string:
		if typ != "string" {
			out = append(out, fmt.Sprintf("%s is a string, the CRD says %s", path, typ))
		}
	case float64, int, int64:
		if typ != "number" && typ != "integer" {
			out = append(out, fmt.Sprintf("%s is a number, the CRD says %s", path, typ))
		}
	case bool:
		if typ != "boolean" {
			out = append(out, fmt.Sprintf("%s is a boolean, the CRD says %s", path, typ))
		}
	}
	return out
}
