package cluster_test

import (
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// at returns the value at path in the desired resource name: map keys, or
// list indexes.
func at(rsp *fnv1.RunFunctionResponse, name string, path ...string) any {
	var cur any = rsp.GetDesired().GetResources()[name].GetResource().AsMap()
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// is checks the value at path of a desired resource.
func is(name string, want any, path ...string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if diff := cmp.Diff(want, at(rsp, name, path...)); diff != "" {
			t.Errorf("%s %s: -want +got:\n%s", name, strings.Join(path, "."), diff)
		}
	}
}

// has checks that the string at path of a desired resource contains part.
func has(name, part string, path ...string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		s, _ := at(rsp, name, path...).(string)
		if !strings.Contains(s, part) {
			t.Errorf("%s %s = %q, want it to contain %q", name, strings.Join(path, "."), s, part)
		}
	}
}

var (
	manifest = []string{"spec", "forProvider", "manifest"}
	values   = []string{"spec", "forProvider", "values"}
	fp       = []string{"spec", "forProvider"}
)

func p(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }

func TestDNS(t *testing.T) {
	ns4 := func(name string) fntest.Check {
		return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
			t.Helper()
			for _, key := range []string{"rrdatas", "records"} {
				if l, ok := at(rsp, name, "spec", "forProvider", key).([]any); ok && len(l) == 4 {
					return
				}
			}
			t.Errorf("%s carries no four name servers", name)
		}
	}
	parent := func(name, group string) func(fntest.Object) {
		return fntest.Set("spec.parameters.parentZone", map[string]any{"name": name, "group": group})
	}
	certificate := fntest.All(
		is("domain-certificate", []any{"edge.example.net", "*.edge.example.net"}, p(manifest, "spec", "dnsNames")...),
		is("domain-certificate", "ingress-nginx", p(manifest, "metadata", "namespace")...),
		is("release-ingress-nginx", "ingress-nginx/wildcard-tls", p(values, "controller", "extraArgs", "default-ssl-certificate")...),
		is("cluster-issuer", []any{"edge.example.net"}, p(manifest, "spec", "acme", "solvers", "0", "selector", "dnsZones")...),
		is("release-cert-manager", "cert-manager", p(values, "serviceAccount", "name")...),
		is("release-external-dns", "external-dns", p(values, "serviceAccount", "name")...),
		is("release-external-dns", []any{"edge.example.net"}, p(values, "domainFilters")...),
	)
	scenarios := map[string]fntest.Scenario{
		"GCP": {
			Reason: "On GKE, external-dns and cert-manager act as one Google service account through workload identity: DNS admin of the cluster's public zone only, the issuer solves DNS01 in that zone, and the domain is delegated from the parent zone.",
			XR:     fntest.GCPXR(parent("example-net", "dns-project")),
			Steps: []fntest.Step{{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true), certificate,
				is("dns-zone-admin", "edge-2153p-public", p(fp, "managedZone")...),
				is("dns-zone-admin", "roles/dns.admin", p(fp, "role")...),
				is("dns-zone-admin", "serviceAccount:edge-2153p-dns@edge-project-42.iam.gserviceaccount.com", p(fp, "member")...),
				is("dns-zone-reader", "roles/dns.reader", p(fp, "role")...),
				is("dns-workload-user-cert-manager", "serviceAccount:edge-project-42.svc.id.goog[cert-manager/cert-manager]", p(fp, "member")...),
				is("dns-workload-user-external-dns", "serviceAccount:edge-project-42.svc.id.goog[external-dns/external-dns]", p(fp, "member")...),
				is("release-cert-manager", "edge-2153p-dns@edge-project-42.iam.gserviceaccount.com", p(values, "serviceAccount", "annotations", "iam.gke.io/gcp-service-account")...),
				is("release-external-dns", "google", p(values, "provider", "name")...),
				is("cluster-issuer", map[string]any{"project": "edge-project-42", "hostedZoneName": "edge-2153p-public"}, p(manifest, "spec", "acme", "solvers", "0", "dns01", "cloudDNS")...),
				is("dns-delegation", "example-net", p(fp, "managedZone")...),
				is("dns-delegation", "dns-project", p(fp, "project")...),
				is("dns-delegation", "edge.example.net.", p(fp, "name")...),
				is("dns-delegation", "NS", p(fp, "type")...),
				ns4("dns-delegation"),
			)}},
		},
		"AWS": {
			Reason: "On EKS, external-dns and cert-manager assume one IAM role through Pod Identity, allowed to change the records of the cluster's hosted zone only (by its observed ID); the issuer solves DNS01 there.",
			XR:     fntest.AWSXR(parent("Z0PARENT0000000000001", "")),
			Steps: []fntest.Step{{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true), certificate,
				has("dns-zone-access", `"route53:ChangeResourceRecordSets","route53:ListResourceRecordSets","route53:ListTagsForResource"],"Resource":"arn:aws:route53:::hostedzone/Z`, p(fp, "policy")...),
				has("dns-identity", `"Service":"pods.eks.amazonaws.com"`, p(fp, "assumeRolePolicy")...),
				is("dns-pod-identity-cert-manager", "cert-manager", p(fp, "namespace")...),
				is("dns-pod-identity-external-dns", "external-dns", p(fp, "serviceAccount")...),
				is("release-external-dns", "aws", p(values, "provider", "name")...),
				has("release-external-dns", "--zone-id-filter=Z", p(values, "extraArgs", "1")...),
				has("cluster-issuer", "Z", p(manifest, "spec", "acme", "solvers", "0", "dns01", "route53", "hostedZoneID")...),
				is("cluster-issuer", "us-east-1", p(manifest, "spec", "acme", "solvers", "0", "dns01", "route53", "region")...),
				is("dns-delegation", "Z0PARENT0000000000001", p(fp, "zoneId")...),
				is("dns-delegation", "edge.example.net", p(fp, "name")...),
				ns4("dns-delegation"),
			)}},
		},
		"Azure": {
			Reason: "On AKS, external-dns and cert-manager act as one user-assigned identity federated with the cluster's OIDC issuer per ServiceAccount, DNS Zone Contributor of the public zone only (by its observed ID); external-dns reads identifiers, no secret, from a ConfigMap.",
			XR:     fntest.AzureXR(parent("example.net", "dns-rg")),
			Steps: []fntest.Step{{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true), certificate,
				has("dns-zone-contributor", "/providers/Microsoft.Network/dnszones/edge.example.net", p(fp, "scope")...),
				is("dns-zone-contributor", "DNS Zone Contributor", p(fp, "roleDefinitionName")...),
				is("dns-federation-cert-manager", "system:serviceaccount:cert-manager:cert-manager", p(fp, "subject")...),
				has("dns-federation-external-dns", ".oic.prod-aks.azure.com/", p(fp, "issuer")...),
				has("release-cert-manager", "-1111-", p(values, "serviceAccount", "annotations", "azure.workload.identity/client-id")...),
				is("release-cert-manager", "true", p(values, "podLabels", "azure.workload.identity/use")...),
				is("release-external-dns", "azure", p(values, "provider", "name")...),
				has("external-dns-azure-config", `"useWorkloadIdentityExtension":true`, p(manifest, "data", "azure.json")...),
				is("external-dns-azure-config", "ConfigMap", p(manifest, "kind")...),
				has("cluster-issuer", "-1111-", p(manifest, "spec", "acme", "solvers", "0", "dns01", "azureDNS", "managedIdentity", "clientID")...),
				is("dns-delegation", "example.net", p(fp, "zoneName")...),
				is("dns-delegation", "dns-rg", p(fp, "resourceGroupName")...),
				ns4("dns-delegation"),
			)}},
		},
		"AzureParentRefused": {
			Reason: "An Azure parent zone without its resource group, or that is not a parent of the domain, is a Fatal naming both fields.",
			XR:     fntest.AzureXR(parent("example.org", "")),
			Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.parentZone.group: Required value: on Azure, the resource group of the parent DNS zone; spec.parameters.parentZone.name: Invalid value: "example.org"`}},
		},
		"ParentFromEnvironment": {
			Reason: "The environment may name the parent zone; when it stops naming it, the delegation is held, not deleted.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				{Name: "converged", Converge: true, World: fntest.EnvEdit("cluster-platform-baseline", "dns", map[string]any{"parentZone": map[string]any{"name": "example-net"}}),
					Check: fntest.All(fntest.IsReady(true), is("dns-delegation", "example-net", p(fp, "managedZone")...), is("dns-delegation", "edge-project-42", p(fp, "project")...))},
				{Name: "environment drops it", World: fntest.EnvEdit("cluster-platform-baseline", "dns", nil),
					Check: fntest.All(fntest.Desires("dns-delegation"), fntest.Warns(`holding composed resource "dns-delegation"`))},
			},
		},
		"NoDomain": {
			Reason: "Without a domain there is no DNS identity, external-dns, issuer or certificate; cert-manager still runs.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.domain", nil)),
			Steps: []fntest.Step{{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true),
				fntest.Lacks("dns-identity", "release-external-dns", "cluster-issuer", "domain-certificate"), fntest.Desires("release-cert-manager"),
				is("release-ingress-nginx", nil, p(values, "controller", "extraArgs")...))}},
		},
	}
	fntest.RunAll(t, "DNS and TLS scenarios", run, envs, scenarios)
}
