package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// readResource reads the schema of a Terraform resource of the provider:
// its attributes, or an error saying why it could not.
func (r *repo) readResource(resource string) (map[string]*attr, []string, error) {
	out, err := r.git("grep", "-l", "-F", strconv.Quote(resource), r.rev, "--", "*.go", ":!*_test.go", ":!vendor/**", ":!website/**")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot find %s in the source: %w", resource, err)
	}
	e := &ev{r: r}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		file := strings.TrimPrefix(line, r.rev+":")
		p, err := r.load(path.Dir(file))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range p.files {
			if r.fset.Position(f.Pos()).Filename != file || strings.HasSuffix(file, "_data_source.go") {
				continue
			}
			if root, s, ok := findRoot(p, f, resource); ok {
				switch t := root.(type) {
				case *ast.FuncDecl:
					// A typed resource's Arguments().
					x, rs, ok := returned(t.Body, scope{p: p, f: f})
					if !ok {
						return nil, nil, fmt.Errorf("cannot read %s's Arguments", resource)
					}
					return e.schemaMap(x, rs), e.unresolved, nil
				case ast.Expr:
					attrs := e.resource(t, s)
					if attrs == nil {
						return nil, e.unresolved, fmt.Errorf("cannot read %s's schema.Resource at %s", resource, r.fset.Position(t.Pos()))
					}
					return attrs, e.unresolved, nil
				}
			}
		}
	}
	return nil, nil, fmt.Errorf("cannot find where %s's schema is registered", resource)
}

// findRoot finds a resource's schema in a file: google's
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
