package appenvironment_test

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// attacker is the hostile tenant's namespace. The example environment
// assigns it nothing but the default grant: hosts under
// tenant-x.apps.example.com.
const attacker = "tenant-x"

// tenantXR is appXR in the attacker's namespace, on a Cluster of that
// namespace, without the victim's hosts and bucket names (each attack sets
// what it tries to take).
func tenantXR(cloud string, mutate ...func(fntest.Object)) fntest.Object {
	return appXR(cloud, append([]func(fntest.Object){
		fntest.Set("metadata.namespace", attacker),
		fntest.Set("spec.parameters.bucket.name", nil),
		fntest.Set("spec.parameters.ingress.host", "wiki.tenant-x.apps.example.com"),
	}, mutate...)...)
}

// tenantCluster is the attacker's Cluster: the example Cluster of the cloud
// in the attacker's namespace, with domain domain (the victim's, in the
// attack on hosts: the Cluster's own render refuses it, but the XR exists).
func tenantCluster(cloud, domain string) map[string][]fntest.Object {
	e := required(appXR(cloud))
	c := overlay.DeepCopy(e[clusterref.ForAppEnvironment.Requirement][0])
	fntest.Set("metadata.namespace", attacker)(c)
	fntest.Set("spec.parameters.domain", domain)(c)
	e[clusterref.ForAppEnvironment.Requirement] = []fntest.Object{c}
	return e
}

// notAssigned is the Fatal of a host or name the attacker's namespace was
// not assigned; it names the field and the attacker's own namespace only.
func notAssigned(path, what string) string {
	return path + `: Forbidden: ` + what + ` is not assigned to namespace "tenant-x"`
}

// namesNoOtherTenant checks that a Fatal names neither the victim's
// namespace nor its XRs.
func namesNoOtherTenant(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	msg := fntest.Fatal(rsp)
	for _, secret := range []string{`"platform"`, "platform/", "AppEnvironment \"shop\"", "AppEnvironment \"wiki\"'s"} {
		if strings.Contains(msg, secret) {
			t.Errorf("the Fatal reveals %q of another tenant: %s", secret, msg)
		}
	}
}

// ownNames checks that every composed cloud resource of the tenant's
// environment carries the name it derived from its namespace's tag, and
// that its Ingress serves its own host.
func ownNames(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	for name, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource().AsMap()
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		if got := labels["platform.example.org/cloud-name"]; got != "wiki-5kbe0" {
			t.Errorf("%s carries cloud name %v, want wiki-5kbe0 (wiki in tenant-x)", name, got)
		}
		// Azure's storage account names drop the '-'.
		ext, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)["crossplane.io/external-name"].(string)
		if flat := strings.ReplaceAll(ext, "-", ""); strings.HasPrefix(flat, "wiki") && !strings.HasPrefix(flat, "wiki5kbe0") {
			t.Errorf("%s is named %q in the cloud: a name derived from wiki alone, which another namespace's wiki derives too", name, ext)
		}
	}
	host := fntest.Desired(rsp)["ingress"]["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"]
	if host != "wiki.tenant-x.apps.example.com" {
		t.Errorf("the Ingress serves %v, want wiki.tenant-x.apps.example.com", host)
	}
}

// TestTenancyAttacks are a hostile tenant's attempts to take another
// namespace's hosts and cloud names, on every cloud, as the red team made
// them: each is refused with a Fatal naming the field, before anything is
// composed, and without naming the other tenant.
func TestTenancyAttacks(t *testing.T) {
	scenarios := map[string]fntest.Scenario{}
	ingress := func(o map[string]any) fntest.Object {
		return fntest.Object{"ingress": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"manifest": o}}}}
	}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		attacks := map[string]struct {
			reason string
			domain string
			set    []func(fntest.Object)
			fatal  string
		}{
			"TakesIngressHost": {
				reason: "An Ingress host under another namespace's domain, on a Cluster of the tenant's own that claims that domain.",
				domain: "prod.example.com",
				set:    []func(fntest.Object){fntest.Set("spec.parameters.ingress.host", "www.prod.example.com")},
				fatal:  notAssigned("spec.parameters.ingress.host", `host "www.prod.example.com"`),
			},
			"TakesFrontendHost": {
				reason: "A front end's host is another namespace's (the portal's one-request attack: name www, frontend true).",
				domain: "prod.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.ingress", nil),
					fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.prod.example.com"})},
				fatal: notAssigned("spec.parameters.frontend.host", `host "www.prod.example.com"`),
			},
			"TakesApexHost": {
				reason: "The apex of another namespace's domain.",
				domain: "prod.example.com",
				set:    []func(fntest.Object){fntest.Set("spec.parameters.ingress.host", "prod.example.com")},
				fatal:  notAssigned("spec.parameters.ingress.host", `host "prod.example.com"`),
			},
			"TakesBucket": {
				reason: "A bucket another namespace's front end already uses, named outright: a provider adopts a bucket by its name.",
				domain: "tenant-x.apps.example.com",
				set:    []func(fntest.Object){fntest.Set("spec.parameters.bucket.name", "shop-gcp0-frontend")},
				fatal:  notAssigned("spec.parameters.bucket.name", `bucket "shop-gcp0-frontend"`),
			},
			"TakesFrontendBucket": {
				reason: "A front end's bucket named after another namespace's environment.",
				domain: "tenant-x.apps.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.ingress", nil),
					fntest.Set("spec.parameters.frontend", map[string]any{"host": "www.tenant-x.apps.example.com", "bucketName": "wiki-frontend"})},
				fatal: notAssigned("spec.parameters.frontend.bucketName", `bucket "wiki-frontend"`),
			},
			"RewritesIngressHost": {
				reason: "The Ingress's rules rewritten through the tenant's overrides to serve another namespace's host.",
				domain: "tenant-x.apps.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.overrides", ingress(map[string]any{"spec": map[string]any{
					"rules": []any{map[string]any{"host": "www.prod.example.com"}}}}))},
				fatal: "spec.parameters.overrides.ingress.spec.forProvider.manifest.spec.rules: Forbidden: hosts are global",
			},
			"AddsTLSHost": {
				reason: "A certificate for another namespace's host requested through the Ingress's TLS hosts.",
				domain: "tenant-x.apps.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.overrides", ingress(map[string]any{"spec": map[string]any{
					"tls": []any{map[string]any{"hosts": []any{"www.prod.example.com"}, "secretName": "stolen"}}}}))},
				fatal: "spec.parameters.overrides.ingress.spec.forProvider.manifest.spec.tls: Forbidden: hosts are global",
			},
			"ExternalDNSAnnotation": {
				reason: "An external-dns annotation that would publish another namespace's host from the tenant's Ingress.",
				domain: "tenant-x.apps.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.overrides", ingress(map[string]any{"metadata": map[string]any{
					"annotations": map[string]any{"external-dns.alpha.kubernetes.io/hostname": "www.prod.example.com"}}}))},
				fatal: "spec.parameters.overrides.ingress.spec.forProvider.manifest.metadata.annotations[external-dns.alpha.kubernetes.io/hostname]: Forbidden: hosts are global",
			},
			"ServerAlias": {
				reason: "An ingress-nginx server alias that would serve another namespace's host.",
				domain: "tenant-x.apps.example.com",
				set: []func(fntest.Object){fntest.Set("spec.parameters.overrides", ingress(map[string]any{"metadata": map[string]any{
					"annotations": map[string]any{"nginx.ingress.kubernetes.io/server-alias": "www.prod.example.com"}}}))},
				fatal: "spec.parameters.overrides.ingress.spec.forProvider.manifest.metadata.annotations[nginx.ingress.kubernetes.io/server-alias]: Forbidden: hosts are global",
			},
		}
		for name, a := range attacks {
			scenarios[cloud+"/"+name] = fntest.Scenario{
				Reason: a.reason,
				XR:     tenantXR(cloud, a.set...),
				Extra:  tenantCluster(cloud, a.domain),
				Steps:  []fntest.Step{{Name: "attack", Fatal: a.fatal, Check: namesNoOtherTenant}},
			}
		}
		scenarios[cloud+"/OwnHostsAndNames"] = fntest.Scenario{
			Reason: "The tenant's own subdomain, a bucket named after its own environment, and an Ingress annotation that names no host converge; its cloud names carry its namespace's tag.",
			XR: tenantXR(cloud, fntest.Set("spec.parameters.bucket.name", "wiki-5kbe0-media"),
				fntest.Set("spec.parameters.overrides", ingress(map[string]any{"metadata": map[string]any{
					"annotations": map[string]any{"nginx.ingress.kubernetes.io/proxy-body-size": "8m"}}}))),
			Extra: tenantCluster(cloud, "tenant-x.apps.example.com"),
			Steps: []fntest.Step{{Name: "converge", Converge: true, Check: fntest.All(
				fntest.IsReady(true),
				fntest.Status("bucketName", "wiki-5kbe0-media"),
				ownNames,
			)}},
		}
	}
	fntest.RunAll(t, "tenancy attacks", run, envs, scenarios)
}
