package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// packageMeta is the package's metadata, whose readme a platform team reads
// in its registry before it installs the function.
const packageMeta = "package/crossplane.yaml"

// checkPackage checks that the package's metadata says what the repository
// is: its license annotation is the license LICENSE grants, its source the
// module go.mod names, and its readme names every XR kind the function
// composes (the XRDs under apis/ that are not legacy) and every cloud it
// renders on (the packages under internal/clouds but kube).
func (c *Checker) checkPackage() ([]Problem, error) {
	b, err := fs.ReadFile(c.FS, packageMeta)
	if errors.Is(err, fs.ErrNotExist) {
		return []Problem{{File: packageMeta, Line: 1, Message: "there is no " + packageMeta}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", packageMeta, err)
	}
	var meta struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		return []Problem{{File: packageMeta, Line: 1, Message: "cannot parse it: " + err.Error()}}, nil
	}
	ann := meta.Metadata.Annotations
	at := func(key string) int { return lineOf(b, key) }
	var problems []Problem
	problem := func(key, msg string) {
		problems = append(problems, Problem{File: packageMeta, Line: at(key), Message: msg})
	}

	license, _ := fs.ReadFile(c.FS, "LICENSE")
	switch l := ann["meta.crossplane.io/license"]; {
	case l == "":
		problem("metadata:", "no meta.crossplane.io/license annotation")
	case l == "Apache-2.0" && (!bytes.Contains(license, []byte("Apache License")) || !bytes.Contains(license, []byte("Version 2.0"))):
		problem("meta.crossplane.io/license", "says Apache-2.0, but LICENSE does not hold the Apache License, Version 2.0")
	case l != "Apache-2.0":
		problem("meta.crossplane.io/license", fmt.Sprintf("says %q, which docscheck cannot hold against LICENSE", l))
	}

	gomod, err := fs.ReadFile(c.FS, "go.mod")
	if err != nil {
		return nil, fmt.Errorf("cannot read go.mod: %w", err)
	}
	if mod := modulePath(gomod); ann["meta.crossplane.io/source"] != mod {
		problem("meta.crossplane.io/source", fmt.Sprintf("says %q, but go.mod's module is %q", ann["meta.crossplane.io/source"], mod))
	}

	readme := ann["meta.crossplane.io/readme"]
	kinds, err := xrKinds(c.FS)
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if !strings.Contains(readme, k) {
			problem("meta.crossplane.io/readme", fmt.Sprintf("does not name %s, an XR kind the function composes (apis/)", k))
		}
	}
	clouds, err := fs.ReadDir(c.FS, "internal/clouds")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cannot list internal/clouds: %w", err)
	}
	for _, e := range clouds {
		if e.IsDir() && e.Name() != "kube" && !strings.Contains(readme, e.Name()) {
			problem("meta.crossplane.io/readme", fmt.Sprintf("does not name cloud %s (internal/clouds)", e.Name()))
		}
	}
	return problems, nil
}

// xrKinds are the kinds of the XRDs under apis/ that are not legacy.
func xrKinds(fsys fs.FS) ([]string, error) {
	dirs, err := fs.ReadDir(fsys, "apis")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list apis: %w", err)
	}
	var out []string
	for _, d := range dirs {
		if !d.IsDir() || strings.HasSuffix(d.Name(), "-legacy") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join("apis", d.Name(), "definition.yaml"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var xrd struct {
			Spec struct {
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &xrd); err != nil {
			return nil, fmt.Errorf("cannot parse apis/%s/definition.yaml: %w", d.Name(), err)
		}
		if k := xrd.Spec.Names.Kind; k != "" {
			out = append(out, k)
		}
	}
	return out, nil
}

// modulePath is go.mod's module path.
func modulePath(gomod []byte) string {
	s := bufio.NewScanner(bytes.NewReader(gomod))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// lineOf is the line of the first occurrence of s in b, 1 when none.
func lineOf(b []byte, s string) int {
	i := bytes.Index(b, []byte(s))
	if i < 0 {
		return 1
	}
	return bytes.Count(b[:i], []byte("\n")) + 1
}
