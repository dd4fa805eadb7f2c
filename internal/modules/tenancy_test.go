package modules_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// TestTenancyUpgrade renders the example Databases and AppEnvironments of
// every cloud as they ran before names had tenants: the namespaced ones
// moved into a namespace whose new XRs derive tagged names (tenant-x, on a
// Cluster there), the legacy claims in their own namespaces, each with the
// composed resources today's examples converged to (the legacy ones kept
// in testdata/upgrade as the last release rendered them). Every resource
// keeps the name it runs with, hosts and bucket names it already serves
// stay its own, and nothing is withdrawn.
func TestTenancyUpgrade(t *testing.T) {
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		for _, kind := range []string{"database", "appenvironment"} {
			for _, legacy := range []bool{false, true} {
				file, observedFile := kind+".yaml", filepath.Join(examples, cloud, "observed", kind+".yaml")
				if legacy {
					file, observedFile = kind+"-legacy.yaml", filepath.Join("testdata", "upgrade", cloud+"-"+kind+"-legacy.yaml")
				}
				t.Run(cloud+"/"+file, func(t *testing.T) {
					x := fntest.ClaimComposite(overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, cloud, file))[0]))
					m, ok := modules.ForKind(fmt.Sprint(x["kind"]))
					if !ok {
						t.Fatalf("no module serves %v", x["kind"])
					}
					extra, err := fntest.Required(examples, cloud, x, m.Clusters)
					if err != nil {
						t.Fatal(err)
					}
					if !legacy {
						fntest.Set("metadata.namespace", "tenant-x")(x)
						for _, objs := range extra {
							for _, o := range objs {
								if o["metadata"].(map[string]any)["namespace"] != nil {
									fntest.Set("metadata.namespace", "tenant-x")(o)
								}
							}
						}
					}
					observed := fntest.ComposedBy(fntest.ObservedFile(observedFile), fmt.Sprint(x["metadata"].(map[string]any)["name"]))
					req, err := fntest.Request{XR: x, EnvironmentConfigs: envs, Observed: observed, Extra: extra}.Proto()
					if err != nil {
						t.Fatal(err)
					}
					fntest.KeepsNames(t, observed, runner(m)(req))
					if len(observed) < 4 {
						t.Errorf("only %d observed resources: the converged stack was not read", len(observed))
					}
				})
			}
		}
	}
}

// annotation is one of an object's annotations.
func annotation(o fntest.Object, key string) string {
	a, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	s, _ := a[key].(string)
	return s
}

// hostsOf are the DNS names a rendered object serves or publishes, as
// the kinds' guarded host fields and the Ingress carry them.
func hostsOf(o fntest.Object) []string {
	var out []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, k)
			}
		case []any:
			for _, e := range v {
				walk(e, key)
			}
		case string:
			switch key {
			case "host", "hosts", "hostName", "dnsName", "domainName", "domains", "aliases", "subjectAlternativeNames":
				out = append(out, strings.TrimSuffix(strings.TrimPrefix(v, "*."), "."))
			}
		}
	}
	walk(o["spec"], "")
	return out
}

// tenancyKinds are the examples the property renders, per module.
var tenancyKinds = []string{"cluster", "database", "appenvironment"}

// tenantCopy is the example XR of a cloud and module named name in
// namespace ns, with the hosts a namespace of the example environment
// gets: the platform namespace its own, any other the subdomain of
// apps.example.com named after it; and the Cluster it runs on there.
func tenantCopy(t *testing.T, cloud, kind, ns, name string) (fntest.Object, map[string][]fntest.Object, modules.Module) {
	t.Helper()
	x := overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, cloud, kind+".yaml"))[0])
	m, ok := modules.ForKind(fmt.Sprint(x["kind"]))
	if !ok {
		t.Fatalf("no module serves %v", x["kind"])
	}
	extra, err := fntest.Required(examples, cloud, x, m.Clusters)
	if err != nil {
		t.Fatal(err)
	}
	fntest.Set("metadata.namespace", ns)(x)
	fntest.Set("metadata.name", name)(x)
	domain := "prod.example.com"
	if ns != "platform" {
		domain = ns + ".apps.example.com"
	}
	params := x["spec"].(map[string]any)["parameters"].(map[string]any)
	switch kind {
	case "cluster":
		params["domain"] = domain
	case "appenvironment":
		if i, ok := params["ingress"].(map[string]any); ok {
			i["host"] = "api-" + name + "." + domain
		}
		if f, ok := params["frontend"].(map[string]any); ok {
			f["host"] = name + "." + domain
			delete(f, "bucketName")
		}
		if b, ok := params["bucket"].(map[string]any); ok {
			delete(b, "name")
		}
	}
	for _, objs := range extra {
		for _, o := range objs {
			if o["metadata"].(map[string]any)["namespace"] != nil {
				fntest.Set("metadata.namespace", ns)(o)
			}
			if o["kind"] == "Cluster" {
				fntest.Set("spec.parameters.domain", domain)(o)
			}
		}
	}
	return x, extra, m
}

// parentScoped are the kinds whose cloud names are unique only within a
// parent resource of the same XR (a node pool in its cluster, a database
// in its server, a record in its zone): two XRs' are apart by their
// parents' names, which are global.
var parentScoped = map[string]bool{
	"NodePool": true, "NodeGroup": true, "KubernetesClusterNodePool": true, "Addon": true,
	"Database": true, "FlexibleServerDatabase": true, "FlexibleServerConfiguration": true, "User": true,
	"RecordSet": true, "Record": true, "DNSTXTRecord": true, "DNSCNAMERecord": true, "DNSARecord": true, "DNSAAAARecord": true, "DNSNSRecord": true, "TXTRecord": true, "CNAMERecord": true, "ARecord": true, "AAAARecord": true, "NSRecord": true,
	"Container": true, "FrontdoorEndpoint": true, "FrontdoorOriginGroup": true, "FrontdoorOrigin": true, "FrontdoorRoute": true, "FrontdoorCustomDomain": true,
	"Subnet": true, "PrivateDNSZoneVirtualNetworkLink": true, "FederatedIdentityCredential": true, "SubnetNATGatewayAssociation": true,
}

// globalNames are the cloud names and hosts a converged response holds:
// the external names of its managed resources whose names are global in a
// project, account, subscription or zone, and every host.
func globalNames(rsp map[string]fntest.Object) map[string]string {
	out := map[string]string{}
	for name, o := range rsp {
		kind := fmt.Sprint(o["kind"])
		if ext := annotation(o, "crossplane.io/external-name"); ext != "" && !parentScoped[kind] {
			out[kind+" "+ext] = name
		}
		for _, h := range hostsOf(o) {
			out["host "+h] = name
		}
	}
	return out
}

// pair renders two XRs of one module and cloud, in namespaces nsA and nsB,
// B attacking A as attack says (0: no attack; 1: A's domain or Ingress
// host; 2: A's front end host; 3: A's cluster name), each until it
// converges or is refused. It returns the global names each converged
// stack holds, or why it was refused.
func pair(t *testing.T, nsA, nameA, nsB, nameB string, cloud, kind string, attack uint8) (ga, gb map[string]string, errA, errB error) {
	t.Helper()
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	a, extraA, m := tenantCopy(t, cloud, kind, nsA, nameA)
	b, extraB, _ := tenantCopy(t, cloud, kind, nsB, nameB)
	pa := a["spec"].(map[string]any)["parameters"].(map[string]any)
	pb := b["spec"].(map[string]any)["parameters"].(map[string]any)
	switch attack % 4 {
	case 1:
		if kind == "cluster" {
			pb["domain"] = pa["domain"]
		}
		if i, ok := pb["ingress"].(map[string]any); ok {
			i["host"] = pa["ingress"].(map[string]any)["host"]
		}
	case 2:
		if f, ok := pb["frontend"].(map[string]any); ok {
			f["host"] = pa["frontend"].(map[string]any)["host"]
		}
	case 3:
		if kind == "cluster" {
			fntest.Set("metadata.labels.clusterName", nameA)(b)
		}
	}
	run := runner(m)
	ra, errA := settle(run, a, envs, extraA)
	rb, errB := settle(run, b, envs, extraB)
	if errA == nil {
		ga = globalNames(fntest.Desired(ra))
	}
	if errB == nil {
		gb = globalNames(fntest.Desired(rb))
	}
	return ga, gb, errA, errB
}

// overlap reports the global names two converged stacks share.
func overlap(t *testing.T, ga, gb map[string]string, a, b string) {
	t.Helper()
	for k, in := range gb {
		if other, ok := ga[k]; ok {
			t.Errorf("%s's %s and %s's %s both render %s", b, in, a, other, k)
		}
	}
}

// TestTenancyApart renders pairs of XRs in two namespaces, on every cloud
// and module, as a tenant would try to take another's names: the same
// name, a name that embeds the other namespace's tag, names whose joins
// look alike, and the attacks on hosts and cluster names. Each pair
// converges with no global name in common, or the attacker is refused.
func TestTenancyApart(t *testing.T) {
	type args struct {
		nsA, nameA, nsB, nameB string
		attack                 uint8
	}
	cases := map[string]struct {
		reason  string
		args    args
		refused bool
	}{
		"SameName":          {reason: "The platform's XR and a tenant's of the same name.", args: args{"platform", "shop", "tenant-x", "shop", 0}},
		"SameNameTenants":   {reason: "Two tenants' XRs of the same name.", args: args{"tenant-x", "www", "team-x", "www", 0}},
		"JoinsLookAlike":    {reason: "Namespace and name that join alike (a + b-c, a-b + c).", args: args{"a", "b-c", "a-b", "c", 0}},
		"EmbedsTag":         {reason: "A tenant's name that ends in another tenant's tag.", args: args{"tenant-x", "shop", "team-x", "shop-5kbe0", 0}},
		"CutAlike":          {reason: "A long name cut to a cloud's limit (an Azure storage account's 24 characters without '-', a GCP service account's 30) is chosen to be the other's cut name.", args: args{"tenant-x", "customer-portal-backend", "team-x", "customerportalbackend5kb", 0}},
		"TakesHost":         {reason: "A tenant asks for the platform's domain or Ingress host.", args: args{"platform", "shop", "tenant-x", "shop", 1}, refused: true},
		"TakesClusterName":  {reason: "A tenant's Cluster names the platform's cluster.", args: args{"platform", "prod-cluster", "tenant-x", "prod-cluster", 3}, refused: true},
		"PlatformTakesTags": {reason: "The platform's namespace keeps bare names, so a name there that ends like a tenant's derived one is refused.", args: args{"tenant-x", "wiki", "platform", "wiki-5kbe0", 0}, refused: true},
	}
	for name, tc := range cases {
		for _, cloud := range []string{"gcp", "aws", "azure"} {
			for _, kind := range tenancyKinds {
				if tc.args.attack == 3 && kind != "cluster" || tc.args.attack == 1 && kind == "database" {
					continue
				}
				t.Run(name+"/"+cloud+"/"+kind, func(t *testing.T) {
					a, b := tc.args.nsA+"/"+tc.args.nameA, tc.args.nsB+"/"+tc.args.nameB
					ga, gb, errA, errB := pair(t, tc.args.nsA, tc.args.nameA, tc.args.nsB, tc.args.nameB, cloud, kind, tc.args.attack)
					if errA != nil {
						t.Fatalf("%s\n%s does not converge: %v", tc.reason, a, errA)
					}
					if tc.refused {
						if errB == nil {
							t.Errorf("%s\n%s converges, want it refused", tc.reason, b)
						}
						return
					}
					if errB != nil {
						t.Fatalf("%s\n%s does not converge: %v", tc.reason, b, errB)
					}
					if len(ga) == 0 || len(gb) == 0 {
						t.Errorf("%s\nonly %d and %d global names: nothing was compared", tc.reason, len(ga), len(gb))
					}
					overlap(t, ga, gb, a, b)
				})
			}
		}
	}
}

// FuzzTenancy is the property of the tenancy of names: two XRs in
// different namespaces, whatever their names, never both render the same
// global cloud name or host; one that tries is refused.
func FuzzTenancy(f *testing.F) {
	f.Add("platform", "shop", "tenant-x", "shop", uint8(0), uint8(2), uint8(0))
	f.Add("platform", "prod-cluster", "tenant-x", "prod-cluster", uint8(1), uint8(0), uint8(3))
	f.Add("a", "b-c", "a-b", "c", uint8(2), uint8(1), uint8(0))
	f.Add("tenant-x", "wiki", "team-x", "wiki-5kbe0", uint8(1), uint8(2), uint8(2))
	clouds := []string{"gcp", "aws", "azure"}
	f.Fuzz(func(t *testing.T, nsA, nameA, nsB, nameB string, cloudIdx, kindIdx, attack uint8) {
		for _, s := range []string{nsA, nameA, nsB, nameB} {
			if !dnsLabel(s) || len(s) > 30 {
				t.Skip("not a name an XR or a namespace can have")
			}
		}
		if nsA == nsB {
			t.Skip("one namespace: its siblings' rules apply")
		}
		ga, gb, _, _ := pair(t, nsA, nameA, nsB, nameB, clouds[int(cloudIdx)%len(clouds)], tenancyKinds[int(kindIdx)%len(tenancyKinds)], attack)
		overlap(t, ga, gb, nsA+"/"+nameA, nsB+"/"+nameB)
	})
}

// dnsLabel reports whether s is a DNS label that starts with a letter, as
// namespaces and the XRs' names are here.
func dnsLabel(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || strings.HasSuffix(s, "-") {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// settleWorld reconciles a world, the providers making everything desired
// ready after each call, until a call desires exactly what was observed
// before it (settle starts one from nothing; a tenant's second apply of an
// XR continues its first's).
func settleWorld(run fntest.Runner, w *fntest.World) (*fnv1.RunFunctionResponse, error) {
	for range 30 {
		req, err := w.Request().Proto()
		if err != nil {
			return nil, err
		}
		rsp := run(req)
		if msg := fntest.Fatal(rsp); msg != "" {
			return nil, fmt.Errorf("cannot settle: fatal result: %s", msg)
		}
		before := slices.Sorted(maps.Keys(w.Observed))
		w.Observed = fntest.ObserveAll(rsp, w.Observed)
		w.Connections = fntest.Connections(rsp)
		if slices.Equal(before, slices.Sorted(maps.Keys(w.Observed))) {
			return rsp, nil
		}
	}
	return nil, fmt.Errorf("cannot settle: the desired resources changed on each of 30 calls")
}

// TestTenancyReviewAttacks are the attacks a review found against the
// first cut of the tenancy of names, kept as tests: each is refused, or
// renders nothing another namespace renders.
//   - ClusterNameOnOtherKinds: the clusterName label on an AppEnvironment
//     or a Database switched off the derived names; it means nothing on
//     them now.
//   - NamespaceThenBucket: a tenant first named its workload namespace as
//     another's bucket, then asked for that bucket, which then counted as
//     one it runs (an Object's guarded manifest name); only external names
//     count now.
//   - OrphanEvidence: a managed resource of another XR without the
//     cloud-name label (an orphan of a deleted legacy XR, named in a
//     hand-written resourceRef) counted as evidence of bare names; only
//     what Crossplane labels as composed by this XR counts now.
func TestTenancyReviewAttacks(t *testing.T) {
	envs := fntest.MustLoad(filepath.Join(examples, "envconfigs"))
	type attack struct {
		victimNS, victim, attackerNS, attacker, kind string
		// first and then change the attacker's XR before its first and
		// its second apply; orphan, when set, is observed from the start.
		first, then func(cloud string, x fntest.Object)
		orphan      bool
	}
	cases := map[string]attack{
		"ClusterNameOnAppEnvironment": {victimNS: "platform", victim: "shop", attackerNS: "team-a", attacker: "shop", kind: "appenvironment",
			first: func(_ string, x fntest.Object) { fntest.Set("metadata.labels.clusterName", "legacy-prod")(x) }},
		"ClusterNameOnDatabase": {victimNS: "platform", victim: "shop", attackerNS: "team-a", attacker: "shop", kind: "database",
			first: func(_ string, x fntest.Object) { fntest.Set("metadata.labels.clusterName", "legacy-prod")(x) }},
		"NamespaceThenBucket": {victimNS: "platform", victim: "shop", attackerNS: "tenant-x", attacker: "wiki", kind: "appenvironment",
			first: func(cloud string, x fntest.Object) {
				fntest.Set("spec.parameters.bucket", nil)(x)
				fntest.Set("spec.parameters.namespace", map[bool]string{true: "shopfrontend", false: "shop-frontend"}[cloud == "azure"])(x)
			},
			then: func(cloud string, x fntest.Object) {
				fntest.Set("spec.parameters.bucket", map[string]any{"name": map[bool]string{true: "shopfrontend", false: "shop-frontend"}[cloud == "azure"]})(x)
			}},
		"OrphanEvidence": {victimNS: "tenant-x", victim: "shop", attackerNS: "tenant-y", attacker: "shop-5kbe0", kind: "appenvironment", orphan: true},
	}
	for name, a := range cases {
		for _, cloud := range []string{"gcp", "aws", "azure"} {
			t.Run(name+"/"+cloud, func(t *testing.T) {
				x, extraA, m := tenantCopy(t, cloud, a.kind, a.victimNS, a.victim)
				run := runner(m)
				ra, err := settle(run, x, envs, extraA)
				if err != nil {
					t.Fatalf("the victim %s/%s does not converge: %v", a.victimNS, a.victim, err)
				}
				b, extraB, _ := tenantCopy(t, cloud, a.kind, a.attackerNS, a.attacker)
				w := &fntest.World{XR: b, Envs: envs, Observed: map[string]fntest.Object{}, Extra: extraB}
				if a.orphan {
					o := fntest.ObservedFile(filepath.Join(examples, cloud, "observed", "cluster.yaml"))["dns-identity"]
					fntest.Set("metadata.namespace", a.attackerNS)(o)
					w.Observed["dns-identity"] = o
				}
				if a.first != nil {
					a.first(cloud, b)
				}
				rb, err := settleWorld(run, w)
				if err == nil && a.then != nil {
					a.then(cloud, b)
					rb, err = settleWorld(run, w)
				}
				if err != nil {
					// Refused: nothing is taken.
					return
				}
				overlap(t, globalNames(fntest.Desired(ra)), globalNames(fntest.Desired(rb)), a.victimNS+"/"+a.victim, a.attackerNS+"/"+a.attacker)
			})
		}
	}
}
