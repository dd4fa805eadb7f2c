package azure

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Where azurerm declares the Front Door resources.
const (
	fdProfile      = "internal/services/cdn/cdn_frontdoor_profile_resource.go"
	fdEndpoint     = "internal/services/cdn/cdn_frontdoor_endpoint_resource.go"
	fdOriginGroup  = "internal/services/cdn/cdn_frontdoor_origin_group_resource.go"
	fdOrigin       = "internal/services/cdn/cdn_frontdoor_origin_resource.go"
	fdRoute        = "internal/services/cdn/cdn_frontdoor_route_resource.go"
	fdCustomDomain = "internal/services/cdn/cdn_frontdoor_custom_domain_resource.go"
	fdAssociation  = "internal/services/cdn/cdn_frontdoor_custom_domain_association_resource.go"
	dnsTXTRecord   = "internal/services/dns/dns_txt_record_resource.go"
	dnsCNAMERecord = "internal/services/dns/dns_cname_record_resource.go"
	dnsARecord     = "internal/services/dns/dns_a_record_resource.go"
)

// Kinds of an environment's front end on Azure: Front Door Standard and
// the records of the Cluster's public zone. Replacement-only fields from
// terraform-provider-azurerm v4.80.0; every name is the external name
// (ForceNew too), and no resource here has a CustomizeDiff that forces a
// new one. The legacy kinds are those of v1beta2 where it is served, whose
// blocks are objects, as the namespaced kinds' are.
var (
	// A profile's SKU is ForceNew although Azure upgrades Standard to
	// Premium in place.
	fdProfileKind = registry.Upjet(Name, "cdn", "FrontdoorProfile", "v1beta1", "spec.forProvider.skuName").Replaces(
		inGroupReplaces("azurerm_cdn_frontdoor_profile", fdProfile+":56"),
		terraform.Refuse("skuName", "azurerm_cdn_frontdoor_profile.sku_name", fdProfile+":67-75"))
	fdEndpointKind = registry.Upjet(Name, "cdn", "FrontdoorEndpoint", "v1beta1").Replaces(
		terraform.Refuse("cdnFrontdoorProfileIdSelector", "azurerm_cdn_frontdoor_endpoint.cdn_frontdoor_profile_id", fdEndpoint+":51-56"))
	fdOriginGroupKind = registry.Upjet(Name, "cdn", "FrontdoorOriginGroup", "v1beta2", "spec.forProvider.loadBalancing").Replaces(
		terraform.Refuse("cdnFrontdoorProfileIdSelector", "azurerm_cdn_frontdoor_origin_group.cdn_frontdoor_profile_id", fdOriginGroup+":50-55"))
	// An origin's host name, ports and host header change in place.
	fdOriginKind = registry.Upjet(Name, "cdn", "FrontdoorOrigin", "v1beta2", "spec.forProvider.hostName", "spec.forProvider.certificateNameCheckEnabled").WithGuarded(registry.WhyHost, "spec.forProvider.hostName", "spec.forProvider.originHostHeader", "spec.initProvider.hostName", "spec.initProvider.originHostHeader").Replaces(
		terraform.Refuse("cdnFrontdoorOriginGroupIdSelector", "azurerm_cdn_frontdoor_origin.cdn_frontdoor_origin_group_id", fdOrigin+":56-61"))
	// A route's origin group changes in place (:58-62), its endpoint not.
	fdRouteKind = registry.Upjet(Name, "cdn", "FrontdoorRoute", "v1beta2", "spec.forProvider.patternsToMatch", "spec.forProvider.supportedProtocols").Replaces(
		terraform.Refuse("cdnFrontdoorEndpointIdSelector", "azurerm_cdn_frontdoor_route.cdn_frontdoor_endpoint_id", fdRoute+":51-56"))
	// The custom domain is validated for its host: the platform's, from
	// spec.parameters.frontend.host alone.
	fdCustomDomainKind = registry.Upjet(Name, "cdn", "FrontdoorCustomDomain", "v1beta2", "spec.forProvider.hostName", "spec.forProvider.tls").Replaces(
		terraform.Refuse("cdnFrontdoorProfileIdSelector", "azurerm_cdn_frontdoor_custom_domain.cdn_frontdoor_profile_id", fdCustomDomain+":77-82"),
		terraform.Refuse("hostName", "azurerm_cdn_frontdoor_custom_domain.host_name", fdCustomDomain+":90-95")).
		WithGuarded(registry.WhyRecord, "spec.forProvider.hostName", "spec.initProvider.hostName")
	fdAssociationKind = registry.Upjet(Name, "cdn", "FrontdoorCustomDomainAssociation", "v1beta1").Replaces(
		terraform.Refuse("cdnFrontdoorCustomDomainIdSelector", "azurerm_cdn_frontdoor_custom_domain_association.cdn_frontdoor_custom_domain_id", fdAssociation+":44-49"))
	txtRecordKind = registry.Upjet(Name, "network", "DNSTXTRecord", "v1beta1", "spec.forProvider.record", "spec.forProvider.ttl").Replaces(
		inGroupReplaces("azurerm_dns_txt_record", dnsTXTRecord+":60"),
		terraform.Refuse("zoneNameSelector", "azurerm_dns_txt_record.zone_name", dnsTXTRecord+":62-66")).
		WithGuarded(registry.WhyRecord, "spec.forProvider.zoneName", "spec.forProvider.zoneNameSelector", "spec.forProvider.zoneNameRef", "spec.forProvider.resourceGroupName", "spec.forProvider.resourceGroupNameSelector", "spec.forProvider.resourceGroupNameRef", "spec.forProvider.record", "spec.initProvider")
	// The apex's alias record: its target changes in place.
	aRecordKind = registry.Upjet(Name, "network", "DNSARecord", "v1beta1", "spec.forProvider.ttl").Replaces(
		inGroupReplaces("azurerm_dns_a_record", dnsARecord+":60"),
		terraform.Refuse("zoneNameSelector", "azurerm_dns_a_record.zone_name", dnsARecord+":62-66")).
		WithGuarded(registry.WhyRecord, "spec.forProvider.zoneName", "spec.forProvider.zoneNameSelector", "spec.forProvider.zoneNameRef", "spec.forProvider.resourceGroupName", "spec.forProvider.resourceGroupNameSelector", "spec.forProvider.resourceGroupNameRef", "spec.forProvider.records", "spec.forProvider.targetResourceId", "spec.forProvider.targetResourceIdSelector", "spec.forProvider.targetResourceIdRef", "spec.initProvider")
	cnameRecordKind = registry.Upjet(Name, "network", "DNSCNAMERecord", "v1beta1", "spec.forProvider.record", "spec.forProvider.ttl").Replaces(
		inGroupReplaces("azurerm_dns_cname_record", dnsCNAMERecord+":63"),
		terraform.Refuse("zoneNameSelector", "azurerm_dns_cname_record.zone_name", dnsCNAMERecord+":65-69")).
		WithGuarded(registry.WhyRecord, "spec.forProvider.zoneName", "spec.forProvider.zoneNameSelector", "spec.forProvider.zoneNameRef", "spec.forProvider.resourceGroupName", "spec.forProvider.resourceGroupNameSelector", "spec.forProvider.resourceGroupNameRef", "spec.forProvider.record", "spec.forProvider.targetResourceId", "spec.forProvider.targetResourceIdSelector", "spec.forProvider.targetResourceIdRef", "spec.initProvider")
)

// Composition-resource names of a front end on Azure.
const (
	rSiteAccount        = "frontend-bucket"
	rSiteProfile        = "frontend-cdn"
	rSiteEndpoint       = "frontend-endpoint"
	rSiteOriginGroup    = "frontend-origin-group"
	rSiteOrigin         = "frontend-origin"
	rSiteRoute          = "frontend-route"
	rSiteAPIOriginGroup = "frontend-api-origin-group"
	rSiteAPIOrigin      = "frontend-api-origin"
	rSiteAPIRoute       = "frontend-api-route"
	rSiteDomain         = "frontend-domain"
	rSiteAssociation    = "frontend-domain-association"
	rSiteValidation     = "frontend-dns-validation"
	rSiteRecord         = "frontend-dns"
)

// Front Door's constants.
const (
	// skuStandard is Front Door Standard: managed certificates, caching,
	// compression and rule sets; private origins (Private Link) and the
	// managed WAF rules need Premium.
	skuStandard = "Standard_AzureFrontDoor"
	// maxProfileName and maxEndpointName bound a profile's and an
	// endpoint's names (validate/front_door_name.go and
	// front_door_endpoint_name.go: letters, digits and '-', 2 to 90 and 2
	// to 46 characters).
	maxProfileName  = 90
	maxEndpointName = 46
	// maxManagedHost is the longest host a managed certificate covers
	// (azurerm's CustomizeDiff, cdn_frontdoor_custom_domain_resource.go:
	// 689-733).
	maxManagedHost = 64
	// originSite and originAPI name the origin groups, origins and routes
	// in the profile (and the endpoint), which scope those names.
	originSite = "site"
	originAPI  = "api"
	// validationPrefix is the label of the TXT record that proves the
	// zone holds the custom domain (Front Door's docs, "Add a custom
	// domain": _dnsauth.<subdomain>).
	validationPrefix = "_dnsauth"
	// validationTTL is the TTL of the validation record, recordTTL the
	// host's.
	validationTTL = 3600
	recordTTL     = 300
	// labelFrontendRoute marks the front end's routes, which the custom
	// domain's association selects all at once.
	labelFrontendRoute = "platform.example.org/frontend-route"
	// apexName is the name of a record at the zone's apex.
	apexName = "@"
	// maxAccountName bounds a storage account's name: the front end's is
	// its bucket's without '-', never cut (its name is where a team
	// publishes).
	maxAccountName = 24
)

// compressible are the content types Front Door compresses: the site's
// text, scripts, data and vector images.
var compressible = []any{
	"text/html", "text/css", "text/plain", "text/xml", "text/javascript",
	"application/javascript", "application/x-javascript", "application/json", "application/xml", "application/manifest+json",
	"image/svg+xml", "image/x-icon",
}

func init() {
	registry.Implement(Cloud, appFrontend)
	registry.Implement(Cloud, appAPIRoute)
	registry.Check(Cloud, checkAppFrontend)
}

// appFrontend renders the front end: a storage account of its own whose
// static website is the origin of a Front Door Standard profile (TLS 1.2
// or later, HTTP redirected to HTTPS, compression, and the API path to the
// backend's Ingress over HTTPS, uncached), a custom domain for the host
// with a certificate Front Door manages, validated by a TXT record in the
// Cluster's public zone, and a CNAME that publishes the host. What needs
// an observed value (the origin's host, the validation token, the
// endpoint's host name) waits for it.
//
// Front Door reports no field that says the managed certificate is issued:
// the custom domain's expirationDate is its validation token's expiry,
// reported with the token from creation (azurerm sets both from
// ValidationProperties, cdn_frontdoor_custom_domain_resource.go:330-332),
// so FrontendReady cannot wait for the certificate on Azure.
func appFrontend(ctx *registry.Context, f appenvironment.Frontend) ([]*registry.Resource, error) {
	if f.CacheSet {
		// A route's cache honours the origin's Cache-Control, and caches
		// 1 to 3 days without one (Front Door's docs, "Caching with Azure
		// Front Door"); only a rule set's cache override sets a TTL.
		ctx.Warn("spec.parameters.frontend.defaultTtlSeconds and maxTtlSeconds are not applied on Azure: Front Door Standard without a rule set caches as the objects' Cache-Control says (1 to 3 days where they say nothing); set Cache-Control when publishing, e.g. az storage blob upload-batch --destination '$web' --content-cache-control 'public, max-age=%d'", f.DefaultTTL)
	}
	out := []*registry.Resource{
		siteAccount(ctx, f),
		{
			Name:         rSiteProfile,
			Kind:         fdProfileKind,
			ExternalName: names.JoinFor(f.Tenant, maxProfileName, f.Name, "frontend"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"resourceGroupNameSelector": ctx.Selector(rAppResourceGroup),
				"skuName":                   skuStandard,
				"tags":                      appTags(f.App),
			}}},
			DependsOn: []string{rAppResourceGroup},
		},
		{
			Name:         rSiteEndpoint,
			Kind:         fdEndpointKind,
			ExternalName: names.JoinFor(f.Tenant, maxEndpointName, f.Name, "frontend"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"cdnFrontdoorProfileIdSelector": ctx.Selector(rSiteProfile),
				"enabled":                       true,
				"tags":                          appTags(f.App),
			}}},
			DependsOn: []string{rSiteProfile},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				o.CDNEndpoint = object.String(obs, "status", "atProvider", "hostName")
			},
		},
		originGroup(ctx, rSiteOriginGroup, originSite),
		siteOrigin(ctx),
		route(ctx, rSiteRoute, originSite, rSiteOriginGroup, rSiteOrigin, []any{"/*"}, true),
	}
	routes := []string{rSiteRoute}
	if f.APIPath != "" {
		routes = append(routes, rSiteAPIRoute)
	}
	out = append(out,
		customDomain(ctx, f),
		&registry.Resource{
			Name: rSiteAssociation,
			Kind: fdAssociationKind,
			// The association lists every route that serves the domain,
			// or deleting the domain fails (azurerm's docs,
			// cdn_frontdoor_custom_domain_association.html.markdown:123):
			// the routes' label selects them all, again on every
			// reconcile, so that a route added or removed later is too.
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"cdnFrontdoorCustomDomainIdSelector": ctx.Selector(rSiteDomain),
				"cdnFrontdoorRouteIdsSelector": map[string]any{
					"matchControllerRef": true,
					"matchLabels":        map[string]any{labelFrontendRoute: "true"},
					"policy":             map[string]any{"resolve": "Always"},
				},
			}}},
			DependsOn: append([]string{rSiteDomain}, routes...),
		},
		validationRecord(ctx, f),
		hostRecord(ctx, f),
	)
	return out, nil
}

// appAPIRoute routes the API path to the backend's Ingress, which
// answers for its own host with a certificate for it: an origin group of
// one origin and a route without a cache.
func appAPIRoute(ctx *registry.Context, a appenvironment.APIRoute) ([]*registry.Resource, error) {
	return []*registry.Resource{
		originGroup(ctx, rSiteAPIOriginGroup, originAPI),
		{
			Name:         rSiteAPIOrigin,
			Kind:         fdOriginKind,
			ExternalName: originAPI,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"cdnFrontdoorOriginGroupIdSelector": ctx.Selector(rSiteAPIOriginGroup),
				"hostName":                          a.APIHost,
				"originHostHeader":                  a.APIHost,
				"certificateNameCheckEnabled":       true,
				"httpPort":                          80,
				"httpsPort":                         443,
				"enabled":                           true,
			}}},
			DependsOn: []string{rSiteAPIOriginGroup},
		},
		route(ctx, rSiteAPIRoute, originAPI, rSiteAPIOriginGroup, rSiteAPIOrigin, a.APIPatterns(), false),
	}, nil
}

// siteAccount is the front end's storage account, whose static website
// ($web) is the site. Front Door Standard reaches its origins over the
// internet, so the static website endpoint answers anonymously, as it does
// by nature (private origins need Premium and Private Link); the account's
// blobs stay private (allowNestedItemsToBePublic false). Without a rule
// set, which no served CRD composes, the single-page mapping is the
// website's error document: a deep link gets index.html, with status 404.
func siteAccount(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	return &registry.Resource{
		Name:         rSiteAccount,
		Kind:         storageAccountKind,
		ExternalName: accountName(f.Bucket, f.Tenant),
		Orphan:       f.Orphan,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"resourceGroupNameSelector":  ctx.Selector(rAppResourceGroup),
			"location":                   f.Location,
			"accountKind":                "StorageV2",
			"accountTier":                "Standard",
			"accountReplicationType":     "ZRS",
			"minTlsVersion":              "TLS1_2",
			"httpsTrafficOnlyEnabled":    true,
			"allowNestedItemsToBePublic": false,
			"staticWebsite":              map[string]any{"indexDocument": "index.html", "error404Document": f.NotFoundPage()},
			"tags":                       appTags(f.App),
		}}},
		DependsOn: []string{rAppResourceGroup},
	}
}

// originGroup is an origin group of one origin: no health probe (there is
// nothing to fail over to) and no session affinity.
func originGroup(ctx *registry.Context, name, external string) *registry.Resource {
	return &registry.Resource{
		Name:         name,
		Kind:         fdOriginGroupKind,
		ExternalName: external,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"cdnFrontdoorProfileIdSelector": ctx.Selector(rSiteProfile),
			"loadBalancing":                 map[string]any{},
			"sessionAffinityEnabled":        false,
		}}},
		DependsOn: []string{rSiteProfile},
	}
}

// siteOrigin is the account's static website, at the web host the account
// reports: the origin's own references resolve the blob host, which
// serves neither the index nor the error document.
func siteOrigin(ctx *registry.Context) *registry.Resource {
	r := &registry.Resource{Name: rSiteOrigin, Kind: fdOriginKind, ExternalName: originSite, DependsOn: []string{rSiteOriginGroup, rSiteAccount}}
	host := object.String(ctx.Observed(rSiteAccount), "status", "atProvider", "primaryWebHost")
	if host == "" {
		r.Pending = "waits for " + rSiteAccount + " to report its static website's host"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"cdnFrontdoorOriginGroupIdSelector": ctx.Selector(rSiteOriginGroup),
		"hostName":                          host,
		"originHostHeader":                  host,
		"certificateNameCheckEnabled":       true,
		"httpPort":                          80,
		"httpsPort":                         443,
		"enabled":                           true,
	}}}
	return r
}

// route routes the patterns of the endpoint, and of the custom domain, to
// an origin group, over HTTPS to the origin, HTTP redirected to HTTPS
// (which needs both protocols, cdn_frontdoor_route_resource.go:239-246).
// The site is cached as its objects' Cache-Control says, ignoring query
// strings, and compressed; the API has no cache block, which Front Door
// reads as no caching at all. The origins are listed only so that the
// route waits for them (azurerm sends them nowhere,
// cdn_frontdoor_route.html.markdown:147).
func route(ctx *registry.Context, name, external, group, origin string, patterns []any, cached bool) *registry.Resource {
	fp := map[string]any{
		"cdnFrontdoorEndpointIdSelector":      ctx.Selector(rSiteEndpoint),
		"cdnFrontdoorOriginGroupIdSelector":   ctx.Selector(group),
		"cdnFrontdoorOriginIdsSelector":       ctx.Selector(origin),
		"cdnFrontdoorCustomDomainIdsSelector": ctx.Selector(rSiteDomain),
		"patternsToMatch":                     patterns,
		"supportedProtocols":                  []any{"Http", "Https"},
		"httpsRedirectEnabled":                true,
		"forwardingProtocol":                  "HttpsOnly",
		"linkToDefaultDomain":                 true,
		"enabled":                             true,
	}
	if cached {
		fp["cache"] = map[string]any{
			"queryStringCachingBehavior": "IgnoreQueryString",
			"compressionEnabled":         true,
			"contentTypesToCompress":     compressible,
		}
	}
	return &registry.Resource{
		Name:         name,
		Kind:         fdRouteKind,
		ExternalName: external,
		Body: object.Object{
			"metadata": map[string]any{"labels": map[string]any{labelFrontendRoute: "true"}},
			"spec":     map[string]any{"forProvider": fp},
		},
		DependsOn: []string{rSiteEndpoint, group, origin, rSiteDomain},
	}
}

// customDomain is the host in the profile, with a certificate Front Door
// manages once the validation record proves the zone holds the host. The
// zone is named for the record (dnsZoneId), which does not spare it.
//
// TLS names minimumVersion alone: minimumTlsVersion is its deprecated
// alias, and the two conflict (cdn_frontdoor_custom_domain_resource.go:
// 208-232). Both are optional and computed and azurerm reads both back
// (:636-640), so upjet's late initialisation may copy minimumTlsVersion
// into spec after the first observation and the next plan fail on the
// conflict: inferred from the sources, not seen on a cluster. Should it
// happen, the remedy is management policies without LateInitialize on
// this kind.
func customDomain(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	return &registry.Resource{
		Name:         rSiteDomain,
		Kind:         fdCustomDomainKind,
		ExternalName: strings.ReplaceAll(f.Host, ".", "-"),
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"cdnFrontdoorProfileIdSelector": ctx.Selector(rSiteProfile),
			"hostName":                      f.Host,
			"dnsZoneIdSelector":             clusterref.Selector(f.Cluster, rPublicZone),
			"tls": map[string]any{
				"certificateType": "ManagedCertificate",
				"minimumVersion":  "TLS12",
			},
		}}},
		DependsOn: []string{rSiteProfile},
	}
}

// relativeName is the host's name in the Cluster's zone, "" at its apex.
func relativeName(f appenvironment.Frontend) string {
	if f.Host == f.Domain {
		return ""
	}
	return strings.TrimSuffix(f.Host, "."+f.Domain)
}

// validationRecord is the TXT record _dnsauth.<host> in the Cluster's
// zone that proves to Front Door that the zone holds the host: its value
// is the custom domain's validation token, once reported.
func validationRecord(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	name := validationPrefix
	if rel := relativeName(f); rel != "" {
		name += "." + rel
	}
	r := &registry.Resource{Name: rSiteValidation, Kind: txtRecordKind, ExternalName: name, DependsOn: []string{rSiteDomain}}
	token := object.String(ctx.Observed(rSiteDomain), "status", "atProvider", "validationToken")
	if token == "" {
		r.Pending = "waits for " + rSiteDomain + " to report its validation token"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"zoneNameSelector":          clusterref.Selector(f.Cluster, rPublicZone),
		"resourceGroupNameSelector": clusterref.Selector(f.Cluster, rResourceGroup),
		"ttl":                       validationTTL,
		"record":                    []any{map[string]any{"value": token}},
		"tags":                      appTags(f.App),
	}}}
	return r
}

// hostRecord publishes the host as a CNAME of the endpoint's host name,
// once reported, after the routes serve the domain (azurerm's docs,
// cdn_frontdoor_custom_domain.html.markdown:129). The zone's apex cannot
// hold a CNAME: there the host is an alias A record whose target is the
// endpoint itself (Azure DNS alias records, which Front Door Standard and
// Premium endpoints support), once its ID is reported.
func hostRecord(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	if relativeName(f) == "" {
		r := &registry.Resource{Name: rSiteRecord, Kind: aRecordKind, ExternalName: apexName, DependsOn: []string{rSiteEndpoint, rSiteAssociation}}
		id := object.String(ctx.Observed(rSiteEndpoint), "status", "atProvider", "id")
		if id == "" {
			r.Pending = "waits for " + rSiteEndpoint + " to report its ID"
			return r
		}
		r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"zoneNameSelector":          clusterref.Selector(f.Cluster, rPublicZone),
			"resourceGroupNameSelector": clusterref.Selector(f.Cluster, rResourceGroup),
			"ttl":                       recordTTL,
			"targetResourceId":          id,
			"tags":                      appTags(f.App),
		}}}
		return r
	}
	r := &registry.Resource{Name: rSiteRecord, Kind: cnameRecordKind, ExternalName: relativeName(f), DependsOn: []string{rSiteEndpoint, rSiteAssociation}}
	host := object.String(ctx.Observed(rSiteEndpoint), "status", "atProvider", "hostName")
	if host == "" {
		r.Pending = "waits for " + rSiteEndpoint + " to report its host name"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"zoneNameSelector":          clusterref.Selector(f.Cluster, rPublicZone),
		"resourceGroupNameSelector": clusterref.Selector(f.Cluster, rResourceGroup),
		"ttl":                       recordTTL,
		"record":                    host,
		"tags":                      appTags(f.App),
	}}}
	return r
}

// checkAppFrontend refuses a front end Front Door cannot serve here: a
// host longer than a managed certificate covers, and a bucket whose storage account Azure refuses or
// that would be the environment's other bucket's account.
func checkAppFrontend(_ *registry.Context, f appenvironment.Frontend) field.ErrorList {
	var errs field.ErrorList
	hp := xr.ParametersPath("frontend", "host")
	if len(f.Host) > maxManagedHost {
		errs = append(errs, field.Invalid(hp, f.Host, fmt.Sprintf("Front Door's managed certificates cover host names of at most %d characters", maxManagedHost)))
	}
	acct := accountName(f.Bucket, f.Tenant)
	switch {
	case !validAccount(f.Bucket, f.Tenant) || len(strings.ReplaceAll(f.Bucket, "-", "")) > maxAccountName && !f.Tenant:
		// A bare cloud name's account is never cut (two front ends would
		// share one); a tenant's is cut with a hash (names.Cut).
		path := f.BucketPath()
		hint := ""
		if !f.Named {
			hint = ": name it with spec.parameters.frontend.bucketName"
		}
		errs = append(errs, field.Invalid(path, f.Bucket, fmt.Sprintf("its storage account's name, %q (without '-', at most 24 characters), must be 3 to 24 lower-case letters and digits%s", acct, hint)))
	case f.Assets != "" && f.Assets != f.Bucket && accountName(f.Assets, f.Tenant) == acct:
		// The same name is refused by the environment's own check.
		errs = append(errs, field.Duplicate(f.BucketPath(), fmt.Sprintf("%s would be storage account %q, as the environment's bucket %s is ('-' is dropped, at most 24 characters)", f.Bucket, acct, f.Assets)))
	}
	return errs
}
