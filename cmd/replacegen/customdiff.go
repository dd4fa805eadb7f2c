package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// Rule kinds: how a provider's custom diff forces a new resource, when its
// schema alone does not.
const (
	// ruleIfChange: customdiff.ForceNewIfChange(attribute, condition).
	ruleIfChange = "ForceNewIfChange"
	// ruleIf: customdiff.ForceNewIf(attribute, condition).
	ruleIf = "ForceNewIf"
	// ruleForceNew: diff.ForceNew(attribute) in a CustomizeDiff function.
	ruleForceNew = "ForceNew"
	// ruleRequiresReplaceIf: a Framework attribute's
	// RequiresReplaceIf(condition) plan modifier.
	ruleRequiresReplaceIf = "RequiresReplaceIf"
)

// rule is one conditional replacement a provider's custom diff declares:
// the attribute (a dotted path without list indexes), the call that
// declares it and where, and whether the condition is a decrease of the
// value (new < old), which only a Raise entry refuses.
type rule struct {
	attribute, kind, where string
	decrease               bool
}

// String is the rule as the extract's when column gives it.
func (r rule) String() string {
	s := "conditional: " + r.kind
	if r.decrease {
		s += " (decrease)"
	}
	return s
}

// maxRuleDepth bounds the functions a custom diff is followed through.
const maxRuleDepth = 4

// rules reads the replacement rules of a CustomizeDiff value: a
// customdiff.All / Sequence (or azurerm's pluginsdk equivalents) of
// ForceNewIfChange, ForceNewIf, function literals and functions of the
// package, each followed for the diff.ForceNew calls it makes.
func (e *ev) rules(x ast.Expr, s scope, seen map[*ast.FuncDecl]bool) []rule {
	switch t := x.(type) {
	case *ast.FuncLit:
		return e.bodyRules(t.Body, s, seen)
	case *ast.Ident, *ast.SelectorExpr:
		if fd, fs, ok := e.funcDecl(t, s); ok {
			if seen[fd] || len(seen) > 64 {
				return nil
			}
			seen[fd] = true
			return e.bodyRules(fd.Body, fs, seen)
		}
		return nil
	case *ast.CallExpr:
		switch name := callName(t); name {
		case ruleIfChange, ruleIf:
			return e.forceNewIf(t, name, s)
		}
		var out []rule
		for _, a := range t.Args {
			out = append(out, e.rules(a, s, seen)...)
		}
		// A function of the package that returns the custom diff
		// (resourceFooCustomizeDiff()).
		if len(t.Args) == 0 {
			if rx, rs, ok := e.call(t, s); ok && rx != nil && rx != ast.Expr(t) {
				out = append(out, e.rules(rx, rs, seen)...)
			}
		}
		return out
	}
	return nil
}

// funcDecl finds the declaration of a function an identifier or a
// package-qualified name refers to, in the source read.
func (e *ev) funcDecl(x ast.Expr, s scope) (*ast.FuncDecl, scope, bool) {
	switch t := x.(type) {
	case *ast.Ident:
		if fd, ok := s.p.funcs[t.Name]; ok && fd.Body != nil {
			return fd, fileScope(s.p, fd), true
		}
	case *ast.SelectorExpr:
		id, ok := t.X.(*ast.Ident)
		if !ok || s.f == nil {
			return nil, s, false
		}
		ip, ok := s.p.imports[s.f][id.Name]
		if !ok {
			return nil, s, false
		}
		p, err := e.r.load(e.r.dirOf(ip))
		if err != nil {
			return nil, s, false
		}
		if fd, ok := p.funcs[t.Sel.Name]; ok && fd.Body != nil {
			return fd, fileScope(p, fd), true
		}
	}
	return nil, s, false
}

// bodyRules reads the rules of a function body: each diff.ForceNew call,
// each ForceNewIfChange / ForceNewIf it builds, and those of the functions
// of the package it calls with the diff, up to maxRuleDepth deep.
func (e *ev) bodyRules(body *ast.BlockStmt, s scope, seen map[*ast.FuncDecl]bool) []rule {
	if body == nil || len(seen) > maxRuleDepth*16 {
		return nil
	}
	// Local string constants (key := "settings.0.disk_size").
	locals := map[string]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.DEFINE && len(as.Lhs) == len(as.Rhs) {
			for i, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if v, ok := e.constString(as.Rhs[i], s); ok {
						locals[id.Name] = v
					}
				}
			}
		}
		return true
	})
	var out []rule
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch name := callName(c); name {
		case ruleIfChange, ruleIf:
			out = append(out, e.forceNewIf(c, name, s)...)
			return false
		case ruleForceNew:
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok || len(c.Args) != 1 {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "customdiff" {
				return true
			}
			a, ok := e.constString(c.Args[0], s)
			if id, isID := c.Args[0].(*ast.Ident); !ok && isID {
				a, ok = locals[id.Name]
			}
			if ok {
				out = append(out, rule{attribute: indexless(a), kind: ruleForceNew, where: e.at(c)})
			} else {
				e.unresolved = append(e.unresolved, fmt.Sprintf("ForceNew of a computed attribute at %s", e.r.fset.Position(c.Pos())))
			}
			return true
		}
		// A function of the package handed the diff: follow it.
		if id, ok := c.Fun.(*ast.Ident); ok && passesDiff(c) {
			if fd, fs, ok := e.funcDecl(id, s); ok && !seen[fd] {
				seen[fd] = true
				out = append(out, e.bodyRules(fd.Body, fs, seen)...)
			}
		}
		return true
	})
	return out
}

// passesDiff reports whether a call hands on a diff: an argument named d,
// diff, rd or metadata (azurerm's typed resources).
func passesDiff(c *ast.CallExpr) bool {
	for _, a := range c.Args {
		if id, ok := a.(*ast.Ident); ok {
			switch id.Name {
			case "d", "diff", "rd", "metadata":
				return true
			}
		}
	}
	return false
}

// forceNewIf reads a ForceNewIfChange or ForceNewIf call: its attribute
// and whether its condition is a decrease.
func (e *ev) forceNewIf(c *ast.CallExpr, kind string, s scope) []rule {
	if len(c.Args) == 0 {
		return nil
	}
	a, ok := e.constString(c.Args[0], s)
	if !ok {
		e.unresolved = append(e.unresolved, fmt.Sprintf("%s of a computed attribute at %s", kind, e.r.fset.Position(c.Pos())))
		return nil
	}
	r := rule{attribute: indexless(a), kind: kind, where: e.at(c)}
	if kind == ruleIfChange && len(c.Args) > 1 {
		r.decrease = e.decrease(c.Args[1], s)
	}
	return []rule{r}
}

// decrease reports whether a ForceNewIfChange condition (func(ctx, old,
// new, meta) bool) returns new < old: the value may only grow in place.
func (e *ev) decrease(x ast.Expr, s scope) bool {
	var ft *ast.FuncType
	var body *ast.BlockStmt
	switch t := x.(type) {
	case *ast.FuncLit:
		ft, body = t.Type, t.Body
	default:
		fd, _, ok := e.funcDecl(x, s)
		if !ok {
			return false
		}
		ft, body = fd.Type, fd.Body
	}
	var params []string
	for _, f := range ft.Params.List {
		for _, n := range f.Names {
			params = append(params, n.Name)
		}
	}
	if len(params) < 3 {
		return false
	}
	oldName, newName := params[1], params[2]
	var rets []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			if id, ok := r.Results[0].(*ast.Ident); ok && (id.Name == "false" || id.Name == "true") {
				return true
			}
			rets = append(rets, r.Results[0])
		}
		return true
	})
	if len(rets) != 1 {
		return false
	}
	b, ok := rets[0].(*ast.BinaryExpr)
	if !ok {
		return false
	}
	return b.Op == token.LSS && mentions(b.X, newName) && mentions(b.Y, oldName) ||
		b.Op == token.GTR && mentions(b.X, oldName) && mentions(b.Y, newName)
}

// mentions reports whether an expression uses an identifier.
func mentions(x ast.Expr, name string) bool {
	found := false
	ast.Inspect(x, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// at is where a call is: its file and line.
func (e *ev) at(n ast.Node) string {
	p := e.r.fset.Position(n.Pos())
	return p.Filename + ":" + strconv.Itoa(p.Line)
}

// indexless drops the list indexes of a diff's attribute path:
// compute_config.0.node_role_arn is compute_config.node_role_arn.
func indexless(a string) string {
	parts := strings.Split(a, ".")
	out := parts[:0]
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}
