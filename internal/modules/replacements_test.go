package modules_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// covered reports whether a kind's table has an entry for one of the paths
// or one of their ancestors.
func covered(k *registry.ResourceKind, paths ...string) bool {
	for _, f := range k.Replacements {
		p := strings.TrimPrefix(f.Path, "spec.forProvider.")
		for _, path := range paths {
			if p == path || strings.HasPrefix(path, p+".") {
				return true
			}
		}
	}
	return false
}

// TestReplacements holds every composed resource of the examples'
// converged stacks (examples/*/observed: every module, cloud and scope)
// against its cloud's kinds: each kind is listed in the cloud's Kinds,
// each managed kind declared its table of replacement-only fields, and each
// rendered field the wrapped Terraform provider can change only by
// replacement (testdata/replacements) has an entry in that table. A field
// the function renders that would make a provider refuse an update forever
// cannot go unnoticed.
func TestReplacements(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "observed", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no observed example: %v", err)
	}
	oracle := map[string]fntest.ReplacementOnly{}
	for _, c := range registry.Clouds() {
		r, err := fntest.LoadReplacementOnly(filepath.Join("testdata", "replacements"), c)
		if err != nil {
			t.Fatal(err)
		}
		oracle[c] = r
	}
	seen := map[string]bool{}
	checked := 0
	for _, file := range files {
		objs, err := fntest.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			meta, _ := o["metadata"].(map[string]any)
			labels, _ := meta["labels"].(map[string]any)
			cloudName, _ := labels[registry.LabelCloud].(string)
			apiVersion, kindName := fmt.Sprint(o["apiVersion"]), fmt.Sprint(o["kind"])
			if cloudName == "" || strings.HasPrefix(apiVersion, "protection.crossplane.io/") {
				continue
			}
			cloud, ok := registry.Lookup(cloudName)
			if !ok {
				t.Fatalf("%s: cloud %q is not registered", file, cloudName)
			}
			k, ok := cloud.KindOf(apiVersion, kindName)
			if !ok {
				t.Errorf("%s: cloud %q renders %s %s, which its Kinds do not list: add it to the cloud's Kinds", file, cloudName, apiVersion, kindName)
				continue
			}
			if !k.Managed() {
				continue
			}
			if !k.Declared {
				t.Errorf("%s: kind %s of cloud %q has no table of replacement-only fields: declare it with Replaces, from the wrapped Terraform provider's schema", file, kindName, cloudName)
			}
			if k.Provider != cloudName {
				// provider-helm, -kubernetes and -sql wrap no Terraform
				// provider.
				continue
			}
			if _, ok := oracle[cloudName][kindName]; !ok {
				if !seen[cloudName+"/"+kindName] {
					t.Errorf("%s: kind %s of cloud %q is not in testdata/replacements/%s.tsv: read its ForceNew attributes from the wrapped Terraform provider's schema and add them", file, kindName, cloudName, cloudName)
				}
				seen[cloudName+"/"+kindName] = true
				continue
			}
			seen[cloudName+"/"+kindName] = true
			spec, _ := o["spec"].(map[string]any)
			fntest.Leaves("", spec["forProvider"], func(path string, attrs []string) {
				checked++
				attr, ok := oracle[cloudName].Find(kindName, attrs)
				if !ok {
					return
				}
				var cover []string
				for _, a := range attrs {
					for p := a; p != ""; {
						cover = append(cover, p)
						i := strings.LastIndex(p, ".")
						if i < 0 {
							break
						}
						p = p[:i]
					}
				}
				if !covered(k, append(cover, path)...) {
					t.Errorf("%s: %s %s renders spec.forProvider.%s, which its provider can change only by replacement (%s), and the kind's table has no entry for it", file, cloudName, kindName, path, attr)
				}
			})
		}
	}
	t.Logf("%d rendered fields of %d kinds checked against the Terraform providers' replacement-only fields", checked, len(seen))
}

// TestReplacementTables checks the tables themselves: every entry names a
// path under spec, a Terraform attribute and an action; Rotate only on
// node pool kinds, which report their node count.
func TestReplacementTables(t *testing.T) {
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		if len(c.Kinds) == 0 {
			t.Errorf("cloud %q lists no Kinds", name)
		}
		for _, k := range c.Kinds {
			paths := map[string]bool{}
			for _, f := range k.Replacements {
				if !strings.HasPrefix(f.Path, "spec.") || f.Attribute == "" || f.Action == "" {
					t.Errorf("%s %s: entry %+v needs a path under spec, an attribute and an action", name, k.Kind, f)
				}
				if paths[f.Path] {
					t.Errorf("%s %s: %s is listed twice", name, k.Kind, f.Path)
				}
				paths[f.Path] = true
				if f.Action == lifecycle.Rotate && k.NodeCount == "" {
					t.Errorf("%s %s: rotates on %s but declares no NodeCount", name, k.Kind, f.Path)
				}
			}
		}
	}
}
