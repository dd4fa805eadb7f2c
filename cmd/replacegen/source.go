package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
)

// repo is a Terraform provider's source at one tag, read from a git
// directory (a mirror) without a work tree.
type repo struct {
	gitDir, rev, module string
	fset                *token.FileSet
	pkgs                map[string]*pkg
}

// git runs git on the mirror.
func (r *repo) git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + r.gitDir}, args...)...) //nolint:gosec // the generator's own mirror
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cannot run git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// commit is the commit the tag names.
func (r *repo) commit() (string, error) {
	out, err := r.git("rev-parse", r.rev+"^{commit}")
	return strings.TrimSpace(string(out)), err
}

// pkg is one Go package of the source: its files, functions, methods and
// package-level variables.
type pkg struct {
	dir   string
	funcs map[string]*ast.FuncDecl
	vars  map[string]ast.Expr
	// imports maps each file's import names to import paths.
	imports map[*ast.File]map[string]string
	fileOf  map[ast.Node]*ast.File
	files   []*ast.File
}

// load parses the package in dir (non-test files).
func (r *repo) load(dir string) (*pkg, error) {
	if p, ok := r.pkgs[dir]; ok {
		return p, nil
	}
	out, err := r.git("ls-tree", "--name-only", r.rev, dir+"/")
	if err != nil {
		return nil, err
	}
	p := &pkg{dir: dir, funcs: map[string]*ast.FuncDecl{}, vars: map[string]ast.Expr{}, imports: map[*ast.File]map[string]string{}, fileOf: map[ast.Node]*ast.File{}}
	for _, name := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := r.git("show", r.rev+":"+name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(r.fset, name, src, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("cannot parse %s: %w", name, err)
		}
		p.files = append(p.files, f)
		imps := map[string]string{}
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			n := path.Base(ip)
			if is.Name != nil {
				n = is.Name.Name
			}
			imps[n] = ip
		}
		p.imports[f] = imps
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					key = recvType(d.Recv.List[0].Type) + "." + key
				}
				p.funcs[key] = d
				p.fileOf[d] = f
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							p.vars[n.Name] = vs.Values[i]
							p.fileOf[vs.Values[i]] = f
						}
					}
				}
			}
		}
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("cannot find Go files in %s at %s", dir, r.rev)
	}
	r.pkgs[dir] = p
	return p, nil
}

// recvType is a method receiver's type name.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	}
	return ""
}

// dirOf is the directory of an import path in the repository: the
// module's own packages, else vendor/.
func (r *repo) dirOf(importPath string) string {
	if rest, ok := strings.CutPrefix(importPath, r.module+"/"); ok {
		return rest
	}
	return "vendor/" + importPath
}

// attr is one attribute of a Terraform resource's schema.
type attr struct {
	forceNew bool
	file     string
	from, to int
	// children are a block's attributes; nil for a plain attribute.
	children map[string]*attr
}

// scope is where an expression is read: its package and file, and the
// bindings of the parameters of the function it is in.
type scope struct {
	p      *pkg
	f      *ast.File
	params map[string]bound
}

// bound is an argument a parameter is bound to, in the caller's scope.
type bound struct {
	e ast.Expr
	s scope
}

// ev evaluates schema expressions; depth bounds the calls it follows.
type ev struct {
	r     *repo
	depth int
	// unresolved are the calls it could not follow, for the report.
	unresolved []string
}

// fileScope is the scope of a node of a package.
func fileScope(p *pkg, n ast.Node) scope {
	return scope{p: p, f: p.fileOf[n]}
}

// resolve follows an identifier, a package-level variable or a function
// call to the expression it stands for, and the scope to read it in.
func (e *ev) resolve(x ast.Expr, s scope) (ast.Expr, scope, bool) {
	for range 16 {
		switch t := x.(type) {
		case *ast.ParenExpr:
			x = t.X
			continue
		case *ast.UnaryExpr:
			if t.Op == token.AND {
				x = t.X
				continue
			}
		case *ast.Ident:
			if b, ok := s.params[t.Name]; ok {
				x, s = b.e, b.s
				continue
			}
			if v, ok := s.p.vars[t.Name]; ok {
				x, s = v, fileScope(s.p, v)
				continue
			}
		case *ast.SelectorExpr:
			if id, ok := t.X.(*ast.Ident); ok && s.f != nil {
				if ip, ok := s.p.imports[s.f][id.Name]; ok {
					p, err := e.r.load(e.r.dirOf(ip))
					if err != nil {
						e.unresolved = append(e.unresolved, id.Name+"."+t.Sel.Name)
						return nil, s, false
					}
					if v, ok := p.vars[t.Sel.Name]; ok {
						x, s = v, fileScope(p, v)
						continue
					}
				}
			}
		case *ast.CallExpr:
			rx, rs, ok := e.call(t, s)
			if !ok {
				return t, s, true
			}
			x, s = rx, rs
			continue
		}
		return x, s, true
	}
	return x, s, true
}

// call follows a function call to the expression its function returns,
// with its parameters bound to the call's arguments.
func (e *ev) call(c *ast.CallExpr, s scope) (ast.Expr, scope, bool) {
	var fd *ast.FuncDecl
	var p *pkg
	switch f := c.Fun.(type) {
	case *ast.Ident:
		fd, p = s.p.funcs[f.Name], s.p
	case *ast.SelectorExpr:
		id, ok := f.X.(*ast.Ident)
		if !ok || s.f == nil {
			return nil, s, false
		}
		ip, ok := s.p.imports[s.f][id.Name]
		if !ok {
			return nil, s, false
		}
		lp, err := e.r.load(e.r.dirOf(ip))
		if err != nil {
			e.unresolved = append(e.unresolved, id.Name+"."+f.Sel.Name)
			return nil, s, false
		}
		fd, p = lp.funcs[f.Sel.Name], lp
	case *ast.FuncLit:
		return returned(f.Body, s)
	}
	if fd == nil || fd.Body == nil {
		return nil, s, false
	}
	ns := scope{p: p, f: p.fileOf[fd], params: map[string]bound{}}
	i := 0
	for _, fl := range fd.Type.Params.List {
		for _, n := range fl.Names {
			if i < len(c.Args) {
				ns.params[n.Name] = bound{e: c.Args[i], s: s}
			}
			i++
		}
	}
	return returned(fd.Body, ns)
}

// returned is the expression a function body returns last; a returned
// variable is followed to the value it was declared with.
func returned(body *ast.BlockStmt, s scope) (ast.Expr, scope, bool) {
	var ret ast.Expr
	assigned := map[string]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch t := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(t.Results) == 1 {
				ret = t.Results[0]
			}
		case *ast.AssignStmt:
			for i, l := range t.Lhs {
				if id, ok := l.(*ast.Ident); ok && i < len(t.Rhs) {
					if _, seen := assigned[id.Name]; !seen {
						assigned[id.Name] = t.Rhs[i]
					}
				}
			}
		case *ast.ValueSpec:
			for i, n := range t.Names {
				if i < len(t.Values) {
					assigned[n.Name] = t.Values[i]
				}
			}
		}
		return true
	})
	if id, ok := ret.(*ast.Ident); ok {
		if v, ok := assigned[id.Name]; ok {
			ret = v
		}
	}
	return ret, s, ret != nil
}

// schemaMap reads a map of attribute names to schemas.
func (e *ev) schemaMap(x ast.Expr, s scope) map[string]*attr {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > 40 {
		return nil
	}
	// MergeSchemas(a, b): the union of its arguments.
	if c, ok := x.(*ast.CallExpr); ok && callName(c) == "MergeSchemas" {
		out := map[string]*attr{}
		for _, a := range c.Args {
			for k, v := range e.schemaMap(a, s) {
				out[k] = v
			}
		}
		return out
	}
	x, s, ok := e.resolve(x, s)
	if !ok {
		return nil
	}
	if c, ok := x.(*ast.CallExpr); ok && callName(c) == "MergeSchemas" {
		return e.schemaMap(c, s)
	}
	cl, ok := x.(*ast.CompositeLit)
	if !ok {
		if x != nil {
			e.unresolved = append(e.unresolved, fmt.Sprintf("%T at %s", x, e.r.fset.Position(x.Pos())))
		}
		return nil
	}
	out := map[string]*attr{}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		name, ok := e.constString(kv.Key, s)
		if !ok {
			e.unresolved = append(e.unresolved, fmt.Sprintf("key at %s", e.r.fset.Position(kv.Key.Pos())))
			continue
		}
		a := e.schema(kv.Value, s)
		if a == nil {
			continue
		}
		if a.file == "" {
			a.file = e.r.fset.Position(kv.Pos()).Filename
			a.from, a.to = e.r.fset.Position(kv.Pos()).Line, e.r.fset.Position(kv.End()).Line
		}
		out[name] = a
	}
	return out
}

// constString is the string a key or argument stands for: a literal, or a
// constant of the package or of one it imports (terraform-provider-aws
// names its attributes names.AttrName).
func (e *ev) constString(x ast.Expr, s scope) (string, bool) {
	rx, _, ok := e.resolve(x, s)
	if !ok {
		return "", false
	}
	lit, ok := rx.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

// callName is the name of the function a call calls.
func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// schema reads one attribute's schema: ForceNew and, for a block, the
// attributes of its Elem.
func (e *ev) schema(x ast.Expr, s scope) *attr {
	at := e.r.fset.Position(x.Pos())
	rx, rs, ok := e.resolve(x, s)
	if !ok {
		return nil
	}
	cl, ok := rx.(*ast.CompositeLit)
	if !ok {
		e.unresolved = append(e.unresolved, fmt.Sprintf("schema %T at %s", rx, at))
		return nil
	}
	a := &attr{}
	if rx != x {
		p := e.r.fset.Position(rx.Pos())
		a.file, a.from, a.to = p.Filename, p.Line, e.r.fset.Position(rx.End()).Line
	}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			continue
		}
		switch key.Name {
		case "ForceNew":
			if id, ok := kv.Value.(*ast.Ident); ok && id.Name == "true" {
				a.forceNew = true
			}
		case "Elem":
			if res := e.resource(kv.Value, rs); res != nil {
				a.children = res
			}
		}
	}
	return a
}

// resource reads a schema.Resource's attributes; nil when the expression is
// not a resource (an Elem that is a plain schema).
func (e *ev) resource(x ast.Expr, s scope) map[string]*attr {
	cl, rs, ok := e.resourceLit(x, s)
	if !ok {
		return nil
	}
	if v, ok := field(cl, "Schema"); ok {
		return e.schemaMap(v, rs)
	}
	// SchemaFunc: func() map[string]*schema.Schema { return ... }.
	if v, ok := field(cl, "SchemaFunc"); ok {
		if fl, ok := v.(*ast.FuncLit); ok {
			if x, xs, ok := returned(fl.Body, rs); ok {
				return e.schemaMap(x, xs)
			}
		}
		if x, xs, ok := e.resolve(&ast.CallExpr{Fun: v}, rs); ok {
			return e.schemaMap(x, xs)
		}
	}
	return map[string]*attr{}
}

// resourceLit follows an expression to the schema.Resource literal it
// stands for, and the scope to read it in.
func (e *ev) resourceLit(x ast.Expr, s scope) (*ast.CompositeLit, scope, bool) {
	rx, rs, ok := e.resolve(x, s)
	if !ok {
		return nil, s, false
	}
	cl, ok := rx.(*ast.CompositeLit)
	if !ok || !typeNamed(cl.Type, "Resource") {
		return nil, s, false
	}
	return cl, rs, true
}

// field is the value of a composite literal's field.
func field(cl *ast.CompositeLit, name string) (ast.Expr, bool) {
	for _, el := range cl.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == name {
				return kv.Value, true
			}
		}
	}
	return nil, false
}

// typeNamed reports whether a composite literal's type is the named one
// (schema.Resource, pluginsdk.Resource).
func typeNamed(t ast.Expr, name string) bool {
	switch t := t.(type) {
	case *ast.SelectorExpr:
		return t.Sel.Name == name
	case *ast.Ident:
		return t.Name == name
	}
	return false
}

// row is one ForceNew attribute: its dotted Terraform path and where it
// is declared.
type row struct {
	attribute, where string
	block            bool
}

// flatten lists the ForceNew attributes of a schema, blocks first; at
// names the revision a file was read at.
func flatten(attrs map[string]*attr, prefix string, out *[]row, at func(file string) string) {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		a := attrs[k]
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if a.forceNew {
			*out = append(*out, row{attribute: p, where: fmt.Sprintf("%s:%d-%d@%s", a.file, a.from, a.to, at(a.file)), block: a.children != nil})
		}
		if a.children != nil {
			flatten(a.children, p, out, at)
		}
	}
}
