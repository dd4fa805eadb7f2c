package cluster

import (
	"maps"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

var gcpSizes = map[string]any{"small": "e2-standard-2", "medium": "e2-standard-4"}

func composite(p xr.Parameters) *xr.Cluster {
	return &xr.Cluster{Composite: xr.Composite{Name: "prod", Namespace: "ns", Cloud: "gcp", CloudName: "prod", Scope: xr.Namespaced}, Parameters: p}
}

func errStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// carried ignores what the components carry of the plan for the clouds
// (the cluster's location, network, pools and access), which TestCarried
// checks.
var carried = cmp.Options{
	cmpopts.IgnoreFields(Network{}, "Location"),
	cmpopts.IgnoreFields(Cluster{}, "PrivatePath", "Network", "Pools"),
	cmpopts.IgnoreFields(NodePool{}, "Parallel", "Location", "Private"),
	cmpopts.IgnoreFields(Access{}, "Pools"),
	cmpopts.IgnoreFields(DNSIdentity{}, "Location"),
	cmpopts.IgnoreFields(DNSBinding{}, "Location", "Access"),
	cmpopts.IgnoreFields(Certificates{}, "Location", "Access"),
}

func TestCarried(t *testing.T) {
	x := composite(xr.Parameters{Location: "us-central1", Domain: "prod.example.com"})
	p, errs := Build(x, envcfg.New(map[string]any{"sizes": gcpSizes}), Traits{PodRange: true})
	if len(errs) > 0 {
		t.Fatalf("Build: %v", errs)
	}
	type carries struct {
		Location string
		Access   string
		Pools    []string
	}
	pools := []string{"default"}
	names := func(ps []NodePool) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	want := map[string]carries{
		"network": {Location: "us-central1"}, "egress": {Location: "us-central1"}, "identity": {Location: "us-central1"},
		"cluster": {Location: "us-central1", Pools: pools}, "pool/default": {Location: "us-central1"}, "access": {Pools: pools},
		"dns/public": {Location: "us-central1"}, "dns/private": {Location: "us-central1"}, "dns/identity": {Location: "us-central1"},
		"dns/binding/cert-manager": {Location: "us-central1", Access: "prod"}, "dns/binding/external-dns": {Location: "us-central1", Access: "prod"},
		"dns/certificates": {Location: "us-central1", Access: "prod"},
	}
	got := map[string]carries{}
	for _, c := range p.Components {
		switch c := c.(type) {
		case Network:
			got[c.ID()] = carries{Location: c.Location}
		case Egress:
			got[c.ID()] = carries{Location: c.Location}
		case Identity:
			got[c.ID()] = carries{Location: c.Location}
		case Cluster:
			got[c.ID()] = carries{Location: c.Location, Pools: names(c.Pools)}
			if c.Network != p.Network || c.PrivatePath.String() != "environment.privateCluster" {
				t.Errorf("Cluster carries network %+v and private path %s, want the plan's %+v and environment.privateCluster", c.Network, c.PrivatePath, p.Network)
			}
		case NodePool:
			got[c.ID()] = carries{Location: c.Location}
			if !c.Private || c.AtOnce() != DefaultParallelPools {
				t.Errorf("NodePool %s carries private %t and %d at once, want true and %d", c.Name, c.Private, c.AtOnce(), DefaultParallelPools)
			}
		case Access:
			got[c.ID()] = carries{Pools: names(c.Pools)}
		case DNSZone:
			got[c.ID()] = carries{Location: c.Location}
		case DNSIdentity:
			got[c.ID()] = carries{Location: c.Location}
		case DNSBinding:
			got[c.ID()] = carries{Location: c.Location, Access: c.Access.Name}
		case Certificates:
			got[c.ID()] = carries{Location: c.Location, Access: c.Access.Name}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the components carry of the plan: -want, +got:\n%s", diff)
	}
}

func TestBuildDefaults(t *testing.T) {
	p, errs := Build(composite(xr.Parameters{Location: "us-central1"}), envcfg.New(map[string]any{"sizes": gcpSizes}), Traits{PodRange: true})
	if len(errs) > 0 {
		t.Fatalf("Build: %v", errs)
	}
	want := Plan{
		Cluster: Cluster{Name: "prod", Version: DefaultVersion, Running: DefaultVersion, Location: "us-central1", Private: true},
		Network: Network{
			CIDR: netip.MustParsePrefix(DefaultNetworkCIDR), PodsCIDR: netip.MustParsePrefix(DefaultPodsCIDR),
			ServicesCIDR: netip.MustParsePrefix(DefaultServicesCIDR), Private: true,
		},
		Pools:  []NodePool{{Name: "default", Key: "default", FromEnvironment: true, MachineType: "e2-standard-4", MinNodes: 1, MaxNodes: 3, DiskSizeGB: 100}},
		Access: Access{Name: "prod"},
	}
	if diff := cmp.Diff(want, *p, carried, cmpopts.IgnoreUnexported(Plan{}), cmpopts.IgnoreFields(Plan{}, "Components"), cmpopts.EquateComparable(netip.Prefix{})); diff != "" {
		t.Errorf("Build(defaults): -want, +got:\n%s", diff)
	}
	var ids []string
	for _, c := range p.Components {
		ids = append(ids, c.ID())
	}
	wantIDs := []string{"network", "egress", "identity", "cluster", "pool/default", "access",
		"release/cert-manager", "release/ingress-nginx", "release/kube-prometheus-stack"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("Build(defaults) components: -want, +got:\n%s", diff)
	}
}

func TestBuildReleases(t *testing.T) {
	traits := Traits{InternalLoadBalancerAnnotations: map[string]string{"lb": "internal"}}
	cases := map[string]struct {
		reason string
		params xr.Parameters
		noDNS  bool
		env    map[string]any
		want   map[string]Release
		errs   []string
	}{
		"CatalogTemplated": {
			reason: "The catalog's values templates see the environment and the cloud's internal load-balancer annotations; XR values merge on top; without a domain, external-dns is off and nothing runs as a DNS identity.",
			noDNS:  true,
			params: xr.Parameters{Location: "x", Charts: map[string]xr.Chart{
				"ingress-nginx": {Version: "4.14.0", Values: map[string]any{"controller": map[string]any{"replicaCount": 5.0}}},
			}},
			env: map[string]any{"sizes": gcpSizes, "monitoring": map[string]any{"enabled": false}, "ingress": map[string]any{"replicas": 3.0}},
			want: map[string]Release{
				"cert-manager": {
					Name: "cert-manager", ProviderConfig: "prod", Repository: "https://charts.jetstack.io", Chart: "cert-manager", Version: "v1.19.1", Namespace: "cert-manager",
					Values: map[string]any{"crds": map[string]any{"enabled": true}, "prometheus": map[string]any{"enabled": false}},
				},
				"ingress-nginx": {
					Name: "ingress-nginx", ProviderConfig: "prod", Repository: "https://kubernetes.github.io/ingress-nginx", Chart: "ingress-nginx", Version: "4.14.0", Namespace: "ingress-nginx",
					Values: map[string]any{"controller": map[string]any{
						"replicaCount": 5.0,
						"service":      map[string]any{"annotations": map[string]any{"lb": "internal"}},
						"metrics":      map[string]any{"enabled": false},
					}},
				},
			},
		},
		"DNSAndTLS": {
			reason: "With a domain and its zones, cert-manager and external-dns name their ServiceAccounts and run as the DNS identity, and the ingress controller serves the domain's certificate by default.",
			params: xr.Parameters{Location: "x"},
			env:    map[string]any{"sizes": gcpSizes, "monitoring": map[string]any{"enabled": false}},
			want: map[string]Release{
				"cert-manager": {
					Name: "cert-manager", ProviderConfig: "prod", Repository: "https://charts.jetstack.io", Chart: "cert-manager", Version: "v1.19.1", Namespace: "cert-manager",
					Values: map[string]any{"crds": map[string]any{"enabled": true}, "prometheus": map[string]any{"enabled": false}, "serviceAccount": map[string]any{"create": true, "name": "cert-manager"}},
					RunsAs: dnsIdentity, ServiceAccount: "cert-manager",
				},
				"external-dns": {
					Name: "external-dns", ProviderConfig: "prod", Repository: "https://kubernetes-sigs.github.io/external-dns/", Chart: "external-dns", Version: "1.19.0", Namespace: "external-dns",
					Values: map[string]any{"domainFilters": []any{"prod.example.com"}, "txtOwnerId": "prod", "policy": "sync", "sources": []any{"ingress", "service"}, "serviceAccount": map[string]any{"create": true, "name": "external-dns"}},
					RunsAs: dnsIdentity, ServiceAccount: "external-dns",
				},
				"ingress-nginx": {
					Name: "ingress-nginx", ProviderConfig: "prod", Repository: "https://kubernetes.github.io/ingress-nginx", Chart: "ingress-nginx", Version: "4.13.3", Namespace: "ingress-nginx",
					Values: map[string]any{"controller": map[string]any{
						"replicaCount": 2.0,
						"service":      map[string]any{"annotations": map[string]any{"lb": "internal"}},
						"metrics":      map[string]any{"enabled": false},
						"extraArgs":    map[string]any{"default-ssl-certificate": "ingress-nginx/wildcard-tls"},
					}},
				},
			},
		},
		"EnvironmentChart": {
			reason: "The environment can add a chart and disable a default one; the XR can disable another.",
			params: xr.Parameters{Location: "x", Charts: map[string]xr.Chart{"ingress-nginx": {Disabled: true}}},
			env: map[string]any{"sizes": gcpSizes, "charts": map[string]any{
				"cert-manager": map[string]any{"disabled": true},
				"external-dns": map[string]any{"disabled": true},
				"reloader":     map[string]any{"repository": "https://stakater.github.io/stakater-charts", "version": "2.2.5", "values": "reloader:\n  watchGlobally: {{ .Cluster.Private }}\n"},
			}},
			want: map[string]Release{
				"reloader": {
					Name: "reloader", ProviderConfig: "prod", Repository: "https://stakater.github.io/stakater-charts", Chart: "reloader", Version: "2.2.5", Namespace: "reloader",
					Values: map[string]any{"reloader": map[string]any{"watchGlobally": true}},
				},
				"kube-prometheus-stack": {},
			},
		},
		"UnknownChart": {
			reason: "A chart that is not in the catalog is named, with the catalog.",
			params: xr.Parameters{Location: "x", Charts: map[string]xr.Chart{"istio": {}}},
			env:    map[string]any{"sizes": gcpSizes},
			errs:   []string{`spec.parameters.charts[istio]: Unsupported value: "istio": supported values: "cert-manager", "external-dns", "ingress-nginx", "kube-prometheus-stack"`},
		},
		"PlaintextPassword": {
			reason: "A plaintext credential in values is refused.",
			params: xr.Parameters{Location: "x", Charts: map[string]xr.Chart{
				"kube-prometheus-stack": {Values: map[string]any{"grafana": map[string]any{"adminPassword": "prom-operator"}}},
			}},
			env:  map[string]any{"sizes": gcpSizes},
			errs: []string{"spec.parameters.charts[kube-prometheus-stack].values: Forbidden: grafana.adminPassword holds a plaintext credential; reference a Secret instead (for example existingSecret)"},
		},
		"BadTemplate": {
			reason: "A values template that does not execute names the chart's values key.",
			params: xr.Parameters{Location: "x"},
			env:    map[string]any{"sizes": gcpSizes, "charts": map[string]any{"cert-manager": map[string]any{"values": "x: {{ .Nope }}"}}},
			errs:   []string{`environment.charts.cert-manager.values: Invalid value: "(template)": cannot execute values template: template: cert-manager:1:6: executing "cert-manager" at <.Nope>: can't evaluate field Nope in type cluster.ValuesData`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := composite(tc.params)
			if !tc.noDNS {
				x.Parameters.Domain = "prod.example.com"
			}
			p, errs := Build(x, envcfg.New(tc.env), traits)
			if diff := cmp.Diff(tc.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.errs) > 0 {
				return
			}
			got := map[string]Release{}
			for _, c := range p.Components {
				if r, ok := c.(Release); ok {
					got[r.Name] = r
				}
			}
			if diff := cmp.Diff(keys(tc.want), keys(got)); diff != "" {
				t.Errorf("%s\nreleases: -want, +got:\n%s", tc.reason, diff)
			}
			for name, w := range tc.want {
				if w.Name == "" {
					continue
				}
				if diff := cmp.Diff(w, got[name], carried); diff != "" {
					t.Errorf("%s\nrelease %s: -want, +got:\n%s", tc.reason, name, diff)
				}
			}
		})
	}
}

// dnsIdentity is the DNS identity of a GCP XR "prod" with domain
// prod.example.com and the default charts.
var dnsIdentity = &DNSIdentity{Domain: "prod.example.com"}

// bindings are the DNS bindings of cert-manager and external-dns.
var bindings = []component.Component{
	DNSBinding{Chart: "cert-manager", ServiceAccount: ServiceAccount{Namespace: "cert-manager", Name: "cert-manager"}},
	DNSBinding{Chart: "external-dns", ServiceAccount: ServiceAccount{Namespace: "external-dns", Name: "external-dns"}},
}

func TestBuildDNS(t *testing.T) {
	cases := map[string]struct {
		reason string
		params xr.Parameters
		env    map[string]any
		want   []component.Component
	}{
		"NoDomain": {
			reason: "Without a domain there is nothing to publish or certify.",
			params: xr.Parameters{Location: "x"},
		},
		"Domain": {
			reason: "A domain with zones gets the DNS identity and certificates; no parent zone, no delegation.",
			params: xr.Parameters{Location: "x", Domain: "prod.example.com"},
			want: []component.Component{
				*dnsIdentity, bindings[0], bindings[1],
				Certificates{Domain: "prod.example.com", Issuer: DefaultIssuer, Server: DefaultACMEServer, Namespace: "ingress-nginx", Secret: DefaultCertificateSecret, SolverNamespace: "cert-manager"},
			},
		},
		"EnvironmentIssuerAndParent": {
			reason: "The environment names the issuer, the certificate's Secret and the parent zone; the XR's parent zone wins over it.",
			params: xr.Parameters{Location: "x", Domain: "prod.example.com", ParentZone: xr.ParentZone{Name: "example-com", Group: "dns-project"}},
			env: map[string]any{"dns": map[string]any{
				"parentZone":        map[string]any{"name": "env-zone"},
				"issuer":            map[string]any{"name": "le-staging", "server": "https://acme-staging-v02.api.letsencrypt.org/directory", "email": "ops@example.com"},
				"certificateSecret": "prod-tls",
			}},
			want: []component.Component{
				*dnsIdentity, bindings[0], bindings[1],
				Certificates{Domain: "prod.example.com", Issuer: "le-staging", Server: "https://acme-staging-v02.api.letsencrypt.org/directory", Email: "ops@example.com", Namespace: "ingress-nginx", Secret: "prod-tls", SolverNamespace: "cert-manager"},
				DNSDelegation{Domain: "prod.example.com", ParentZone: "example-com", ParentGroup: "dns-project"},
			},
		},
		"CertManagerOff": {
			reason: "Without cert-manager there is no certificate, and only external-dns runs as the DNS identity.",
			params: xr.Parameters{Location: "x", Domain: "prod.example.com", Charts: map[string]xr.Chart{"cert-manager": {Disabled: true}}},
			want:   []component.Component{*dnsIdentity, bindings[1]},
		},
		"ZonesOff": {
			reason: "createDnsZones: false leaves the domain to someone else: nothing is published or certified.",
			params: xr.Parameters{Location: "x", Domain: "prod.example.com", CreateDNSZones: new(bool)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]any{"sizes": gcpSizes}
			maps.Copy(env, tc.env)
			p, errs := Build(composite(tc.params), envcfg.New(env), Traits{})
			if len(errs) > 0 {
				t.Fatalf("%s\nBuild(...): %v", tc.reason, errs)
			}
			var got []component.Component
			for _, c := range p.Components {
				switch c.(type) {
				case DNSIdentity, DNSBinding, Certificates, DNSDelegation:
					got = append(got, c)
				}
			}
			if diff := cmp.Diff(tc.want, got, carried, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nBuild(...) DNS components: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func TestBuildPrivateServices(t *testing.T) {
	type args struct {
		cloud  string
		on     bool
		traits Traits
	}
	type want struct {
		ids  []string
		errs []string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Off": {
			reason: "Without spec.parameters.network.privateServices there is none, whatever the cloud.",
			args:   args{traits: Traits{PrivateServices: true}},
			want:   want{ids: []string{"network", "egress"}},
		},
		"On": {
			reason: "Asked for on a cloud that offers it, it follows the network.",
			args:   args{on: true, traits: Traits{PrivateServices: true}},
			want:   want{ids: []string{"network", PrivateServicesID, "egress"}},
		},
		"Elsewhere": {
			reason: "Asked for on a cloud whose databases need none, it is refused, naming the field.",
			args:   args{cloud: "aws", on: true},
			want: want{ids: []string{"network", "egress"}, errs: []string{
				`spec.parameters.network.privateServices: Invalid value: true: private services access is for Cloud SQL on GCP; on cloud "aws" a Database joins the Cluster's network without it: remove the field`,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := composite(xr.Parameters{Location: "x", Network: xr.Network{PrivateServices: tc.args.on}})
			if tc.args.cloud != "" {
				x.Cloud = tc.args.cloud
			}
			p, errs := Build(x, envcfg.New(map[string]any{"sizes": gcpSizes}), tc.args.traits)
			if diff := cmp.Diff(tc.want.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			var ids []string
			for _, c := range p.Components[:len(tc.want.ids)] {
				ids = append(ids, c.ID())
			}
			if diff := cmp.Diff(tc.want.ids, ids); diff != "" {
				t.Errorf("%s\nBuild(...) first components: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
