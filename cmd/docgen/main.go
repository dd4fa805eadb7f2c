// Command docgen writes the reference pages that must not drift from the
// code, from the code:
//
//   - docs/reference/<kind>.md for every XR kind, from its XRD's OpenAPI
//     schema (apis/*/definition.yaml);
//   - docs/reference/environment.md, from the Go types the EnvironmentConfig
//     decodes into and their doc comments;
//   - docs/reference/clouds.md, what each cloud composes, from the cloud
//     registrations and the example stacks rendered through them;
//   - docs/reference/README.md, the index;
//   - the resource graph as Mermaid in README.md, between the lines
//     BeginMarker and EndMarker.
//
// Usage:
//
//	go run ./cmd/docgen            # write them
//	go run ./cmd/docgen -check     # fail, naming each, if one is out of date
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	// Every cloud layer registers itself.
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
)

// Marker lines of the README's generated graph block: the generator
// replaces whatever lies between them.
const (
	BeginMarker = "<!-- BEGIN GENERATED: graph (make generate) -->"
	EndMarker   = "<!-- END GENERATED: graph -->"
)

// ReferenceDir is where the reference pages are written, relative to the
// module's root.
const ReferenceDir = "docs/reference"

// ErrNoMarkers is returned for a README without the graph block's markers.
var ErrNoMarkers = errors.New("has no generated graph block: add the line " + BeginMarker + " and, below it, the line " + EndMarker + " where the resource graph belongs")

func main() {
	check := flag.Bool("check", false, "fail, naming each, if a generated file is out of date instead of writing them")
	root := flag.String("root", ".", "the module's root folder")
	readme := flag.String("readme", "README.md", "the file (relative to root, or absolute) whose graph block is replaced; empty for none")
	flag.Parse()
	if err := run(*root, *readme, *check, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run writes, or with check compares, every generated file.
func run(root, readme string, check bool, log io.Writer) error {
	out, err := Generate(root)
	if err != nil {
		return err
	}
	var stale []string
	for _, name := range sortedKeys(out.Pages) {
		path := filepath.Join(root, filepath.FromSlash(name))
		have, err := os.ReadFile(path) //nolint:gosec // a generated page under root
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("cannot read %s: %w", name, err)
		}
		if bytes.Equal(have, out.Pages[name]) {
			continue
		}
		if check {
			stale = append(stale, name+" is out of date")
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return fmt.Errorf("cannot write %s: %w", name, err)
		}
		if err := os.WriteFile(path, out.Pages[name], 0o644); err != nil { //nolint:gosec // documentation, world-readable
			return fmt.Errorf("cannot write %s: %w", name, err)
		}
	}
	extra, err := unknownPages(root, out.Pages)
	if err != nil {
		return err
	}
	for _, name := range extra {
		msg := name + " is in " + ReferenceDir + " but docgen does not write it: remove it, or generate it"
		if check {
			stale = append(stale, msg)
			continue
		}
		if _, err := fmt.Fprintln(log, "warning: "+msg); err != nil {
			return fmt.Errorf("cannot write a warning: %w", err)
		}
	}
	if readme != "" {
		path := readme
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, readme)
		}
		msg, err := graphBlock(path, readme, out.Graph, check)
		if err != nil {
			return err
		}
		if msg != "" {
			stale = append(stale, msg)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("generated files are out of date: run go run ./cmd/docgen (make generate) and commit them:\n  %s", strings.Join(stale, "\n  "))
	}
	return nil
}

// graphBlock replaces the README's graph block, or with check reports
// that it is out of date.
func graphBlock(path, name, graph string, check bool) (string, error) {
	have, err := os.ReadFile(path) //nolint:gosec // the README under root
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", name, err)
	}
	want, err := ReplaceBlock(have, MermaidBlock(graph))
	if errors.Is(err, ErrNoMarkers) && check {
		return fmt.Sprintf("%s %v", name, err), nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot write the resource graph: %s %w", name, err)
	}
	if bytes.Equal(have, want) {
		return "", nil
	}
	if check {
		return name + "'s graph block is out of date", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %w", name, err)
	}
	if err := os.WriteFile(path, want, fi.Mode().Perm()); err != nil {
		return "", fmt.Errorf("cannot write %s: %w", name, err)
	}
	return "", nil
}

// unknownPages lists the Markdown files of the reference folder that the
// generator does not write: pages of a kind that was renamed or removed.
func unknownPages(root string, pages map[string][]byte) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(ReferenceDir), "*.md"))
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", ReferenceDir, err)
	}
	var out []string
	for _, f := range files {
		name := ReferenceDir + "/" + filepath.Base(f)
		if _, ok := pages[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// MermaidBlock is the content of the README's graph block.
func MermaidBlock(graph string) string {
	return "```mermaid\n" + graph + "```\n"
}

// ReplaceBlock returns content with the lines between the marker lines
// replaced by block. The markers must each be a line of their own, once,
// the begin marker first.
func ReplaceBlock(content []byte, block string) ([]byte, error) {
	lines := strings.SplitAfter(string(content), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimRight(l, "\r\n") {
		case BeginMarker:
			if begin >= 0 {
				return nil, fmt.Errorf("has the line %s twice", BeginMarker)
			}
			begin = i
		case EndMarker:
			if end >= 0 {
				return nil, fmt.Errorf("has the line %s twice", EndMarker)
			}
			end = i
		}
	}
	if begin < 0 || end < 0 {
		return nil, ErrNoMarkers
	}
	if end < begin {
		return nil, fmt.Errorf("has the line %s above the line %s", EndMarker, BeginMarker)
	}
	if !strings.HasSuffix(lines[begin], "\n") {
		lines[begin] += "\n"
	}
	var b strings.Builder
	for _, l := range lines[:begin+1] {
		b.WriteString(l)
	}
	b.WriteString(block)
	for _, l := range lines[end:] {
		b.WriteString(l)
	}
	return []byte(b.String()), nil
}

// Output is everything the generator writes.
type Output struct {
	// Pages are the reference pages by path relative to the root, with
	// slashes.
	Pages map[string][]byte
	// Graph is the Cluster module's resource graph in Mermaid, for the
	// README's block.
	Graph string
}

// Generate renders every page from the sources under root.
func Generate(root string) (*Output, error) {
	out := &Output{Pages: map[string][]byte{}}
	page := func(file string) string { return ReferenceDir + "/" + file }

	xrds, err := LoadXRDs(filepath.Join(root, "apis"))
	if err != nil {
		return nil, err
	}
	var refs []PageRef
	for _, x := range xrds {
		file := strings.ToLower(x.Kind) + ".md"
		if _, dup := out.Pages[page(file)]; dup {
			return nil, fmt.Errorf("cannot write the XR reference: two XRDs are of kind %s", x.Kind)
		}
		out.Pages[page(file)] = XRPage(x, moduleOf(x.Kind))
		refs = append(refs, PageRef{Title: x.Kind, File: file, What: firstSentence(x.Versions[0].Description)})
	}

	src, err := NewSource(root)
	if err != nil {
		return nil, err
	}
	sections, err := Sections()
	if err != nil {
		return nil, err
	}
	if out.Pages[page("environment.md")], err = EnvironmentPage(src, sections); err != nil {
		return nil, fmt.Errorf("cannot write the EnvironmentConfig reference: %w", err)
	}

	stacks, err := Stacks(filepath.Join(root, "examples"))
	if err != nil {
		return nil, fmt.Errorf("cannot render the example stacks: %w", err)
	}
	graph, err := BuildGraph(stacks)
	if err != nil {
		return nil, err
	}
	out.Graph = graph.Of("cluster").Mermaid()
	out.Pages[page("graph.md")] = GraphPage(graph.Mermaid())
	out.Pages[page("clouds.md")] = CloudsPage(stacks, graph)

	out.Pages[page("README.md")] = IndexPage(refs, []PageRef{
		{Title: "EnvironmentConfig", File: "environment.md", What: "every key of the platform's EnvironmentConfigs, its type and what it does."},
		{Title: "The resource graph", File: "graph.md", What: "every module's Component kinds, what waits for what, and how the modules use each other."},
		{Title: "What each cloud composes", File: "clouds.md", What: "per cloud, the managed resources (kind and apiVersion) each Component kind of the model becomes."},
	})
	return out, nil
}

// LoadXRDs reads every XRD under apis/ but the generated legacy ones
// (apis/*-legacy), in the order of modules.All, then by kind.
func LoadXRDs(apis string) ([]*XRD, error) {
	files, err := filepath.Glob(filepath.Join(apis, "*", "definition.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list the XRDs: %w", err)
	}
	var out []*XRD
	for _, f := range files {
		dir := filepath.Base(filepath.Dir(f))
		if strings.HasSuffix(dir, "-legacy") {
			continue
		}
		x, err := LoadXRD(apis, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cannot write the XR reference: no XRD in %s", apis)
	}
	order := func(kind string) int {
		for i, m := range modules.All {
			if slices.Contains(m.XRKinds, kind) {
				return i
			}
		}
		return len(modules.All)
	}
	slices.SortStableFunc(out, func(a, b *XRD) int {
		if c := order(a.Kind) - order(b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out, nil
}

// firstSentence is a description's first sentence.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
