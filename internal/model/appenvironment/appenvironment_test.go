package appenvironment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func appXR(par xr.AppParameters) *xr.AppEnvironment {
	return &xr.AppEnvironment{
		Composite:  xr.Composite{Name: "shop", CloudName: "shop", Namespace: "platform", Scope: xr.Namespaced, Cloud: "aws", PlaneID: "123456789012", PlaneType: "production"},
		Parameters: par,
	}
}

func testCluster(domain string) *cluster.Reported {
	return &cluster.Reported{Ref: "prod", Location: "eu-west-1", CloudName: "prod",
		XR: &xr.Cluster{Composite: xr.Composite{Name: "prod"}, Parameters: xr.Parameters{Domain: domain}}}
}

func TestBuild(t *testing.T) {
	image := xr.Backend{Image: "nginx:1.27"}
	type want struct {
		kinds    []component.Kind
		backend  func(*testing.T, Backend)
		bucket   *Bucket
		database *Database
		errs     []string
	}
	cases := map[string]struct {
		reason string
		par    xr.AppParameters
		env    map[string]any
		// cluster changes the Cluster the environment runs on.
		cluster func(*cluster.Reported)
		want    want
	}{
		"Minimal": {
			reason: "A backend alone: namespace, identity and backend; one replica, port 8000, the default resources.",
			par:    xr.AppParameters{ClusterRef: xr.ClusterRef{Name: "prod"}, Backend: image},
			want: want{kinds: []component.Kind{KindNamespace, KindIdentity, KindBackend}, backend: func(t *testing.T, b Backend) {
				t.Helper()
				if diff := cmp.Diff(Backend{App: b.App, Image: "nginx:1.27", Port: 8000, Replicas: new(int64(1)), Resources: DefaultResources}, b); diff != "" {
					t.Errorf("backend: -want, +got:\n%s", diff)
				}
			}},
		},
		"ResourcesLayered": {
			reason: "Requests and limits: the XR's over the environment's over the defaults, resource by resource.",
			par:    xr.AppParameters{Backend: xr.Backend{Image: "nginx", Resources: xr.Resources{Requests: map[string]string{"cpu": "1"}}}},
			env:    map[string]any{SettingsKey: map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}}}},
			want: want{kinds: []component.Kind{KindNamespace, KindIdentity, KindBackend}, backend: func(t *testing.T, b Backend) {
				t.Helper()
				want := xr.Resources{Requests: map[string]string{"cpu": "1", "memory": "1Gi"}, Limits: map[string]string{"memory": "512Mi"}}
				if diff := cmp.Diff(want, b.Resources); diff != "" {
					t.Errorf("resources: -want, +got:\n%s", diff)
				}
			}},
		},
		"Everything": {
			reason: "Every part, in creation order; with Orphan the bucket stays and the database is protected; a budget owns the replicas.",
			par: xr.AppParameters{Backend: image, Database: &xr.AppDatabase{}, Bucket: &xr.AppBucket{}, Ingress: &xr.AppIngress{Host: "shop.example.com"},
				Budget: &xr.Budget{LimitUSD: 10}, DeletionPolicy: xr.DeletionOrphan, Namespace: "shop-prod"},
			want: want{
				kinds:    []component.Kind{KindNamespace, KindIdentity, KindBucket, KindDatabase, KindConnection, KindBackend, KindIngress, KindBudget},
				bucket:   &Bucket{Name: "shop-assets", Orphan: true},
				database: &Database{Size: DefaultSize, Schema: "shop_prod", DeletionProtection: true},
				backend: func(t *testing.T, b Backend) {
					t.Helper()
					if b.Replicas != nil || !b.Database {
						t.Errorf("backend: replicas %v (want none: the budget owns them), reads the database %t", b.Replicas, b.Database)
					}
				},
			},
		},
		"ClusterWithoutLocation": {
			reason:  "A Cluster whose location is unknown (none in its spec, none reported in its status) is named with the fields that would give it: the bucket and the identity are never planned in an empty region.",
			par:     xr.AppParameters{Backend: image, Bucket: &xr.AppBucket{}},
			cluster: func(c *cluster.Reported) { c.Location = "" },
			want: want{kinds: []component.Kind{KindNamespace, KindIdentity, KindBucket, KindBackend}, bucket: &Bucket{Name: "shop-assets"}, errs: []string{
				`spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location`,
			}},
		},
		"Refused": {
			reason: "A host outside the Cluster's domain and a namespace of the Cluster's add-ons (from the environment's chart catalog) are refused.",
			par:    xr.AppParameters{Backend: image, Namespace: "observability", Ingress: &xr.AppIngress{Host: "shop.example.net"}},
			env:    map[string]any{"charts": map[string]any{"grafana": map[string]any{"namespace": "observability"}}},
			want: want{kinds: []component.Kind{KindNamespace, KindIdentity, KindBackend, KindIngress}, errs: []string{
				`spec.parameters.namespace: Forbidden: namespace "observability" belongs to the system or to the Cluster's add-ons (cert-manager, crossplane-system, default, external-dns, ingress-nginx, kube-node-lease, kube-public, kube-system, monitoring, observability, kube-*); an environment owns its namespace and deletes it with itself, so choose another (spec.parameters.namespace)`,
				`spec.parameters.ingress.host: Invalid value: "shop.example.net": must be example.com or a name under it, the domain of Cluster "prod"`,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cluster := testCluster("example.com")
			if tc.cluster != nil {
				tc.cluster(cluster)
			}
			p, errs := Build(appXR(tc.par), envcfg.New(tc.env), cluster, Running{})
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want.errs, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			var kinds []component.Kind
			for _, c := range p.Components {
				kinds = append(kinds, c.Kind())
			}
			if diff := cmp.Diff(tc.want.kinds, kinds); diff != "" {
				t.Errorf("%s\nBuild(...) components: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want.backend != nil {
				tc.want.backend(t, p.Backend)
			}
			ignoreApp := cmpopts.IgnoreFields(Bucket{}, "App")
			if diff := cmp.Diff(tc.want.bucket, p.Bucket, ignoreApp); diff != "" {
				t.Errorf("%s\nBuild(...).Bucket: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.database, p.Database, cmpopts.IgnoreFields(Database{}, "App")); diff != "" {
				t.Errorf("%s\nBuild(...).Database: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemoval(t *testing.T) {
	p, _ := Build(appXR(xr.AppParameters{Backend: xr.Backend{Image: "nginx"}, Database: &xr.AppDatabase{}}), envcfg.New(nil), testCluster(""), Running{})
	cases := map[string]struct {
		reason string
		id     string
		bySpec bool
	}{
		"BucketRemoved":      {reason: "Without spec.parameters.bucket, the spec removed the bucket.", id: "bucket", bySpec: true},
		"IngressRemoved":     {reason: "Without spec.parameters.ingress, the spec removed the ingress.", id: "ingress", bySpec: true},
		"DatabaseComposed":   {reason: "The database is still asked for: something else stopped rendering a resource of it.", id: "database"},
		"ConnectionOfADB":    {reason: "So is its connection.", id: "connection"},
		"BackendNeverBySpec": {reason: "The backend is always composed: nothing the spec says removes a resource of it.", id: "backend"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := p.Removal(tc.id); got.BySpec != tc.bySpec || got.Why == "" {
				t.Errorf("%s\nRemoval(%q) = %+v, want BySpec %t with a reason", tc.reason, tc.id, got, tc.bySpec)
			}
		})
	}
}
