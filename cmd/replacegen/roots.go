package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// resourceSource is what readResource found of a Terraform resource: its
// attributes, the replacement rules of its custom diff, and the calls it
// could not follow.
type resourceSource struct {
	attrs      map[string]*attr
	rules      []rule
	unresolved []string
	// framework is set for a Terraform Plugin Framework resource.
	framework bool
}

// readResource reads the schema of a Terraform resource of the provider
// and the rules of its custom diff, or an error saying why it could not.
func (r *repo) readResource(resource string) (resourceSource, error) {
	out, err := r.git("grep", "-l", "-F", strconv.Quote(resource), r.rev, "--", "*.go", ":!*_test.go", ":!vendor/**", ":!website/**")
	if err != nil {
		return resourceSource{}, fmt.Errorf("cannot find %s in the source: %w", resource, err)
	}
	e := &ev{r: r}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		file := strings.TrimPrefix(line, r.rev+":")
		p, err := r.load(path.Dir(file))
		if err != nil {
			return resourceSource{}, err
		}
		for _, f := range p.files {
			if r.fset.Position(f.Pos()).Filename != file || strings.HasSuffix(file, "_data_source.go") {
				continue
			}
			root, s, ok := findRoot(p, f, resource)
			if !ok {
				continue
			}
			switch t := root.(type) {
			case *ast.FuncDecl:
				// A typed resource's Arguments(), and its CustomizeDiff().
				x, rs, ok := returned(t.Body, scope{p: p, f: f})
				if !ok {
					return resourceSource{}, fmt.Errorf("cannot read %s's Arguments", resource)
				}
				src := resourceSource{attrs: e.schemaMap(x, rs)}
				if cd, ok := p.funcs[recvType(t.Recv.List[0].Type)+".CustomizeDiff"]; ok {
					src.rules = e.bodyRules(cd.Body, fileScope(p, cd), map[*ast.FuncDecl]bool{})
				}
				src.unresolved = e.unresolved
				return src, nil
			case frameworkRoot:
				attrs, rules := e.framework(t)
				if attrs == nil {
					return resourceSource{}, fmt.Errorf("cannot read %s's framework schema (%s.Schema)", resource, t.typ)
				}
				return resourceSource{attrs: attrs, rules: rules, unresolved: e.unresolved, framework: true}, nil
			case ast.Expr:
				lit, ls, ok := e.resourceLit(t, s)
				if !ok {
					return resourceSource{}, fmt.Errorf("cannot read %s's schema.Resource at %s", resource, r.fset.Position(t.Pos()))
				}
				attrs := e.resource(lit, ls)
				if attrs == nil {
					return resourceSource{}, fmt.Errorf("cannot read %s's schema.Resource at %s", resource, r.fset.Position(t.Pos()))
				}
				src := resourceSource{attrs: attrs}
				if cd, ok := field(lit, "CustomizeDiff"); ok {
					src.rules = e.rules(cd, ls, map[*ast.FuncDecl]bool{})
				}
				src.unresolved = e.unresolved
				return src, nil
			}
		}
	}
	return resourceSource{}, fmt.Errorf("cannot find where %s's schema is registered", resource)
}

// frameworkRoot is a Terraform Plugin Framework resource: the type whose
// Schema method declares its attributes.
type frameworkRoot struct {
	p   *pkg
	typ string
}

// annotated reports whether a function's doc comment registers the
// resource with terraform-provider-aws's annotation (// @SDKResource("name")
// or // @FrameworkResource("name")), and which.
func annotated(fd *ast.FuncDecl, quoted string) (string, bool) {
	if fd.Doc == nil {
		return "", false
	}
	for _, c := range fd.Doc.List {
		for _, kind := range []string{"SDKResource", "FrameworkResource"} {
			if strings.HasPrefix(c.Text, "// @"+kind+"("+quoted) {
				return kind, true
			}
		}
	}
	return "", false
}

// createdType is the type a Framework resource's factory creates (r :=
// &fooResource{}).
func createdType(body *ast.BlockStmt) string {
	var typ string
	ast.Inspect(body, func(n ast.Node) bool {
		if typ != "" {
			return false
		}
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.AND {
			if cl, ok := u.X.(*ast.CompositeLit); ok {
				if id, ok := cl.Type.(*ast.Ident); ok {
					typ = id.Name
				}
			}
		}
		return true
	})
	return typ
}

// findRoot finds a resource's schema in a file: terraform-provider-aws's
// annotated factory (// @SDKResource("<resource>") above a function
// returning its schema.Resource, // @FrameworkResource above one creating
// its type), google's
// registry.Schema{Name: "<resource>", Type: ...Resource, Schema: x}, an
// azurerm registration map's "<resource>": x (in a function of resources,
// not data sources), or a typed resource whose ResourceType returns the
// name (its Arguments method).
func findRoot(p *pkg, f *ast.File, resource string) (any, scope, bool) {
	s := scope{p: p, f: f}
	quoted := strconv.Quote(resource)
	var found any
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if kind, ok := annotated(fd, quoted); ok {
			if kind == "FrameworkResource" {
				if typ := createdType(fd.Body); typ != "" {
					return frameworkRoot{p: p, typ: typ}, s, true
				}
				continue
			}
			if x, _, ok := returned(fd.Body, s); ok {
				return x, s, true
			}
			continue
		}
		if fd.Name.Name == "ResourceType" && fd.Recv != nil {
			if strings.Contains(recvType(fd.Recv.List[0].Type), "DataSource") {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if rs, ok := n.(*ast.ReturnStmt); ok && len(rs.Results) == 1 {
					if lit, ok := rs.Results[0].(*ast.BasicLit); ok && lit.Value == quoted {
						if args, ok := p.funcs[recvType(fd.Recv.List[0].Type)+".Arguments"]; ok {
							found = args
						}
					}
				}
				return true
			})
			if found != nil {
				return found, s, true
			}
			continue
		}
		if strings.Contains(fd.Name.Name, "DataSource") {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if found != nil {
				return false
			}
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var name, typ string
			var schemaX ast.Expr
			for _, el := range cl.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if lit, ok := kv.Key.(*ast.BasicLit); ok && lit.Kind == token.STRING && lit.Value == quoted {
					found = kv.Value
					return false
				}
				if id, ok := kv.Key.(*ast.Ident); ok {
					switch id.Name {
					case "Name":
						if lit, ok := kv.Value.(*ast.BasicLit); ok {
							name = lit.Value
						}
					case "Type":
						if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
							typ = sel.Sel.Name
						}
					case "Schema":
						schemaX = kv.Value
					}
				}
			}
			if name == quoted && schemaX != nil && strings.HasSuffix(typ, "Resource") && !strings.Contains(typ, "DataSource") {
				found = schemaX
				return false
			}
			return true
		})
		if found != nil {
			return found, s, true
		}
	}
	return nil, s, false
}
