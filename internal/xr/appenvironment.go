package xr

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/secret"
)

// Deletion policies of an AppEnvironment's data: its bucket and database.
const (
	DeletionDelete = "Delete"
	DeletionOrphan = "Orphan"
)

// DeletionPolicies are the deletion policies an AppEnvironment may take.
var DeletionPolicies = []string{DeletionDelete, DeletionOrphan}

// Defaults and bounds of an AppEnvironment's backend.
const (
	DefaultBackendPort     = 8000
	DefaultBackendReplicas = 1
	MaxBackendReplicas     = 100
	MaxBackendEnv          = 64
	MaxImageLength         = 512
)

// ResourceNames are the resources a backend's requests and limits may
// name.
var ResourceNames = []string{"cpu", "memory"}

var (
	reEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reImage   = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]*[a-zA-Z0-9_.-]$`)
)

// AppEnvironment is the observed AppEnvironment XR: an application's
// environment on a Cluster.
type AppEnvironment struct {
	Composite
	Parameters AppParameters
}

// AppParameters is spec.parameters of an AppEnvironment, but for the
// parameters every kind shares (see Composite).
type AppParameters struct {
	// ClusterRef names the Cluster the environment runs on.
	ClusterRef ClusterRef
	// Namespace is the namespace on the workload cluster; empty: the
	// XR's (for a claim, the claim's) name.
	Namespace string
	Backend   Backend
	// Database, Bucket, Ingress, Frontend and Budget are nil when not
	// asked for.
	Database *AppDatabase
	Bucket   *AppBucket
	Ingress  *AppIngress
	Frontend *AppFrontend
	Budget   *Budget
	// DeletionPolicy says what deleting the XR does to its data: Delete
	// (the default) or Orphan.
	DeletionPolicy string
}

// Backend is the application's backend Deployment.
type Backend struct {
	Image    string
	Port     *int64
	Replicas *int64
	// Env are environment variables, by name. Credentials never go here:
	// the database's reach the backend through db-connection-details.
	Env       map[string]string
	Resources Resources
}

// Resources are a container's requests and limits, by resource name.
type Resources struct {
	Requests map[string]string
	Limits   map[string]string
}

// AppDatabase is the database an AppEnvironment asks for: a Database XR
// on the same Cluster.
type AppDatabase struct {
	Size      string
	Engine    string
	Version   string
	StorageGB *int64
}

// AppBucket is an AppEnvironment's object storage.
type AppBucket struct {
	// Name is the bucket's (on Azure, the storage account's) name in the
	// cloud; empty: derived from the XR's.
	Name string
	// Public buckets are readable by anyone; website buckets serve an
	// index page.
	Public  bool
	Website bool
}

// AppIngress exposes the backend at Host, under the Cluster's domain.
type AppIngress struct {
	Host string
	TLS  bool
}

// AppFrontend is the environment's web front end: micro-frontends served
// from a private bucket behind the cloud's CDN, with TLS for Host.
type AppFrontend struct {
	// Host is the site's host name: the Cluster's domain or a name under
	// it.
	Host string
	// SPA makes unknown paths answer /index.html; nil: true.
	SPA *bool
	// APIPath, when set, is routed through the same host to the backend's
	// Ingress, uncached.
	APIPath string
	// DefaultTTLSeconds and MaxTTLSeconds bound how long the CDN caches.
	DefaultTTLSeconds *int64
	MaxTTLSeconds     *int64
	// BucketName is the site's bucket (on Azure, storage account) name;
	// empty: derived from the XR's.
	BucketName string
}

// Bounds and defaults of a front end.
const (
	DefaultFrontendTTL    = 3600
	DefaultFrontendMaxTTL = 86400
	MaxFrontendTTL        = 31536000
)

var reAPIPath = regexp.MustCompile(`^/[a-z0-9._~-]+(/[a-z0-9._~-]+)*$`)

// DecodeAppEnvironment reads the observed AppEnvironment XR. It returns
// every type error it finds, each naming its field path.
func DecodeAppEnvironment(s *structpb.Struct) (*AppEnvironment, field.ErrorList) {
	d := &decoder{}
	x := &AppEnvironment{Composite: decodeComposite(s)}
	sf := d.object(object.Get(s, "spec"), field.NewPath("spec"))
	p := pathParameters
	f := d.fields(sf["parameters"], p, fieldsAppParameters...)
	par := AppParameters{
		Namespace:      d.str(f["namespace"], p.Child("namespace")),
		DeletionPolicy: d.str(f["deletionPolicy"], p.Child("deletionPolicy")),
	}
	rp := p.Child("clusterRef")
	rf := d.fields(f["clusterRef"], rp, fieldsClusterRef...)
	par.ClusterRef.Name = d.str(rf["name"], rp.Child("name"))

	bp := p.Child("backend")
	bf := d.fields(f["backend"], bp, fieldsBackend...)
	par.Backend = Backend{
		Image:    d.str(bf["image"], bp.Child("image")),
		Port:     d.integer(bf["port"], bp.Child("port")),
		Replicas: d.integer(bf["replicas"], bp.Child("replicas")),
		Env:      d.stringMap(bf["env"], bp.Child("env")),
	}
	rsp := bp.Child("resources")
	rsf := d.fields(bf["resources"], rsp, fieldsResources...)
	par.Backend.Resources = Resources{
		Requests: d.stringMap(rsf["requests"], rsp.Child("requests")),
		Limits:   d.stringMap(rsf["limits"], rsp.Child("limits")),
	}
	if v, ok := f["database"]; ok && !isNull(v) {
		dp := p.Child("database")
		df := d.fields(v, dp, fieldsAppDatabase...)
		par.Database = &AppDatabase{
			Size:      d.str(df["size"], dp.Child("size")),
			Engine:    d.str(df["engine"], dp.Child("engine")),
			Version:   d.str(df["version"], dp.Child("version")),
			StorageGB: d.integer(df["storageGb"], dp.Child("storageGb")),
		}
	}
	if v, ok := f["bucket"]; ok && !isNull(v) {
		kp := p.Child("bucket")
		kf := d.fields(v, kp, fieldsAppBucket...)
		par.Bucket = &AppBucket{Name: d.str(kf["name"], kp.Child("name"))}
		if b := d.boolean(kf["public"], kp.Child("public")); b != nil {
			par.Bucket.Public = *b
		}
		if b := d.boolean(kf["website"], kp.Child("website")); b != nil {
			par.Bucket.Website = *b
		}
	}
	if v, ok := f["ingress"]; ok && !isNull(v) {
		ip := p.Child("ingress")
		inf := d.fields(v, ip, fieldsAppIngress...)
		par.Ingress = &AppIngress{Host: d.str(inf["host"], ip.Child("host"))}
		if b := d.boolean(inf["tls"], ip.Child("tls")); b != nil {
			par.Ingress.TLS = *b
		}
	}
	if v, ok := f["frontend"]; ok && !isNull(v) {
		fp := p.Child("frontend")
		ff := d.fields(v, fp, fieldsAppFrontend...)
		par.Frontend = &AppFrontend{
			Host:              d.str(ff["host"], fp.Child("host")),
			SPA:               d.boolean(ff["spa"], fp.Child("spa")),
			APIPath:           d.str(ff["apiPath"], fp.Child("apiPath")),
			DefaultTTLSeconds: d.integer(ff["defaultTtlSeconds"], fp.Child("defaultTtlSeconds")),
			MaxTTLSeconds:     d.integer(ff["maxTtlSeconds"], fp.Child("maxTtlSeconds")),
			BucketName:        d.str(ff["bucketName"], fp.Child("bucketName")),
		}
	}
	if v, ok := f["budget"]; ok && !isNull(v) {
		gp := p.Child("budget")
		gf := d.fields(v, gp, fieldsAppBudget...)
		b := &Budget{Enforcement: d.str(gf["enforcement"], gp.Child("enforcement"))}
		if n := d.number(gf["limitUsd"], gp.Child("limitUsd")); n != nil {
			b.LimitUSD = *n
		}
		tp := gp.Child("thresholds")
		for i, t := range d.list(gf["thresholds"], tp) {
			if n := d.number(t, tp.Index(i)); n != nil {
				b.Thresholds = append(b.Thresholds, *n)
			}
		}
		b.SpendRef = d.spendRef(gf["spendRef"], gp.Child("spendRef"))
		par.Budget = b
	}
	x.Parameters = par
	d.decodeCommon(&x.Composite, f, p)
	return x, d.errs
}

// MaxAppEnvironmentName bounds an AppEnvironment's name: its resources'
// names and its nested Database's (the name and a generated suffix) derive
// from it. The portal applies the same rule (ValidateAppEnvironment).
const MaxAppEnvironmentName = 40

// AppNamespace is the namespace of the environment on the workload
// cluster: spec.parameters.namespace, else the XR's bare name (for a
// claim, the claim's name).
func (x *AppEnvironment) AppNamespace() string {
	if x.Parameters.Namespace != "" {
		return x.Parameters.Namespace
	}
	if x.BareName != "" {
		return x.BareName
	}
	return x.CloudName
}

// ValidateAppEnvironment checks the cloud-independent rules of an
// AppEnvironment XR. What needs the Cluster or the environment (the
// ingress host's domain, size classes, namespaces the Cluster's add-ons
// use) is the module's to check.
func ValidateAppEnvironment(x *AppEnvironment, clouds []string) field.ErrorList {
	errs := ValidateComposite(&x.Composite, clouds)
	errs = append(errs, ValidateCloudName(&x.Composite, MaxAppEnvironmentName, "AppEnvironment", "its cloud resources' names derive from it")...)
	p := x.Parameters
	rp := ParametersPath("clusterRef", "name")
	if p.ClusterRef.Name == "" {
		errs = append(errs, field.Required(rp, "the Cluster (in this namespace) the environment runs on"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(p.ClusterRef.Name) {
		if p.ClusterRef.Name != "" {
			errs = append(errs, field.Invalid(rp, p.ClusterRef.Name, msg))
		}
	}
	np := ParametersPath("namespace")
	if p.Namespace == "" {
		np = field.NewPath("metadata", "name")
	}
	for _, msg := range validation.IsDNS1123Label(x.AppNamespace()) {
		errs = append(errs, field.Invalid(np, x.AppNamespace(), "the namespace on the workload cluster: "+msg))
	}
	errs = append(errs, validateBackend(p.Backend)...)
	if d := p.Database; d != nil {
		dp := ParametersPath("database")
		if d.Engine != "" && !slices.Contains(Engines, d.Engine) {
			errs = append(errs, field.NotSupported(dp.Child("engine"), d.Engine, Engines))
		}
		if d.Version != "" && !reDBVersion.MatchString(d.Version) {
			errs = append(errs, field.Invalid(dp.Child("version"), d.Version, "must be a major version such as \"16\""))
		}
		if n := d.StorageGB; n != nil && (*n < MinStorageGB || *n > MaxStorageGB) {
			errs = append(errs, field.Invalid(dp.Child("storageGb"), *n, fmt.Sprintf("must be between %d and %d", MinStorageGB, MaxStorageGB)))
		}
	}
	if i := p.Ingress; i != nil {
		hp := ParametersPath("ingress", "host")
		if i.Host == "" {
			errs = append(errs, field.Required(hp, "the backend's host name, under the Cluster's domain"))
		} else {
			errs = append(errs, ValidateDomain(hp, i.Host)...)
		}
	}
	if fe := p.Frontend; fe != nil {
		errs = append(errs, validateFrontend(fe, p.Ingress)...)
	}
	if b := p.Budget; b != nil {
		errs = append(errs, validateBudget(b)...)
	}
	if p.DeletionPolicy != "" && !slices.Contains(DeletionPolicies, p.DeletionPolicy) {
		errs = append(errs, field.NotSupported(ParametersPath("deletionPolicy"), p.DeletionPolicy, DeletionPolicies))
	}
	return errs
}

// validateFrontend checks a front end: a host, an API path that is a path
// prefix routed to a backend that has a host of its own (the Ingress), and
// cache lifetimes within a year, the default within the maximum.
func validateFrontend(fe *AppFrontend, ing *AppIngress) field.ErrorList {
	var errs field.ErrorList
	fp := ParametersPath("frontend")
	if fe.Host == "" {
		errs = append(errs, field.Required(fp.Child("host"), "the site's host name, the Cluster's domain or a name under it"))
	} else {
		errs = append(errs, ValidateDomain(fp.Child("host"), fe.Host)...)
	}
	if ing != nil && fe.Host != "" && fe.Host == ing.Host {
		errs = append(errs, field.Invalid(fp.Child("host"), fe.Host, "must differ from spec.parameters.ingress.host: the CDN serves the site at its host and reaches the backend at the Ingress's"))
	}
	if fe.APIPath != "" {
		switch {
		case !reAPIPath.MatchString(fe.APIPath):
			errs = append(errs, field.Invalid(fp.Child("apiPath"), fe.APIPath, "must be a path prefix such as /api: lower-case letters, digits and . _ ~ - in segments after '/', no trailing '/'"))
		case ing == nil:
			errs = append(errs, field.Required(ParametersPath("ingress"), "spec.parameters.frontend.apiPath routes to the backend at its Ingress host: set spec.parameters.ingress"))
		}
	}
	for _, t := range []struct {
		name string
		v    *int64
	}{{"defaultTtlSeconds", fe.DefaultTTLSeconds}, {"maxTtlSeconds", fe.MaxTTLSeconds}} {
		if t.v != nil && (*t.v < 0 || *t.v > MaxFrontendTTL) {
			errs = append(errs, field.Invalid(fp.Child(t.name), *t.v, fmt.Sprintf("must be between 0 and %d seconds (a year)", MaxFrontendTTL)))
		}
	}
	if d, m := fe.DefaultTTL(), fe.MaxTTL(); d > m {
		errs = append(errs, field.Invalid(fp.Child("defaultTtlSeconds"), d, fmt.Sprintf("must not exceed maxTtlSeconds (%d)", m)))
	}
	return errs
}

// DefaultTTL is how long the CDN caches by default, in seconds.
func (fe *AppFrontend) DefaultTTL() int64 {
	if fe.DefaultTTLSeconds != nil {
		return *fe.DefaultTTLSeconds
	}
	return DefaultFrontendTTL
}

// MaxTTL is the longest the CDN caches, in seconds.
func (fe *AppFrontend) MaxTTL() int64 {
	if fe.MaxTTLSeconds != nil {
		return *fe.MaxTTLSeconds
	}
	return max(DefaultFrontendMaxTTL, fe.DefaultTTL())
}

// SinglePage reports whether unknown paths answer /index.html.
func (fe *AppFrontend) SinglePage() bool { return fe.SPA == nil || *fe.SPA }

// validateBackend checks the backend: an image, a port, a replica count,
// environment variables that are no credentials, and quantities that
// parse.
func validateBackend(b Backend) field.ErrorList {
	var errs field.ErrorList
	bp := ParametersPath("backend")
	switch {
	case b.Image == "":
		errs = append(errs, field.Required(bp.Child("image"), "the backend's container image, such as ghcr.io/acme/api:1.4.2"))
	case len(b.Image) > MaxImageLength:
		errs = append(errs, field.TooLong(bp.Child("image"), Brief(b.Image), MaxImageLength))
	case !reImage.MatchString(b.Image):
		errs = append(errs, field.Invalid(bp.Child("image"), b.Image, "must be a container image reference such as ghcr.io/acme/api:1.4.2, without spaces or upper-case letters in its name"))
	}
	if n := b.Port; n != nil && (*n < 1 || *n > 65535) {
		errs = append(errs, field.Invalid(bp.Child("port"), *n, "must be a port, 1 to 65535"))
	}
	if n := b.Replicas; n != nil && (*n < 0 || *n > MaxBackendReplicas) {
		errs = append(errs, field.Invalid(bp.Child("replicas"), *n, fmt.Sprintf("must be between 0 and %d", MaxBackendReplicas)))
	}
	ep := bp.Child("env")
	if len(b.Env) > MaxBackendEnv {
		errs = append(errs, field.TooMany(ep, len(b.Env), MaxBackendEnv))
	}
	for _, name := range slices.Sorted(maps.Keys(b.Env)) {
		switch {
		case !reEnvName.MatchString(name):
			errs = append(errs, field.Invalid(ep.Key(name), name, "an environment variable's name has letters, digits and '_', and does not start with a digit"))
		case secret.Key(name) && b.Env[name] != "":
			errs = append(errs, field.Forbidden(ep.Key(name), "holds a plaintext credential; the database's reach the backend through the Secret db-connection-details, others belong in a Secret of their own, never in the XR"))
		case strings.HasPrefix(name, "DB_"):
			errs = append(errs, field.Forbidden(ep.Key(name), "DB_ variables are the database's, from db-connection-details"))
		}
	}
	rp := bp.Child("resources")
	for _, q := range []struct {
		name string
		m    map[string]string
	}{{"requests", b.Resources.Requests}, {"limits", b.Resources.Limits}} {
		for _, k := range slices.Sorted(maps.Keys(q.m)) {
			kp := rp.Child(q.name).Key(k)
			if !slices.Contains(ResourceNames, k) {
				errs = append(errs, field.NotSupported(kp, k, ResourceNames))
				continue
			}
			if _, err := resource.ParseQuantity(q.m[k]); err != nil {
				errs = append(errs, field.Invalid(kp, q.m[k], "must be a quantity such as 250m or 512Mi"))
			}
		}
	}
	return errs
}
