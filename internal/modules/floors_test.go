package modules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// module is the function's module path.
const module = "github.com/seed-6471616d/function-cluster-platform/"

// TestFloors holds the house to its floors, as docs/extending.md draws
// them: the contract at the bottom, the models and the registry above it
// (neither importing the other), the clouds and the engine above the
// registry, the runners above the engine. Each rule names packages (a
// path, or a folder ending in "/") and what none of them may depend on,
// directly or not.
func TestFloors(t *testing.T) {
	deps := packageDeps(t)
	cases := map[string]struct {
		reason    string
		packages  string
		forbidden []string
	}{
		"Contract": {
			reason:    "The contract between models and clouds is the ground floor: it stands on nothing of the function's.",
			packages:  "internal/component",
			forbidden: []string{"internal/"},
		},
		"Models": {
			reason:    "A model says what its XR kind is and asks of the clouds; it knows nothing of the registry that renders it, nor of what stands above.",
			packages:  "internal/model/",
			forbidden: []string{"internal/registry", "internal/clusterref", "internal/clouds/", "internal/engine", "internal/modules"},
		},
		"Registry": {
			reason:    "The registry is every kind's: it imports no XR kind's model, and nothing above it.",
			packages:  "internal/registry",
			forbidden: []string{"internal/model/", "internal/clusterref", "internal/clouds/", "internal/engine", "internal/modules"},
		},
		"Clouds": {
			reason:    "A cloud implements the models' components on the registry: it never imports a runner or the engine.",
			packages:  "internal/clouds/",
			forbidden: []string{"internal/engine", "internal/modules"},
		},
		"Runners": {
			reason:    "A runner stands on the engine and its model, never on a cloud: the function links the clouds in.",
			packages:  "internal/modules/",
			forbidden: []string{"internal/clouds/"},
		},
		"Engine": {
			reason:    "The engine is what every runner shares: it imports no XR kind's model, no cloud and no runner.",
			packages:  "internal/engine",
			forbidden: []string{"internal/model/", "internal/clouds/", "internal/modules"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			checked := 0
			for _, pkg := range slices.Sorted(maps.Keys(deps)) {
				if !under(pkg, tc.packages) {
					continue
				}
				checked++
				for _, d := range deps[pkg] {
					for _, f := range tc.forbidden {
						if under(d, f) {
							got = append(got, pkg+" -> "+d)
						}
					}
				}
			}
			if checked == 0 {
				t.Fatalf("%s\nno package is %s", tc.reason, tc.packages)
			}
			if diff := cmp.Diff([]string(nil), got); diff != "" {
				t.Errorf("%s\nforbidden dependencies: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// under reports whether the package, relative to the module, is the
// package p or, for p ending in "/", one under that folder.
func under(pkg, p string) bool {
	if strings.HasSuffix(p, "/") {
		return strings.HasPrefix(pkg, p)
	}
	return pkg == p
}

// packageDeps lists, with go list, every package of the module and the
// module's packages it depends on, directly or not, relative to the
// module (test files aside).
func packageDeps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+"...").Output()
	if err != nil {
		t.Fatalf("cannot list the module's packages: %v", err)
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("cannot decode go list's answer: %v", err)
		}
		var own []string
		for _, d := range p.Deps {
			if rel, ok := strings.CutPrefix(d, module); ok {
				own = append(own, rel)
			}
		}
		deps[strings.TrimPrefix(p.ImportPath, module)] = own
	}
	return deps
}
