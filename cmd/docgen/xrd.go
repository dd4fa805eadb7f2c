package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Node is a YAML mapping with its keys in the order they are written,
// so that a page lists fields in the order the XRD's author chose.
type Node struct {
	// Keys are the mapping's keys, in order.
	Keys []string
	// Values are their values: Nodes, lists ([]any) and scalars (strings,
	// as written).
	Values map[string]any
}

// Get returns the value of a key.
func (n *Node) Get(key string) any {
	if n == nil {
		return nil
	}
	return n.Values[key]
}

// Map returns the mapping at a key, or nil.
func (n *Node) Map(key string) *Node {
	m, _ := n.Get(key).(*Node)
	return m
}

// String returns the scalar at a key as written, or "".
func (n *Node) String(key string) string {
	s, _ := n.Get(key).(string)
	return s
}

// List returns the sequence at a key, or nil.
func (n *Node) List(key string) []any {
	l, _ := n.Get(key).([]any)
	return l
}

// Strings returns the scalars of the sequence at a key.
func (n *Node) Strings(key string) []string {
	var out []string
	for _, v := range n.List(key) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// ParseYAML parses one YAML document into Nodes, lists ([]any) and scalars
// (strings, as written).
func ParseYAML(b []byte) (*Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("cannot parse YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("cannot parse YAML: want one document")
	}
	v, err := convert(doc.Content[0])
	if err != nil {
		return nil, err
	}
	n, ok := v.(*Node)
	if !ok {
		return nil, fmt.Errorf("cannot parse YAML: the document is not a mapping")
	}
	return n, nil
}

func convert(y *yaml.Node) (any, error) {
	switch y.Kind {
	case yaml.MappingNode:
		n := &Node{Values: map[string]any{}}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i].Value
			v, err := convert(y.Content[i+1])
			if err != nil {
				return nil, err
			}
			if _, dup := n.Values[k]; dup {
				return nil, fmt.Errorf("cannot parse YAML: line %d: key %q is repeated", y.Content[i].Line, k)
			}
			n.Keys = append(n.Keys, k)
			n.Values[k] = v
		}
		return n, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(y.Content))
		for _, c := range y.Content {
			v, err := convert(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		return y.Value, nil
	case yaml.AliasNode:
		return convert(y.Alias)
	}
	return nil, fmt.Errorf("cannot parse YAML: line %d: unexpected node", y.Line)
}

// An XRD is one CompositeResourceDefinition under apis/, with its legacy
// counterpart when there is one.
type XRD struct {
	// Dir is its folder under apis/.
	Dir string
	// Kind, Plural, Group and Scope are the XR's.
	Kind, Plural, Group, Scope string
	// Composition is the default Composition's name.
	Composition string
	// Versions are the XR's versions.
	Versions []Version
	// Legacy is the legacy (Crossplane v1) XRD generated from this one,
	// nil when there is none.
	Legacy *Legacy
}

// A Version is one version of an XR, with its schema's fields.
type Version struct {
	// Name is the version's name, e.g. v1alpha1.
	Name string
	// Served and Referenceable are the version's flags.
	Served, Referenceable bool
	// Description is the schema's own description.
	Description string
	// Fields are every field of spec and status, flattened, in the order
	// the schema lists them.
	Fields []Field
	// Columns are the additional printer columns.
	Columns []Column
}

// A Column is an additional printer column of kubectl get.
type Column struct {
	// Name, Type, JSONPath and Description are the column's.
	Name, Type, JSONPath, Description string
	// Wide is set for a column shown only with -o wide (priority > 0).
	Wide bool
}

// A Legacy XRD serves the same schema as a cluster-scoped XR and its claim.
type Legacy struct {
	// Kind is the cluster-scoped XR's kind, ClaimKind its claim's and
	// Group their API group.
	Kind, ClaimKind, Group string
}

// A Field is one field of an XR's schema.
type Field struct {
	// Path is the field's path: spec.a.b, with [] for a list's items and
	// <key> for a map's keys (spec.parameters.pools.<key>.size).
	Path string
	// Type is the field's type, in OpenAPI terms: "array of string",
	// "map of object".
	Type string
	// Required is set when the parent object's schema requires the
	// field.
	Required bool
	// Default is the schema's default, as written.
	Default string
	// Constraints are the schema's validations: enum, pattern, bounds.
	Constraints []string
	// Description is the schema's description, on one line.
	Description string
}

// LoadXRD reads apis/<dir>/definition.yaml, and the legacy XRD in
// apis/<dir>-legacy when there is one.
func LoadXRD(apis, dir string) (*XRD, error) {
	path := filepath.Join(apis, dir, "definition.yaml")
	b, err := os.ReadFile(path) //nolint:gosec // a file of the apis folder
	if err != nil {
		return nil, fmt.Errorf("cannot read the XRD: %w", err)
	}
	doc, err := ParseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	spec := doc.Map("spec")
	x := &XRD{
		Dir:    dir,
		Kind:   spec.Map("names").String("kind"),
		Plural: spec.Map("names").String("plural"),
		Group:  spec.String("group"),
		Scope:  spec.String("scope"),
	}
	if x.Kind == "" || x.Group == "" {
		return nil, fmt.Errorf("cannot read %s: it names no kind or group", path)
	}
	if x.Scope == "" {
		// Crossplane v2's default scope.
		x.Scope = "Namespaced"
	}
	x.Composition = spec.Map("defaultCompositionRef").String("name")
	for _, v := range spec.List("versions") {
		vn, ok := v.(*Node)
		if !ok {
			return nil, fmt.Errorf("cannot read %s: a version is not an object", path)
		}
		ver, err := readVersion(vn)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", path, err)
		}
		x.Versions = append(x.Versions, ver)
	}
	if len(x.Versions) == 0 {
		return nil, fmt.Errorf("cannot read %s: it has no versions", path)
	}
	legacy := filepath.Join(apis, dir+"-legacy", "definition.yaml")
	if b, err := os.ReadFile(legacy); err == nil { //nolint:gosec // a file of the apis folder
		ldoc, err := ParseYAML(b)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", legacy, err)
		}
		ls := ldoc.Map("spec")
		x.Legacy = &Legacy{Kind: ls.Map("names").String("kind"), ClaimKind: ls.Map("claimNames").String("kind"), Group: ls.String("group")}
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("cannot read the legacy XRD: %w", err)
	}
	return x, nil
}

func readVersion(v *Node) (Version, error) {
	ver := Version{
		Name:          v.String("name"),
		Served:        v.String("served") == "true",
		Referenceable: v.String("referenceable") == "true",
	}
	for _, c := range v.List("additionalPrinterColumns") {
		cn, ok := c.(*Node)
		if !ok {
			continue
		}
		ver.Columns = append(ver.Columns, Column{
			Name: cn.String("name"), Type: cn.String("type"), JSONPath: cn.String("jsonPath"),
			Description: oneLine(cn.String("description")), Wide: cn.String("priority") != "" && cn.String("priority") != "0",
		})
	}
	schema := v.Map("schema").Map("openAPIV3Schema")
	if schema == nil {
		return ver, fmt.Errorf("version %s has no openAPIV3Schema", ver.Name)
	}
	ver.Description = oneLine(schema.String("description"))
	ver.Fields = Flatten(schema, "")
	return ver, nil
}

// Flatten lists every named field below an object schema, depth first in
// the order the schema lists them: an object's properties as path.name, a
// list's items' as path[].name, a map's values' as path.<key>.name.
func Flatten(schema *Node, prefix string) []Field {
	var out []Field
	props := schema.Map("properties")
	if props == nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range schema.Strings("required") {
		required[r] = true
	}
	for _, name := range props.Keys {
		s, ok := props.Values[name].(*Node)
		if !ok {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		out = append(out, Field{
			Path:        path,
			Type:        typeOf(s),
			Required:    required[name],
			Default:     scalar(s.Get("default")),
			Constraints: constraints(s, ""),
			Description: oneLine(s.String("description")),
		})
		out = append(out, below(s, path)...)
	}
	return out
}

// below lists the fields below a field's schema: its properties, its
// items' and its map values'.
func below(s *Node, path string) []Field {
	switch {
	case s.Map("properties") != nil:
		return Flatten(s, path)
	case s.Map("items") != nil:
		return below(s.Map("items"), path+"[]")
	case s.Map("additionalProperties") != nil:
		return below(s.Map("additionalProperties"), path+".<key>")
	}
	return nil
}

// typeOf renders a schema's type: object, array of T, map of T; free-form
// for an object that preserves unknown fields.
func typeOf(s *Node) string {
	t := s.String("type")
	switch {
	case s.String("x-kubernetes-preserve-unknown-fields") == "true" && s.Map("properties") == nil:
		return "object (free-form)"
	case t == "array" && s.Map("items") != nil:
		return "array of " + typeOf(s.Map("items"))
	case t == "object" && s.Map("additionalProperties") != nil:
		return "map of " + typeOf(s.Map("additionalProperties"))
	case t == "":
		return "any"
	}
	return t
}

// constraints lists a schema's validations, and its items' and map values'
// with the prefix "items: " or "values: ".
func constraints(s *Node, prefix string) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, prefix+fmt.Sprintf(format, a...)) }
	if e := s.List("enum"); len(e) > 0 {
		vals := make([]string, 0, len(e))
		for _, v := range e {
			vals = append(vals, "`"+scalar(v)+"`")
		}
		add("one of %s", strings.Join(vals, ", "))
	}
	if p := s.String("pattern"); p != "" {
		add("pattern `%s`", p)
	}
	if f := s.String("format"); f != "" {
		add("format %s", f)
	}
	bound := func(key, exclusive, word, strict string) {
		v := s.String(key)
		if v == "" {
			return
		}
		if s.String(exclusive) == "true" {
			add("%s %s", strict, v)
			return
		}
		add("%s %s", word, v)
	}
	bound("minimum", "exclusiveMinimum", "≥", ">")
	bound("maximum", "exclusiveMaximum", "≤", "<")
	for _, c := range []struct{ key, what string }{
		{"minLength", "length ≥"}, {"maxLength", "length ≤"},
		{"minItems", "items ≥"}, {"maxItems", "items ≤"},
		{"minProperties", "keys ≥"}, {"maxProperties", "keys ≤"},
	} {
		if v := s.String(c.key); v != "" {
			add("%s %s", c.what, v)
		}
	}
	for _, r := range s.List("x-kubernetes-validations") {
		if rn, ok := r.(*Node); ok {
			msg := rn.String("message")
			if msg == "" {
				msg = "`" + rn.String("rule") + "`"
			}
			add("%s", msg)
		}
	}
	if prefix == "" {
		if items := s.Map("items"); items != nil && items.Map("properties") == nil {
			out = append(out, constraints(items, "items: ")...)
		}
		if vals := s.Map("additionalProperties"); vals != nil && vals.Map("properties") == nil {
			out = append(out, constraints(vals, "values: ")...)
		}
	}
	return out
}

// scalar renders a scalar as written; lists and objects as YAML flow.
func scalar(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case []any:
		parts := make([]string, 0, len(t))
		for _, e := range t {
			parts = append(parts, scalar(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Node:
		parts := make([]string, 0, len(t.Keys))
		for _, k := range t.Keys {
			parts = append(parts, k+": "+scalar(t.Values[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// oneLine joins a description's lines and trims it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// code is s as inline code, in a table cell.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + cell(s) + "`"
}

// Undocumented returns the paths of the fields without a description.
func (v Version) Undocumented() []string {
	var out []string
	for _, f := range v.Fields {
		if f.Description == "" {
			out = append(out, f.Path)
		}
	}
	return out
}

// XRPage renders the reference page of an XR kind. module is the Input's
// module that serves it ("" when none does).
func XRPage(x *XRD, module string) []byte {
	var b bytes.Buffer
	b.WriteString(generatedNotice("apis/" + x.Dir + "/definition.yaml"))
	fmt.Fprintf(&b, "# %s reference\n\n", x.Kind)
	fmt.Fprintf(&b, "Look up here what every field of a %s means before you write one, or what a %s reports in its status once Crossplane has composed it: each field's type, whether it is required, its default and the values it accepts.\n\n", x.Kind, x.Kind)
	for _, v := range x.Versions {
		if v.Description != "" {
			b.WriteString(v.Description + "\n\n")
			break
		}
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Kind | `%s` (plural `%s`) |\n", x.Kind, x.Plural)
	fmt.Fprintf(&b, "| Group | `%s` |\n", x.Group)
	vers := make([]string, 0, len(x.Versions))
	for _, v := range x.Versions {
		var flags []string
		if v.Served {
			flags = append(flags, "served")
		}
		if v.Referenceable {
			flags = append(flags, "referenceable")
		}
		vers = append(vers, fmt.Sprintf("`%s` (%s)", v.Name, strings.Join(flags, ", ")))
	}
	fmt.Fprintf(&b, "| Versions | %s |\n", strings.Join(vers, ", "))
	fmt.Fprintf(&b, "| Scope | %s |\n", x.Scope)
	if x.Composition != "" {
		fmt.Fprintf(&b, "| Default Composition | `%s` |\n", x.Composition)
	}
	if module != "" {
		fmt.Fprintf(&b, "| Function Input module | `%s` |\n", module)
	}
	if x.Legacy != nil {
		fmt.Fprintf(&b, "| Legacy (Crossplane v1) API | cluster-scoped XR `%s` with the claim `%s`, group `%s`, the same schema (apis/%s-legacy) |\n", x.Legacy.Kind, x.Legacy.ClaimKind, x.Legacy.Group, x.Dir)
	} else {
		b.WriteString("| Legacy (Crossplane v1) API | none |\n")
	}
	b.WriteString("\n")
	for _, v := range x.Versions {
		of := ""
		if len(x.Versions) > 1 {
			of = " of " + v.Name
		}
		fmt.Fprintf(&b, "## Fields%s\n\n", of)
		b.WriteString("A path's `[]` stands for a list's items, `<key>` for a map's keys. A required field is required where its parent object is set.\n\n")
		b.WriteString("| Field | Type | Required | Default | Constraints | Description |\n|---|---|---|---|---|---|\n")
		for _, f := range v.Fields {
			req := ""
			if f.Required {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", cell(f.Path), cell(f.Type), req, code(f.Default), cell(strings.Join(f.Constraints, "; ")), cell(f.Description))
		}
		b.WriteString("\n")
		if len(v.Columns) > 0 {
			described := slices.ContainsFunc(v.Columns, func(c Column) bool { return c.Description != "" })
			fmt.Fprintf(&b, "## Columns of kubectl get%s\n\n", of)
			b.WriteString("| Column | Type | From | Shown |")
			if described {
				b.WriteString(" Description |")
			}
			b.WriteString("\n|---|---|---|---|")
			if described {
				b.WriteString("---|")
			}
			b.WriteString("\n")
			for _, c := range v.Columns {
				shown := "always"
				if c.Wide {
					shown = "with `-o wide`"
				}
				fmt.Fprintf(&b, "| %s | %s | `%s` | %s |", cell(c.Name), c.Type, cell(c.JSONPath), shown)
				if described {
					fmt.Fprintf(&b, " %s |", cell(c.Description))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// generatedNotice says where a page comes from and how to regenerate it.
func generatedNotice(from string) string {
	return "<!-- Code generated by go run ./cmd/docgen from " + from + ". DO NOT EDIT. -->\n\n"
}
