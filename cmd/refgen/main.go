// Command refgen writes, from the provider CRDs, which fields of every kind
// the clouds compose a Crossplane reference resolves: a field X beside an
// XRef or XSelector (a list Xs beside XRefs or XSelector), in
// spec.forProvider. An XR's overrides may not set those fields directly,
// since a value there is used instead of the reference the function wires
// and can name another tenant's resource (registry's tenant policy).
//
//	go run ./cmd/refgen            # write internal/registry/references.go
//	go run ./cmd/refgen -check     # fail if it is out of date
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/cmd/internal/crdschema"
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// out is the generated file.
const out = "internal/registry/references.go"

func main() {
	check := flag.Bool("check", false, "fail if the generated file is out of date instead of writing it")
	crds := flag.String("crds", "../shared/crds", "the provider CRDs")
	flag.Parse()
	if err := run(*crds, *check); err != nil {
		fmt.Fprintln(os.Stderr, "refgen:", err)
		os.Exit(1)
	}
}

func run(crds string, check bool) error {
	schemas, err := load(crds)
	if err != nil {
		return err
	}
	table := map[string][]string{}
	for _, name := range registry.Clouds() {
		cloud, _ := registry.Lookup(name)
		for _, k := range cloud.Kinds {
			if !k.Managed() {
				continue
			}
			for _, s := range []xr.Scope{xr.Namespaced, xr.ClusterScoped} {
				key := registry.GVK(k.APIVersion(s), k.Name(s))
				if _, done := table[key]; done {
					continue
				}
				fp, ok := schemas[key]
				if !ok {
					return fmt.Errorf("cannot find the CRD of %s (cloud %s) under %s", key, name, crds)
				}
				refs, err := references(fp, "")
				if err != nil && strings.Contains(key, ".upbound.io/") {
					return fmt.Errorf("cannot read the references of %s: %w", key, err)
				}
				table[key] = refs
			}
		}
	}
	b, err := render(table)
	if err != nil {
		return err
	}
	if check {
		have, err := os.ReadFile(out)
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", out, err)
		}
		if !bytes.Equal(have, b) {
			return fmt.Errorf("%s is out of date: run make generate and commit it", out)
		}
		return nil
	}
	return os.WriteFile(out, b, 0o600)
}

// schema is a forProvider schema of the provider CRDs.
type schema = crdschema.Schema

// load reads the spec.forProvider schema of every version of every CRD
// under dir, by registry.GVK.
var load = crdschema.Load

// references lists the dotted paths, under prefix, of the fields of s that
// a reference or selector beside them resolves. Items of a list are walked
// under the list's own path. It fails on a reference or selector it cannot
// pair with the field it resolves.
func references(s schema, prefix string) ([]string, error) {
	if s.Items != nil {
		return references(*s.Items, prefix)
	}
	var found []string
	var errs []error
	for name, p := range s.Properties {
		path := prefix + name
		if base, ok := referenceBase(name); ok {
			if _, ok := resolves(s.Properties, base); !ok {
				errs = append(errs, fmt.Errorf("%s: no field beside it that it resolves", path))
			}
			continue
		}
		if resolved(s.Properties, name) {
			found = append(found, path)
		}
		more, err := references(p, path+".")
		found = append(found, more...)
		errs = append(errs, err)
	}
	slices.Sort(found)
	return found, errors.Join(errs...)
}

// referenceBase is what a reference or selector is named after: vpcId of
// vpcIdRef and vpcIdSelector, subnetId of subnetIdRefs; and whether name is
// one. A Secret's key selector (…SecretRef) is not one.
func referenceBase(name string) (string, bool) {
	if strings.HasSuffix(name, "SecretRef") {
		// A sensitive value read from a Secret (upjet's
		// passwordSecretRef), not a reference to another resource.
		return "", false
	}
	for _, suffix := range []string{"Refs", "Ref", "Selector"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && base != "" {
			return base, true
		}
	}
	return "", false
}

// resolves is the field that a reference or selector named after base fills
// among the object's properties, as upjet names them: X of XRef and
// XSelector, a list Xs of XRefs and XSelector, and X of XFromYRef
// (principalArnFromRoleRef fills principalArn).
func resolves(props map[string]schema, base string) (string, bool) {
	for _, field := range []string{base, base + "s"} {
		if _, ok := props[field]; ok {
			return field, true
		}
	}
	if field, _, ok := strings.Cut(base, "From"); ok && field != "" {
		if _, ok := props[field]; ok {
			return field, true
		}
	}
	return "", false
}

// resolved reports whether the object's properties have a reference or
// selector that fills field name.
func resolved(props map[string]schema, name string) bool {
	if _, ok := referenceBase(name); ok {
		return false
	}
	for other := range props {
		if base, ok := referenceBase(other); ok {
			if field, ok := resolves(props, base); ok && field == name {
				return true
			}
		}
	}
	return false
}

// render writes the table as Go source.
func render(table map[string][]string) ([]byte, error) {
	if len(table) == 0 {
		return nil, errors.New("no managed kind is registered")
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by cmd/refgen from the provider CRDs; DO NOT EDIT.\n\n")
	b.WriteString("package registry\n\n")
	b.WriteString("// referenceFields are, by GVK, the fields under spec.forProvider (and\n")
	b.WriteString("// spec.initProvider) of every managed kind a cloud composes that a\n")
	b.WriteString("// reference or selector beside them resolves, read from its CRD.\n")
	b.WriteString("var referenceFields = map[string][]string{\n")
	for _, key := range slices.Sorted(maps.Keys(table)) {
		fmt.Fprintf(&b, "\t%q: {", key)
		for i, p := range table[key] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", p)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
