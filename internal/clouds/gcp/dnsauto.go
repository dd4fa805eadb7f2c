package gcp

import (
	"cmp"
	"fmt"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Kinds of the domain's automation on GCP.
var (
	zoneIAMMemberKind = registry.Upjet(Name, "dns", "ManagedZoneIAMMember", "v1beta2", "spec.forProvider.managedZone", "spec.forProvider.member", "spec.forProvider.role").
				WithGuarded(registry.WhyIdentity, append(identityGrant, "spec.forProvider.managedZone")...).Replaces(
		terraform.Refuse("project", "google_dns_managed_zone_iam_member.project", "google/services/dns/iam_dns_managed_zone.go:72-76"),
		terraform.Refuse("managedZone", "google_dns_managed_zone_iam_member.managed_zone", "google/services/dns/iam_dns_managed_zone.go:78-81"),
		terraform.Refuse("managedZoneSelector", "google_dns_managed_zone_iam_member.managed_zone", "google/services/dns/iam_dns_managed_zone.go:78-81"),
		terraform.Refuse("member", "google_dns_managed_zone_iam_member.member", "google/tpgiamresource/resource_iam_member.go:69-72"),
		terraform.Refuse("role", "google_dns_managed_zone_iam_member.role", "google/tpgiamresource/resource_iam_member.go:64-67"))
	recordSetKind = registry.Upjet(Name, "dns", "RecordSet", "v1beta2", "spec.forProvider.name", "spec.forProvider.type").
			Replaces(
			terraform.Refuse("project", "google_dns_record_set.project", "google/services/dns/resource_dns_record_set.go:284-288"),
			terraform.Refuse("managedZone", "google_dns_record_set.managed_zone", "google/services/dns/resource_dns_record_set.go:149-152"),
			terraform.Refuse("managedZoneSelector", "google_dns_record_set.managed_zone", "google/services/dns/resource_dns_record_set.go:149-152"),
			terraform.Refuse("name", "google_dns_record_set.name", "google/services/dns/resource_dns_record_set.go:157-160"),
			// type changes in place in Terraform 7.39 (resource_dns_record_set.go);
			// a record of another type is another record.
			terraform.Refuse("type", "google_dns_record_set.type (in place in Terraform; another type is another record)", "google/services/dns/resource_dns_record_set.go")).
		WithGuarded(registry.WhyRecord, "spec.forProvider.managedZone", "spec.forProvider.managedZoneSelector", "spec.forProvider.managedZoneRef", "spec.forProvider.project", "spec.forProvider.name", "spec.forProvider.type", "spec.forProvider.rrdatas", "spec.forProvider.routingPolicy", "spec.initProvider")
)

// Composition-resource names of the domain's automation on GCP.
const (
	rDNSIdentity      = "dns-identity"
	rDNSZoneAdmin     = "dns-zone-admin"
	rDNSZoneReader    = "dns-zone-reader"
	rDNSWorkloadUser  = "dns-workload-user-"
	rDNSDelegation    = "dns-delegation"
	roleDNSAdmin      = "roles/dns.admin"
	roleDNSReader     = "roles/dns.reader"
	annotationGSA     = "iam.gke.io/gcp-service-account"
	delegationTTLSecs = 300
)

func init() {
	registry.Implement(Cloud, dnsIdentity)
	registry.Implement(Cloud, dnsBinding)
	registry.Implement(Cloud, certificates)
	registry.Implement(Cloud, dnsDelegation)
}

// dnsAccountEmail is the e-mail of the DNS identity's service account.
func dnsAccountEmail(ctx *registry.Context) string {
	return ctx.Join(maxAccountID, base(ctx), "dns") + "@" + ctx.XR.PlaneID + ".iam.gserviceaccount.com"
}

// publicZoneName is the Cloud DNS name of the cluster's public zone.
func publicZoneName(ctx *registry.Context) string { return base(ctx) + "-public" }

// dnsIdentity renders the Google service account external-dns and
// cert-manager act as through GKE workload identity (no key exists): DNS
// admin of the cluster's public zone only, and DNS reader of the project
// (so that external-dns can list the zones). Each release binds its
// ServiceAccount to it (bindDNS).
func dnsIdentity(ctx *registry.Context, id cluster.DNSIdentity) ([]*registry.Resource, error) {
	member := "serviceAccount:" + dnsAccountEmail(ctx)
	out := []*registry.Resource{
		{
			Name:         rDNSIdentity,
			Kind:         saKind,
			ExternalName: ctx.Join(maxAccountID, base(ctx), "dns"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":     ctx.XR.PlaneID,
				"displayName": "DNS of " + base(ctx),
				"description": fmt.Sprintf("external-dns and cert-manager of GKE cluster %s: records of zone %s only", base(ctx), publicZoneName(ctx)),
			}}},
		},
		{
			Name: rDNSZoneAdmin,
			Kind: zoneIAMMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":     ctx.XR.PlaneID,
				"managedZone": publicZoneName(ctx),
				"role":        roleDNSAdmin,
				"member":      member,
			}}},
			DependsOn: []string{rDNSIdentity, rPublicZone},
		},
		{
			Name: rDNSZoneReader,
			Kind: iamMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project": ctx.XR.PlaneID,
				"role":    roleDNSReader,
				"member":  member,
			}}},
			DependsOn: []string{rDNSIdentity},
		},
	}
	return out, nil
}

// dnsBinding lets a chart's ServiceAccount act as the DNS identity's Google
// service account: a workload identity user binding.
func dnsBinding(ctx *registry.Context, b cluster.DNSBinding) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name: rDNSWorkloadUser + b.Chart,
		Kind: saIAMMemberKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"serviceAccountIdSelector": ctx.Selector(rDNSIdentity),
			"role":                     roleWorkloadIdentityUser,
			"member":                   fmt.Sprintf("serviceAccount:%s.svc.id.goog[%s/%s]", ctx.XR.PlaneID, b.ServiceAccount.Namespace, b.ServiceAccount.Name),
		}}},
		DependsOn: []string{rDNSIdentity, rCluster},
	}}, nil
}

// bindDNS annotates the ServiceAccount of a release running as the DNS
// identity with its Google service account, and points external-dns at
// Cloud DNS in the XR's project.
func bindDNS(ctx *registry.Context, r cluster.Release) kube.Bound {
	v := kube.ServiceAccountValues(map[string]any{annotationGSA: dnsAccountEmail(ctx)}, nil, nil)
	if r.Name == cluster.ChartExternalDNS {
		v["provider"] = map[string]any{"name": "google"}
		v["extraArgs"] = []any{"--google-project=" + ctx.XR.PlaneID, "--google-zone-visibility=public"}
	}
	return kube.Bound{Values: v, DependsOn: []string{rDNSWorkloadUser + r.Name, rDNSZoneAdmin}}
}

// certificates renders the ClusterIssuer with a Cloud DNS solver that uses
// cert-manager's ambient (workload identity) credentials, and the domain's
// certificate.
func certificates(ctx *registry.Context, c cluster.Certificates) ([]*registry.Resource, error) {
	solver := map[string]any{"cloudDNS": map[string]any{"project": ctx.XR.PlaneID, "hostedZoneName": publicZoneName(ctx)}}
	return kube.Certificates(ctx, c, solver, rDNSZoneAdmin), nil
}

// dnsDelegation renders the NS record set of the domain in the parent
// managed zone, with the name servers Cloud DNS gave the public zone.
func dnsDelegation(ctx *registry.Context, d cluster.DNSDelegation) ([]*registry.Resource, error) {
	r := &registry.Resource{Name: rDNSDelegation, Kind: recordSetKind, DependsOn: []string{rPublicZone}}
	ns := object.Strings(ctx.Observed(rPublicZone), "status", "atProvider", "nameServers")
	if len(ns) == 0 {
		r.Pending = "waits for the name servers of " + rPublicZone
		return []*registry.Resource{r}, nil
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"project":     cmp.Or(d.ParentGroup, ctx.XR.PlaneID),
		"managedZone": d.ParentZone,
		"name":        d.Domain + ".",
		"type":        "NS",
		"ttl":         delegationTTLSecs,
		"rrdatas":     object.FromStrings(ns),
	}}}
	return []*registry.Resource{r}, nil
}
