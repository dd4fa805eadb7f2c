package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// schemaDir holds the schema extract, one file per cloud.
const schemaDir = "cmd/replacegen/schema"

// Origins of an extract's rows.
const (
	// originParsed: read from the provider's source by this command.
	originParsed = "parsed"
	// originOracle: copied from the checked-in oracle extract, since the
	// source could not be read.
	originOracle = "oracle"
)

// extractRow is one row of the schema extract: a ForceNew attribute of a
// kind's Terraform resource.
type extractRow struct {
	kind, resource, path, attribute, where, origin string
	block                                          bool
	// when is empty for a schema's ForceNew, else the custom-diff rule
	// that forces a new resource only on a condition (rule.String).
	when string
}

// oracleRow is a row of the oracle extract.
type oracleRow struct {
	kind, resource, path, attribute, behaviour, source string
}

// readOracle reads <dir>/<cloud>.tsv.
func readOracle(dir, cloud string) ([]oracleRow, error) {
	b, err := os.ReadFile(filepath.Join(dir, cloud+".tsv")) //nolint:gosec // the repository's own testdata
	if err != nil {
		return nil, fmt.Errorf("cannot read the oracle extract: %w", err)
	}
	var out []oracleRow
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) < 6 || cols[0] == "crd_kind" {
			continue
		}
		out = append(out, oracleRow{kind: cols[0], resource: cols[1], path: cols[2], attribute: cols[3], behaviour: cols[4], source: cols[5]})
	}
	return out, nil
}

// resources maps each kind of the oracle to its Terraform resource.
func resources(rows []oracleRow) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		if strings.HasPrefix(r.resource, "(") {
			continue
		}
		out[r.kind] = r.resource
	}
	return out
}

// tableKinds are the kinds of a cloud that get a generated table: those of
// its own upjet provider that do not say why they have none.
func tableKinds(cloud string) []*registry.ResourceKind {
	c, _ := registry.Lookup(cloud)
	var out []*registry.ResourceKind
	for _, k := range c.Kinds {
		if k.Provider == cloud && k.NoTable == "" {
			out = append(out, k)
		}
	}
	return out
}

// runExtract reads the providers' source into the schema extract, for
// every cloud whose mirror is given.
func runExtract(oracleDir string, mirrors, revs map[string]*string) error {
	for _, p := range providers {
		dir := *mirrors[p.cloud]
		if dir == "" {
			fmt.Printf("%s: no mirror given (-%s); %s/%s.tsv is kept\n", p.cloud, p.flag, schemaDir, p.cloud)
			continue
		}
		if err := extractCloud(p, dir, *revs[p.cloud], oracleDir); err != nil {
			return fmt.Errorf("%s: %w", p.cloud, err)
		}
	}
	return nil
}

// extractCloud writes one cloud's extract from the mirror at rev (the
// provider's tag when empty).
func extractCloud(p provider, gitDir, rev, oracleDir string) error {
	oracle, err := readOracle(oracleDir, p.cloud)
	if err != nil {
		return err
	}
	res := resources(oracle)
	if rev == "" {
		rev = p.tag
	}
	r := &repo{gitDir: gitDir, rev: rev, module: p.module, fset: token.NewFileSet(), pkgs: map[string]*pkg{}}
	commit := ""
	var man manifest
	if gitDir != originOracle {
		if commit, err = r.commit(); err != nil {
			return fmt.Errorf("cannot find %s in %s: %w", rev, gitDir, err)
		}
		if man, err = r.manifest(); err != nil {
			return err
		}
	}
	at := func(file string) string {
		if c, ok := man[file]; ok {
			return c[:min(len(c), 12)]
		}
		return rev
	}
	var intercepted []rule
	for _, ic := range p.interceptors {
		rs, err := r.interceptorRules(ic)
		if err != nil {
			fmt.Printf("%s: interceptor %s.%s not read (%v): its rules are left out\n", p.cloud, ic.dir, ic.fn, err)
			continue
		}
		intercepted = append(intercepted, rs...)
	}
	var rows []extractRow
	var fallback []string
	for _, k := range tableKinds(p.cloud) {
		resource, ok := res[k.Kind]
		if !ok {
			return fmt.Errorf("cannot tell the Terraform resource of kind %s: add it to %s/%s.tsv", k.Kind, oracleDir, p.cloud)
		}
		var src resourceSource
		err := fmt.Errorf("no source given (-%s=%s)", p.flag, originOracle)
		if gitDir != originOracle {
			src, err = r.readResource(resource)
		}
		if err != nil || len(src.attrs) == 0 {
			fmt.Printf("%s: %s (%s): cannot read the source (%v); its rows come from the oracle extract\n", p.cloud, k.Kind, resource, err)
			fallback = append(fallback, resource)
			rows = append(rows, oracleRows(oracle, k.Kind, resource)...)
			continue
		}
		if len(src.unresolved) > 0 {
			fmt.Printf("%s: %s (%s): %d calls or keys not followed\n", p.cloud, k.Kind, resource, len(slices.Compact(slices.Sorted(slices.Values(src.unresolved)))))
		}
		var flat []row
		flatten(src.attrs, "", &flat, at)
		if len(flat) == 0 && len(src.rules) == 0 {
			rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: "-", attribute: "-", where: "-", origin: originParsed})
		}
		for _, f := range flat {
			rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: camelPath(f.attribute), attribute: f.attribute, where: f.where, origin: originParsed, block: f.block})
		}
		rules := src.rules
		if !src.framework {
			rules = append(rules, intercepted...)
		}
		for _, ru := range rules {
			file, _, _ := strings.Cut(ru.where, ":")
			rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: camelPath(ru.attribute), attribute: ru.attribute, where: ru.where + "@" + at(file), origin: originParsed, when: ru.String()})
		}
		if man != nil {
			// A partial tree's file is a stored commit, not the release:
			// an attribute of the oracle extract (the release) that the
			// file does not declare at all keeps its oracle row.
			rows = append(rows, missingRows(oracle, k.Kind, resource, src.attrs, rules)...)
		}
	}
	return writeExtract(p, rev, commit, man, rows, fallback)
}

// oracleRows are a kind's rows of the oracle extract, for a resource whose
// source could not be read.
func oracleRows(oracle []oracleRow, kind, resource string) []extractRow {
	var rows []extractRow
	for _, o := range oracle {
		if o.kind != kind || o.behaviour != "ForceNew" || strings.ContainsAny(o.path, " ()") || o.path == "-" {
			continue
		}
		rows = append(rows, extractRow{kind: kind, resource: resource, path: o.path, attribute: strings.TrimSuffix(o.attribute, ".#"), where: o.source, origin: originOracle, block: strings.HasSuffix(o.attribute, ".#")})
	}
	if len(rows) == 0 {
		rows = append(rows, extractRow{kind: kind, resource: resource, path: "-", attribute: "-", where: "-", origin: originOracle})
	}
	return rows
}

// missingRows are the oracle extract's rows of a kind for attributes the
// source read does not declare (neither its schema nor its rules): an
// attribute newer than the stored commit, a key whose constant the tree
// lacks, an interceptor the tree does not hold.
func missingRows(oracle []oracleRow, kind, resource string, attrs map[string]*attr, rules []rule) []extractRow {
	known := map[string]bool{}
	for _, ru := range rules {
		known[ru.attribute] = true
	}
	var out []extractRow
	for _, r := range oracleRows(oracle, kind, resource) {
		if r.path == "-" || known[r.attribute] || declared(attrs, r.attribute) {
			continue
		}
		r.where += " (not in the file read)"
		out = append(out, r)
	}
	return out
}

// declared reports whether a schema declares a dotted attribute.
func declared(attrs map[string]*attr, attribute string) bool {
	parts := strings.Split(attribute, ".")
	for i, p := range parts {
		a, ok := attrs[p]
		if !ok {
			return false
		}
		if i == len(parts)-1 {
			return true
		}
		attrs = a.children
	}
	return false
}

// interceptor is a function of the provider that wraps every resource's
// custom diff (terraform-provider-aws's per-resource region): its rules
// apply to every SDKv2 resource.
type interceptor struct {
	dir, fn string
}

// interceptorRules reads an interceptor's rules.
func (r *repo) interceptorRules(ic interceptor) ([]rule, error) {
	p, err := r.load(ic.dir)
	if err != nil {
		return nil, err
	}
	fd, ok := p.funcs[ic.fn]
	if !ok || fd.Body == nil {
		return nil, fmt.Errorf("cannot find func %s in %s", ic.fn, ic.dir)
	}
	e := &ev{r: r}
	return e.bodyRules(fd.Body, fileScope(p, fd), map[*ast.FuncDecl]bool{fd: true}), nil
}

// manifestFile lists, in a partial tree of a provider's source, the
// upstream commit each file was copied from (path, tab, commit).
const manifestFile = "SOURCES.tsv"

// manifest maps the files of a partial tree to their upstream commits; nil
// for a mirror of the provider's repository.
type manifest map[string]string

// manifest reads the partial tree's manifest, if it has one.
func (r *repo) manifest() (manifest, error) {
	if _, err := r.git("cat-file", "-e", r.rev+":"+manifestFile); err != nil {
		return nil, nil //nolint:nilerr // no manifest: a full mirror
	}
	b, err := r.git("show", r.rev+":"+manifestFile)
	if err != nil {
		return nil, err
	}
	m := manifest{}
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) < 2 || strings.HasPrefix(line, "#") {
			continue
		}
		m[cols[0]] = cols[1]
	}
	return m, nil
}

// camelPath converts a dotted Terraform attribute path to the
// spec.forProvider path upjet gives it: each name in lower camel case.
func camelPath(attr string) string {
	parts := strings.Split(attr, ".")
	for i, p := range parts {
		words := strings.Split(p, "_")
		for j := 1; j < len(words); j++ {
			if words[j] != "" {
				words[j] = strings.ToUpper(words[j][:1]) + words[j][1:]
			}
		}
		parts[i] = strings.Join(words, "")
	}
	return strings.Join(parts, ".")
}

// writeExtract writes a cloud's extract with a header naming the source.
func writeExtract(p provider, rev, commit string, man manifest, rows []extractRow, fallback []string) error {
	var b strings.Builder
	if man == nil {
		fmt.Fprintf(&b, "# Schema extract of %s: the ForceNew attributes of the Terraform resource of every kind the cloud composes, and the replacements its custom diff forces on a condition (when: conditional).\n", p.release)
	} else {
		fmt.Fprintf(&b, "# Schema extract of %s files (%s wraps %s, which this is not known to be): the ForceNew attributes of the Terraform resource of every kind the cloud composes, and the replacements its custom diff forces on a condition (when: conditional).\n", path.Base(p.module), p.upjet, p.tag)
	}
	switch {
	case commit == "":
		fmt.Fprintf(&b, "# Not read from source (-%s=%s): no mirror of %s at %s was given; every row is the oracle extract's.\n", p.flag, originOracle, p.module, p.tag)
	case man != nil:
		fmt.Fprintf(&b, "# Read by go run ./cmd/replacegen -extract from a partial tree of %s (%s at %s, commit %s): each file copied whole from the stored index of the repository at the upstream commit its rows name (@commit), not from the %s tag.\n", p.module, manifestFile, rev, commit, p.tag)
		files := make([]string, 0, len(man))
		for f, c := range man {
			files = append(files, f+"@"+c)
		}
		slices.Sort(files)
		fmt.Fprintf(&b, "# Files: %s.\n", strings.Join(files, ", "))
		fmt.Fprintf(&b, "# %s%s\n", sourcePrefix, path.Base(p.module)+", the commit each entry names ("+p.upjet+" wraps "+p.tag+")")
	default:
		fmt.Fprintf(&b, "# Read by go run ./cmd/replacegen -extract from %s at %s (commit %s).\n", p.module, rev, commit)
	}
	if len(fallback) > 0 && commit != "" {
		fmt.Fprintf(&b, "# Rows of %s come from the oracle extract (origin %s): their source could not be read.\n", strings.Join(fallback, ", "), originOracle)
	}
	b.WriteString("crd_kind\ttf_resource\tforProvider_path\ttf_attribute\tsource\torigin\tblock\twhen\n")
	for _, r := range rows {
		block := ""
		if r.block {
			block = "block"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kind, r.resource, r.path, r.attribute, r.where, r.origin, block, r.when)
	}
	if err := os.MkdirAll(schemaDir, 0o750); err != nil {
		return fmt.Errorf("cannot create %s: %w", schemaDir, err)
	}
	out := filepath.Join(schemaDir, p.cloud+".tsv")
	if err := os.WriteFile(out, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	fmt.Printf("%s: wrote %s (%d rows)\n", p.cloud, out, len(rows))
	return nil
}

// sourcePrefix starts the header line of an extract that names the
// source its generated tables are attributed to, when that is not the
// provider's release.
const sourcePrefix = "Source: "

// readExtract reads a cloud's extract: its rows and header comments.
func readExtract(cloud string) ([]extractRow, []string, error) {
	f, err := os.Open(filepath.Join(schemaDir, cloud+".tsv")) //nolint:gosec // the repository's own extract
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the schema extract: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only
	var rows []extractRow
	var header []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		if c, ok := strings.CutPrefix(line, "# "); ok {
			header = append(header, c)
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 7 || cols[0] == "crd_kind" {
			continue
		}
		r := extractRow{kind: cols[0], resource: cols[1], path: cols[2], attribute: cols[3], where: cols[4], origin: cols[5], block: cols[6] == "block"}
		if len(cols) > 7 {
			r.when = cols[7]
		}
		rows = append(rows, r)
	}
	return rows, header, s.Err()
}
