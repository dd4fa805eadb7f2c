// Package kube renders what every cloud composes inside the new cluster:
// the provider-helm and provider-kubernetes ProviderConfigs that reach it,
// and the Helm releases of the add-ons. Clouds register these through their
// own ClusterAccess and Release implementations, supplying where the
// cluster's kubeconfig is.
package kube

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/kubekinds"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Composition-resource names.
const (
	HelmProviderConfig       = "helm-provider-config"
	KubernetesProviderConfig = "kubernetes-provider-config"
	releasePrefix            = "release-"
)

// Kinds are the kinds every cloud composes through this package, for each
// cloud's Kinds.
var Kinds = []*registry.ResourceKind{kubekinds.HelmProviderConfig, kubekinds.KubernetesProviderConfig, kubekinds.Object, kubekinds.Release, DatabaseXRKind, WorkloadBudgetKind}

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
func ProviderConfigs(ctx *registry.Context, a cluster.Access, creds Credentials, deps []string) []*registry.Resource {
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
			Kind:      kubekinds.HelmProviderConfig,
			Body:      object.Object{"metadata": map[string]any{"name": a.Name}, "spec": spec()},
			DependsOn: deps,
		},
		{
			Name:      KubernetesProviderConfig,
			Kind:      kubekinds.KubernetesProviderConfig,
			Body:      object.Object{"metadata": map[string]any{"name": a.Name}, "spec": spec()},
			DependsOn: deps,
		},
	}
}

// Charts are where a chart's release asks for its version: every cloud's
// (registry.Versions.Charts).
var Charts = registry.ChartVersions{Resource: ReleaseName, Field: registry.VersionField{Spec: "spec.forProvider.chart.version"}}

// ReleaseName is the composition-resource name of a chart's release.
func ReleaseName(chart string) string { return releasePrefix + chart }

// Release renders the Helm release of an add-on through the cluster's Helm
// ProviderConfig. It is the Release implementation of every cloud: what
// differs per cloud (say, the internal load-balancer annotation) is already
// in the values the agnostic layer templated with the cloud's traits.
func Release(ctx *registry.Context, r cluster.Release) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name: ReleaseName(r.Name),
		Kind: kubekinds.Release,
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
func Object(ctx *registry.Context, name string, a cluster.Access, manifest map[string]any) *registry.Resource {
	return &registry.Resource{
		Name: name,
		Kind: kubekinds.Object,
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

// NodePoolResources are the composition-resource names of a cluster's node
// pools as the generations they run as (registry.Current): what waits for
// the nodes names them.
func NodePoolResources(ctx *registry.Context, pools []cluster.NodePool) []string {
	out := make([]string, 0, len(pools))
	for _, p := range pools {
		out = append(out, cluster.NodePoolResource(registry.Current(ctx, p)))
	}
	return out
}
