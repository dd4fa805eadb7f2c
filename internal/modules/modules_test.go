package modules_test

import (
	"path/filepath"
	"testing"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
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
	// The kinds a cloud implements because a trait says it offers them.
	for _, name := range clouds {
		c, _ := registry.Lookup(name)
		if cluster.CloudTraits[name].PrivateServices != c.Implements(cluster.KindPrivateServices) {
			t.Errorf("cloud %q has Traits.PrivateServices %t but implements %s: %t; they go together", name, cluster.CloudTraits[name].PrivateServices, cluster.KindPrivateServices, c.Implements(cluster.KindPrivateServices))
		}
		kinds++
	}
	t.Logf("%d modules on %d clouds: %d implementations checked", len(modules.All), len(clouds), kinds)
}

// TestReferenceFields fails when a managed kind a cloud composes is missing
// from the table cmd/refgen generates from the provider CRDs (which
// fields a reference resolves, and an XR's overrides may therefore not
// set): a kind added to a cloud's Kinds needs make generate.
func TestReferenceFields(t *testing.T) {
	kinds, resolved := 0, 0
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		for _, k := range c.Kinds {
			if !k.Managed() {
				continue
			}
			kinds++
			refs, ok := k.References()
			if !ok {
				t.Errorf("cloud %q composes %s, whose reference fields were never read from its CRDs: run make generate (cmd/refgen)", name, k.Kind)
			}
			resolved += len(refs)
		}
	}
	if kinds == 0 || resolved == 0 {
		t.Fatalf("%d managed kinds with %d reference fields: the table is empty", kinds, resolved)
	}
	t.Logf("%d managed kinds, %d reference fields an XR's overrides may not set", kinds, resolved)
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

// TestEnvironmentKeys fails when an example EnvironmentConfig holds a key
// that no module and no cloud reads: a typo, or a key a change renamed,
// would otherwise be ignored and its default rendered in its place.
func TestEnvironmentKeys(t *testing.T) {
	known := []envcfg.Known{{Type: envcfg.Shared{}}}
	for _, m := range modules.All {
		if m.Settings != nil {
			known = append(known, *m.Settings)
		}
	}
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		if c.Settings == nil {
			t.Errorf("cloud %q lists no Settings: set registry.Cloud.Settings to the struct its environment keys decode into", name)
			continue
		}
		known = append(known, envcfg.Known{Path: []string{name}, Type: c.Settings})
	}
	envs, err := fntest.Load(filepath.Join("..", "..", "examples", "envconfigs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(envs) == 0 {
		t.Fatal("no example EnvironmentConfig found")
	}
	for _, e := range envs {
		meta, _ := e["metadata"].(map[string]any)
		name := meta["name"]
		data, _ := e["data"].(map[string]any)
		if len(data) == 0 {
			t.Errorf("%v has no data", name)
		}
		if unknown := envcfg.Unknown(data, known...); len(unknown) > 0 {
			t.Errorf("%v holds keys no module or cloud reads: %v", name, unknown)
		}
	}
}
