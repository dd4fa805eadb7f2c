package aws

import (
	"fmt"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// recordKind is a Route53 record.
var recordKind = registry.Upjet(Name, "route53", "Record", "v1beta2", "spec.forProvider.name", "spec.forProvider.type").
	Replaces(
		terraform.Refuse("name", "aws_route53_record.name", "internal/service/route53/record.go:265-276"),
		terraform.Refuse("type", "aws_route53_record.type", "internal/service/route53/record.go:293-298"),
		terraform.Refuse("zoneId", "aws_route53_record.zone_id", "internal/service/route53/record.go:321-326"),
		terraform.Refuse("zoneIdSelector", "aws_route53_record.zone_id", "internal/service/route53/record.go:321-326")).
	WithGuarded(registry.WhyRecord, "spec.forProvider.zoneId", "spec.forProvider.zoneIdSelector", "spec.forProvider.zoneIdRef", "spec.forProvider.name", "spec.forProvider.type", "spec.forProvider.records", "spec.forProvider.alias", "spec.forProvider.allowOverwrite", "spec.forProvider.setIdentifier", "spec.initProvider")

// Composition-resource names of the domain's automation on AWS.
const (
	rDNSIdentity    = "dns-identity"
	rDNSPolicy      = "dns-zone-access"
	rDNSPodIdentity = "dns-pod-identity-"
	rDNSDelegation  = "dns-delegation"
	delegationTTL   = 300
)

func init() {
	registry.Implement(Cloud, dnsIdentity)
	registry.Implement(Cloud, dnsBinding)
	registry.Implement(Cloud, certificates)
	registry.Implement(Cloud, dnsDelegation)
}

// publicZoneID is the Route53 ID of the cluster's public zone, once
// observed.
func publicZoneID(ctx *registry.Context) string {
	return object.String(ctx.Observed(rPublicZone), "status", "atProvider", "zoneId")
}

// dnsIdentity renders the IAM role external-dns and cert-manager assume
// through EKS Pod Identity (no key exists), an inline policy that lets it
// change the records of the cluster's public zone only (and list zones and
// read changes, which Route53 cannot scope). Each release binds its
// ServiceAccount to it (bindDNS). The policy waits for the zone's ID.
func dnsIdentity(ctx *registry.Context, id cluster.DNSIdentity) ([]*registry.Resource, error) {
	role := ctx.Join(maxRoleName, base(ctx), "dns")
	policy := &registry.Resource{Name: rDNSPolicy, Kind: rolePolicyKind, DependsOn: []string{rDNSIdentity, rPublicZone}}
	if zone := publicZoneID(ctx); zone == "" {
		policy.Pending = "waits for the ID of " + rPublicZone
	} else {
		arn := "arn:" + partition(id.Location) + ":route53:::"
		policy.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"roleSelector": ctx.Selector(rDNSIdentity),
			"policy": fmt.Sprintf(`{"Version":"2012-10-17","Statement":[`+
				`{"Effect":"Allow","Action":["route53:ChangeResourceRecordSets","route53:ListResourceRecordSets","route53:ListTagsForResource"],"Resource":%q},`+
				`{"Effect":"Allow","Action":["route53:GetChange"],"Resource":%q},`+
				`{"Effect":"Allow","Action":["route53:ListHostedZones","route53:ListHostedZonesByName"],"Resource":"*"}]}`,
				arn+"hostedzone/"+zone, arn+"change/*"),
		}}}
	}
	out := []*registry.Resource{
		{
			Name:         rDNSIdentity,
			Kind:         roleKind,
			ExternalName: role,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"assumeRolePolicy": assumeRolePolicy("pods.eks.amazonaws.com", true),
				"description":      fmt.Sprintf("external-dns and cert-manager of EKS cluster %s: records of zone %s only", base(ctx), id.Domain),
				"tags":             tags(ctx, role),
			}}},
		},
		policy,
	}
	return out, nil
}

// dnsBinding associates a chart's ServiceAccount with the DNS role through
// EKS Pod Identity (no annotation needed).
func dnsBinding(ctx *registry.Context, b cluster.DNSBinding) ([]*registry.Resource, error) {
	return []*registry.Resource{{
		Name: rDNSPodIdentity + b.Chart,
		Kind: podIdentityKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":              b.Location,
			"clusterNameSelector": ctx.Selector(rCluster),
			"namespace":           b.ServiceAccount.Namespace,
			"serviceAccount":      b.ServiceAccount.Name,
			"roleArnSelector":     ctx.Selector(rDNSIdentity),
			"tags":                tags(ctx, ctx.Join(maxRoleName, base(ctx), "dns")),
		}}},
		DependsOn: []string{rDNSIdentity, rCluster, addonName(addonPodIdentity)},
	}}, nil
}

// bindDNS makes a release running as the DNS identity wait for its Pod
// Identity association and points external-dns at the cluster's public
// hosted zone, whose ID it waits for.
func bindDNS(ctx *registry.Context, r cluster.Release) kube.Bound {
	b := kube.Bound{Values: map[string]any{}, DependsOn: []string{rDNSPodIdentity + r.Name, rDNSPolicy}}
	if r.Name == cluster.ChartExternalDNS {
		zone := publicZoneID(ctx)
		if zone == "" {
			b.Pending = "waits for the ID of " + rPublicZone
			return b
		}
		b.Values["provider"] = map[string]any{"name": "aws"}
		b.Values["env"] = []any{map[string]any{"name": "AWS_DEFAULT_REGION", "value": r.RunsAs.Location}}
		b.Values["extraArgs"] = []any{"--aws-zone-type=public", "--zone-id-filter=" + zone}
	}
	return b
}

// certificates renders the ClusterIssuer with a Route53 solver that uses
// cert-manager's ambient (Pod Identity) credentials, and the domain's
// certificate. The issuer waits for the zone's ID.
func certificates(ctx *registry.Context, c cluster.Certificates) ([]*registry.Resource, error) {
	zone := publicZoneID(ctx)
	out := kube.Certificates(ctx, c, map[string]any{"route53": map[string]any{"region": c.Location, "hostedZoneID": zone}}, rDNSPolicy)
	if zone == "" {
		out[0] = &registry.Resource{Name: out[0].Name, Kind: out[0].Kind, Pending: "waits for the ID of " + rPublicZone}
	}
	return out, nil
}

// dnsDelegation renders the NS record of the domain in the parent hosted
// zone, with the name servers Route53 gave the public zone.
func dnsDelegation(ctx *registry.Context, d cluster.DNSDelegation) ([]*registry.Resource, error) {
	r := &registry.Resource{Name: rDNSDelegation, Kind: recordKind, DependsOn: []string{rPublicZone}}
	ns := object.Strings(ctx.Observed(rPublicZone), "status", "atProvider", "nameServers")
	if len(ns) == 0 {
		r.Pending = "waits for the name servers of " + rPublicZone
		return []*registry.Resource{r}, nil
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"zoneId":  d.ParentZone,
		"name":    d.Domain,
		"type":    "NS",
		"ttl":     delegationTTL,
		"records": object.FromStrings(ns),
	}}}
	return []*registry.Resource{r}, nil
}
