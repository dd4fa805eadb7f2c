package appenvironment_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// fuzzEvil is a host the fuzzer plants through an XR's overrides: no
// desired record, certificate, alias or origin may ever name it.
const fuzzEvil = "fuzz-evil.example.net"

// fuzzOverrides are, per cloud, the overrides an XR's author might try on
// a front end: each plants fuzzEvil in a field the provider honours, where
// it would take over another name, open the bucket or move a record to
// another zone; the last of each cloud's tunes what the XR may tune (and
// the invariants must hold for what it renders). The choice after them is
// no override at all.
var fuzzOverrides = map[string][]map[string]any{
	"aws": {
		{"frontend-dns": forProviderOf(map[string]any{"name": fuzzEvil})},
		{"frontend-bucket-policy": forProviderOf(map[string]any{"policy": `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"` + fuzzEvil + `"}]}`})},
		{"frontend-certificate-record": forProviderOf(map[string]any{"zoneId": fuzzEvil})},
		{"frontend-certificate": forProviderOf(map[string]any{"domainName": fuzzEvil, "subjectAlternativeNames": []any{fuzzEvil}})},
		{"frontend-cdn": forProviderOf(map[string]any{"aliases": []any{fuzzEvil}})},
		{"frontend-bucket-public-access-block": forProviderOf(map[string]any{"blockPublicPolicy": false})},
		{"frontend-cdn": forProviderOf(map[string]any{"priceClass": "PriceClass_All", "comment": "tuned"})},
	},
	"gcp": {
		{"frontend-dns": forProviderOf(map[string]any{"name": fuzzEvil + "."})},
		{"frontend-dns": forProviderOf(map[string]any{"managedZone": fuzzEvil})},
		{"frontend-bucket-public-read": forProviderOf(map[string]any{"bucket": fuzzEvil})},
		{"frontend-certificate": forProviderOf(map[string]any{"managed": map[string]any{"domains": []any{fuzzEvil}}})},
		{"frontend-backend-bucket": forProviderOf(map[string]any{"description": "tuned"})},
	},
	"azure": {
		{"frontend-dns-validation": forProviderOf(map[string]any{"zoneName": fuzzEvil})},
		{"frontend-domain": forProviderOf(map[string]any{"hostName": fuzzEvil})},
		{"frontend-dns": map[string]any{"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/external-name": fuzzEvil}}}},
		{"frontend-route": forProviderOf(map[string]any{"enabled": true})},
	},
}

// forProviderOf is an override of spec.forProvider.
func forProviderOf(fp map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"forProvider": fp}}
}

// FuzzFrontend renders AppEnvironments with arbitrary front ends (host,
// API path, TTLs, bucket name, single-page flag) on each cloud, with an
// override an XR's author might try, lets the providers act, then applies
// operations between calls (resources vanishing, turning not ready, the
// providers acting, the price table changing). After every call that is
// not a Fatal it checks, independently of the function's own code:
//
//   - no withdrawal: every composed resource observed before the call is
//     still desired;
//   - no takeover: no desired resource names the planted host, and every
//     DNS record of the front end is the XR's host (or its certificate's
//     validation record) in the Cluster's own public zone;
//   - a private origin on AWS: the front end's bucket blocks every public
//     access, and its policy lets CloudFront, for one distribution, read.
//
// The seed corpus lives in testdata/fuzz/FuzzFrontend.
func FuzzFrontend(f *testing.F) {
	f.Add(uint8(0), "www.prod.example.com", "/api", "", true, int64(3600), int64(86400), uint8(3), []byte{0, 0, 1, 3, 2, 5})
	f.Add(uint8(0), "www.prod.example.com", "/api", "", true, int64(3600), int64(86400), uint8(0), []byte{})
	f.Add(uint8(1), "prod.example.com", "", "acme-site", false, int64(0), int64(0), uint8(6), []byte{0, 0, 0, 0, 3, 0})
	f.Add(uint8(2), "web.prod.example.com", "/api/v1", "acme-web-site", true, int64(60), int64(600), uint8(4), []byte{0, 0, 1, 9, 0, 0, 2, 1})
	f.Add(uint8(0), "a.b.prod.example.com", "/x", "x", true, int64(-1), int64(5), uint8(1), []byte{})
	// Every override each cloud's list holds, on a front end that
	// converges without it.
	for c, cloud := range []string{"aws", "gcp", "azure"} {
		for i := range fuzzOverrides[cloud] {
			f.Add(uint8(c%3), "www.prod.example.com", "/api", "", true, int64(3600), int64(86400), uint8(i%256), []byte{0, 0})
		}
	}
	f.Fuzz(func(t *testing.T, cloudIdx uint8, host, apiPath, bucket string, spa bool, ttl, maxTTL int64, override uint8, ops []byte) {
		if len(ops) > 32 {
			return
		}
		cloud := "aws"
		switch cloudIdx % 3 {
		case 1:
			cloud = "gcp"
		case 2:
			cloud = "azure"
		}
		fe := map[string]any{"host": host, "spa": spa, "defaultTtlSeconds": float64(ttl), "maxTtlSeconds": float64(maxTTL)}
		if apiPath != "" {
			fe["apiPath"] = apiPath
		}
		if bucket != "" {
			fe["bucketName"] = bucket
		}
		x := appXR(cloud, fntest.Set("spec.parameters.frontend", fe))
		if os := fuzzOverrides[cloud]; int(override)%(len(os)+1) < len(os) {
			fntest.Set("spec.parameters.overrides", os[int(override)%(len(os)+1)])(x)
		}
		w := &fntest.World{XR: x, Envs: envs, Extra: required(appXR(cloud)), Observed: map[string]fntest.Object{}}
		rsp := fuzzCall(t, w, host)
		for round := 0; round < 10 && fntest.Fatal(rsp) == ""; round++ {
			w.Observed = fntest.ObserveAll(rsp, w.Observed)
			rsp = fuzzCall(t, w, host)
		}
		for i := 0; i+1 < len(ops); i += 2 {
			names := slices.Sorted(maps.Keys(w.Observed))
			if len(names) == 0 {
				break
			}
			name := names[int(ops[i+1])%len(names)]
			switch ops[i] % 4 {
			case 0:
				w.Observed = fntest.ObserveAll(rsp, w.Observed)
			case 1:
				fntest.Vanish(name)(w)
			case 2:
				fntest.ObservedCondition(name, "Ready", "False", "fuzzed")(w)
			case 3:
				fntest.EnvEdit("cluster-platform-cloud-"+cloud, "appEnvironment.prices.frontendPerMonth", float64(ops[i+1]))(w)
			}
			rsp = fuzzCall(t, w, host)
		}
	})
}

// fuzzCall runs one reconcile and checks the invariants.
func fuzzCall(t *testing.T, w *fntest.World, host string) *fnv1.RunFunctionResponse {
	t.Helper()
	req, err := w.Request().Proto()
	if err != nil {
		t.Skip("not a valid request:", err)
	}
	rsp := run(req)
	if fntest.Fatal(rsp) != "" {
		return rsp
	}
	desired := fntest.Desired(rsp)
	for name := range w.Observed {
		if _, ok := desired[name]; !ok {
			t.Fatalf("WITHDRAWN: observed composed resource %q is no longer desired, and no spec change removed it", name)
		}
	}
	for name, d := range desired {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), fuzzEvil) {
			t.Fatalf("TAKEOVER: desired %q names the planted host: %s", name, b)
		}
		if !strings.HasPrefix(name, "frontend-") || strings.Contains(name, "-uses-") {
			continue
		}
		spec, _ := d["spec"].(map[string]any)
		fp, _ := spec["forProvider"].(map[string]any)
		checkRecord(t, name, d, fp, host)
		if name == "frontend-bucket-public-access-block" {
			for _, k := range []string{"blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"} {
				if fp[k] != true {
					t.Fatalf("PUBLIC: %s %s is %v", name, k, fp[k])
				}
			}
		}
		if name == "frontend-bucket-policy" {
			var doc struct {
				Statement []struct {
					Principal map[string]any
					Condition map[string]map[string]string
				}
			}
			if err := json.Unmarshal([]byte(fp["policy"].(string)), &doc); err != nil {
				t.Fatalf("bucket policy is no JSON: %v", err)
			}
			for _, s := range doc.Statement {
				if s.Principal["Service"] != "cloudfront.amazonaws.com" || len(s.Principal) != 1 || !strings.HasPrefix(s.Condition["StringEquals"]["AWS:SourceArn"], "arn:aws:cloudfront::") {
					t.Fatalf("PUBLIC: the bucket policy lets someone other than one distribution read: %+v", s)
				}
			}
		}
	}
	return rsp
}

// checkRecord holds a front end's DNS record to the XR's host in the
// Cluster's public zone: Route53 and Cloud DNS records by their name and
// zone selector, Azure's by their external name (relative to the zone)
// and zone selector.
func checkRecord(t *testing.T, name string, d fntest.Object, fp map[string]any, host string) {
	t.Helper()
	kind, _ := d["kind"].(string)
	var recName string
	var zone map[string]any
	switch kind {
	case "Record", "RecordSet":
		recName = strings.TrimSuffix(fp["name"].(string), ".")
		zone, _ = fp["zoneIdSelector"].(map[string]any)
		if zone == nil {
			zone, _ = fp["managedZoneSelector"].(map[string]any)
		}
	case "DNSTXTRecord", "DNSCNAMERecord", "DNSARecord":
		meta, _ := d["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		rel, _ := ann["crossplane.io/external-name"].(string)
		recName = strings.TrimPrefix(rel+".prod.example.com", "@.")
		zone, _ = fp["zoneNameSelector"].(map[string]any)
	default:
		return
	}
	labels, _ := zone["matchLabels"].(map[string]any)
	if labels["crossplane.io/composite"] != "prod-cluster" || labels["platform.example.org/resource"] != "public-dns-zone" || zone["matchControllerRef"] == true {
		t.Fatalf("ZONE: %s is not in the Cluster's public zone: %v", name, zone)
	}
	if recName != host && !strings.HasSuffix(recName, "."+host) {
		t.Fatalf("TAKEOVER: %s names %q, not the XR's host %q or a name under it", name, recName, host)
	}
}
