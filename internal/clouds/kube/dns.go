package kube

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/kubekinds"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Composition-resource names of the domain's TLS.
const (
	ClusterIssuer     = "cluster-issuer"
	DomainCertificate = "domain-certificate"
)

// A Bound is what a release that runs as the DNS identity
// (cluster.Release.RunsAs) needs of its cloud, besides the binding itself
// (cluster.DNSBinding).
type Bound struct {
	// Values are merged over the release's values.
	Values map[string]any
	// DependsOn are what the release waits for besides its provider config.
	DependsOn []string
	// Pending, when set, says why the release cannot be rendered yet (a
	// value only an observed resource will have).
	Pending string
}

// A Binding says what a release running as the DNS identity needs of a
// cloud.
type Binding func(ctx *registry.Context, r cluster.Release) Bound

// BoundRelease returns the Release implementation of a cloud that binds the
// releases running as the DNS identity with bind. Other releases render as
// Release does.
func BoundRelease(bind Binding) func(*registry.Context, cluster.Release) ([]*registry.Resource, error) {
	return func(ctx *registry.Context, r cluster.Release) ([]*registry.Resource, error) {
		if r.RunsAs == nil {
			return Release(ctx, r)
		}
		b := bind(ctx, r)
		if b.Pending != "" {
			return []*registry.Resource{{Name: ReleaseName(r.Name), Kind: kubekinds.Release, Pending: b.Pending}}, nil
		}
		r.Values = overlay.Merge(overlay.DeepCopy(r.Values), b.Values)
		out, err := Release(ctx, r)
		if err != nil {
			return nil, err
		}
		out[0].DependsOn = append(out[0].DependsOn, b.DependsOn...)
		return out, nil
	}
}

// SubjectName is the Kubernetes subject of a ServiceAccount, as workload
// identity federations name it.
func SubjectName(sa cluster.ServiceAccount) string {
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// Certificates renders the cert-manager ClusterIssuer that solves ACME
// DNS01 challenges for the domain with the cloud's solver (which runs as
// the DNS identity, without a key), and the Certificate for the domain and
// *.domain in the ingress controller's namespace, which serves it by
// default. The issuer waits for cert-manager (its CRDs) and deps (the
// identity's bindings); the certificate for the issuer and the ingress
// controller (its namespace).
func Certificates(ctx *registry.Context, c cluster.Certificates, solver map[string]any, deps ...string) []*registry.Resource {
	acme := map[string]any{
		"server":              c.Server,
		"privateKeySecretRef": map[string]any{"name": c.Issuer + "-account"},
		"solvers": []any{map[string]any{
			"selector": map[string]any{"dnsZones": []any{c.Domain}},
			"dns01":    solver,
		}},
	}
	if c.Email != "" {
		acme["email"] = c.Email
	}
	issuer := Object(ctx, ClusterIssuer, c.Access, map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "ClusterIssuer",
		"metadata":   map[string]any{"name": c.Issuer},
		"spec":       map[string]any{"acme": acme},
	})
	issuer.DependsOn = append(issuer.DependsOn, ReleaseName(cluster.ChartCertManager))
	issuer.DependsOn = append(issuer.DependsOn, deps...)
	cert := Object(ctx, DomainCertificate, c.Access, map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": c.Secret, "namespace": c.Namespace},
		"spec": map[string]any{
			"secretName": c.Secret,
			"dnsNames":   []any{c.Domain, "*." + c.Domain},
			"issuerRef":  map[string]any{"kind": "ClusterIssuer", "name": c.Issuer, "group": "cert-manager.io"},
		},
	})
	cert.DependsOn = append(cert.DependsOn, ClusterIssuer, ReleaseName(cluster.ChartIngress))
	return []*registry.Resource{issuer, cert}
}

// ServiceAccountValues are chart values that annotate and label a
// release's ServiceAccount and label its pods, for a cloud's Binding.
func ServiceAccountValues(annotations, labels, podLabels map[string]any) map[string]any {
	sa := map[string]any{}
	if len(annotations) > 0 {
		sa["annotations"] = annotations
	}
	if len(labels) > 0 {
		sa["labels"] = labels
	}
	out := map[string]any{"serviceAccount": sa}
	if len(podLabels) > 0 {
		out["podLabels"] = podLabels
	}
	return out
}
