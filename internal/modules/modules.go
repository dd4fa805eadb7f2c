// Package modules lists the function's modules in one place: each XR kind,
// the Input's module name that selects it, its Run on the shared machinery,
// and the Component kinds every cloud must implement for it. A module
// missing here is not served; a cloud that does not implement a kind listed
// here fails TestRegistrations, not a render.
package modules

import (
	"slices"

	"github.com/seed-6471616d/function-cluster-platform/input/v1beta1"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
	budgetrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/budget"
	clusterrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/cluster"
	databaserun "github.com/seed-6471616d/function-cluster-platform/internal/modules/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// A Module is one XR kind the function serves.
type Module struct {
	// Name is the Input's module.
	Name string
	// XRKinds are the kinds of XR it serves: namespaced and legacy.
	XRKinds []string
	Run     response.Func
	// Kinds are the Component kinds of its agnostic model, which every
	// cloud implements; none for a module that composes without the
	// registry's clouds.
	Kinds []component.Kind
	// Optional are the Component kinds of its model that only some clouds
	// implement, as their cluster.Traits say.
	Optional []component.Kind
	// Settings are the environment keys it reads (with envcfg.Section),
	// which TestEnvironmentKeys checks the example environment against;
	// none for a module that reads none.
	Settings *envcfg.Known
	// Clusters finds the Cluster its XRs name (spec.parameters.clusterRef),
	// with what each cloud reads of it; nil for a module whose XRs name
	// none. TestWaitsForAnotherXR checks every read against every example.
	Clusters *clusterref.Reader
}

// All are the function's modules.
var All = []Module{
	{Name: v1beta1.ModuleCluster, XRKinds: []string{xr.ClusterKind, xr.LegacyClusterKind}, Run: clusterrun.Run, Kinds: cluster.Kinds, Optional: cluster.OptionalKinds, Settings: &envcfg.Known{Type: cluster.Settings{}}},
	{Name: v1beta1.ModuleDatabase, XRKinds: []string{xr.DatabaseKind, xr.LegacyDatabaseKind}, Run: databaserun.Run, Kinds: database.Kinds, Settings: &envcfg.Known{Path: []string{database.SettingsKey}, Type: database.Settings{}}, Clusters: clusterref.ForDatabase},
	{Name: v1beta1.ModuleEnvironment, XRKinds: []string{xr.AppEnvironmentKind, xr.LegacyAppEnvironmentKind}, Run: appenvironmentrun.Run, Kinds: appenvironment.Kinds, Settings: &envcfg.Known{Path: []string{appenvironment.SettingsKey}, Type: appenvironment.Settings{}}, Clusters: clusterref.ForAppEnvironment},
	{Name: v1beta1.ModuleBudget, XRKinds: []string{xr.WorkloadBudgetKind}, Run: budgetrun.Run},
}

// ForKind returns the module that serves XRs of the kind.
func ForKind(kind string) (Module, bool) {
	for _, m := range All {
		if slices.Contains(m.XRKinds, kind) {
			return m, true
		}
	}
	return Module{}, false
}

// AllKinds are the module's Component kinds, those every cloud implements
// and then the optional ones.
func (m Module) AllKinds() []component.Kind {
	return append(slices.Clone(m.Kinds), m.Optional...)
}
