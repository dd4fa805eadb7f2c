package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// root is the module's root folder, from this package's.
const root = "../.."

func mustParse(t *testing.T, s string) *Node {
	t.Helper()
	n, err := ParseYAML([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFlatten(t *testing.T) {
	type args struct {
		schema string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []Field
	}{
		"NestedObjects": {
			reason: "Nested objects are flattened depth first, in the order the schema lists them (not sorted), with required from the parent's list.",
			args: args{schema: `
properties:
  spec:
    description: The spec.
    type: object
    required: [zeta]
    properties:
      zeta:
        description: Listed first.
        type: string
      alpha:
        type: object
        properties:
          beta:
            type: integer
`},
			want: []Field{
				{Path: "spec", Type: "object", Description: "The spec."},
				{Path: "spec.zeta", Type: "string", Required: true, Description: "Listed first."},
				{Path: "spec.alpha", Type: "object"},
				{Path: "spec.alpha.beta", Type: "integer"},
			},
		},
		"ListsAndMaps": {
			reason: "A list's items' fields are path[].field, a map's values' path.<key>.field; a multi-line description is joined onto one line.",
			args: args{schema: `
properties:
  taints:
    type: array
    items:
      type: object
      properties:
        key:
          description: |
            The taint's
            key.
          type: string
  pools:
    type: object
    additionalProperties:
      type: object
      properties:
        size:
          type: string
`},
			want: []Field{
				{Path: "taints", Type: "array of object"},
				{Path: "taints[].key", Type: "string", Description: "The taint's key."},
				{Path: "pools", Type: "map of object"},
				{Path: "pools.<key>.size", Type: "string"},
			},
		},
		"Constraints": {
			reason: "Defaults are shown as written; enums, patterns, bounds (exclusive ones strict), lengths, counts, CEL rules' messages and the items' and values' own constraints are listed.",
			args: args{schema: `
properties:
  mode:
    type: string
    enum: [observe, manage]
    default: observe
  limit:
    type: number
    minimum: 0
    exclusiveMinimum: true
    maximum: 10
  name:
    type: string
    pattern: '^[a-z]+$'
    minLength: 1
    maxLength: 63
  thresholds:
    type: array
    maxItems: 10
    items:
      type: number
      maximum: 1000
  labels:
    type: object
    maxProperties: 32
    additionalProperties:
      type: string
      maxLength: 63
  pool:
    type: object
    x-kubernetes-validations:
    - rule: self.a <= self.b
      message: a must not exceed b
  values:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`},
			want: []Field{
				{Path: "mode", Type: "string", Default: "observe", Constraints: []string{"one of `observe`, `manage`"}},
				{Path: "limit", Type: "number", Constraints: []string{"> 0", "≤ 10"}},
				{Path: "name", Type: "string", Constraints: []string{"pattern `^[a-z]+$`", "length ≥ 1", "length ≤ 63"}},
				{Path: "thresholds", Type: "array of number", Constraints: []string{"items ≤ 10", "items: ≤ 1000"}},
				{Path: "labels", Type: "map of string", Constraints: []string{"keys ≤ 32", "values: length ≤ 63"}},
				{Path: "pool", Type: "object", Constraints: []string{"a must not exceed b"}},
				{Path: "values", Type: "object (free-form)"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Flatten(mustParse(t, tc.args.schema), "")
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nFlatten(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReplaceBlock(t *testing.T) {
	type args struct {
		content string
		block   string
	}
	type want struct {
		content string
		// err is the error wanted; any error when anyErr.
		err    error
		anyErr bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"ReplacesBetweenMarkers": {
			reason: "Whatever lies between the marker lines is replaced; the markers and the rest stay.",
			args:   args{content: "a\n" + BeginMarker + "\nold\nlines\n" + EndMarker + "\nb\n", block: "new\n"},
			want:   want{content: "a\n" + BeginMarker + "\nnew\n" + EndMarker + "\nb\n"},
		},
		"EmptyBlock": {
			reason: "Markers on adjacent lines get the block between them.",
			args:   args{content: BeginMarker + "\n" + EndMarker + "\n", block: "new\n"},
			want:   want{content: BeginMarker + "\nnew\n" + EndMarker + "\n"},
		},
		"Idempotent": {
			reason: "Replacing the block with itself changes nothing.",
			args:   args{content: BeginMarker + "\nnew\n" + EndMarker, block: "new\n"},
			want:   want{content: BeginMarker + "\nnew\n" + EndMarker},
		},
		"NoMarkers": {
			reason: "A file without the markers is an error, ErrNoMarkers, not a silent skip.",
			args:   args{content: "# README\n", block: "new\n"},
			want:   want{err: ErrNoMarkers},
		},
		"OnlyBegin": {
			reason: "A begin marker alone is missing markers.",
			args:   args{content: BeginMarker + "\n", block: "new\n"},
			want:   want{err: ErrNoMarkers},
		},
		"MarkerInsideALine": {
			reason: "A marker must be a line of its own: one quoted in prose does not count.",
			args:   args{content: "see `" + BeginMarker + "` and `" + EndMarker + "`\n", block: "new\n"},
			want:   want{err: ErrNoMarkers},
		},
		"Reversed": {
			reason: "An end marker above the begin marker is an error.",
			args:   args{content: EndMarker + "\n" + BeginMarker + "\n", block: "new\n"},
			want:   want{anyErr: true},
		},
		"Twice": {
			reason: "Two blocks are an error: which one to replace is not clear.",
			args:   args{content: BeginMarker + "\n" + EndMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n", block: "new\n"},
			want:   want{anyErr: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReplaceBlock([]byte(tc.args.content), tc.args.block)
			switch {
			case tc.want.anyErr:
				if err == nil {
					t.Errorf("%s\nReplaceBlock(...): want an error, got none", tc.reason)
				}
				return
			case tc.want.err != nil:
				if !errors.Is(err, tc.want.err) {
					t.Errorf("%s\nReplaceBlock(...): want error %v, got %v", tc.reason, tc.want.err, err)
				}
				return
			case err != nil:
				t.Fatalf("%s\nReplaceBlock(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.content, string(got)); diff != "" {
				t.Errorf("%s\nReplaceBlock(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestGraphBlock writes and checks the graph block of a README fixture
// (testdata/readme.md, which has the markers) and of one without them.
func TestGraphBlock(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "readme.md"))
	if err != nil {
		t.Fatal(err)
	}
	written, err := ReplaceBlock(fixture, MermaidBlock("flowchart LR\n"))
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		content string
		check   bool
	}
	type want struct {
		msg     string
		err     bool
		content string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Write": {
			reason: "Write mode replaces the block in place.",
			args:   args{content: string(fixture)},
			want:   want{content: string(written)},
		},
		"CheckOutOfDate": {
			reason: "Check mode names a block that is out of date, and leaves the file.",
			args:   args{content: string(fixture), check: true},
			want:   want{msg: "README.md's graph block is out of date", content: string(fixture)},
		},
		"CheckUpToDate": {
			reason: "Check mode reports nothing for a block that is up to date.",
			args:   args{content: string(written), check: true},
			want:   want{content: string(written)},
		},
		"WriteWithoutMarkers": {
			reason: "Write mode fails, with a clear error, for a README without the markers.",
			args:   args{content: "# README\n"},
			want:   want{err: true, content: "# README\n"},
		},
		"CheckWithoutMarkers": {
			reason: "Check mode names a README without the markers as out of date.",
			args:   args{content: "# README\n", check: true},
			want:   want{msg: "README.md " + ErrNoMarkers.Error(), content: "# README\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "README.md")
			if err := os.WriteFile(path, []byte(tc.args.content), 0o600); err != nil {
				t.Fatal(err)
			}
			msg, err := graphBlock(path, "README.md", "flowchart LR\n", tc.args.check)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\ngraphBlock(...): want error %v, got %v", tc.reason, tc.want.err, err)
			}
			if diff := cmp.Diff(tc.want.msg, msg); diff != "" {
				t.Errorf("%s\ngraphBlock(...): -want, +got:\n%s", tc.reason, diff)
			}
			got, err := os.ReadFile(path) //nolint:gosec // the test's own file
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.content, string(got)); diff != "" {
				t.Errorf("%s\nthe README after graphBlock(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMermaid(t *testing.T) {
	mods := []modules.Module{
		{Name: "a", XRKinds: []string{"Alpha"}, Kinds: []component.Kind{"Net", "Node-Pool"}},
		{Name: "b", XRKinds: []string{"Beta"}},
	}
	type args struct {
		g *Graph
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Graph": {
			reason: "Modules are subgraphs (or a node without Component kinds), node IDs alphanumeric, labels quoted; an edge on every cloud has no label, one on some names them; links are dotted; kinds no example renders are dashed.",
			args: args{g: &Graph{
				Modules:  mods,
				Clouds:   []string{"aws", "gcp"},
				Edges:    map[Edge][]string{{From: "Node-Pool", To: "Net"}: {"aws", "gcp"}, {From: "Net", To: "Node-Pool"}: {"aws"}},
				Links:    map[Link][]string{{Kind: "Node-Pool", Module: "b", Nested: true}: {"gcp"}, {Kind: "Net", Module: "b"}: {"aws", "gcp"}},
				Rendered: map[component.Kind]bool{"Net": true},
			}},
			want: `---
title: "` + MermaidTitle + `"
---
flowchart LR
  subgraph modulea["Alpha (module a)"]
    kNet["Net"]
    kNodePool["Node-Pool"]
  end
  moduleb["Beta XR: composes no Component kinds of the clouds"]
  kNet --> kNodePool
  kNodePool -->|"aws"| kNet
  kNodePool -.->|"nested XR (gcp)"| moduleb
  kNet -.->|"clusterRef"| moduleb
  classDef unrendered stroke-dasharray: 4 4
  class kNodePool unrendered
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.args.g.Mermaid()); diff != "" {
				t.Errorf("%s\nMermaid(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestGenerateDeterministic fails when two runs of the generator differ:
// a page that changes from run to run can never be up to date.
func TestGenerateDeterministic(t *testing.T) {
	first, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two runs of Generate differ: -first, +second:\n%s", diff)
	}
}

// TestReferenceUpToDate fails when a committed page of docs/reference
// differs from what the generator writes, or is not one it writes. The
// README's graph block is left to go run ./cmd/docgen -check.
func TestReferenceUpToDate(t *testing.T) {
	out, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(out.Pages) {
		have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v: run go run ./cmd/docgen (make generate) and commit it", name, err)
			continue
		}
		if diff := cmp.Diff(string(out.Pages[name]), string(have)); diff != "" {
			t.Errorf("%s is out of date: run go run ./cmd/docgen (make generate) and commit it: -generated, +committed:\n%s", name, diff)
		}
	}
	extra, err := unknownPages(root, out.Pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range extra {
		t.Errorf("%s is not written by the generator: remove it, or generate it", name)
	}
}

// TestXRDsDocumented fails when a field of an XRD has no description: the
// reference would leave it unexplained, and so would kubectl explain.
func TestXRDsDocumented(t *testing.T) {
	xrds, err := LoadXRDs(filepath.Join(root, "apis"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, x := range xrds {
		for _, v := range x.Versions {
			for _, p := range v.Undocumented() {
				missing = append(missing, "apis/"+x.Dir+"/definition.yaml: "+p)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d XRD fields have no description: add one to each, then run go run ./cmd/xrdgen for the legacy XRDs:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// TestStacksCoverEveryModule fails when a module with Components has no
// example stack on some cloud (exampleFiles, and a case in render): its
// composed resources would be missing from the generated docs.
func TestStacksCoverEveryModule(t *testing.T) {
	stacks, err := Stacks(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, st := range stacks {
		if len(st.Rendered) == 0 {
			t.Errorf("%s (%s): the stack renders nothing", st.Example, st.Module)
		}
		got[st.Cloud+"/"+st.Module] = true
	}
	for _, m := range modules.All {
		if len(m.Kinds) == 0 {
			continue
		}
		for _, cloud := range registry.Clouds() {
			if !got[cloud+"/"+m.Name] {
				t.Errorf("module %q has no example stack on %s: add its example to exampleFiles and a case to render", m.Name, cloud)
			}
		}
	}
}
