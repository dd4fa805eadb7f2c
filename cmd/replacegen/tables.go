package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// A schema is an OpenAPI v3 schema, as far as replacegen reads it.
type schema struct {
	Type       string            `json:"type"`
	Properties map[string]schema `json:"properties"`
	Items      *schema           `json:"items"`
}

// crd is the part of a CustomResourceDefinition replacegen reads.
type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// loadCRDs reads the spec.forProvider schema of every version of every CRD
// under dir, by registry.GVK; the first file in name order serves.
func loadCRDs(dir string) (map[string]schema, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("cannot find a CRD under %s", dir)
	}
	out := map[string]schema{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the shared provider CRDs
		if err != nil {
			return nil, err
		}
		for _, doc := range bytes.Split(b, []byte("\n---")) {
			var c crd
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", f, err)
			}
			if c.Kind != "CustomResourceDefinition" {
				continue
			}
			for _, v := range c.Spec.Versions {
				key := registry.GVK(c.Spec.Group+"/"+v.Name, c.Spec.Names.Kind)
				if _, dup := out[key]; dup {
					continue
				}
				out[key] = v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
			}
		}
	}
	return out, nil
}

// Lookup finds a dotted path in a forProvider schema, through the items
// of lists; it returns the schema of the path and of the object holding it.
func (s schema) Lookup(path string) (schema, schema, bool) {
	cur, parent := s, s
	for _, seg := range strings.Split(path, ".") {
		if cur.Items != nil {
			cur = *cur.Items
		}
		next, ok := cur.Properties[seg]
		if !ok {
			return schema{}, schema{}, false
		}
		parent, cur = cur, next
	}
	return cur, parent, true
}

// entry is one generated entry: Refuse, or Raise for a custom diff's
// replacement of a decrease.
type entry struct {
	path, attribute, where, action string
}

// table is one kind's generated table.
type table struct {
	key, resource string
	entries       []entry
}

// runTables writes, or with check compares, each cloud's generated tables.
func runTables(crds string, check bool) error {
	schemas, err := loadCRDs(crds)
	if err != nil {
		return err
	}
	var stale []string
	for _, p := range providers {
		b, err := cloudTables(p, schemas)
		if err != nil {
			return fmt.Errorf("%s: %w", p.cloud, err)
		}
		out := filepath.Join("internal", "clouds", p.cloud, "zz_replacements.go")
		if check {
			have, err := os.ReadFile(out) //nolint:gosec // the repository's own file
			if err != nil || !bytes.Equal(have, b) {
				stale = append(stale, out)
			}
			continue
		}
		if err := os.WriteFile(out, b, 0o600); err != nil {
			return fmt.Errorf("cannot write %s: %w", out, err)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%s out of date: run make generate and commit it", strings.Join(stale, ", "))
	}
	return nil
}

// cloudTables renders a cloud's generated file.
func cloudTables(p provider, schemas map[string]schema) ([]byte, error) {
	rows, header, err := readExtract(p.cloud)
	if err != nil {
		return nil, err
	}
	byKind := map[string][]extractRow{}
	for _, r := range rows {
		byKind[r.kind] = append(byKind[r.kind], r)
	}
	var tables []table
	var absent, oracle []string
	for _, k := range tableKinds(p.cloud) {
		rs, ok := byKind[k.Kind]
		if !ok {
			return nil, fmt.Errorf("cannot find kind %s in %s/%s.tsv: run replacegen -extract with the provider's source", k.Kind, schemaDir, p.cloud)
		}
		key := registry.GVK(k.Namespaced, k.Kind)
		fp, ok := schemas[key]
		if !ok {
			return nil, fmt.Errorf("cannot find the CRD of %s", key)
		}
		t := table{key: key, resource: rs[0].resource}
		seen := map[string]bool{}
		add := func(path, attr, where, action string) {
			if !seen[path] {
				seen[path] = true
				t.entries = append(t.entries, entry{path: path, attribute: attr, where: where, action: action})
			}
		}
		for _, r := range rs {
			if r.path == "-" {
				continue
			}
			where, action := r.where, "Refuse"
			if r.when != "" {
				where += " (CustomizeDiff: " + strings.TrimPrefix(r.when, "conditional: ") + ")"
				if strings.HasSuffix(r.when, "(decrease)") {
					action = "Raise"
				}
			}
			if r.origin == originOracle {
				where += " (oracle extract)"
				if !slices.Contains(oracle, r.resource) {
					oracle = append(oracle, r.resource)
				}
			}
			s, parent, ok := fp.Lookup(r.path)
			if !ok {
				absent = append(absent, k.Kind+" "+r.path)
				continue
			}
			if r.block && s.Type != "array" {
				// A block of one: ForceNew when it comes or goes, which its
				// ForceNew fields cover; its other fields change in place.
				continue
			}
			attr := r.resource + "." + r.attribute
			add(r.path, attr, where, action)
			// A reference and a selector beside the field resolve it.
			dir, name := "", r.path
			if i := strings.LastIndex(r.path, "."); i >= 0 {
				dir, name = r.path[:i+1], r.path[i+1:]
			}
			bases := []string{name}
			if b, ok := strings.CutSuffix(name, "s"); ok {
				bases = append(bases, b)
			}
			for _, b := range bases {
				for _, suffix := range []string{"Ref", "Refs", "Selector"} {
					if _, ok := parent.Properties[b+suffix]; ok {
						add(dir+b+suffix, attr, where, action)
					}
				}
			}
		}
		tables = append(tables, t)
	}
	slices.SortFunc(tables, func(a, b table) int { return strings.Compare(a.key, b.key) })
	return render(p, header, tables, absent, oracle)
}

// render writes a cloud's generated file.
func render(p provider, header []string, tables []table, absent, oracle []string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./cmd/replacegen; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", p.cloud)
	b.WriteString("import (\n\t\"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle\"\n\t\"github.com/seed-6471616d/function-cluster-platform/internal/registry\"\n)\n\n")
	b.WriteString("// generatedFrom is the Terraform provider this cloud's generated tables\n// of replacement-only fields come from. The schema extract they were\n// written from (cmd/replacegen/schema/" + p.cloud + ".tsv) says:\n")
	for _, h := range header {
		b.WriteString("//   - " + h + "\n")
	}
	if len(oracle) > 0 {
		slices.Sort(oracle)
		b.WriteString("//\n// These resources have rows of the oracle extract\n// (internal/modules/testdata/replacements/" + p.cloud + ".tsv), not read from the\n// provider's source (each such entry says \"(oracle extract)\"): " + strings.Join(oracle, ", ") + ".\n")
	}
	release := p.release
	for _, h := range header {
		if v, ok := strings.CutPrefix(h, sourcePrefix); ok {
			release = v
		}
	}
	fmt.Fprintf(&b, "const generatedFrom lifecycle.Source = %q\n\n", release)
	b.WriteString("// generatedTables are every composed kind's ForceNew attributes, by\n// spec.forProvider path (with the reference and selector that resolve\n// one), and the attributes its custom diff replaces on a condition (a\n// decrease is a Raise, any other condition refused as a whole), merged\n// into the hand-written tables by Cloud.Generated: a hand entry wins, the\n// rest are refused, or rotate a node pool.\n")
	if len(absent) > 0 {
		slices.Sort(absent)
		b.WriteString("//\n// Not in the kinds' CRDs, so left out (upjet keeps them out of\n// spec.forProvider: names it takes from the external name, prefixes):\n")
		for _, a := range absent {
			b.WriteString("//   - " + a + "\n")
		}
	}
	b.WriteString("var generatedTables = map[string]registry.Table{\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "%s: {Resource: %q, Fields: []lifecycle.Field{\n", strconv.Quote(t.key), t.resource)
		for _, e := range t.entries {
			fmt.Fprintf(&b, "generatedFrom.%s(%q, %q, %q),\n", e.action, e.path, e.attribute, e.where)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("cannot format the generated file: %w", err)
	}
	return out, nil
}
