package appenvironment_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// withFrontend gives the example environment a front end at
// www.prod.example.com, with /api routed to its Ingress.
var withFrontend = fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com", "apiPath": "/api"})

// frontendResources are each cloud's composed resources of a front end with
// an API path.
var frontendResources = map[string][]string{
	"aws": {"frontend-bucket", "frontend-bucket-public-access-block", "frontend-bucket-encryption", "frontend-bucket-ownership", "frontend-bucket-policy",
		"frontend-origin-access", "frontend-certificate", "frontend-certificate-record", "frontend-certificate-validation", "frontend-cdn", "frontend-dns", "frontend-dns-ipv6"},
	"gcp": {"frontend-bucket", "frontend-bucket-public-read", "frontend-backend-bucket", "frontend-api-neg", "frontend-api-endpoint", "frontend-api-backend",
		"frontend-url-map", "frontend-certificate", "frontend-https-proxy", "frontend-address", "frontend-https-rule", "frontend-redirect-map", "frontend-http-proxy", "frontend-http-rule", "frontend-dns"},
	"azure": {"frontend-bucket", "frontend-cdn", "frontend-endpoint", "frontend-origin-group", "frontend-origin", "frontend-route",
		"frontend-api-origin-group", "frontend-api-origin", "frontend-api-route", "frontend-domain", "frontend-domain-association", "frontend-dns-validation", "frontend-dns"},
}

// apiResources are the resources of the API path alone.
var apiResources = map[string][]string{
	"aws":   nil, // the distribution's behaviours
	"gcp":   {"frontend-api-neg", "frontend-api-endpoint", "frontend-api-backend"},
	"azure": {"frontend-api-origin-group", "frontend-api-origin", "frontend-api-route"},
}

// forProvider returns a desired resource's spec.forProvider.
func forProvider(t *testing.T, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("%q is not desired", name)
	}
	fp, _ := r.GetResource().AsMap()["spec"].(map[string]any)["forProvider"].(map[string]any)
	return fp
}

// jsonOf renders v as JSON, for checks on nested values.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// contains checks that the JSON of a desired resource's forProvider holds
// every part.
func contains(name string, parts ...string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		js := jsonOf(t, forProvider(t, rsp, name))
		for _, p := range parts {
			if !strings.Contains(js, p) {
				t.Errorf("%s forProvider lacks %s: %s", name, p, js)
			}
		}
	}
}

// servesTheSite asserts, independently of the code under test, what each
// cloud's converged front end must do: TLS for the host, HTTP redirected to
// HTTPS, the single-page mapping, /api to the Ingress host uncached, a
// record for the host in the Cluster's zone, and an origin no one but the
// CDN reads where the cloud allows it.
var servesTheSite = map[string]fntest.Check{
	"aws": fntest.All(
		contains("frontend-bucket-public-access-block", `"blockPublicAcls":true`, `"blockPublicPolicy":true`, `"ignorePublicAcls":true`, `"restrictPublicBuckets":true`),
		contains("frontend-bucket-encryption", `"sseAlgorithm":"AES256"`),
		contains("frontend-bucket-ownership", `"objectOwnership":"BucketOwnerEnforced"`),
		contains("frontend-certificate", `"domainName":"www.prod.example.com"`, `"region":"us-east-1"`, `"validationMethod":"DNS"`),
		contains("frontend-cdn", `"aliases":["www.prod.example.com"]`, `"minimumProtocolVersion":"TLSv1.2_2021"`, `"sslSupportMethod":"sni-only"`,
			`"viewerProtocolPolicy":"redirect-to-https"`, `"compress":true`, `"responsePagePath":"/index.html"`, `"responseCode":200`,
			`"pathPattern":"/api/*"`, `"domainName":"wiki.prod.example.com"`, `"originProtocolPolicy":"https-only"`, `"cachePolicyId":"4135ea2d-6df8-44a3-9df3-4b5a84be39ad"`,
			`"originAccessControlIdSelector"`, `"acmCertificateArn":"arn:aws:acm:us-east-1:`),
		func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
			t.Helper()
			var doc struct {
				Statement []struct {
					Effect    string
					Principal map[string]any
					Action    any
					Condition map[string]map[string]string
				}
			}
			if err := json.Unmarshal([]byte(forProvider(t, rsp, "frontend-bucket-policy")["policy"].(string)), &doc); err != nil {
				t.Fatal(err)
			}
			for _, s := range doc.Statement {
				if s.Effect != "Allow" {
					continue
				}
				if jsonOf(t, s.Principal) != `{"Service":"cloudfront.amazonaws.com"}` || !strings.HasPrefix(s.Condition["StringEquals"]["AWS:SourceArn"], "arn:aws:cloudfront::") {
					t.Errorf("the bucket policy lets someone other than the environment's distribution read: %+v", s)
				}
			}
		},
		contains("frontend-dns", `"name":"www.prod.example.com"`, `"type":"A"`, `"zoneId":"Z2FDTNDATAQYW2"`, `"platform.example.org/resource":"public-dns-zone"`),
		contains("frontend-dns-ipv6", `"type":"AAAA"`),
	),
	"gcp": fntest.All(
		contains("frontend-backend-bucket", `"enableCdn":true`),
		contains("frontend-certificate", `"domains":["www.prod.example.com"]`),
		contains("frontend-url-map", `"/api/*"`, `"/index.html"`),
		contains("frontend-api-endpoint", `"fqdn":"wiki.prod.example.com"`, `"port":443`),
		contains("frontend-api-backend", `"protocol":"HTTPS"`, `"loadBalancingScheme":"EXTERNAL_MANAGED"`),
		contains("frontend-https-rule", `"portRange":"443"`, `"loadBalancingScheme":"EXTERNAL_MANAGED"`),
		contains("frontend-http-rule", `"portRange":"80"`),
		contains("frontend-redirect-map", `"httpsRedirect":true`),
		contains("frontend-dns", `"name":"www.prod.example.com."`, `"type":"A"`, `"platform.example.org/resource":"public-dns-zone"`),
	),
	"azure": fntest.All(
		contains("frontend-bucket", `"allowNestedItemsToBePublic":false`, `"minTlsVersion":"TLS1_2"`, `"error404Document":"index.html"`),
		contains("frontend-origin", `"certificateNameCheckEnabled":true`, `.z13.web.core.windows.net"`),
		contains("frontend-route", `"patternsToMatch":["/*"]`, `"httpsRedirectEnabled":true`, `"forwardingProtocol":"HttpsOnly"`),
		contains("frontend-api-route", `"/api/*"`, `"httpsRedirectEnabled":true`),
		contains("frontend-api-origin", `"hostName":"wiki.prod.example.com"`),
		contains("frontend-domain", `"hostName":"www.prod.example.com"`, `"certificateType":"ManagedCertificate"`, `"minimumVersion":"TLS12"`),
		externalName("frontend-dns-validation", "_dnsauth.www"),
		externalName("frontend-dns", "www"),
		contains("frontend-dns-validation", `"platform.example.org/resource":"public-dns-zone"`),
		contains("frontend-dns", `.z01.azurefd.net"`),
	),
}

// uncertified makes each cloud's certificate (on AWS, where the
// certificate's validation gates the distribution, the distribution; on
// Azure the custom domain) not yet done, as the provider reports it.
var uncertified = map[string]func(*fntest.World){
	"aws": fntest.ObservedCondition("frontend-cdn", "Ready", "False", "the distribution is InProgress"),
	"gcp": withoutStatus("frontend-certificate", "expireTime"),
	// The provider reports no field once Front Door has issued the
	// managed certificate (expirationDate comes with the validation
	// token): the custom domain's own readiness is all there is.
	"azure": fntest.ObservedCondition("frontend-domain", "Ready", "False", "the custom domain is pending validation"),
}

// setStatus sets a top-level status field of an observed resource, as a
// nested XR of ours reports it.
func setStatus(name, key string, v any) func(*fntest.World) {
	return func(w *fntest.World) {
		o := overlay.DeepCopy(w.Observed[name])
		st, _ := o["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			o["status"] = st
		}
		st[key] = v
		w.Observed = maps.Clone(w.Observed)
		w.Observed[name] = o
	}
}

// withoutStatus removes a field of an observed resource's
// status.atProvider, as before the cloud reports it.
func withoutStatus(name, key string) func(*fntest.World) {
	return func(w *fntest.World) {
		o := overlay.DeepCopy(w.Observed[name])
		if at, _ := o["status"].(map[string]any)["atProvider"].(map[string]any); at != nil {
			delete(at, key)
		}
		w.Observed = maps.Clone(w.Observed)
		w.Observed[name] = o
	}
}

// externalName checks a desired resource's crossplane.io/external-name.
func externalName(name, want string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		r, ok := rsp.GetDesired().GetResources()[name]
		if !ok {
			t.Errorf("%q is not desired", name)
			return
		}
		meta, _ := r.GetResource().AsMap()["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		if got := ann["crossplane.io/external-name"]; got != want {
			t.Errorf("%s external name %v, want %s", name, got, want)
		}
	}
}

func TestFrontendScenarios(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	for _, cloud := range []string{"aws", "gcp", "azure"} {
		x := appXR(cloud, withFrontend)
		scenarios[cloud+"/FrontendConverges"] = fntest.Scenario{
			Reason: "A front end converges behind the cloud's CDN: a private (or CDN-read) bucket, a managed certificate for the host validated in the Cluster's zone, HTTPS only, the single-page mapping, /api to the Ingress, the host's record; the status says where it answers and where to publish.",
			XR:     x,
			Extra:  required(x),
			Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
				fntest.IsReady(true),
				fntest.Condition(appenvironment.ConditionFrontendReady, "TRUE", "Available"),
				fntest.Desires(frontendResources[cloud]...),
				fntest.Status("frontendUrl", "https://www.prod.example.com"),
				fntest.Status("frontendBucketName", "wiki-frontend"),
				fntest.Status("cdnEndpoint", nil),
				fntest.Status("url", "https://wiki.prod.example.com"),
				servesTheSite[cloud],
			)}},
		}
		scenarios[cloud+"/FrontendNotReadyUntilCertified"] = fntest.Scenario{
			Reason: "FrontendReady is False while the certificate is not issued or the CDN not deployed, though the provider says the resource exists; the backend stays ready.",
			XR:     x,
			Extra:  required(x),
			Steps: []fntest.Step{
				{Name: "first", Check: fntest.All(fntest.Condition(appenvironment.ConditionFrontendReady, "FALSE", "Waiting"), fntest.IsReady(false))},
				{Name: "converge", Converge: true, Check: fntest.Condition(appenvironment.ConditionFrontendReady, "TRUE", "Available")},
				{Name: "certificate not issued", World: uncertified[cloud], Check: fntest.All(
					fntest.Condition(appenvironment.ConditionFrontendReady, "FALSE", "Creating"),
					fntest.Condition(appenvironment.ConditionBackendReady, "TRUE", "Available"),
					fntest.IsReady(false),
				)},
			},
		}
		scenarios[cloud+"/FrontendRemoved"] = fntest.Scenario{
			Reason: "Removing spec.parameters.frontend removes the front end's resources and nothing else.",
			XR:     x,
			Extra:  required(x),
			Steps: []fntest.Step{
				{Name: "converge", Converge: true},
				{Name: "frontend removed", Spec: fntest.Edit("spec.parameters.frontend", nil), Removes: frontendResources[cloud], Check: fntest.All(
					fntest.Desires("bucket", "deployment", "ingress"),
					fntest.Condition(appenvironment.ConditionFrontendReady, "TRUE", "NotRequested"),
				)},
			},
		}
		if api := apiResources[cloud]; api != nil {
			scenarios[cloud+"/FrontendWithoutAPI"] = fntest.Scenario{
				Reason: "Without apiPath the CDN serves the site alone: nothing reaches the backend through it.",
				XR:     appXR(cloud, fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com"})),
				Extra:  required(x),
				Steps:  []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Lacks(api...))}},
			}
		}
		scenarios[cloud+"/FrontendOrphan"] = fntest.Scenario{
			Reason: "deletionPolicy Orphan keeps the front end's bucket as it keeps the environment's other bucket.",
			XR:     appXR(cloud, withFrontend, fntest.Set("spec.parameters.deletionPolicy", "Orphan")),
			Extra:  required(x),
			Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
				orphaned("frontend-bucket"),
				orphaned("bucket"),
			)}},
		}
		scenarios[cloud+"/FrontendBucketNamed"] = fntest.Scenario{
			Reason: "spec.parameters.frontend.bucketName names the bucket in the cloud and in the status.",
			XR:     appXR(cloud, fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com", "bucketName": "acme-wiki-site"})),
			Extra:  required(x),
			Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
				fntest.Status("frontendBucketName", "acme-wiki-site"),
				externalName("frontend-bucket", map[string]string{"aws": "acme-wiki-site", "gcp": "acme-wiki-site", "azure": "acmewikisite"}[cloud]),
			)}},
		}
	}
	scenarios["azure/FrontendAtTheApex"] = fntest.Scenario{
		Reason: "At the zone's apex, which cannot hold a CNAME, the host is an alias A record whose target is the Front Door endpoint; the validation record is _dnsauth.",
		XR:     appXR("azure", fntest.Set("spec.parameters.frontend", map[string]any{"host": "prod.example.com"})),
		Extra:  required(appXR("azure")),
		Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
			fntest.IsReady(true),
			fntest.Field("frontend-dns", "kind", "DNSARecord"),
			externalName("frontend-dns", "@"),
			externalName("frontend-dns-validation", "_dnsauth"),
			contains("frontend-dns", `"targetResourceId":"/subscriptions/`, `/afdEndpoints/wiki-frontend"`),
		)}},
	}
	scenarios["gcp/FrontendAPIGivesTheIngressTLS"] = fntest.Scenario{
		Reason: "An API path reaches the Ingress over HTTPS only: an Ingress without tls gets a certificate anyway, said in a Warning, and the backend's URL is https.",
		XR:     appXR("gcp", withFrontend, fntest.Set("spec.parameters.ingress", map[string]any{"host": "wiki.prod.example.com"})),
		Extra:  required(appXR("gcp")),
		Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
			fntest.IsReady(true),
			fntest.Warns("spec.parameters.ingress gets TLS although spec.parameters.ingress.tls is not true"),
			fntest.Status("url", "https://wiki.prod.example.com"),
			contains("frontend-api-backend", `"protocol":"HTTPS"`),
			contains("ingress", `"tls":[{"hosts":["wiki.prod.example.com"]`, `"cert-manager.io/cluster-issuer"`),
		)}},
	}
	for _, cloud := range []string{"gcp", "azure"} {
		scenarios[cloud+"/FrontendAPIPathRemoved"] = fntest.Scenario{
			Reason: "Removing spec.parameters.frontend.apiPath removes the API's route to the backend, by the spec, and keeps the site.",
			XR:     appXR(cloud, withFrontend),
			Extra:  required(appXR(cloud)),
			Steps: []fntest.Step{
				{Name: "converge", Converge: true},
				{Name: "apiPath removed", Spec: fntest.Edit("spec.parameters.frontend.apiPath", nil), Removes: apiResources[cloud], Check: fntest.All(
					fntest.Desires("frontend-bucket", "frontend-dns"),
					fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld"),
				)},
				fntest.ConvergeStep("settles"),
			},
		}
	}
	scenarios["aws/FrontendTenantTunesTheCDN"] = fntest.Scenario{
		Reason: "What is not guarded stays the XR's to tune: an override of the distribution's price class is applied.",
		XR:     appXR("aws", withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-cdn": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"priceClass": "PriceClass_All"}}}})),
		Extra:  required(appXR("aws")),
		Steps:  []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Field("frontend-cdn", "spec.forProvider.priceClass", "PriceClass_All"))}},
	}
	scenarios["aws/FrontendTTLs"] = fntest.Scenario{
		Reason: "The XR's TTLs bound the site's caching; the API is never cached.",
		XR:     appXR("aws", fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com", "apiPath": "/api", "defaultTtlSeconds": 60.0, "maxTtlSeconds": 600.0, "spa": false})),
		Extra:  required(appXR("aws")),
		Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
			fntest.Field("frontend-cdn", "spec.forProvider.defaultCacheBehavior.defaultTtl", 60),
			fntest.Field("frontend-cdn", "spec.forProvider.defaultCacheBehavior.maxTtl", 600),
			fntest.Field("frontend-cdn", "spec.forProvider.customErrorResponse", nil),
		)}},
	}
	scenarios["aws/FrontendWaitsForValues"] = fntest.Scenario{
		Reason: "What needs a value only the cloud reports waits for it, saying so: the validation record for the certificate's, the distribution for its issue, the bucket policy for the distribution's ARN.",
		XR:     appXR("aws", withFrontend),
		Extra:  required(appXR("aws")),
		Steps: []fntest.Step{{Name: "first", Check: fntest.All(
			fntest.Desires("frontend-bucket", "frontend-certificate", "frontend-origin-access"),
			fntest.Lacks("frontend-certificate-record", "frontend-certificate-validation", "frontend-cdn", "frontend-bucket-policy", "frontend-dns"),
			fntest.ConditionMentions(appenvironment.ConditionFrontendReady, "waits for frontend-certificate to report its DNS validation record"),
		)}},
	}
	scenarios["azure/FrontendPricedAndBudgeted"] = fntest.Scenario{
		Reason: "The environment's price table prices the front end's CDN: the estimate counts it, and a budget below what the CDN costs whatever the backend does is said in a Warning naming the field.",
		XR: appXR("azure", withFrontend, fntest.Set("spec.parameters.database", nil),
			fntest.Set("spec.parameters.budget", map[string]any{"limitUsd": 20.0, "enforcement": "enabled"})),
		Extra: required(appXR("azure")),
		Steps: []fntest.Step{{Name: "first", Check: fntest.All(
			fntest.Status("estimatedMonthlyUsd", map[string]any{"min": 35.0, "max": 35.0}),
			fntest.Warns("spec.parameters.budget.limitUsd (20.00) is below the front end's fixed monthly price (35.00 USD"),
		)}},
	}
	scenarios["gcp/FrontendEstimateSumsTheParts"] = fntest.Scenario{
		Reason: "The estimate is the Database's, as it reports it, plus the front end's fixed price; until the Database has estimated itself there is no sum.",
		XR:     appXR("gcp", withFrontend),
		Extra:  required(appXR("gcp")),
		Steps: []fntest.Step{
			{Name: "converge", Converge: true, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				t.Helper()
				if st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any); st["estimatedMonthlyUsd"] != nil {
					t.Errorf("status.estimatedMonthlyUsd = %v before the Database estimated itself, want none", st["estimatedMonthlyUsd"])
				}
			}},
			{Name: "database estimated", World: setStatus(appenvironment.ResourceDatabase, "estimatedMonthlyUsd", map[string]any{"min": 50.0, "max": 70.0}),
				Check: fntest.Status("estimatedMonthlyUsd", map[string]any{"min": 68.25, "max": 88.25})},
		},
	}
	scenarios["aws/FrontendUnpricedNoEstimate"] = fntest.Scenario{
		Reason: "Without a price for the front end and without a database, the environment has no estimate rather than a made-up one.",
		XR:     appXR("aws", withFrontend, fntest.Set("spec.parameters.database", nil)),
		Extra:  required(appXR("aws")),
		Steps: []fntest.Step{{Name: "first", World: fntest.EnvEdit("cluster-platform-cloud-aws", "appEnvironment.prices", nil), Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
			t.Helper()
			if st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any); st["estimatedMonthlyUsd"] != nil {
				t.Errorf("status.estimatedMonthlyUsd = %v, want none", st["estimatedMonthlyUsd"])
			}
		}}},
	}
	refusals := map[string]struct {
		cloud string
		set   []func(fntest.Object)
		fatal string
	}{
		"HostOutsideDomain": {"aws", []func(fntest.Object){fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.example.net"})},
			`spec.parameters.frontend.host: Invalid value: "www.example.net": must be prod.example.com or a name under it, the domain of Cluster "prod-cluster"`},
		"SameBucketTwice": {"gcp", []func(fntest.Object){fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com", "bucketName": "acme-wiki-uploads"})},
			`spec.parameters.frontend.bucketName: Duplicate value: "acme-wiki-uploads"`},
		"BadBucketName": {"aws", []func(fntest.Object){fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com", "bucketName": "Acme_Site"})},
			`spec.parameters.frontend.bucketName: Invalid value: "Acme_Site": an S3 bucket name`},
		"APIWithoutIngress": {"azure", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.ingress", nil)},
			`spec.parameters.ingress: Required value: spec.parameters.frontend.apiPath routes to the backend at its Ingress host`},
		"TenantOpensTheBucket": {"aws", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-bucket-policy": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"policy": `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject"}]}`}}}})},
			`spec.parameters.overrides.frontend-bucket-policy.spec.forProvider.policy: Forbidden`},
		"TenantTakesAnotherHost": {"aws", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-dns": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"name": "shop.prod.example.com"}}}})},
			`spec.parameters.overrides.frontend-dns.spec.forProvider.name: Forbidden`},
		"TenantWidensTheCertificate": {"aws", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-certificate": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"domainName": "prod.example.com"}}}})},
			`spec.parameters.overrides.frontend-certificate.spec.forProvider.domainName: Forbidden`},
		"TenantAddsAnAlias": {"aws", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-cdn": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"aliases": []any{"shop.prod.example.com"}}}}})},
			`spec.parameters.overrides.frontend-cdn.spec.forProvider.aliases: Forbidden`},
		"TenantUnblocksTheBucket": {"aws", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-bucket-public-access-block": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"blockPublicAcls": false}}}})},
			`spec.parameters.overrides.frontend-bucket-public-access-block.spec.forProvider.blockPublicAcls: Forbidden`},
		"TenantWidensTheManagedCertificate": {"gcp", []func(fntest.Object){withFrontend, fntest.Set("spec.parameters.overrides", map[string]any{"frontend-certificate": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"managed": map[string]any{"domains": []any{"shop.prod.example.com"}}}}}})},
			`spec.parameters.overrides.frontend-certificate.spec.forProvider.managed`},
		"AzureHostTooLong": {"azure", []func(fntest.Object){fntest.Set("spec.parameters.frontend", map[string]any{"host": strings.Repeat("a", 50) + ".prod.example.com"})},
			`spec.parameters.frontend.host: Invalid value: "aaaaaaaaaa`},
	}
	for name, r := range refusals {
		x := appXR(r.cloud, r.set...)
		scenarios[r.cloud+"/FrontendRefuses"+name] = fntest.Scenario{
			Reason: "A front end the cloud cannot serve is a Fatal naming the field, before anything is composed.",
			XR:     x,
			Extra:  required(appXR(r.cloud)),
			Steps:  []fntest.Step{{Name: "first", Fatal: r.fatal}},
		}
	}
	fntest.RunAll(t, "AppEnvironment front ends", run, envs, scenarios)
}

// orphaned checks that a desired managed resource leaves its cloud
// resource behind when deleted: no Delete among its management policies.
func orphaned(name string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		r, ok := rsp.GetDesired().GetResources()[name]
		if !ok {
			t.Errorf("%q is not desired", name)
			return
		}
		spec, _ := r.GetResource().AsMap()["spec"].(map[string]any)
		ps, _ := spec["managementPolicies"].([]any)
		if len(ps) == 0 || slices.Contains(ps, any("Delete")) || slices.Contains(ps, any("*")) {
			t.Errorf("%s management policies %v delete the cloud resource", name, ps)
		}
	}
}
