package modules_test

import (
	"testing"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// TestRegistrations fails when a registered cloud does not implement a
// Component kind of a module: a gap is found here, not at render time.
func TestRegistrations(t *testing.T) {
	clouds := registry.Clouds()
	if len(clouds) == 0 {
		t.Fatal("no cloud is registered")
	}
	kinds := 0
	for _, m := range modules.All {
		for _, name := range clouds {
			c, _ := registry.Lookup(name)
			for _, k := range m.Kinds {
				kinds++
				if !c.Implements(k) {
					t.Errorf("cloud %q does not implement %s of the %s module: add registry.Implement(Cloud, ...) for it in internal/clouds/%s", name, k, m.Name, name)
				}
			}
		}
	}
	t.Logf("%d modules on %d clouds: %d implementations checked", len(modules.All), len(clouds), kinds)
}

// TestModuleNames fails when two modules share an Input name.
func TestModuleNames(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range modules.All {
		if seen[m.Name] || m.Name == "" || m.Run == nil {
			t.Errorf("module %q is listed twice, has no name or no Run", m.Name)
		}
		seen[m.Name] = true
	}
}
