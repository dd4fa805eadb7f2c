package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// A Section is one typed struct the environment's data decodes into
// (envcfg.Section): the keys one owner reads.
type Section struct {
	// Path is the key the struct decodes; empty for the top level.
	Path []string
	// Type is the struct.
	Type reflect.Type
	// Owner says who reads the keys: "every module", "module cluster",
	// "cloud gcp".
	Owner string
}

// Sections are every struct the environment decodes into, the same list
// TestEnvironmentKeys holds the example environment against: the shared
// keys, each module's Settings and each cloud's Settings.
func Sections() ([]Section, error) {
	out := []Section{{Type: reflect.TypeFor[envcfg.Shared](), Owner: "every module and cloud"}}
	for _, m := range modules.All {
		if m.Settings != nil {
			out = append(out, Section{Path: m.Settings.Path, Type: reflect.TypeOf(m.Settings.Type), Owner: "module " + m.Name})
		}
	}
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		if c.Settings == nil {
			return nil, fmt.Errorf("cannot document the environment: cloud %q lists no Settings", name)
		}
		out = append(out, Section{Path: []string{name}, Type: reflect.TypeOf(c.Settings), Owner: "cloud " + name})
	}
	return out, nil
}

// A Key is one environment key a section reads.
type Key struct {
	// Path is the key's path below data: a.b, with [] for a list's items
	// and <key> for a map's keys.
	Path string
	// Type is its type in YAML terms: string, integer, map of string.
	Type string
	// Doc is the Go doc comment of its struct field, on one line.
	Doc string
}

// Source finds the Go doc comments of struct types and their fields in
// the module's source, so that the reference says what the code says.
type Source struct {
	// Root is the module's root folder and Module its path.
	Root, Module string

	fset  *token.FileSet
	types map[string]map[string]typeDoc
}

// typeDoc is a type's declaration and doc comment.
type typeDoc struct {
	spec *ast.TypeSpec
	doc  string
}

// NewSource reads the module path from root/go.mod.
func NewSource(root string) (*Source, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod")) //nolint:gosec // the module's go.mod
	if err != nil {
		return nil, fmt.Errorf("cannot read the module path: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return &Source{Root: root, Module: strings.Trim(strings.TrimSpace(rest), `"`), fset: token.NewFileSet(), types: map[string]map[string]typeDoc{}}, nil
		}
	}
	return nil, fmt.Errorf("cannot read the module path: %s has no module line", filepath.Join(root, "go.mod"))
}

// pkg parses the non-test files of a package of the module and indexes
// its type declarations.
func (s *Source) pkg(path string) (map[string]typeDoc, error) {
	if t, ok := s.types[path]; ok {
		return t, nil
	}
	rel, ok := strings.CutPrefix(path, s.Module)
	if !ok {
		return nil, fmt.Errorf("cannot read the source of package %s: it is not in module %s", path, s.Module)
	}
	dir := filepath.Join(s.Root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("cannot list the source of package %s: %w", path, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	if err := s.Add(path, files...); err != nil {
		return nil, err
	}
	return s.types[path], nil
}

// Add parses the files and indexes their type declarations as package
// path's.
func (s *Source) Add(path string, files ...string) error {
	out := s.types[path]
	if out == nil {
		out = map[string]typeDoc{}
		s.types[path] = out
	}
	slices.Sort(files)
	for _, f := range files {
		file, err := parser.ParseFile(s.fset, f, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("cannot parse %s: %w", f, err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				out[ts.Name.Name] = typeDoc{spec: ts, doc: text(doc)}
			}
		}
	}
	return nil
}

// lookup returns the declaration of a named type.
func (s *Source) lookup(t reflect.Type) (typeDoc, error) {
	types, err := s.pkg(t.PkgPath())
	if err != nil {
		return typeDoc{}, err
	}
	td, ok := types[t.Name()]
	if !ok {
		return typeDoc{}, fmt.Errorf("cannot find the declaration of %s in package %s", t.Name(), t.PkgPath())
	}
	return td, nil
}

// TypeDoc returns a named type's doc comment, on one line.
func (s *Source) TypeDoc(t reflect.Type) (string, error) {
	td, err := s.lookup(t)
	return td.doc, err
}

// Keys lists every key a section reads, depth first in field order.
func (s *Source) Keys(sec Section) ([]Key, error) {
	td, err := s.lookup(sec.Type)
	if err != nil {
		return nil, err
	}
	var out []Key
	err = s.walk(sec.Type, td.spec.Type, strings.Join(sec.Path, "."), &out)
	return out, err
}

// walk lists the keys of a struct type t declared as expr, below prefix.
func (s *Source) walk(t reflect.Type, expr ast.Expr, prefix string, out *[]Key) error {
	st, ok := unparen(expr).(*ast.StructType)
	if !ok {
		return fmt.Errorf("cannot document %s: its declaration is not a struct", t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		af := astField(st, f)
		if af == nil {
			return fmt.Errorf("cannot find field %s of %s in the source", f.Name, t)
		}
		if name == "" && f.Anonymous {
			// An embedded struct's keys are the outer object's.
			et := deref(f.Type)
			td, err := s.lookup(et)
			if err != nil {
				return err
			}
			if err := s.walk(et, td.spec.Type, prefix, out); err != nil {
				return err
			}
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		doc := text(af.Doc)
		if doc == "" {
			doc = text(af.Comment)
		}
		doc = keyed(doc, f.Name, name)
		*out = append(*out, Key{Path: path, Type: yamlType(f.Type), Doc: doc})
		if err := s.below(f.Type, af.Type, path, out); err != nil {
			return err
		}
	}
	return nil
}

// below lists the keys below a field of type t declared as expr: a
// struct's, a map's values' as path.<key>, a list's items' as path[].
func (s *Source) below(t reflect.Type, expr ast.Expr, path string, out *[]Key) error {
	expr = unparen(expr)
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	t = deref(t)
	switch t.Kind() {
	case reflect.Struct:
		if t.Name() != "" {
			td, err := s.lookup(t)
			if err != nil {
				return err
			}
			return s.walk(t, td.spec.Type, path, out)
		}
		return s.walk(t, expr, path, out)
	case reflect.Map:
		m, _ := expr.(*ast.MapType)
		var elem ast.Expr
		if m != nil {
			elem = m.Value
		}
		return s.below(t.Elem(), elem, path+".<key>", out)
	case reflect.Slice:
		a, _ := expr.(*ast.ArrayType)
		var elem ast.Expr
		if a != nil {
			elem = a.Elt
		}
		return s.below(t.Elem(), elem, path+"[]", out)
	}
	return nil
}

// keyed replaces the Go field name a doc comment starts with by the key.
func keyed(doc, field, key string) string {
	for _, sep := range []string{" ", ","} {
		if rest, ok := strings.CutPrefix(doc, field+sep); ok {
			return "`" + key + "`" + sep + rest
		}
	}
	return doc
}

// astField is the declaration of a struct field.
func astField(st *ast.StructType, f reflect.StructField) *ast.Field {
	for _, af := range st.Fields.List {
		if len(af.Names) == 0 {
			// Embedded: its name is its type's.
			e := unparen(af.Type)
			if star, ok := e.(*ast.StarExpr); ok {
				e = star.X
			}
			switch x := e.(type) {
			case *ast.Ident:
				if x.Name == f.Name {
					return af
				}
			case *ast.SelectorExpr:
				if x.Sel.Name == f.Name {
					return af
				}
			}
			continue
		}
		for _, n := range af.Names {
			if n.Name == f.Name {
				return af
			}
		}
	}
	return nil
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// yamlType renders a Go type in YAML terms.
func yamlType(t reflect.Type) string {
	t = deref(t)
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct:
		return "object"
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "object (any keys and values)"
		}
		return "map of " + yamlType(t.Elem())
	case reflect.Slice, reflect.Array:
		return "list of " + yamlType(t.Elem())
	case reflect.Interface:
		return "any"
	}
	return t.String()
}

// text is a comment's text on one line.
func text(c *ast.CommentGroup) string {
	if c == nil {
		return ""
	}
	return oneLine(c.Text())
}

// goName is a type's name as Go code spells it: platform.Settings.
func goName(t reflect.Type) string {
	return filepath.Base(t.PkgPath()) + "." + t.Name()
}

// EnvironmentPage renders the EnvironmentConfig reference.
func EnvironmentPage(src *Source, sections []Section) ([]byte, error) {
	var b bytes.Buffer
	from := make([]string, 0, len(sections))
	for _, sec := range sections {
		from = append(from, goName(sec.Type))
	}
	b.WriteString(generatedNotice("the Go types " + strings.Join(from, ", ")))
	b.WriteString("# EnvironmentConfig reference\n\n")
	b.WriteString("Look up here which keys the platform team may set in the `data` of the platform's EnvironmentConfigs, what each one does and what type of value it takes.\n\n")
	b.WriteString("The function decodes the layered environment (baseline < cloud < planeType) once per call into the typed Go structs below, one per owner of keys, and reads nothing else of it. Every key is optional. A value of the wrong type is a Fatal naming its path, never read as the default. Keys no struct reads are ignored by the function (one environment may serve other functions too), and `TestEnvironmentKeys` fails when an example EnvironmentConfig holds one.\n\n")
	b.WriteString("A path's `[]` stands for a list's items, `<key>` for a map's keys. Each description is the doc comment of the Go field the key decodes into.\n\n")
	b.WriteString("| Section | Keys | Read by | Go type |\n|---|---|---|---|\n")
	for _, sec := range sections {
		keys := "top level"
		if len(sec.Path) > 0 {
			keys = "`" + strings.Join(sec.Path, ".") + ".*`"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | `%s` |\n", sectionTitle(sec), anchor(sectionTitle(sec)), keys, sec.Owner, goName(sec.Type))
	}
	b.WriteString("\n")
	for _, sec := range sections {
		doc, err := src.TypeDoc(sec.Type)
		if err != nil {
			return nil, err
		}
		keys, err := src.Keys(sec)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "## %s\n\n", sectionTitle(sec))
		fmt.Fprintf(&b, "Read by %s, decoded into `%s`", sec.Owner, goName(sec.Type))
		if doc != "" {
			fmt.Fprintf(&b, ": %s", doc)
		} else {
			b.WriteString(".")
		}
		b.WriteString("\n\n| Key | Type | Description |\n|---|---|---|\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", cell(k.Path), cell(k.Type), cell(k.Doc))
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// sectionTitle is a section's heading.
func sectionTitle(sec Section) string {
	if len(sec.Path) == 0 {
		return "Top-level keys of " + sec.Owner
	}
	return strings.Join(sec.Path, ".") + ": " + sec.Owner
}

// anchor is the anchor GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
