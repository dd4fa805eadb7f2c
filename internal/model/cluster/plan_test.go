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

func TestBuildPools(t *testing.T) {
	cases := map[string]struct {
		reason string
		pools  []xr.Pool
		env    map[string]any
		want   []NodePool
		errs   []string
	}{
		"SizeAndExplicit": {
			reason: "A size class maps through the environment; an explicit machine type wins.",
			pools: []xr.Pool{
				{Key: "web", Name: "web", Size: "small", MinNodes: ptr[int64](2), MaxNodes: ptr[int64](5), Labels: map[string]string{"a": "b"}},
				{Key: "batch", Name: "batch", Size: "small", MachineType: "n2-highmem-8", MinNodes: ptr[int64](0), MaxNodes: ptr[int64](9), Spot: true, DiskSizeGB: ptr[int64](200)},
			},
			env: map[string]any{"sizes": gcpSizes},
			want: []NodePool{
				{Name: "batch", Key: "batch", MachineType: "n2-highmem-8", MinNodes: 0, MaxNodes: 9, Spot: true, DiskSizeGB: 200},
				{Name: "web", Key: "web", MachineType: "e2-standard-2", MinNodes: 2, MaxNodes: 5, DiskSizeGB: 100, Labels: map[string]string{"a": "b"}},
			},
		},
		"NodeDefaults": {
			reason: "Bounds, size and disk default from the environment's nodeDefaults; max is at least min.",
			pools:  []xr.Pool{{Key: "p", Name: "p", MinNodes: ptr[int64](7)}},
			env:    map[string]any{"sizes": gcpSizes, "nodeDefaults": map[string]any{"size": "small", "maxNodes": 4.0, "diskSizeGb": 50.0}},
			want:   []NodePool{{Name: "p", Key: "p", MachineType: "e2-standard-2", MinNodes: 7, MaxNodes: 7, DiskSizeGB: 50}},
		},
		"EnvironmentPools": {
			reason: "Without pools in the XR, the environment's pools apply.",
			env: map[string]any{"sizes": gcpSizes, "pools": map[string]any{
				"system": map[string]any{"size": "small", "minNodes": 1.0, "maxNodes": 2.0},
			}},
			want: []NodePool{{Name: "system", Key: "system", FromEnvironment: true, MachineType: "e2-standard-2", MinNodes: 1, MaxNodes: 2, DiskSizeGB: 100}},
		},
		"UnknownSize": {
			reason: "An unknown size class names the classes the environment maps.",
			pools:  []xr.Pool{{Key: "p", Name: "p", Size: "huge"}},
			env:    map[string]any{"sizes": gcpSizes},
			errs:   []string{`spec.parameters.pools[p].size: Unsupported value: "huge": supported values: "medium", "small"`},
		},
		"NoSizes": {
			reason: "An environment without size classes is named.",
			pools:  []xr.Pool{{Key: "p", Name: "p", Size: "small"}},
			errs:   []string{`spec.parameters.pools[p].size: Invalid value: "small": the environment defines no size classes (key sizes); set machineType or add sizes to the cloud's EnvironmentConfig`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := Build(composite(xr.Parameters{Location: "x", Pools: tc.pools}), envcfg.New(tc.env), Traits{})
			if diff := cmp.Diff(tc.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.errs) > 0 {
				return
			}
			if diff := cmp.Diff(tc.want, p.Pools, carried, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nBuild(...).Pools: -want, +got:\n%s", tc.reason, diff)
			}
		})
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

func TestRemoval(t *testing.T) {
	off, on := ptr(false), ptr(true)
	type args struct {
		params xr.Parameters
		env    map[string]any
		id     string
	}
	type want struct {
		bySpec bool
		// confirm says whether a spec statement other than
		// confirmRemovals is offered.
		confirm bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"PoolInSpec": {
			reason: "A pool still in the spec is not removed.",
			args:   args{params: xr.Parameters{Pools: []xr.Pool{{Key: "a", Name: "a"}}}, id: "pool/a"},
		},
		"PoolRemovedFromSpec": {
			reason: "A pool left out of the pools the spec names is removed by the spec.",
			args:   args{params: xr.Parameters{Pools: []xr.Pool{{Key: "a", Name: "a"}}}, id: "pool/b"},
			want:   want{bySpec: true},
		},
		"PoolRemovedFromEnvironment": {
			reason: "A pool the environment's default pools no longer list is held: the spec names no pools.",
			args:   args{env: map[string]any{"pools": map[string]any{"a": map[string]any{"machineType": "m"}}}, id: "pool/b"},
			want:   want{confirm: true},
		},
		"DomainRemoved": {
			reason: "Removing the domain keeps the zones until createDnsZones is false.",
			args:   args{id: "dns/public"},
			want:   want{confirm: true},
		},
		"ZonesOff": {
			reason: "createDnsZones: false removes the zones.",
			args:   args{params: xr.Parameters{CreateDNSZones: off}, id: "dns/public"},
			want:   want{bySpec: true},
		},
		"PrivateZoneWhenPublicBySpec": {
			reason: "A cluster the spec makes public keeps its private zone, which holds records, until its owner removes the zones or names it.",
			args:   args{params: xr.Parameters{CreateDNSZones: on, Domain: "a.example.com", PrivateCluster: off}, id: "dns/private"},
			want:   want{confirm: true},
		},
		"PrivateZoneWhenPublicByEnvironment": {
			reason: "A cluster the environment makes public keeps its private zone.",
			args:   args{params: xr.Parameters{Domain: "a.example.com"}, env: map[string]any{"privateCluster": false}, id: "dns/private"},
			want:   want{confirm: true},
		},
		"EgressWhenPublicBySpec": {
			reason: "A cluster the spec makes public loses its NAT.",
			args:   args{params: xr.Parameters{PrivateCluster: off}, id: "egress"},
			want:   want{bySpec: true},
		},
		"EgressWhenPublicByEnvironment": {
			reason: "A cluster the environment makes public keeps its NAT until the owner says so.",
			args:   args{env: map[string]any{"privateCluster": false}, id: "egress"},
			want:   want{confirm: true},
		},
		"EgressWhenPrivate": {
			reason: "A private cluster keeps its NAT.",
			args:   args{params: xr.Parameters{PrivateCluster: on}, id: "egress"},
		},
		"ChartDisabledBySpec": {
			reason: "A chart the XR disables loses its release.",
			args:   args{params: xr.Parameters{Charts: map[string]xr.Chart{"ingress-nginx": {Disabled: true}}}, id: "release/ingress-nginx"},
			want:   want{bySpec: true},
		},
		"ChartDisabledByEnvironment": {
			reason: "A chart the environment disables keeps its release until the XR disables it too.",
			args:   args{env: map[string]any{"charts": map[string]any{"ingress-nginx": map[string]any{"disabled": true}}}, id: "release/ingress-nginx"},
			want:   want{confirm: true},
		},
		"MonitoringOffByEnvironment": {
			reason: "monitoring.enabled: false in the environment holds the monitoring release.",
			args:   args{env: map[string]any{"monitoring": map[string]any{"enabled": false}}, id: "release/kube-prometheus-stack"},
			want:   want{confirm: true},
		},
		"ChartGoneFromCatalog": {
			reason: "A chart the catalog no longer has is held; only confirmRemovals removes it.",
			args:   args{id: "release/team-chart"},
		},
		"BudgetRemoved": {
			reason: "Removing the budget removes it.",
			args:   args{id: "budget"},
			want:   want{bySpec: true},
		},
		"Cluster": {
			reason: "The cluster is never removed by the plan.",
			args:   args{id: "cluster"},
		},
		"PrivateServicesOff": {
			reason: "Only the spec asks for private services access: without it, its resources are removed by the spec.",
			args:   args{id: PrivateServicesID},
			want:   want{bySpec: true},
		},
		"PrivateServicesOn": {
			reason: "Private services access the spec asks for is kept.",
			args:   args{params: xr.Parameters{Network: xr.Network{PrivateServices: true}}, id: PrivateServicesID},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.args.params.Location = "x"
			for i := range tc.args.params.Pools {
				tc.args.params.Pools[i].MachineType = "m"
			}
			env := map[string]any{"sizes": gcpSizes}
			for k, v := range tc.args.env {
				env[k] = v
			}
			p, errs := Build(composite(tc.args.params), envcfg.New(env), Traits{PodRange: true, PrivateServices: true})
			if len(errs) > 0 {
				t.Fatalf("Build: %v", errs)
			}
			r := p.Removal(tc.args.id)
			if r.BySpec != tc.want.bySpec || (r.Confirm != "") != tc.want.confirm || r.Why == "" {
				t.Errorf("%s\nRemoval(%q) = %+v, want bySpec %t, a spec statement to confirm %t, and a reason", tc.reason, tc.args.id, r, tc.want.bySpec, tc.want.confirm)
			}
		})
	}
}

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

func TestBounds(t *testing.T) {
	cases := map[string]struct {
		reason            string
		pool              NodePool
		min, max, initial int64
	}{
		"Running":         {reason: "A running pool is composed with its bounds.", pool: NodePool{MinNodes: 2, MaxNodes: 5}, min: 2, max: 5, initial: 2},
		"Paused":          {reason: "A paused pool is held at its floor.", pool: NodePool{MinNodes: 2, MaxNodes: 5, Floor: ptr[int64](2)}, min: 2, max: 2, initial: 2},
		"PausedAtZero":    {reason: "A floor of zero keeps a maximum of one, which autoscalers require.", pool: NodePool{MinNodes: 0, MaxNodes: 5, Floor: ptr[int64](0)}, min: 0, max: 1, initial: 0},
		"Rotating":        {reason: "A new generation holds the nodes the old one runs.", pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 5, Generation: "bcdf"}, min: 5, max: 6, initial: 5},
		"RotatingPastMax": {reason: "Holding more nodes than the maximum raises the maximum.", pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 9, Generation: "bcdf"}, min: 9, max: 9, initial: 9},
		"RotatingPaused": {reason: "A budget's floor wins over the nodes a rotation keeps: the new generation is created within it.",
			pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 5, Generation: "bcdf", Floor: ptr[int64](2)}, min: 2, max: 2, initial: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if gotMin, gotMax := tc.pool.Bounds(); gotMin != tc.min || gotMax != tc.max {
				t.Errorf("%s\nBounds() = (%d, %d), want (%d, %d)", tc.reason, gotMin, gotMax, tc.min, tc.max)
			}
			if got := tc.pool.Initial(); got != tc.initial {
				t.Errorf("%s\nInitial() = %d, want %d", tc.reason, got, tc.initial)
			}
		})
	}
}

func TestBudgetEnforcement(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     string
		env    any
		want   string
		errs   []string
	}{
		"BuiltIn":        {reason: "Without a word from the XR or the environment, a budget only monitors.", want: "monitor-only"},
		"Environment":    {reason: "The environment's budget.enforcement applies to budgets that name none.", env: "enabled", want: "enabled"},
		"XRWins":         {reason: "The XR's enforcement wins over the environment's.", xr: "monitor-only", env: "enabled", want: "monitor-only"},
		"BadEnvironment": {reason: "An unknown enforcement in the environment is named with the allowed values.", env: "strict", errs: []string{`environment.budget.enforcement: Unsupported value: "strict": supported values: "enabled", "monitor-only"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]any{"sizes": gcpSizes}
			if tc.env != nil {
				env["budget"] = map[string]any{"enforcement": tc.env}
			}
			p, errs := Build(composite(xr.Parameters{Location: "x", Budget: &xr.Budget{LimitUSD: 100, Enforcement: tc.xr}}), envcfg.New(env), Traits{})
			if diff := cmp.Diff(tc.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.errs) == 0 && p.BudgetEnforcement != tc.want {
				t.Errorf("%s\nenforcement = %q, want %q", tc.reason, p.BudgetEnforcement, tc.want)
			}
		})
	}
}

func TestEstimatePools(t *testing.T) {
	prices := map[string]any{"hoursPerMonth": 100.0, "controlPlanePerHour": 1.0,
		"machineTypes": map[string]any{"std": 1.0, "big": 2.0}, "spotMachineTypes": map[string]any{"big": 0.5}}
	perZone := func(location string) int64 {
		if location == "region" {
			return 3
		}
		return 1
	}
	fixed := func(*envcfg.Env) []NodePool {
		return []NodePool{{Name: "system", Fixed: true, MachineType: "std", MinNodes: 1, MaxNodes: 2}}
	}
	pools := []xr.Pool{
		{Key: "a", Name: "a", MachineType: "std", MinNodes: ptr(int64(1)), MaxNodes: ptr(int64(2))},
		{Key: "b", Name: "b", MachineType: "big", Spot: true, MinNodes: ptr(int64(0)), MaxNodes: ptr(int64(4))},
	}
	cases := map[string]struct {
		reason   string
		location string
		traits   Traits
		noSpot   bool
		want     Estimate
		missing  []string
	}{
		"Total": {
			reason:   "Bounds that count all nodes: control plane 100, pool a 100..200, spot pool b at its spot price 0..200.",
			location: "region",
			want:     Estimate{Min: 200, Max: 500},
		},
		"PerZone": {
			reason:   "A regional cluster whose pool bounds count nodes per zone: three zones triple every pool.",
			location: "region", traits: Traits{PoolZones: perZone},
			want: Estimate{Min: 400, Max: 1300},
		},
		"Zonal": {
			reason:   "A zonal cluster's pools span one zone.",
			location: "zone", traits: Traits{PoolZones: perZone},
			want: Estimate{Min: 200, Max: 500},
		},
		"FixedPool": {
			reason:   "Nodes the cloud composes with the cluster (AKS's system pool) are counted once.",
			location: "region", traits: Traits{PoolZones: perZone, FixedPools: fixed},
			want: Estimate{Min: 500, Max: 1500},
		},
		"NoSpotPrice": {
			reason:   "A spot pool without a spot price is priced on demand, and the missing key is named.",
			location: "zone", noSpot: true,
			want:    Estimate{Min: 200, Max: 1100},
			missing: []string{"prices.spotMachineTypes.big"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pr := maps.Clone(prices)
			if tc.noSpot {
				delete(pr, "spotMachineTypes")
			}
			env := envcfg.New(map[string]any{"prices": pr})
			p, errs := Build(composite(xr.Parameters{Location: tc.location, Pools: pools}), env, tc.traits)
			if len(errs) > 0 {
				t.Fatalf("%s\nBuild(...): %v", tc.reason, errs)
			}
			got, errs := p.Estimate(env)
			if len(errs) > 0 {
				t.Fatalf("%s\nEstimate(...): %v", tc.reason, errs)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nEstimate(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.missing, env.Missing(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nmissing keys: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
