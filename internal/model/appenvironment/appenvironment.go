// Package appenvironment is the AppEnvironment's model: on the Cluster it
// names, a namespace, the backend's Deployment, Service and Ingress, a
// ServiceAccount bound to a cloud identity without keys, a bucket only that
// identity may use, a nested Database XR whose connection details reach the
// backend without the function reading them, a front end, and a nested
// WorkloadBudget. Build turns the XR into a Plan of Components (package
// component): every cloud implements the bucket, the identity and the front
// end; what runs on the workload cluster and the nested XRs are the same on
// every cloud (kube.ImplementApp).
package appenvironment

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of Component of an application environment.
const (
	KindNamespace  component.Kind = "AppNamespace"
	KindIdentity   component.Kind = "AppIdentity"
	KindBucket     component.Kind = "AppBucket"
	KindDatabase   component.Kind = "AppDatabase"
	KindConnection component.Kind = "AppConnection"
	KindBackend    component.Kind = "AppBackend"
	KindIngress    component.Kind = "AppIngress"
	KindFrontend   component.Kind = "AppFrontend"
	KindAPIRoute   component.Kind = "AppFrontendAPI"
	KindBudget     component.Kind = "AppBudget"
)

// Kinds lists the environment module's Component kinds: every cloud
// implements each of them (the cloud-independent ones through
// kube.ImplementApp).
var Kinds = []component.Kind{KindNamespace, KindIdentity, KindBucket, KindDatabase, KindConnection, KindBackend, KindIngress, KindFrontend, KindAPIRoute, KindBudget}

// Condition types of an AppEnvironment.
const (
	ConditionNamespaceReady = "NamespaceReady"
	ConditionIdentityReady  = "IdentityReady"
	ConditionBucketReady    = "BucketReady"
	ConditionDatabaseReady  = "DatabaseReady"
	ConditionBackendReady   = "BackendReady"
	// ConditionFrontendReady turns true once the front end's bucket, CDN
	// and certificate are ready.
	ConditionFrontendReady = "FrontendReady"
)

// ConditionTypes are the AppEnvironment's conditions, in order.
var ConditionTypes = []string{ConditionNamespaceReady, ConditionIdentityReady, ConditionBucketReady, ConditionDatabaseReady, ConditionBackendReady, ConditionFrontendReady}

// Composition-resource names of the resources that are the same on every
// cloud (kube.ImplementApp renders them).
const (
	ResourceNamespace      = "namespace"
	ResourceServiceAccount = "service-account"
	ResourceDatabase       = "database"
	ResourceConnection     = "database-connection"
	ResourceDeployment     = "deployment"
	ResourceService        = "service"
	ResourceIngress        = "ingress"
	ResourceBudget         = "budget"
)

// Names on the workload cluster.
const (
	// ServiceAccount is the backend's Kubernetes ServiceAccount, bound to
	// the cloud identity.
	ServiceAccount = "backend"
	// BackendName names the backend's Deployment, Service and Ingress.
	BackendName = "backend"
	// ConnectionSecret is the Secret the backend reads the database's
	// connection details from, through envFrom.
	ConnectionSecret = "db-connection-details"
)

// Defaults of the environment's keys.
const (
	DefaultIngressClass = "nginx"
	// DefaultClusterIssuer is the ClusterIssuer a Cluster composes by
	// default (environment key dns.issuer.name names another).
	DefaultClusterIssuer = cluster.DefaultIssuer
	// DefaultSize is a database's size class when the XR names none.
	DefaultSize = "medium"
	// FrontendBucketSuffix names the front end's bucket after the
	// environment unless spec.parameters.frontend.bucketName does.
	FrontendBucketSuffix = "-frontend"
	// AssetsBucketSuffix names the environment's bucket after it unless
	// spec.parameters.bucket.name does.
	AssetsBucketSuffix = "-assets"
)

// DefaultResources are the backend's requests and limits unless the
// environment or the XR says otherwise.
var DefaultResources = xr.Resources{
	Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
	Limits:   map[string]string{"memory": "512Mi"},
}

// SystemNamespaces are namespaces no environment may take; the namespaces
// of the Cluster's add-ons (its chart catalog) are refused too.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease", "crossplane-system"}

// SettingsKey is the environment key of the module's settings.
const SettingsKey = "appEnvironment"

// Settings are the environment's keys of application environments, under
// data.appEnvironment, decoded once per call (SettingsOf). Every key is
// optional.
type Settings struct {
	// IngressClass is the Ingress class of the Cluster's ingress
	// controller.
	IngressClass string `json:"ingressClass"`
	// ClusterIssuer is the cert-manager ClusterIssuer that signs the
	// certificates of Ingresses with TLS.
	ClusterIssuer string `json:"clusterIssuer"`
	// Resources are the backend's default requests and limits.
	Resources struct {
		// Requests are the requests by resource name. Default cpu 100m,
		// memory 128Mi.
		Requests map[string]string `json:"requests"`
		// Limits are the limits by resource name. Default memory 512Mi.
		Limits map[string]string `json:"limits"`
	} `json:"resources"`
	// Prices are this cloud's prices of an environment's parts that its
	// Database does not estimate itself.
	Prices struct {
		// FrontendPerMonth is a front end's fixed monthly price in USD:
		// what its CDN costs before any traffic (a load balancer's
		// forwarding rules, a Front Door profile's base fee); traffic is
		// not estimated. Unset: the front end is not priced.
		FrontendPerMonth *float64 `json:"frontendPerMonth"`
	} `json:"prices"`
}

// SettingsOf returns the environment's keys of application environments,
// decoded once per Env.
func SettingsOf(env *envcfg.Env) *Settings { return envcfg.Section[Settings](env, SettingsKey) }

// Plan is the agnostic description of an application environment.
type Plan struct {
	App        *App
	Components []component.Component
	Bucket     *Bucket
	Database   *Database
	Backend    Backend
	Ingress    *Ingress
	Frontend   *Frontend
	Budget     *Budget
	// FrontendPerMonth is the front end's fixed monthly price, when the
	// environment prices it (Settings.Prices).
	FrontendPerMonth *float64
	// Warnings are said in the XR's status and events.
	Warnings []string
}

// Build plans an application environment on cluster, keeping the names
// its data already lives under (running). Every error names a field path:
// of the XR for bad input, of the environment for bad configuration.
func Build(x *xr.AppEnvironment, env *envcfg.Env, cl *cluster.Reported, running Running) (*Plan, field.ErrorList) {
	var errs field.ErrorList
	par := x.Parameters
	s := SettingsOf(env)
	app := &App{
		Name:           x.CloudName,
		Tenant:         x.CloudName != x.BareName,
		Namespace:      x.AppNamespace(),
		Cluster:        cl,
		ProviderConfig: cl.XR.Name,
		Location:       cl.Location,
		Labels: map[string]string{
			xr.LabelCloud: x.Cloud, xr.LabelPlaneID: x.PlaneID, xr.LabelPlaneType: x.PlaneType,
		},
	}
	if x.PlaneType == "" {
		delete(app.Labels, xr.LabelPlaneType)
	}
	if app.Location == "" {
		// Run waits for it; nothing is rendered in an empty region.
		errs = append(errs, cl.LocationRequired())
	}
	errs = append(errs, checkNamespace(x, env)...)
	p := &Plan{App: app}
	p.Components = append(p.Components, Namespace{app})
	orphan := par.DeletionPolicy == xr.DeletionOrphan

	if b := par.Bucket; b != nil {
		p.Bucket = &Bucket{App: app, Name: cmp.Or(b.Name, app.Name+AssetsBucketSuffix), Named: b.Name != "", Public: b.Public, Website: b.Website, Orphan: orphan}
	}
	p.Components = append(p.Components, Identity{app})
	if p.Bucket != nil {
		p.Components = append(p.Components, *p.Bucket)
	}

	if d := par.Database; d != nil {
		p.Database = &Database{App: app, Size: cmp.Or(d.Size, DefaultSize), Engine: d.Engine, Version: d.Version, StorageGB: d.StorageGB,
			Schema: cmp.Or(running.Schema, SchemaName(app.Namespace)), DeletionProtection: orphan}
		tiers := database.SettingsOf(env).Tiers
		if _, ok := tiers[p.Database.Size]; !ok && len(tiers) > 0 {
			errs = append(errs, field.NotSupported(xr.ParametersPath("database", "size"), p.Database.Size, slices.Sorted(maps.Keys(tiers))))
		}
		p.Components = append(p.Components, *p.Database, Connection{App: app, Database: p.Database})
	}

	be := par.Backend
	p.Backend = Backend{
		App:       app,
		Image:     be.Image,
		Port:      envcfg.Or(be.Port, xr.DefaultBackendPort),
		Replicas:  new(envcfg.Or(be.Replicas, xr.DefaultBackendReplicas)),
		Env:       be.Env,
		Resources: resources(be.Resources, s),
		Database:  p.Database != nil,
	}
	if b := par.Budget; b != nil {
		if x.Scope != xr.Namespaced {
			errs = append(errs, field.Forbidden(xr.ParametersPath("budget"), "a budget needs a namespaced AppEnvironment: its WorkloadBudget is namespaced and scales the backend through the Cluster's namespaced provider config, which a legacy Cluster does not compose"))
		}
		p.Budget = &Budget{App: app, Budget: *b, Replicas: *p.Backend.Replicas}
		// The budget's WorkloadBudget owns the replica count.
		p.Backend.Replicas = nil
	}
	p.Components = append(p.Components, p.Backend)

	if i := par.Ingress; i != nil {
		errs = append(errs, underDomain(xr.ParametersPath("ingress", "host"), i.Host, cl)...)
		// The front end's CDN reaches the backend over HTTPS only, with a
		// certificate for the Ingress host: an API path gives the Ingress
		// one, said in a Warning.
		tls := i.TLS
		if f := par.Frontend; f != nil && f.APIPath != "" && !tls {
			tls = true
			p.Warnings = append(p.Warnings, "spec.parameters.ingress gets TLS although spec.parameters.ingress.tls is not true: spec.parameters.frontend.apiPath reaches the backend over HTTPS only, with a certificate for the Ingress host; set spec.parameters.ingress.tls to true to say so")
		}
		p.Ingress = &Ingress{App: app, Host: i.Host, Port: p.Backend.Port, TLS: tls,
			Class: cmp.Or(s.IngressClass, DefaultIngressClass), Issuer: cmp.Or(s.ClusterIssuer, cluster.SettingsOf(env).DNS.Issuer.Name, DefaultClusterIssuer)}
		p.Components = append(p.Components, *p.Ingress)
	}
	if f := par.Frontend; f != nil {
		p.Frontend = frontend(app, f, cl, orphan)
		if p.Bucket != nil {
			p.Frontend.Assets = p.Bucket.Name
		}
		errs = append(errs, checkFrontend(p, cl)...)
		if p.Ingress != nil && f.APIPath != "" {
			p.Frontend.APIPath, p.Frontend.APIHost = f.APIPath, p.Ingress.Host
		}
		p.Components = append(p.Components, *p.Frontend)
		if p.Frontend.APIPath != "" {
			p.Components = append(p.Components, APIRoute{*p.Frontend})
		}
	}
	if p.Budget != nil {
		p.Components = append(p.Components, *p.Budget)
	}
	if p.Frontend != nil {
		p.FrontendPerMonth = s.Prices.FrontendPerMonth
	}
	if w := budgetBelowFixed(p); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return p, errs
}

// budgetBelowFixed warns when the budget's limit is below what the front
// end costs whatever the backend does: the budget can scale the backend
// down, never the CDN.
func budgetBelowFixed(p *Plan) string {
	if p.Budget == nil || p.FrontendPerMonth == nil || p.Budget.Budget.LimitUSD >= *p.FrontendPerMonth {
		return ""
	}
	return fmt.Sprintf("spec.parameters.budget.limitUsd (%.2f) is below the front end's fixed monthly price (%.2f USD, environment key appEnvironment.prices.frontendPerMonth): the budget scales the backend, never the CDN, so it will be spent whatever the backend does", p.Budget.Budget.LimitUSD, *p.FrontendPerMonth)
}

// frontend plans the XR's front end; its API route is the caller's.
func frontend(app *App, f *xr.AppFrontend, cl *cluster.Reported, orphan bool) *Frontend {
	return &Frontend{
		App:        app,
		Host:       f.Host,
		Domain:     cl.XR.Parameters.Domain,
		Bucket:     cmp.Or(f.BucketName, app.Name+FrontendBucketSuffix),
		Named:      f.BucketName != "",
		SPA:        f.SinglePage(),
		DefaultTTL: f.DefaultTTL(),
		MaxTTL:     f.MaxTTL(),
		Orphan:     orphan,
		CacheSet:   f.DefaultTTLSeconds != nil || f.MaxTTLSeconds != nil,
	}
}

// checkFrontend refuses a front end its Cluster cannot publish: its host
// must be under the Cluster's domain, whose public zone the Cluster
// composes (the certificate is validated, and the host published, by
// records there); its bucket cannot be the environment's other bucket.
func checkFrontend(p *Plan, cl *cluster.Reported) field.ErrorList {
	f := p.Frontend
	hp := xr.ParametersPath("frontend", "host")
	errs := underDomain(hp, f.Host, cl)
	if len(errs) == 0 && !cl.XR.Parameters.DNSZones() {
		errs = append(errs, field.Invalid(hp, f.Host, fmt.Sprintf("Cluster %q composes no DNS zones (spec.parameters.createDnsZones: false): the front end's certificate is validated, and its host published, by records in the Cluster's public zone", cl.Ref)))
	}
	if p.Bucket != nil && p.Bucket.Name == f.Bucket {
		errs = append(errs, field.Duplicate(f.BucketPath(), f.Bucket))
	}
	return errs
}

// underDomain refuses a host outside the Cluster's domain: the Cluster's
// zones, certificates and external-dns serve that domain alone.
func underDomain(p *field.Path, host string, cl *cluster.Reported) field.ErrorList {
	domain := cl.XR.Parameters.Domain
	switch {
	case domain == "":
		return field.ErrorList{field.Invalid(p, host, fmt.Sprintf("Cluster %q has no domain (spec.parameters.domain): an environment's host must be under its Cluster's domain", cl.Ref))}
	case host != domain && !strings.HasSuffix(host, "."+domain):
		return field.ErrorList{field.Invalid(p, host, fmt.Sprintf("must be %s or a name under it, the domain of Cluster %q", domain, cl.Ref))}
	}
	return nil
}

// checkNamespace refuses the namespaces of the system and of the Cluster's
// add-ons: an environment owns its namespace, and deleting the environment
// deletes it.
func checkNamespace(x *xr.AppEnvironment, env *envcfg.Env) field.ErrorList {
	ns := x.AppNamespace()
	reserved := slices.Clone(SystemNamespaces)
	for name, c := range cluster.Catalog(cluster.SettingsOf(env)) {
		reserved = append(reserved, cmp.Or(c.Namespace, name))
	}
	if !slices.Contains(reserved, ns) && !strings.HasPrefix(ns, "kube-") {
		return nil
	}
	p := xr.ParametersPath("namespace")
	if x.Parameters.Namespace == "" {
		p = field.NewPath("metadata", "name")
	}
	slices.Sort(reserved)
	return field.ErrorList{field.Forbidden(p, fmt.Sprintf("namespace %q belongs to the system or to the Cluster's add-ons (%s, kube-*); an environment owns its namespace and deletes it with itself, so choose another (spec.parameters.namespace)", ns, strings.Join(slices.Compact(reserved), ", ")))}
}

// resources are the backend's requests and limits: the XR's, else the
// environment's, else DefaultResources, resource by resource.
func resources(r xr.Resources, s *Settings) xr.Resources {
	merge := func(xrs, envs, defs map[string]string) map[string]string {
		out := maps.Clone(defs)
		if out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, envs)
		maps.Copy(out, xrs)
		return out
	}
	return xr.Resources{
		Requests: merge(r.Requests, s.Resources.Requests, DefaultResources.Requests),
		Limits:   merge(r.Limits, s.Resources.Limits, DefaultResources.Limits),
	}
}

// apiField is the field whose removal removed the front end's API route.
func apiField(p *Plan) string {
	if p.Frontend == nil {
		return "frontend"
	}
	return "frontend.apiPath"
}

// Running are the names the environment's data lives under, read back
// from what runs (ReadRunning): fixed once created, whatever they would
// derive from now.
type Running struct {
	// Namespace is the namespace on the Cluster, which holds the
	// workloads, their volumes and their secrets.
	Namespace string
	// Schema is the database the backend's data is in: the first of
	// the nested Database's databases.
	Schema string
	// DatabaseVersion is the major version the nested Database's server
	// runs, as its status reports it; DatabaseStorageGB the storage the
	// nested Database asks for.
	DatabaseVersion   string
	DatabaseStorageGB int64
}

// ReadRunning reads what runs from the observed composed resources.
func ReadRunning(observed map[string]*structpb.Struct) Running {
	r := Running{Namespace: object.String(observed[ResourceNamespace], "spec", "forProvider", "manifest", "metadata", "name")}
	db := observed[ResourceDatabase]
	if dbs := object.Strings(db, "spec", "parameters", "databases"); len(dbs) > 0 {
		r.Schema = dbs[0]
	}
	r.DatabaseVersion = database.Major(object.String(db, "status", "engineVersion"))
	r.DatabaseStorageGB = int64(object.Get(db, "spec", "parameters", "storageGb").GetNumberValue())
	return r
}

// CheckRenames refuses a change of the namespace an environment runs in:
// it holds the workloads, their volumes and their secrets, and a rename
// would create another namespace and leave the old one, with its data,
// behind. It refuses too, naming this XR's field, a database version below
// the one the nested Database runs and a storage below the one it has.
func CheckRenames(x *xr.AppEnvironment, r Running) field.ErrorList {
	var errs field.ErrorList
	if r.Namespace != "" && r.Namespace != x.AppNamespace() {
		errs = append(errs, field.Invalid(xr.ParametersPath("namespace"), x.AppNamespace(), fmt.Sprintf("the environment runs in namespace %q of Cluster %q, which holds its workloads, their volumes and secrets; a namespace is never renamed (another would be created, and the old one left with its data): restore %q, or create a new AppEnvironment and move the data", r.Namespace, x.Parameters.ClusterRef.Name, r.Namespace)))
	}
	// The nested Database refuses these too, naming its own fields; the
	// environment's owner is told here, in this XR's.
	if d := x.Parameters.Database; d != nil {
		if d.Version != "" && r.DatabaseVersion != "" && database.Older(d.Version, r.DatabaseVersion) {
			errs = append(errs, field.Invalid(xr.ParametersPath("database", "version"), d.Version, fmt.Sprintf("the environment's database runs PostgreSQL %s, and a major version is never downgraded in place", r.DatabaseVersion)))
		}
		if d.StorageGB != nil && r.DatabaseStorageGB > 0 && *d.StorageGB < r.DatabaseStorageGB {
			errs = append(errs, field.Invalid(xr.ParametersPath("database", "storageGb"), *d.StorageGB, fmt.Sprintf("the environment's database has %d GiB, and storage only grows", r.DatabaseStorageGB)))
		}
	}
	return errs
}

// SchemaName is the database created for the backend: the namespace,
// with '-' as '_'.
func SchemaName(namespace string) string { return strings.ReplaceAll(namespace, "-", "_") }

// Removal says why a component of the environment no longer renders a
// composed resource: only the XR's spec removes the database, the bucket,
// the ingress and the budget.
func (p *Plan) Removal(id string) component.Removal {
	bySpec := map[string]struct {
		there bool
		field string
	}{
		"bucket":       {p.Bucket != nil, "bucket"},
		"database":     {p.Database != nil, "database"},
		"connection":   {p.Database != nil, "database"},
		"ingress":      {p.Ingress != nil, "ingress"},
		"frontend":     {p.Frontend != nil, "frontend"},
		"frontend-api": {p.Frontend != nil && p.Frontend.APIPath != "", apiField(p)},
		"budget":       {p.Budget != nil, "budget"},
	}
	if r, ok := bySpec[id]; ok && !r.there {
		return component.Removal{BySpec: true, Why: fmt.Sprintf("spec.parameters.%s was removed", r.field)}
	}
	return component.Removal{Why: fmt.Sprintf("its component %s is still composed, but no longer with this resource (an input other than the spec changed, such as the environment or the Cluster)", id)}
}
