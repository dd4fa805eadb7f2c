package gcp

import (
	"cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Defaults of environment key gcp.credentialsSecret.
const (
	defaultCredentialsName = "gcp-creds" //nolint:gosec // the name of a Secret, not a credential
	defaultCredentialsKey  = "credentials"
)

// access renders the Helm and Kubernetes ProviderConfigs of the GKE cluster.
// A GKE kubeconfig carries no token, so they also get a Google identity: the
// service-account key in environment key gcp.credentialsSecret ({name, key},
// default gcp-creds/credentials, in the connection secret namespace).
func access(ctx *registry.Context, a cluster.Access) ([]*registry.Resource, error) {
	deps := append([]string{rCluster}, kube.NodePoolResources(ctx, a.Pools)...)
	cs := settingsOf(ctx.Env).CredentialsSecret
	creds := kube.Credentials{
		SecretName: kube.KubeconfigSecretName(ctx),
		Key:        kube.KubeconfigKey,
		Identity: object.Object{
			"type":   "GoogleApplicationCredentials",
			"source": "Secret",
			"secretRef": map[string]any{
				"name":      cmp.Or(cs.Name, defaultCredentialsName),
				"namespace": cmp.Or(cs.Namespace, ctx.SecretNamespace()),
				"key":       cmp.Or(cs.Key, defaultCredentialsKey),
			},
		},
	}
	return kube.ProviderConfigs(ctx, a, creds, deps), nil
}

// budget renders nothing: provider-upjet-gcp has no billing budget kind. The
// XR still gets its cost estimate and spend checks.
func budget(ctx *registry.Context, _ cluster.Budget) ([]*registry.Resource, error) {
	ctx.Warn("GCP has no budget resource in provider-upjet-gcp; no cloud budget is created, but the cost estimate and spend checks still apply")
	return nil, nil
}
