package gcp

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Kinds of an environment's front end on GCP: a global external
// Application Load Balancer (EXTERNAL_MANAGED) with Cloud CDN. Each table
// lists the replacement-only fields the function renders, from
// terraform-provider-google v7.39.0; the name of each is its external
// name. A URL map and the proxies change everything else in place; a
// network endpoint group, its endpoint and a managed certificate change
// nothing.
var (
	backendBucketKind = registry.Upjet(Name, "compute", "BackendBucket", "v1beta2").Replaces(
		terraform.Refuse("project", "google_compute_backend_bucket.project", "google/services/compute/resource_compute_backend_bucket.go:361-365"))
	backendServiceKind = registry.Upjet(Name, "compute", "BackendService", "v1beta2", "spec.forProvider.loadBalancingScheme", "spec.forProvider.backend").Replaces(
		terraform.Refuse("project", "google_compute_backend_service.project", "google/services/compute/resource_compute_backend_service.go:1454-1458"))
	endpointGroupKind = registry.Upjet(Name, "compute", "GlobalNetworkEndpointGroup", "v1beta1", "spec.forProvider.networkEndpointType").Replaces(
		terraform.Refuse("project", "google_compute_global_network_endpoint_group.project", "google/services/compute/resource_compute_global_network_endpoint_group.go:173-177"),
		terraform.Refuse("networkEndpointType", "google_compute_global_network_endpoint_group.network_endpoint_type", "google/services/compute/resource_compute_global_network_endpoint_group.go:152-155"),
		terraform.Refuse("defaultPort", "google_compute_global_network_endpoint_group.default_port", "google/services/compute/resource_compute_global_network_endpoint_group.go:159-162"))
	endpointKind = registry.Upjet(Name, "compute", "GlobalNetworkEndpoint", "v1beta1", "spec.forProvider.port").Replaces(
		terraform.Refuse("project", "google_compute_global_network_endpoint.project", "google/services/compute/resource_compute_global_network_endpoint.go:179-183"),
		terraform.Refuse("globalNetworkEndpointGroupSelector", "google_compute_global_network_endpoint.global_network_endpoint_group", "google/services/compute/resource_compute_global_network_endpoint.go:151-154"),
		terraform.Refuse("fqdn", "google_compute_global_network_endpoint.fqdn", "google/services/compute/resource_compute_global_network_endpoint.go:165-168"),
		terraform.Refuse("port", "google_compute_global_network_endpoint.port", "google/services/compute/resource_compute_global_network_endpoint.go:158-161"))
	urlMapKind = registry.Upjet(Name, "compute", "URLMap", "v1beta2").Replaces(
		terraform.Refuse("project", "google_compute_url_map.project", "google/services/compute/resource_compute_url_map.go:4558-4562"))
	// A managed certificate is Ready once the object exists; Google
	// issues it later, once the host resolves to the load balancer that
	// serves it, and only then reports when it expires.
	managedCertificateKind = registry.Upjet(Name, "compute", "ManagedSSLCertificate", "v1beta2", "spec.forProvider.managed").ReadyWhen("status.atProvider.expireTime").
				WithGuarded(registry.WhyRecord, "spec.forProvider.managed", "spec.initProvider.managed").Replaces(
		terraform.Refuse("project", "google_compute_managed_ssl_certificate.project", "google/services/compute/resource_compute_managed_ssl_certificate.go:223-227"),
		terraform.Refuse("managed.domains", "google_compute_managed_ssl_certificate.managed.domains", "google/services/compute/resource_compute_managed_ssl_certificate.go:162-165"),
		terraform.Refuse("type", "google_compute_managed_ssl_certificate.type", "google/services/compute/resource_compute_managed_ssl_certificate.go:191-194"))
	httpsProxyKind = registry.Upjet(Name, "compute", "TargetHTTPSProxy", "v1beta1", "spec.forProvider.sslCertificates").Replaces(
		terraform.Refuse("project", "google_compute_target_https_proxy.project", "google/services/compute/resource_compute_target_https_proxy.go:288-292"))
	httpProxyKind = registry.Upjet(Name, "compute", "TargetHTTPProxy", "v1beta1").Replaces(
		terraform.Refuse("project", "google_compute_target_http_proxy.project", "google/services/compute/resource_compute_target_http_proxy.go:206-210"))
	forwardingRuleKind = registry.Upjet(Name, "compute", "GlobalForwardingRule", "v1beta2", "spec.forProvider.loadBalancingScheme", "spec.forProvider.target", "spec.forProvider.portRange").Replaces(
		terraform.Refuse("project", "google_compute_global_forwarding_rule.project", "google/services/compute/resource_compute_global_forwarding_rule.go:530-534"),
		terraform.Refuse("ipAddressSelector", "google_compute_global_forwarding_rule.ip_address", "google/services/compute/resource_compute_global_forwarding_rule.go:176-180"),
		terraform.Refuse("ipProtocol", "google_compute_global_forwarding_rule.ip_protocol", "google/services/compute/resource_compute_global_forwarding_rule.go:221-225"),
		terraform.Refuse("portRange", "google_compute_global_forwarding_rule.port_range", "google/services/compute/resource_compute_global_forwarding_rule.go:411-414"))
)

// Composition-resource names of a front end on GCP.
const (
	rSiteBucket        = "frontend-bucket"
	rSiteBucketPublic  = "frontend-bucket-public-read"
	rSiteBackendBucket = "frontend-backend-bucket"
	rSiteAPIGroup      = "frontend-api-neg"
	rSiteAPIEndpoint   = "frontend-api-endpoint"
	rSiteAPIBackend    = "frontend-api-backend"
	rSiteURLMap        = "frontend-url-map"
	rSiteCertificate   = "frontend-certificate"
	rSiteHTTPSProxy    = "frontend-https-proxy"
	rSiteAddress       = "frontend-address"
	rSiteHTTPSRule     = "frontend-https-rule"
	rSiteRedirectMap   = "frontend-redirect-map"
	rSiteHTTPProxy     = "frontend-http-proxy"
	rSiteHTTPRule      = "frontend-http-rule"
	rSiteRecord        = "frontend-dns"
)

// The load balancer's constants.
const (
	// maxComputeName is Compute Engine's limit on resource names
	// (RFC 1035 labels).
	maxComputeName = 63
	// externalManaged is the global external Application Load Balancer's
	// scheme. Terraform's default, EXTERNAL, is the classic one, which
	// has no custom error responses.
	externalManaged = "EXTERNAL_MANAGED"
	// httpsPort is where the load balancer answers, and where it reaches
	// the backend's Ingress.
	httpsPort = 443
	// httpPort is where it answers with a redirect to HTTPS.
	httpPort = 80
	// apiTimeoutSec bounds how long the load balancer waits for the API.
	apiTimeoutSec = 30
	// siteMatcher names the URL map's path matcher of the host.
	siteMatcher = "site"
	// recordTTL is the TTL of the host's record.
	recordTTL = 300
)

func init() {
	registry.Implement(Cloud, appFrontend)
	registry.Implement(Cloud, apiBackend)
	registry.Check(Cloud, checkAppFrontend)
}

// appFrontend renders the front end: a Cloud Storage bucket served as a
// website, readable by anyone (the load balancer reads it anonymously),
// behind a global external Application Load Balancer with Cloud CDN: a
// backend bucket, a URL map that sends the host to it (with the single-
// page mapping) and the API path to the backend's Ingress over HTTPS
// through an internet network endpoint group, uncached; a Google-managed
// certificate for the host; an HTTPS proxy and forwarding rule on a
// reserved address; HTTP on the same address redirected to HTTPS; and the
// host's A record in the Cluster's public zone. What needs an observed
// value (the address, the certificate's existence) waits for it.
//
// The HTTPS proxy takes GCP's default SSL policy, which still accepts TLS
// 1.0 and 1.1: provider-upjet-gcp's SSLPolicy kind is not among the CRDs
// the platform serves, so no stricter policy is rendered.
func appFrontend(ctx *registry.Context, f appenvironment.Frontend) ([]*registry.Resource, error) {
	project := ctx.XR.PlaneID
	out := []*registry.Resource{
		siteBucket(ctx, f),
		{
			// The load balancer reads a backend bucket's objects as an
			// anonymous user (Cloud CDN's private bucket access is not
			// set up), so they are public: anyone who knows an object's
			// name can read it straight from storage.googleapis.com,
			// bypassing the load balancer and its cache, and objectViewer
			// (storage.objects.list) lets anyone list the names too.
			// Publish only what the site serves.
			Name: rSiteBucketPublic,
			Kind: bucketIAMMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"bucketSelector": ctx.Selector(rSiteBucket),
				"role":           roleObjectViewer,
				"member":         "allUsers",
			}}},
			DependsOn: []string{rSiteBucket},
		},
		{
			Name:         rSiteBackendBucket,
			Kind:         backendBucketKind,
			ExternalName: frontendName(f),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":            project,
				"description":        "Front end of environment " + f.Name,
				"bucketNameSelector": ctx.Selector(rSiteBucket),
				"enableCdn":          true,
				"compressionMode":    "AUTOMATIC",
				"cdnPolicy":          cdnPolicy(f),
			}}},
			DependsOn: []string{rSiteBucket},
		},
	}
	out = append(out,
		urlMap(ctx, f),
		&registry.Resource{
			Name:         rSiteCertificate,
			Kind:         managedCertificateKind,
			ExternalName: frontendName(f),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project": project,
				"type":    "MANAGED",
				"managed": map[string]any{"domains": []any{f.Host}},
			}}},
		},
		httpsProxy(ctx, f),
		&registry.Resource{
			Name:         rSiteAddress,
			Kind:         globalAddressKind,
			ExternalName: frontendName(f),
			// IPv4, the API's default: ipVersion is not rendered.
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":     project,
				"addressType": "EXTERNAL",
				"labels":      frontendLabels(f),
			}}},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				o.CDNEndpoint = object.String(obs, "status", "atProvider", "address")
			},
		},
		forwardingRule(ctx, f, rSiteHTTPSRule, httpsPort, rSiteHTTPSProxy, "targetHttpsProxies", "https"),
		&registry.Resource{
			Name:         rSiteRedirectMap,
			Kind:         urlMapKind,
			ExternalName: frontendName(f, "redirect"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":     project,
				"description": "Redirects the front end of environment " + f.Name + " to HTTPS",
				"defaultUrlRedirect": map[string]any{
					"httpsRedirect":        true,
					"redirectResponseCode": "MOVED_PERMANENTLY_DEFAULT",
					"stripQuery":           false,
				},
			}}},
		},
		&registry.Resource{
			Name:         rSiteHTTPProxy,
			Kind:         httpProxyKind,
			ExternalName: frontendName(f, "http"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":        project,
				"urlMapSelector": ctx.Selector(rSiteRedirectMap),
			}}},
			DependsOn: []string{rSiteRedirectMap},
		},
		forwardingRule(ctx, f, rSiteHTTPRule, httpPort, rSiteHTTPProxy, "targetHttpProxies", "http"),
		hostRecord(ctx, f),
	)
	return out, nil
}

// siteBucket is the site's bucket: uniform access, served as a website
// (index.html for a directory; for a missing object index.html for a
// single-page app, else 404.html), public access left to IAM.
func siteBucket(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	return &registry.Resource{
		Name:         rSiteBucket,
		Kind:         bucketKind,
		ExternalName: f.Bucket,
		Orphan:       f.Orphan,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":                  ctx.XR.PlaneID,
			"location":                 strings.ToUpper(f.Location),
			"uniformBucketLevelAccess": true,
			"publicAccessPrevention":   "inherited",
			"forceDestroy":             false,
			"website":                  map[string]any{"mainPageSuffix": "index.html", "notFoundPage": f.NotFoundPage()},
			"labels":                   frontendLabels(f),
		}}},
	}
}

// cdnPolicy caches static content for the XR's TTLs; browsers may keep
// it for the default TTL (clientTtl may not exceed maxTtl). Terraform
// sends no zero maxTtl (resource_compute_backend_bucket.go:1222-1226),
// so a zero maximum is left out rather than diffed against the API's
// default forever.
func cdnPolicy(f appenvironment.Frontend) map[string]any {
	p := map[string]any{
		"cacheMode":  "CACHE_ALL_STATIC",
		"defaultTtl": f.DefaultTTL,
		"clientTtl":  min(f.DefaultTTL, f.MaxTTL),
	}
	if f.MaxTTL > 0 {
		p["maxTtl"] = f.MaxTTL
	}
	return p
}

// apiBackend renders the API's way to the backend's Ingress: an internet
// network endpoint group holding its host on 443, and a backend service
// that reaches it over HTTPS, uncached, with the Ingress's own host in
// the Host header so that the Ingress routes the request. An internet
// NEG takes no health check (the field's documentation, and Terraform's
// example "Backend Service Network Endpoint").
func apiBackend(ctx *registry.Context, a appenvironment.APIRoute) ([]*registry.Resource, error) {
	f := a.Frontend
	project := ctx.XR.PlaneID
	group := frontendName(f, "api")
	return []*registry.Resource{
		{
			Name:         rSiteAPIGroup,
			Kind:         endpointGroupKind,
			ExternalName: group,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":             project,
				"networkEndpointType": "INTERNET_FQDN_PORT",
				"defaultPort":         httpsPort,
			}}},
		},
		{
			// The endpoint's name is the provider's: no external name.
			Name: rSiteAPIEndpoint,
			Kind: endpointKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":                            project,
				"globalNetworkEndpointGroupSelector": ctx.Selector(rSiteAPIGroup),
				"fqdn":                               f.APIHost,
				"port":                               httpsPort,
			}}},
			DependsOn: []string{rSiteAPIGroup},
		},
		{
			// backend[].groupSelector selects instance group managers
			// only: the group is given by its ID.
			Name:         rSiteAPIBackend,
			Kind:         backendServiceKind,
			ExternalName: frontendName(f, "api"),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":              project,
				"description":          "API of the front end of environment " + f.Name,
				"loadBalancingScheme":  externalManaged,
				"protocol":             "HTTPS",
				"backend":              []any{map[string]any{"group": globalID(project, "networkEndpointGroups", group)}},
				"customRequestHeaders": []any{"Host: " + f.APIHost},
				"enableCdn":            false,
				"timeoutSec":           apiTimeoutSec,
			}}},
			DependsOn: []string{rSiteAPIGroup},
		},
	}, nil
}

// urlMap is the HTTPS load balancer's URL map: the host to the backend
// bucket, the API path (and what is under it) to the API's backend
// service. The services are given by their IDs: pathRule's selector
// resolves backend buckets only, and one form serves the whole matcher.
//
// For a single-page app, a 404 from the bucket answers /index.html with
// 200, which the app's router takes. Custom error response policies are
// served by the global external Application Load Balancer
// (EXTERNAL_MANAGED) only (resource_compute_url_map.go:2264-2273). The
// policy sits on a path rule of its own, /* to the bucket, rather than on
// the path matcher or the map: a matcher's or map's policy applies to
// every path rule without one of its own for the code, the API's
// included, whose 404s would then become the page.
func urlMap(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	project := ctx.XR.PlaneID
	bucket := globalID(project, "backendBuckets", frontendName(f))
	var rules []any
	deps := []string{rSiteBackendBucket}
	if f.APIPath != "" {
		rules = append(rules, map[string]any{
			"paths":   f.APIPatterns(),
			"service": globalID(project, "backendServices", frontendName(f, "api")),
		})
		deps = append(deps, rSiteAPIBackend)
	}
	if f.SPA {
		rules = append(rules, map[string]any{
			"paths":   []any{"/*"},
			"service": bucket,
			"customErrorResponsePolicy": map[string]any{
				"errorService": bucket,
				"errorResponseRule": []any{map[string]any{
					"matchResponseCodes":   []any{"404"},
					"path":                 "/index.html",
					"overrideResponseCode": 200,
				}},
			},
		})
	}
	matcher := map[string]any{"name": siteMatcher, "defaultService": bucket}
	if rules != nil {
		matcher["pathRule"] = rules
	}
	return &registry.Resource{
		Name:         rSiteURLMap,
		Kind:         urlMapKind,
		ExternalName: frontendName(f),
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":                project,
			"description":            "Front end of environment " + f.Name,
			"defaultServiceSelector": ctx.Selector(rSiteBackendBucket),
			"hostRule":               []any{map[string]any{"hosts": []any{f.Host}, "pathMatcher": siteMatcher}},
			"pathMatcher":            []any{matcher},
		}}},
		DependsOn: deps,
	}
}

// httpsProxy terminates TLS with the managed certificate. It is composed
// once the certificate exists, not once it is issued: Google issues it
// only once a proxy serves it at the address the host resolves to. The
// certificate is given by its ID (sslCertificatesSelector selects
// self-managed certificates only), so no Usage holds it while the proxy
// uses it.
func httpsProxy(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{Name: rSiteHTTPSProxy, Kind: httpsProxyKind, ExternalName: frontendName(f, "https"), DependsOn: []string{rSiteURLMap}}
	if object.String(ctx.Observed(rSiteCertificate), "status", "atProvider", "id") == "" {
		r.Pending = "waits for " + rSiteCertificate + " to be created"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"project":         ctx.XR.PlaneID,
		"urlMapSelector":  ctx.Selector(rSiteURLMap),
		"sslCertificates": []any{globalID(ctx.XR.PlaneID, "sslCertificates", frontendName(f))},
	}}}
	return r
}

// forwardingRule sends the address's TCP port to the target proxy named
// like itself (suffix), in collection, given by its ID: targetSelector
// selects SSL proxies only.
func forwardingRule(ctx *registry.Context, f appenvironment.Frontend, name string, port int, proxy, collection, suffix string) *registry.Resource {
	return &registry.Resource{
		Name:         name,
		Kind:         forwardingRuleKind,
		ExternalName: frontendName(f, suffix),
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":             ctx.XR.PlaneID,
			"loadBalancingScheme": externalManaged,
			"ipProtocol":          "TCP",
			"portRange":           strconv.Itoa(port),
			"ipAddressSelector":   ctx.Selector(rSiteAddress),
			"target":              globalID(ctx.XR.PlaneID, collection, frontendName(f, suffix)),
			"labels":              frontendLabels(f),
		}}},
		DependsOn: []string{rSiteAddress, proxy},
	}
}

// hostRecord publishes the host in the Cluster's public zone at the load
// balancer's address, once observed.
func hostRecord(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{Name: rSiteRecord, Kind: recordSetKind, DependsOn: []string{rSiteAddress}}
	ip := object.String(ctx.Observed(rSiteAddress), "status", "atProvider", "address")
	if ip == "" {
		r.Pending = "waits for the address of " + rSiteAddress
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"project":             ctx.XR.PlaneID,
		"managedZoneSelector": clusterref.Selector(f.Cluster, rPublicZone),
		"name":                f.Host + ".",
		"type":                "A",
		"ttl":                 recordTTL,
		"rrdatas":             []any{ip},
	}}}
	return r
}

// frontendName is the cloud name of a part of the front end's load
// balancer, within Compute Engine's limit.
func frontendName(f appenvironment.Frontend, part ...string) string {
	return names.JoinFor(f.Tenant, maxComputeName, append([]string{f.Name, "frontend"}, part...)...)
}

// globalID is the ID of a global Compute Engine resource, the form fields
// take where no selector resolves the kind.
func globalID(project, collection, name string) string {
	return "projects/" + project + "/global/" + collection + "/" + name
}

// frontendLabels are the labels of the front end's resources.
func frontendLabels(f appenvironment.Frontend) map[string]any {
	return map[string]any{"environment": f.Name, "managed-by": "crossplane"}
}

// checkAppFrontend refuses bucket names Cloud Storage refuses.
func checkAppFrontend(_ *registry.Context, f appenvironment.Frontend) field.ErrorList {
	return checkBucketName(f.BucketPath(), f.Bucket)
}
