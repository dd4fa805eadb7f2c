// Package kube renders what every cloud composes inside the new cluster:
// the provider-helm and provider-kubernetes ProviderConfigs that reach it,
// and the Helm releases of the add-ons. Clouds register these through their
// own ClusterAccess and Release implementations, supplying where the
// cluster's kubeconfig is.
package kube

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Composition-resource names.
const (
	HelmProviderConfig       = "helm-provider-config"
	KubernetesProviderConfig = "kubernetes-provider-config"
	releasePrefix            = "release-"
)

// Kinds of provider-helm and provider-kubernetes.
var (
	HelmProviderConfigKind = &registry.Kind{
		Kind:       "ProviderConfig",
		Namespaced: "helm.m.crossplane.io/v1beta1",
		Cluster:    "helm.crossplane.io/v1beta1",
		Ready:      registry.ReadyWhenObserved,
		Required:   []string{"spec.credentials.source"},
		Roles:      registry.Access,
	}
	KubernetesProviderConfigKind = &registry.Kind{
		Kind:       "ProviderConfig",
		Namespaced: "kubernetes.m.crossplane.io/v1alpha1",
		Cluster:    "kubernetes.crossplane.io/v1alpha1",
		Ready:      registry.ReadyWhenObserved,
		Required:   []string{"spec.credentials.source"},
		Roles:      registry.Access,
	}
	ObjectKind = (&registry.Kind{
		Kind:       "Object",
		Namespaced: "kubernetes.m.crossplane.io/v1alpha1",
		Cluster:    "kubernetes.crossplane.io/v1alpha2",
		Provider:   "kubernetes",
		Required:   []string{"spec.forProvider.manifest"},
		Opaque:     []string{"spec.forProvider.manifest"},
	}).WithGuarded("what an Object applies, and where, is the function's: an XR's overrides may configure the object, not make it another one",
		"spec.forProvider.manifest.apiVersion", "spec.forProvider.manifest.kind", "spec.forProvider.manifest.metadata.name", "spec.forProvider.manifest.metadata.namespace").
		// provider-kubernetes applies the manifest as it is: no field of
		// its own is replacement-only (what the manifest makes is
		// guarded above).
		Replaces()
	ReleaseKind = (&registry.Kind{
		Kind:       "Release",
		Namespaced: "helm.m.crossplane.io/v1beta1",
		Cluster:    "helm.crossplane.io/v1beta1",
		Provider:   "helm",
		Required:   []string{"spec.forProvider.chart.name"},
		Opaque:     []string{"spec.forProvider.values"},
	}).WithGuarded("chart sources, release namespaces and values read from Secrets or ConfigMaps are the platform's (the environment's chart catalog); an XR sets values through spec.parameters.charts",
		"spec.forProvider.chart", "spec.forProvider.namespace", "spec.forProvider.set", "spec.forProvider.valuesFrom").
		// provider-helm upgrades a release in place; the fields that
		// would make it another release (chart, namespace) are guarded
		// above and fixed by the catalog.
		Replaces()
)

// Kinds are the kinds every cloud composes through this package, for each
// cloud's Kinds.
var Kinds = []*registry.Kind{HelmProviderConfigKind, KubernetesProviderConfigKind, ObjectKind, ReleaseKind, DatabaseXRKind, WorkloadBudgetKind}

// KubeconfigKey is the key of the kubeconfig in a connection secret.
const KubeconfigKey = registry.KubeconfigKey

// KubeconfigSecretName is the name of the connection secret that holds the
// new cluster's kubeconfig.
func KubeconfigSecretName(ctx *registry.Context) string { return registry.KubeconfigSecretName(ctx.XR) }

// Credentials says where the kubeconfig of the new cluster is.
type Credentials struct {
	// SecretName and Key locate the kubeconfig in the connection secret
	// namespace (registry.Context.SecretNamespace).
	SecretName string
	Key        string
	// Identity, when set, is the provider config's identity block, for
	// clouds whose kubeconfig needs cloud credentials to get a token.
	Identity object.Object
}

// ProviderConfigs renders the Helm and Kubernetes ProviderConfigs for the new
// cluster. They are named after the XR (they are referenced by name, so they
// are the one kind of composed resource the function names), and depend on
// deps: the cluster and whatever must exist before workloads can run.
func ProviderConfigs(ctx *registry.Context, a platform.ClusterAccess, creds Credentials, deps []string) []*registry.Resource {
	spec := func() object.Object {
		s := object.Object{
			"credentials": map[string]any{
				"source": "Secret",
				"secretRef": map[string]any{
					"name":      creds.SecretName,
					"namespace": ctx.SecretNamespace(),
					"key":       creds.Key,
				},
			},
		}
		if creds.Identity != nil {
			s["identity"] = creds.Identity
		}
		return s
	}
	return []*registry.Resource{
		{
			Name:      HelmProviderConfig,
			Kind:      HelmProviderConfigKind,
			Body:      object.Object{"metadata": map[string]any{"name": a.Name}, "spec": spec()},
			DependsOn: deps,
		},
		{
			Name:      KubernetesProviderConfig,
			Kind:      KubernetesProviderConfigKind,
			Body:      object.Object{"metadata": map[string]any{"name": a.Name}, "spec": spec()},
			DependsOn: deps,
		},
	}
}

// ReleaseName is the composition-resource name of a chart's release.
func ReleaseName(chart string) string { return releasePrefix + chart }

// Release renders the Helm release of an add-on through the cluster's Helm
// ProviderConfig. It is the Release implementation of every cloud: what
// differs per cloud (say, the internal load-balancer annotation) is already
// in the values the agnostic layer templated with the cloud's traits.
func Release(ctx *registry.Context, r platform.Release) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name: ReleaseName(r.Name),
		Kind: ReleaseKind,
		Body: object.Object{"spec": map[string]any{
			"providerConfigRef": ctx.LocalProviderConfigRef(r.ProviderConfig),
			"rollbackLimit":     3,
			"forProvider": map[string]any{
				"chart": map[string]any{
					"name":       r.Chart,
					"repository": r.Repository,
					"version":    r.Version,
				},
				"namespace":   r.Namespace,
				"values":      r.Values,
				"wait":        true,
				"waitTimeout": "10m",
			},
		}},
		DependsOn: []string{HelmProviderConfig},
	}}, nil
}

// Object renders a provider-kubernetes Object that applies manifest to the
// new cluster through the cluster's Kubernetes ProviderConfig.
func Object(ctx *registry.Context, name string, a platform.ClusterAccess, manifest map[string]any) *registry.Resource {
	return &registry.Resource{
		Name: name,
		Kind: ObjectKind,
		Body: object.Object{"spec": map[string]any{
			"providerConfigRef": ctx.LocalProviderConfigRef(a.Name),
			"forProvider":       map[string]any{"manifest": manifest},
		}},
		DependsOn: []string{KubernetesProviderConfig},
	}
}

// ClusterAdminBinding is a ClusterRoleBinding that makes a group
// cluster-admin.
func ClusterAdminBinding(name, group string) map[string]any {
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRoleBinding",
		"metadata":   map[string]any{"name": name},
		"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects":   []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}},
	}
}
