// Package kubekinds holds the kinds of the providers that reach into a
// workload cluster, provider-helm and provider-kubernetes: every cloud
// composes them through internal/clouds/kube, and the WorkloadBudget module
// composes Objects of its own, without a cloud.
package kubekinds

import "github.com/seed-6471616d/function-cluster-platform/internal/registry"

// providerConfig is a ProviderConfig of provider-helm or
// provider-kubernetes at its namespaced and legacy apiVersions: ready once
// observed, with its credentials required, and in the Access deletion role
// (what objects inside the cluster are reached through).
func providerConfig(namespaced, cluster string) *registry.ResourceKind {
	return (&registry.ResourceKind{
		Kind:       "ProviderConfig",
		Namespaced: namespaced,
		Cluster:    cluster,
		Ready:      registry.ReadyWhenObserved,
		Required:   []string{"spec.credentials.source"},
		Roles:      registry.Access,
	}).WithoutTable("a ProviderConfig is configuration of a provider, no cloud resource: nothing is replaced")
}

var (
	// HelmProviderConfig is provider-helm's ProviderConfig.
	HelmProviderConfig = providerConfig("helm.m.crossplane.io/v1beta1", "helm.crossplane.io/v1beta1")
	// KubernetesProviderConfig is provider-kubernetes's ProviderConfig.
	KubernetesProviderConfig = providerConfig("kubernetes.m.crossplane.io/v1alpha1", "kubernetes.crossplane.io/v1alpha1")
	// Object is provider-kubernetes's Object: one manifest applied to the
	// workload cluster.
	Object = (&registry.ResourceKind{
		Kind:       "Object",
		Namespaced: "kubernetes.m.crossplane.io/v1alpha1",
		Cluster:    "kubernetes.crossplane.io/v1alpha2",
		Provider:   "kubernetes",
		Required:   []string{"spec.forProvider.manifest"},
		Opaque:     []string{"spec.forProvider.manifest"},
	}).WithGuarded("what an Object applies, and where, is the function's: an XR's overrides may configure the object, not make it another one",
		"spec.forProvider.manifest.apiVersion", "spec.forProvider.manifest.kind", "spec.forProvider.manifest.metadata.name", "spec.forProvider.manifest.metadata.namespace").
		// An Ingress's rules and TLS hosts, a Gateway API route's
		// hostnames, and the annotations that make external-dns publish,
		// or ingress-nginx serve, another host: two namespaces' objects
		// with one host on a shared Cluster split or steal its traffic.
		// (An annotation key's dots read as path segments: the prefixes
		// below guard every key of those domains.)
		WithGuarded(registry.WhyHost,
			"spec.forProvider.manifest.spec.rules", "spec.forProvider.manifest.spec.tls", "spec.forProvider.manifest.spec.hostnames",
			"spec.forProvider.manifest.metadata.annotations.external-dns",
			"spec.forProvider.manifest.metadata.annotations.nginx.ingress.kubernetes.io/server-alias",
			"spec.forProvider.manifest.metadata.annotations.nginx.ingress.kubernetes.io/server-snippet",
			"spec.forProvider.manifest.metadata.annotations.nginx.ingress.kubernetes.io/configuration-snippet").
		WithoutTable("provider-kubernetes wraps no Terraform provider and applies the manifest as it is: no field of its own is replacement-only (what the manifest makes is guarded above)")
	// Release is provider-helm's Release: one chart installed in the
	// workload cluster.
	Release = (&registry.ResourceKind{
		Kind:       "Release",
		Namespaced: "helm.m.crossplane.io/v1beta1",
		Cluster:    "helm.crossplane.io/v1beta1",
		Provider:   "helm",
		Required:   []string{"spec.forProvider.chart.name"},
		Opaque:     []string{"spec.forProvider.values"},
	}).WithGuarded("chart sources, release namespaces and values read from Secrets or ConfigMaps are the platform's (the environment's chart catalog); an XR sets values through spec.parameters.charts",
		"spec.forProvider.chart", "spec.forProvider.namespace", "spec.forProvider.set", "spec.forProvider.valuesFrom").
		WithoutTable("provider-helm wraps no Terraform provider and upgrades a release in place; the fields that would make it another release (chart, namespace) are guarded above and fixed by the catalog")
)
