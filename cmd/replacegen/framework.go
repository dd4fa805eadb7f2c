package main

import (
	"fmt"
	"go/ast"
	"strings"
)

// framework reads a Terraform Plugin Framework resource's schema: the
// schema.Schema its Schema method sets, an attribute forcing a new resource
// when one of its plan modifiers is RequiresReplace (or
// RequiresReplaceIfConfigured), a RequiresReplaceIf modifier making a
// conditional rule.
func (e *ev) framework(root frameworkRoot) (map[string]*attr, []rule) {
	fd, ok := root.p.funcs[root.typ+".Schema"]
	if !ok || fd.Body == nil {
		return nil, nil
	}
	s := fileScope(root.p, fd)
	var lit *ast.CompositeLit
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if lit != nil {
			return false
		}
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		if sel, ok := as.Lhs[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Schema" {
			if cl, ok := as.Rhs[0].(*ast.CompositeLit); ok {
				lit = cl
			}
		}
		return true
	})
	if lit == nil {
		return nil, nil
	}
	var rules []rule
	attrs := e.fwObject(lit, s, "", &rules)
	return attrs, rules
}

// fwObject reads the Attributes and Blocks of a schema, a nested block's
// object or a nested attribute's object.
func (e *ev) fwObject(cl *ast.CompositeLit, s scope, prefix string, rules *[]rule) map[string]*attr {
	out := map[string]*attr{}
	for _, key := range []string{"Attributes", "Blocks"} {
		v, ok := field(cl, key)
		if !ok {
			continue
		}
		rv, rs, ok := e.resolve(v, s)
		if !ok {
			continue
		}
		m, ok := rv.(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, el := range m.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			name, ok := e.constString(kv.Key, rs)
			if !ok {
				e.unresolved = append(e.unresolved, fmt.Sprintf("key at %s", e.r.fset.Position(kv.Key.Pos())))
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			if a := e.fwAttr(kv, rs, path, rules); a != nil {
				out[name] = a
			}
		}
	}
	return out
}

// fwAttr reads one Framework attribute or block.
func (e *ev) fwAttr(kv *ast.KeyValueExpr, s scope, path string, rules *[]rule) *attr {
	rx, rs, ok := e.resolve(kv.Value, s)
	if !ok {
		return nil
	}
	cl, ok := rx.(*ast.CompositeLit)
	if !ok {
		e.unresolved = append(e.unresolved, fmt.Sprintf("attribute %s at %s", path, e.r.fset.Position(kv.Pos())))
		return nil
	}
	a := &attr{file: e.r.fset.Position(kv.Pos()).Filename, from: e.r.fset.Position(kv.Pos()).Line, to: e.r.fset.Position(kv.End()).Line}
	if pm, ok := field(cl, "PlanModifiers"); ok {
		ast.Inspect(pm, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch callName(c) {
			case "RequiresReplace", "RequiresReplaceIfConfigured":
				a.forceNew = true
			case "RequiresReplaceIf":
				*rules = append(*rules, rule{attribute: path, kind: ruleRequiresReplaceIf, where: e.at(c)})
			}
			return false
		})
	}
	switch {
	case strings.HasPrefix(typeName(cl.Type), "SingleNested"):
		a.children = e.fwObject(cl, rs, path, rules)
	default:
		if v, ok := field(cl, "NestedObject"); ok {
			if nx, ns, ok := e.resolve(v, rs); ok {
				if ncl, ok := nx.(*ast.CompositeLit); ok {
					a.children = e.fwObject(ncl, ns, path, rules)
				}
			}
		}
	}
	return a
}

// typeName is the name of a composite literal's type.
func typeName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}
