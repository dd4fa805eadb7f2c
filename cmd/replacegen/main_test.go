package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// root is the repository root, where the generator runs.
const root = "../.."

// TestEveryKindHasATable fails for a kind a cloud composes that has no
// generated table of replacement-only fields and does not say why it needs
// none (WithoutTable: no Terraform resource), and for a generated path the
// kind's CRD does not have, in either scope.
func TestEveryKindHasATable(t *testing.T) {
	schemas, err := loadCRDs(filepath.Join(root, "..", "shared", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		for _, k := range c.Kinds {
			switch {
			case k.Table == "" && k.NoTable == "":
				t.Errorf("%s %s (%s) has no generated table of replacement-only fields: add its Terraform resource to the extract (go run ./cmd/replacegen -extract), or declare WithoutTable with the reason", name, k.Kind, k.Namespaced)
				continue
			case k.Table != "" && k.NoTable != "":
				t.Errorf("%s %s has a generated table (%s) and says it needs none: %s", name, k.Kind, k.Table, k.NoTable)
			}
			for _, f := range k.Replacements {
				if !f.Generated {
					continue
				}
				path, ok := strings.CutPrefix(f.Path, "spec.forProvider.")
				if !ok {
					t.Errorf("%s %s: generated path %s is not under spec.forProvider", name, k.Kind, f.Path)
					continue
				}
				for _, gvk := range []string{registry.GVK(k.Namespaced, k.Kind), registry.GVK(k.Cluster, k.Name(xr.ClusterScoped))} {
					s, ok := schemas[gvk]
					if !ok {
						continue
					}
					if _, _, ok := s.Lookup(path); !ok {
						t.Errorf("%s %s: generated path %s is not in the CRD of %s", name, k.Kind, f.Path, gvk)
					}
				}
			}
		}
	}
}

// TestTablesCurrent fails when a cloud's zz_replacements.go is not what the
// committed schema extract gives (make check-generated does the same).
func TestTablesCurrent(t *testing.T) {
	t.Chdir(root)
	schemas, err := loadCRDs(filepath.Join("..", "shared", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		want, err := cloudTables(p, schemas)
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join("internal", "clouds", p.cloud, "zz_replacements.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("internal/clouds/%s/zz_replacements.go is out of date: run make generate", p.cloud)
		}
	}
}

// TestCamelPath holds the Terraform-to-CRD name conversion.
func TestCamelPath(t *testing.T) {
	cases := map[string]struct {
		reason string
		attr   string
		want   string
	}{
		"Plain":  {reason: "A name of one word is kept.", attr: "location", want: "location"},
		"Snake":  {reason: "Words after the first are capitalised.", attr: "datapath_provider", want: "datapathProvider"},
		"Nested": {reason: "Each name of a nested path is converted.", attr: "node_config.local_ssd_count", want: "nodeConfig.localSsdCount"},
		"Digits": {reason: "Digits stay as they are.", attr: "master_ipv4_cidr_block", want: "masterIpv4CidrBlock"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, camelPath(tc.attr)); diff != "" {
				t.Errorf("%s\ncamelPath(%q): -want, +got:\n%s", tc.reason, tc.attr, diff)
			}
		})
	}
}

// TestCustomDiffRowsCovered fails for a custom-diff row of a cloud's
// extract (a replacement the provider's custom diff forces on a condition)
// that the kind's merged table does not cover: a generated entry or a hand
// entry at its path or above it, unless the kind's CRD has no such path.
func TestCustomDiffRowsCovered(t *testing.T) {
	t.Chdir(root)
	schemas, err := loadCRDs(filepath.Join("..", "shared", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		rows, _, err := readExtract(p.cloud)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := registry.Lookup(p.cloud)
		kinds := map[string]*registry.ResourceKind{}
		for _, k := range c.Kinds {
			if k.Provider == p.cloud {
				kinds[k.Kind] = k
			}
		}
		for _, r := range rows {
			if r.when == "" {
				continue
			}
			k, ok := kinds[r.kind]
			if !ok {
				t.Errorf("%s: custom-diff row %s.%s (%s) is of kind %s, which the cloud does not compose", p.cloud, r.resource, r.attribute, r.where, r.kind)
				continue
			}
			if _, _, ok := schemas[registry.GVK(k.Namespaced, k.Kind)].Lookup(r.path); !ok {
				continue
			}
			path := "spec.forProvider." + r.path
			covered := false
			for _, f := range k.Replacements {
				if f.Path == path || strings.HasPrefix(path, f.Path+".") {
					covered = true
					break
				}
			}
			if !covered {
				t.Errorf("%s %s: custom-diff row %s.%s (%s, %s) has neither a generated nor a hand entry at %s", p.cloud, r.kind, r.resource, r.attribute, r.when, r.where, path)
			}
		}
	}
}

// TestIndexless holds the list indexes dropped from a custom diff's path.
func TestIndexless(t *testing.T) {
	cases := map[string]struct {
		reason string
		path   string
		want   string
	}{
		"Top":    {reason: "A top-level attribute is kept.", path: "region", want: "region"},
		"Nested": {reason: "A list index is dropped.", path: "compute_config.0.node_role_arn", want: "compute_config.node_role_arn"},
		"Deep":   {reason: "Every list index is dropped.", path: "windows_profile.0.gmsa.0.dns_server", want: "windows_profile.gmsa.dns_server"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, indexless(tc.path)); diff != "" {
				t.Errorf("%s\nindexless(%q): -want, +got:\n%s", tc.reason, tc.path, diff)
			}
		})
	}
}

// TestRuleOf holds the lifecycle.Rule a generated entry names from its
// extract row's when column: each custom diff call's, none for an
// unconditional row or a decrease (a Raise), an error for a call replacegen
// does not know.
func TestRuleOf(t *testing.T) {
	type want struct {
		rule string
		err  bool
	}
	cases := map[string]struct {
		reason string
		when   string
		want   want
	}{
		"Unconditional":    {reason: "A schema ForceNew has no rule.", when: "", want: want{}},
		"IfChange":         {reason: "ForceNewIfChange names its rule.", when: "conditional: ForceNewIfChange", want: want{rule: "ForceNewIfChange"}},
		"If":               {reason: "ForceNewIf names its rule.", when: "conditional: ForceNewIf", want: want{rule: "ForceNewIf"}},
		"DiffForceNew":     {reason: "diff.ForceNew in a condition is DiffForceNew.", when: "conditional: ForceNew", want: want{rule: "DiffForceNew"}},
		"Framework":        {reason: "A Framework RequiresReplaceIf names its rule.", when: "conditional: RequiresReplaceIf", want: want{rule: "RequiresReplaceIf"}},
		"Decrease":         {reason: "A decrease is a Raise, no rule.", when: "conditional: ForceNewIfChange (decrease)", want: want{}},
		"UnknownFailsLoud": {reason: "A call replacegen does not know fails the generation.", when: "conditional: ForceNewSomehow", want: want{err: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rule, err := ruleOf(tc.when)
			if diff := cmp.Diff(tc.want, want{rule: rule, err: err != nil}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nruleOf(%q): -want, +got:\n%s", tc.reason, tc.when, diff)
			}
		})
	}
}
