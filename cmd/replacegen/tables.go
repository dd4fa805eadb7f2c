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

	"github.com/seed-6471616d/function-cluster-platform/cmd/internal/crdschema"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// schema is a forProvider schema of the provider CRDs.
type schema = crdschema.Schema

// loadCRDs reads the spec.forProvider schema of every version of every CRD
// under dir, by registry.GVK.
var loadCRDs = crdschema.Load

// entry is one generated entry: Refuse, or Raise for a custom diff's
// replacement of a decrease; rule names the lifecycle.Rule of an entry its
// provider replaces only on another condition.
type entry struct {
	path, attribute, where, action, rule string
}

// ruleNames are the lifecycle.Rule constants of the extract's rule kinds.
var ruleNames = map[string]string{
	ruleIfChange:          "ForceNewIfChange",
	ruleIf:                "ForceNewIf",
	ruleForceNew:          "DiffForceNew",
	ruleRequiresReplaceIf: "RequiresReplaceIf",
}

// ruleOf is the lifecycle.Rule constant of an extract row's when column
// ("conditional: ForceNewIfChange"): "" for an unconditional row and for
// a decrease (a Raise).
func ruleOf(when string) (string, error) {
	kind, ok := strings.CutPrefix(when, "conditional: ")
	if !ok || strings.HasSuffix(kind, "(decrease)") {
		return "", nil
	}
	name, ok := ruleNames[kind]
	if !ok {
		return "", fmt.Errorf("cannot read the rule %q: it is none of the custom diff's calls replacegen knows", when)
	}
	return name, nil
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
		seen := map[string]int{}
		add := func(e entry) {
			i, ok := seen[e.path]
			switch {
			case !ok:
				seen[e.path] = len(t.entries)
				t.entries = append(t.entries, e)
			case t.entries[i].rule != "" && e.rule == "":
				// A path the schema forces a new resource for whatever
				// changes: its custom diff's condition adds nothing.
				t.entries[i] = e
			}
		}
		for _, r := range rs {
			if r.path == "-" {
				continue
			}
			where, action := r.where, "Refuse"
			rule, err := ruleOf(r.when)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", k.Kind, r.path, err)
			}
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
			add(entry{path: r.path, attribute: attr, where: where, action: action, rule: rule})
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
						add(entry{path: dir + b + suffix, attribute: attr, where: where, action: action, rule: rule})
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
	b.WriteString("// generatedTables are every composed kind's ForceNew attributes, by\n// spec.forProvider path (with the reference and selector that resolve\n// one), and the attributes its custom diff replaces on a condition (a\n// decrease is a Raise; any other condition names its rule, and the\n// cloud's conditions.go evaluates it, or says why every change is\n// refused), merged into the hand-written tables by Cloud.Generated: a\n// hand entry wins, the rest are refused, or rotate a node pool.\n")
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
			fmt.Fprintf(&b, "generatedFrom.%s(%q, %q, %q)", e.action, e.path, e.attribute, e.where)
			if e.rule != "" {
				fmt.Fprintf(&b, ".Conditional(lifecycle.%s)", e.rule)
			}
			b.WriteString(",\n")
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
