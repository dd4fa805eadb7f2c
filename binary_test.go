package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// testOnly matches a package doc that says the package is for tests
// ("Package fntest is the function's test kit, for tests only").
var testOnly = regexp.MustCompile(`(?i)\bfor (the function's |the )?tests\b|\btests? only\b|\btest-only\b`)

// TestBinaryLinksNoTestPackage fails when the function's binary links a
// package of this module whose doc says it is for tests, or Go's testing
// package (which only test support imports): what ships stays apart from
// what tests it. It asks go list, so it cannot drift from the imports.
func TestBinaryLinksNoTestPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}\t{{.Doc}}", ".").Output()
	if err != nil {
		t.Fatalf("cannot list the binary's packages: %v", err)
	}
	const module = "github.com/seed-6471616d/function-cluster-platform"
	var ours int
	for line := range strings.Lines(string(out)) {
		path, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		mod, doc, _ := strings.Cut(rest, "\t")
		if path == "testing" {
			t.Errorf("the binary links package testing: some package it links is test support (go list -deps -f '{{.ImportPath}}: {{.Imports}}' . shows which)")
		}
		if mod != module {
			continue
		}
		ours++
		if testOnly.MatchString(doc) {
			t.Errorf("the binary links %s, whose doc says it is for tests: %q", path, doc)
		}
	}
	if ours < 10 {
		t.Fatalf("go list found %d packages of this module in the binary, want the function's: is the module %s?", ours, module)
	}
	// The test kit must still say what it is, or nothing above would see it.
	kit, err := exec.Command("go", "list", "-f", "{{.Doc}}", "./internal/fntest").Output()
	if err != nil {
		t.Fatalf("cannot read the test kit's doc: %v", err)
	}
	if !testOnly.Match(kit) {
		t.Errorf("internal/fntest's doc no longer says it is for tests: %q", kit)
	}
}
