package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// prepareCRDs copies the provider CRDs of src (one folder per provider) into
// dst for installing without the providers: Crossplane's package manager
// fills in the conversion webhook of CRDs that serve several versions when it
// installs a provider, and no provider runs here, so the copies convert
// nothing (strategy None). The function composes each kind at one version.
func prepareCRDs(src, dst string, providers []string) (int, error) {
	n := 0
	for _, p := range providers {
		files, err := filepath.Glob(filepath.Join(src, p, "*.yaml"))
		if err != nil {
			return n, err
		}
		if err := os.MkdirAll(filepath.Join(dst, p), 0o750); err != nil {
			return n, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f) //nolint:gosec // the shared CRDs
			if err != nil {
				return n, err
			}
			crd := map[string]any{}
			if err := yaml.Unmarshal(b, &crd); err != nil {
				return n, fmt.Errorf("%s: %w", f, err)
			}
			spec, _ := crd["spec"].(map[string]any)
			if spec == nil {
				return n, fmt.Errorf("%s is not a CRD", f)
			}
			spec["conversion"] = map[string]any{"strategy": "None"}
			out, err := yaml.Marshal(crd)
			if err != nil {
				return n, err
			}
			if err := os.WriteFile(filepath.Join(dst, p, filepath.Base(f)), out, 0o600); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
