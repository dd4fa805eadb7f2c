package deps

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFloors fails when go.mod names a module below its security floor
// (floors.txt), and lists every floor with what go.mod has (go test -v,
// make deps). It also keeps client-go on apimachinery's version.
func TestFloors(t *testing.T) {
	data, err := os.ReadFile("floors.txt")
	if err != nil {
		t.Fatal(err)
	}
	floors, err := ParseFloors(data)
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	findings, have, err := Check(gomod, floors)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range floors {
		t.Logf("%-28s floor %-9s go.mod %s", f.Module, f.Version, have[f.Module])
	}
	for _, f := range findings {
		t.Error(f)
	}
	if a, c := have["k8s.io/apimachinery"], have["k8s.io/client-go"]; a != c {
		t.Errorf("k8s.io/client-go %s beside k8s.io/apimachinery %s: keep them on one version", c, a)
	}
}

func TestCheck(t *testing.T) {
	gomod := []byte("module x\n\ngo 1.26.8\n\ntoolchain go1.27.1\n\nrequire (\n\tgoogle.golang.org/grpc v1.81.1\n\tgolang.org/x/net v0.58.0 // indirect\n)\n")
	floors := []Floor{
		{Module: "go", Version: "1.26.11", Why: "a"},
		{Module: "google.golang.org/grpc", Version: "v1.82.1", Why: "b"},
		{Module: "golang.org/x/net", Version: "v0.56.0", Why: "c"},
		{Module: "golang.org/x/text", Version: "v0.39.0", Why: "d"},
		{Module: "toolchain", Version: "1.27.3", Why: "e"},
	}
	cases := map[string]struct {
		reason string
		floors []Floor
		want   []string
	}{
		"BelowAndMissing": {
			reason: "The go directive, the toolchain line and a module below their floors, an indirect module above its floor, and a floor for a module go.mod does not name.",
			floors: floors,
			want: []string{
				"go 1.26.8 is below its floor 1.26.11 (a)",
				"google.golang.org/grpc v1.81.1 is below its floor v1.82.1 (b)",
				"golang.org/x/text: go.mod names no version; its floor is v0.39.0 (d)",
				"toolchain 1.27.1 is below its floor 1.27.3 (e)",
			},
		},
		"Met": {
			reason: "A floor go.mod meets is no finding.",
			floors: floors[2:3],
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			findings, _, err := Check(gomod, tc.floors)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range findings {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCheck: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestToolchainOneVersion keeps the Go toolchain one version everywhere it
// is named: go.mod's toolchain line, the GOTOOLCHAIN the Makefile exports
// to every build and test, and the Dockerfile's builder image.
func TestToolchainOneVersion(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	_, have, err := Check(gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := have["toolchain"]
	if want == "" {
		t.Fatal("go.mod has no toolchain line")
	}
	for file, line := range map[string]string{
		"../../Makefile":   "export GOTOOLCHAIN ?= go" + want + "\n",
		"../../Dockerfile": "FROM golang:" + want + " AS build\n",
	} {
		b, err := os.ReadFile(file) //nolint:gosec // two fixed files of this repository
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), line) {
			t.Errorf("%s does not say %q: go.mod's toolchain is go%s", file, strings.TrimSpace(line), want)
		}
	}
}
