// Package crdschema reads what the code generators need of the provider
// CRDs (../shared/crds): the spec.forProvider schema of every version of
// every kind. cmd/refgen and cmd/replacegen share it; the function does not
// link it.
package crdschema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// A Schema is an OpenAPI v3 schema, as far as the generators read it.
type Schema struct {
	Type       string            `json:"type"`
	Properties map[string]Schema `json:"properties"`
	Items      *Schema           `json:"items"`
}

// crd is the part of a CustomResourceDefinition the generators read.
type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema Schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// Load reads the spec.forProvider schema of every version of every CRD
// under dir (one folder per provider), by registry.GVK. Where two files
// hold one kind (another release of the same provider, gcp-v2.6.0 beside
// gcp), the first in name order serves.
func Load(dir string) (map[string]Schema, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("cannot list the CRDs under %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("cannot find a CRD under %s", dir)
	}
	out := map[string]Schema{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the shared provider CRDs
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", f, err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---")) {
			var c crd
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", f, err)
			}
			if c.Kind != "CustomResourceDefinition" {
				continue
			}
			for _, v := range c.Spec.Versions {
				key := registry.GVK(c.Spec.Group+"/"+v.Name, c.Spec.Names.Kind)
				if _, dup := out[key]; dup {
					continue
				}
				out[key] = v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
			}
		}
	}
	return out, nil
}

// Lookup finds a dotted path in a forProvider schema, through the items
// of lists; it returns the schema of the path and of the object holding it.
func (s Schema) Lookup(path string) (Schema, Schema, bool) {
	cur, parent := s, s
	for _, seg := range strings.Split(path, ".") {
		if cur.Items != nil {
			cur = *cur.Items
		}
		next, ok := cur.Properties[seg]
		if !ok {
			return Schema{}, Schema{}, false
		}
		parent, cur = cur, next
	}
	return cur, parent, true
}
