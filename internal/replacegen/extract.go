package main

import (
	"bufio"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// schemaDir holds the schema extract, one file per cloud.
const schemaDir = "internal/replacegen/schema"

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
func tableKinds(cloud string) []*registry.Kind {
	c, _ := registry.Lookup(cloud)
	var out []*registry.Kind
	for _, k := range c.Kinds {
		if k.Provider == cloud && k.NoTable == "" {
			out = append(out, k)
		}
	}
	return out
}

// runExtract reads the providers' source into the schema extract, for
// every cloud whose mirror is given.
func runExtract(oracleDir string, mirrors map[string]*string) error {
	for _, p := range providers {
		dir := *mirrors[p.cloud]
		if dir == "" {
			fmt.Printf("%s: no mirror given (-%s); %s/%s.tsv is kept\n", p.cloud, p.flag, schemaDir, p.cloud)
			continue
		}
		if err := extractCloud(p, dir, oracleDir); err != nil {
			return fmt.Errorf("%s: %w", p.cloud, err)
		}
	}
	return nil
}

// extractCloud writes one cloud's extract.
func extractCloud(p provider, gitDir, oracleDir string) error {
	oracle, err := readOracle(oracleDir, p.cloud)
	if err != nil {
		return err
	}
	res := resources(oracle)
	r := &repo{gitDir: gitDir, rev: p.tag, module: p.module, fset: token.NewFileSet(), pkgs: map[string]*pkg{}}
	commit := ""
	if gitDir != originOracle {
		if commit, err = r.commit(); err != nil {
			return fmt.Errorf("cannot find %s in %s: %w", p.tag, gitDir, err)
		}
	}
	var rows []extractRow
	var fallback []string
	for _, k := range tableKinds(p.cloud) {
		resource, ok := res[k.Kind]
		if !ok {
			return fmt.Errorf("cannot tell the Terraform resource of kind %s: add it to %s/%s.tsv", k.Kind, oracleDir, p.cloud)
		}
		var attrs map[string]*attr
		var unresolved []string
		err := fmt.Errorf("no source given (-%s=%s)", p.flag, originOracle)
		if gitDir != originOracle {
			attrs, unresolved, err = r.readResource(resource)
		}
		if err != nil || len(attrs) == 0 {
			fmt.Printf("%s: %s (%s): cannot read the source (%v); its rows come from the oracle extract\n", p.cloud, k.Kind, resource, err)
			fallback = append(fallback, resource)
			n := 0
			for _, o := range oracle {
				if o.kind != k.Kind || o.behaviour != "ForceNew" || strings.ContainsAny(o.path, " ()") || o.path == "-" {
					continue
				}
				rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: o.path, attribute: strings.TrimSuffix(o.attribute, ".#"), where: o.source, origin: originOracle, block: strings.HasSuffix(o.attribute, ".#")})
				n++
			}
			if n == 0 {
				rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: "-", attribute: "-", where: "-", origin: originOracle})
			}
			continue
		}
		if len(unresolved) > 0 {
			fmt.Printf("%s: %s (%s): calls not followed: %s\n", p.cloud, k.Kind, resource, strings.Join(slices.Compact(slices.Sorted(slices.Values(unresolved))), ", "))
		}
		var flat []row
		flatten(attrs, "", &flat, p.tag)
		if len(flat) == 0 {
			rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: "-", attribute: "-", where: "-", origin: originParsed})
		}
		for _, f := range flat {
			rows = append(rows, extractRow{kind: k.Kind, resource: resource, path: camelPath(f.attribute), attribute: f.attribute, where: f.where, origin: originParsed, block: f.block})
		}
	}
	return writeExtract(p, commit, rows, fallback)
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
func writeExtract(p provider, commit string, rows []extractRow, fallback []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Schema extract of %s: the ForceNew attributes of the Terraform resource of every kind the cloud composes.\n", p.release)
	if commit == "" {
		fmt.Fprintf(&b, "# Not read from source (-%s=%s): no mirror of %s at %s was given; every row is the oracle extract's.\n", p.flag, originOracle, p.module, p.tag)
	} else {
		fmt.Fprintf(&b, "# Read by go run ./internal/replacegen -extract from %s at %s (commit %s).\n", p.module, p.tag, commit)
	}
	if len(fallback) > 0 && commit != "" {
		fmt.Fprintf(&b, "# Rows of %s come from the oracle extract (origin %s): their source could not be read.\n", strings.Join(fallback, ", "), originOracle)
	}
	b.WriteString("crd_kind\ttf_resource\tforProvider_path\ttf_attribute\tsource\torigin\tblock\n")
	for _, r := range rows {
		block := ""
		if r.block {
			block = "block"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kind, r.resource, r.path, r.attribute, r.where, r.origin, block)
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
		rows = append(rows, extractRow{kind: cols[0], resource: cols[1], path: cols[2], attribute: cols[3], where: cols[4], origin: cols[5], block: cols[6] == "block"})
	}
	return rows, header, s.Err()
}
