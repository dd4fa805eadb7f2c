package portal

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API groups of what the platform composes, as written here rather
// than imported: the portal imports no cloud package. TestComposedKinds
// checks them against what the example stacks compose.
var (
	// composedGroups are groups every kind of which the platform may
	// compose: its own XRs (a nested Database, a WorkloadBudget), the
	// Usages that order deletions, provider-helm's and
	// provider-kubernetes's kinds, and provider-sql's PostgreSQL kinds, each
	// at its namespaced (.m.) and its legacy cluster-scoped group.
	composedGroups = map[string]bool{
		envGroup:                         true,
		"protection.crossplane.io":       true,
		"helm.crossplane.io":             true,
		"helm.m.crossplane.io":           true,
		"kubernetes.crossplane.io":       true,
		"kubernetes.m.crossplane.io":     true,
		"postgresql.sql.crossplane.io":   true,
		"postgresql.sql.m.crossplane.io": true,
	}
	// composedSingles are single kinds of groups that serve others too:
	// Crossplane's legacy Usage.
	composedSingles = map[schema.GroupKind]bool{
		{Group: "apiextensions.crossplane.io", Kind: "Usage"}: true,
	}
	// upjetProviders are the clouds whose Upjet providers' managed
	// resources the platform composes: groups <service>.<cloud>.m.upbound.io
	// and <service>.<cloud>.upbound.io, <service> one DNS label, and the clouds' own
	// <cloud>(.m).upbound.io (Azure's ResourceGroup).
	upjetProviders = []string{"aws", "azure", "gcp"}
)

// Composed says whether the platform composes kinds of gk, and so whether
// a resource reference of an environment may start a watch. A reference
// to anything else (a Secret, a ConfigMap, a kind the tenant wrote into
// spec.crossplane.resourceRefs by hand) is shown as not watched.
func Composed(gk schema.GroupKind) bool {
	if composedGroups[gk.Group] || composedSingles[gk] {
		return true
	}
	for _, p := range upjetProviders {
		for _, g := range []string{p + ".m.upbound.io", p + ".upbound.io"} {
			svc, ok := strings.CutSuffix(gk.Group, "."+g)
			if gk.Group == g || ok && svc != "" && !strings.Contains(svc, ".") {
				return true
			}
		}
	}
	return false
}
