package azure

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/kubekinds"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// nsRecordKind is an NS record set of an Azure DNS zone.
var nsRecordKind = registry.Upjet(Name, "network", "DNSNSRecord", "v1beta1", "spec.forProvider.records", "spec.forProvider.ttl").
	Replaces(
		terraform.Refuse("resourceGroupName", "azurerm_dns_ns_record.resource_group_name", "internal/services/dns/dns_ns_record_resource.go:58"),
		inGroupReplaces("azurerm_dns_ns_record", "internal/services/dns/dns_ns_record_resource.go:58"),
		terraform.Refuse("zoneName", "azurerm_dns_ns_record.zone_name", "internal/services/dns/dns_ns_record_resource.go:60-63"),
		terraform.Refuse("zoneNameSelector", "azurerm_dns_ns_record.zone_name", "internal/services/dns/dns_ns_record_resource.go:60-63")).
	WithGuarded(registry.WhyRecord, "spec.forProvider.zoneName", "spec.forProvider.zoneNameSelector", "spec.forProvider.zoneNameRef", "spec.forProvider.resourceGroupName", "spec.forProvider.resourceGroupNameSelector", "spec.forProvider.resourceGroupNameRef", "spec.forProvider.records", "spec.initProvider")

// Composition-resource names of the domain's automation on Azure.
const (
	rDNSIdentity    = "dns-identity"
	rDNSFederation  = "dns-federation-"
	rDNSContributor = "dns-zone-contributor"
	rDNSConfig      = "external-dns-azure-config"
	rDNSDelegation  = "dns-delegation"
	roleDNSZone     = "DNS Zone Contributor"
	labelUseWI      = "azure.workload.identity/use"
	// dnsConfigName is the ConfigMap that holds external-dns's azure.json
	// (identifiers only: workload identity needs no secret), mounted at
	// dnsConfigDir.
	dnsConfigName = "external-dns-azure"
	dnsConfigDir  = "/etc/kubernetes"
	delegationTTL = 300
)

func init() {
	registry.Implement(Cloud, dnsIdentity)
	registry.Implement(Cloud, dnsBinding)
	registry.Implement(Cloud, certificates)
	registry.Implement(Cloud, dnsDelegation)
	registry.Check(Cloud, checkDelegation)
}

// dnsClientID is the DNS identity's client ID, once observed.
func dnsClientID(ctx *registry.Context) string {
	return object.String(ctx.Observed(rDNSIdentity), "status", "atProvider", "clientId")
}

// dnsIdentity renders the user-assigned identity external-dns and
// cert-manager act as through AKS workload identity (no secret exists) and
// the DNS Zone Contributor role on the cluster's public zone only; each
// release binds its ServiceAccount to it (bindDNS). The role waits for the
// principal and the zone's ID.
func dnsIdentity(ctx *registry.Context, id cluster.DNSIdentity) ([]*registry.Resource, error) {
	identity := ctx.Observed(rDNSIdentity)
	out := []*registry.Resource{{
		Name:         rDNSIdentity,
		Kind:         identityKind,
		ExternalName: base(ctx) + "-dns",
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"resourceGroupNameSelector": ctx.Selector(rResourceGroup),
			"location":                  id.Location,
			"name":                      base(ctx) + "-dns",
			"tags":                      tags(ctx),
		}}},
		DependsOn: []string{rResourceGroup},
	}}
	ra := &registry.Resource{Name: rDNSContributor, Kind: roleAssignKind, DependsOn: []string{rDNSIdentity, rPublicZone}}
	principal := object.String(identity, "status", "atProvider", "principalId")
	zone := object.String(ctx.Observed(rPublicZone), "status", "atProvider", "id")
	switch {
	case principal == "":
		ra.Pending = "waits for the principal ID of " + rDNSIdentity
	case zone == "":
		ra.Pending = "waits for the ID of " + rPublicZone
	default:
		ra.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"principalId":                  principal,
			"principalType":                "ServicePrincipal",
			"scope":                        zone,
			"roleDefinitionName":           roleDNSZone,
			"skipServicePrincipalAadCheck": true,
			"description":                  "external-dns and cert-manager of " + base(ctx) + " change the records of " + id.Domain,
		}}}
	}
	return append(out, ra), nil
}

// externalDNSConfig is the ConfigMap with external-dns's azure.json: the
// tenant, subscription and resource group of the zone, and workload
// identity as the way to authenticate. It waits for the release (which
// creates the namespace) and for the identity's tenant.
func externalDNSConfig(ctx *registry.Context, access cluster.Access, namespace string) *registry.Resource {
	name := rDNSConfig
	tenant := object.String(ctx.Observed(rDNSIdentity), "status", "atProvider", "tenantId")
	if tenant == "" {
		return &registry.Resource{Name: name, Kind: kubekinds.Object, Pending: "waits for the tenant ID of " + rDNSIdentity}
	}
	cfg, _ := json.Marshal(map[string]any{ //nolint:errchkjson // strings and a bool always marshal
		"tenantId":                     tenant,
		"subscriptionId":               ctx.XR.PlaneID,
		"resourceGroup":                resourceGroupName(ctx),
		"useWorkloadIdentityExtension": true,
	})
	r := kube.Object(ctx, name, access, map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": dnsConfigName, "namespace": namespace},
		"data":       map[string]any{"azure.json": string(cfg)},
	})
	r.DependsOn = append(r.DependsOn, kube.ReleaseName(cluster.ChartExternalDNS))
	return r
}

// dnsBinding federates a chart's ServiceAccount with the DNS identity on
// the cluster's OIDC issuer (whose value it waits for); external-dns also
// gets its azure.json in a ConfigMap.
func dnsBinding(ctx *registry.Context, b cluster.DNSBinding) ([]*registry.Resource, error) {
	fed := &registry.Resource{Name: rDNSFederation + b.Chart, Kind: federationKind, ExternalName: base(ctx) + "-" + b.Chart, DependsOn: []string{rDNSIdentity, rCluster}}
	if issuer := object.String(ctx.Observed(rCluster), "status", "atProvider", "oidcIssuerUrl"); issuer == "" {
		fed.Pending = "waits for the OIDC issuer of " + rCluster
	} else {
		fed.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"resourceGroupNameSelector": ctx.Selector(rResourceGroup),
			"parentIdSelector":          ctx.Selector(rDNSIdentity),
			"audience":                  []any{tokenAudience},
			"issuer":                    issuer,
			"subject":                   kube.SubjectName(b.ServiceAccount),
		}}}
	}
	out := []*registry.Resource{fed}
	if b.Chart == cluster.ChartExternalDNS {
		out = append(out, externalDNSConfig(ctx, b.Access, b.ServiceAccount.Namespace))
	}
	return out, nil
}

// bindDNS annotates the ServiceAccount of a release running as the DNS
// identity with the identity's client ID (which it waits for) and labels
// it and its pods for the workload identity webhook; external-dns reads
// its azure.json from the ConfigMap.
func bindDNS(ctx *registry.Context, r cluster.Release) kube.Bound {
	b := kube.Bound{DependsOn: []string{rDNSFederation + r.Name, rDNSContributor}}
	client := dnsClientID(ctx)
	if client == "" {
		b.Pending = "waits for the client ID of " + rDNSIdentity
		return b
	}
	use := map[string]any{labelUseWI: "true"}
	b.Values = kube.ServiceAccountValues(map[string]any{annotationClientID: client}, use, use)
	if r.Name == cluster.ChartExternalDNS {
		b.Values["provider"] = map[string]any{"name": "azure"}
		b.Values["extraVolumes"] = []any{map[string]any{"name": "azure-config-file", "configMap": map[string]any{"name": dnsConfigName}}}
		b.Values["extraVolumeMounts"] = []any{map[string]any{"name": "azure-config-file", "mountPath": dnsConfigDir, "readOnly": true}}
	}
	return b
}

// certificates renders the ClusterIssuer with an Azure DNS solver that
// acts as the DNS identity through workload identity, and the domain's
// certificate. The issuer waits for the identity's client ID.
func certificates(ctx *registry.Context, c cluster.Certificates) ([]*registry.Resource, error) {
	client := dnsClientID(ctx)
	out := kube.Certificates(ctx, c, map[string]any{"azureDNS": map[string]any{
		"subscriptionID":    ctx.XR.PlaneID,
		"resourceGroupName": resourceGroupName(ctx),
		"hostedZoneName":    c.Domain,
		"environment":       "AzurePublicCloud",
		"managedIdentity":   map[string]any{"clientID": client},
	}}, rDNSContributor)
	if client == "" {
		out[0] = &registry.Resource{Name: out[0].Name, Kind: out[0].Kind, Pending: "waits for the client ID of " + rDNSIdentity}
	}
	return out, nil
}

// dnsDelegation renders the NS record set of the domain in the parent
// zone (named as its domain, in resource group ParentGroup), with the name
// servers Azure gave the public zone.
func dnsDelegation(ctx *registry.Context, d cluster.DNSDelegation) ([]*registry.Resource, error) {
	r := &registry.Resource{Name: rDNSDelegation, Kind: nsRecordKind, DependsOn: []string{rPublicZone}, ExternalName: strings.TrimSuffix(d.Domain, "."+d.ParentZone)}
	ns := object.Strings(ctx.Observed(rPublicZone), "status", "atProvider", "nameServers")
	if len(ns) == 0 {
		r.Pending = "waits for the name servers of " + rPublicZone
		return []*registry.Resource{r}, nil
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"resourceGroupName": d.ParentGroup,
		"zoneName":          d.ParentZone,
		"ttl":               delegationTTL,
		"records":           object.FromStrings(ns),
		"tags":              tags(ctx),
	}}}
	return []*registry.Resource{r}, nil
}

// checkDelegation refuses a parent zone Azure cannot delegate from: one
// without its resource group, or not a parent of the domain.
func checkDelegation(_ *registry.Context, d cluster.DNSDelegation) field.ErrorList {
	p := d.Path()
	var errs field.ErrorList
	if d.ParentGroup == "" {
		errs = append(errs, field.Required(p.Child("group"), "on Azure, the resource group of the parent DNS zone"))
	}
	if !strings.HasSuffix(d.Domain, "."+d.ParentZone) {
		errs = append(errs, field.Invalid(p.Child("name"), d.ParentZone, fmt.Sprintf("on Azure, the parent zone's domain, of which %s is a subdomain", d.Domain)))
	}
	return errs
}
