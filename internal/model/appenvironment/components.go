package appenvironment

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// App is what every part of an environment knows: where it runs and what
// it is called.
type App struct {
	// Name is the name the environment's cloud resources derive from.
	Name string
	// Tenant says that Name is a tenant's derived name (names.Tenant):
	// names joined from it are shortened with names.JoinFor.
	Tenant bool
	// Namespace is the namespace on the workload cluster.
	Namespace string
	// Cluster is the Cluster the environment runs on.
	Cluster *cluster.Reported
	// ProviderConfig names the Cluster's Kubernetes and Helm provider
	// configs: its XR's name.
	ProviderConfig string
	// Location is the Cluster's region.
	Location string
	// Labels select the cloud layer and the EnvironmentConfigs of the
	// nested XRs: the AppEnvironment's cloud, planeId and planeType.
	Labels map[string]string
}

// Namespace is the environment's namespace on the workload cluster.
type Namespace struct{ *App }

// Identity is the backend's ServiceAccount, bound to a cloud identity
// without keys. The identity may use the bucket, if any, and nothing else:
// the bucket's component grants that.
type Identity struct{ *App }

// Bucket is the environment's object storage, with the grant that lets the
// backend's identity (and, when public, anyone) use it.
type Bucket struct {
	*App
	// Name is the bucket's (on Azure, the storage account's) cloud name.
	Name string
	// Named is set when the XR chose Name (spec.parameters.bucket.name).
	Named   bool
	Public  bool
	Website bool
	// Orphan leaves the bucket in the cloud when the XR is deleted.
	Orphan bool
}

// Database is the environment's database: a Database XR on the Cluster.
type Database struct {
	*App
	Size      string
	Engine    string
	Version   string
	StorageGB *int64
	// Schema is the database created in the server for the backend.
	Schema string
	// DeletionProtection refuses the server's deletion (deletionPolicy
	// Orphan).
	DeletionProtection bool
}

// Connection is the Secret db-connection-details in the environment's
// namespace, filled by the provider from the database's status and its
// password Secret: the function never reads the password.
type Connection struct {
	*App
	Database *Database
}

// Backend is the backend's Deployment and Service.
type Backend struct {
	*App
	Image string
	Port  int64
	// Replicas is nil when a budget owns the replica count.
	Replicas  *int64
	Env       map[string]string
	Resources xr.Resources
	// Database is set when the backend reads db-connection-details.
	Database bool
}

// Ingress exposes the backend at Host.
type Ingress struct {
	*App
	Host string
	Port int64
	TLS  bool
	// Class and Issuer come from the environment.
	Class  string
	Issuer string
}

// Frontend is the environment's web front end: a private bucket (Bucket)
// behind the cloud's CDN, which answers at Host with a certificate the
// cloud manages, validated and published by records in the Cluster's public
// zone (Domain). With APIPath, APIPath/* goes to the backend's Ingress at
// APIHost over HTTPS, uncached, so the site and its API share one origin.
type Frontend struct {
	*App
	Host string
	// Domain is the Cluster's domain, the name of its public zone.
	Domain string
	// Bucket is the bucket's (on Azure, the storage account's) cloud name;
	// Named is set when the XR chose it.
	Bucket string
	Named  bool
	// SPA makes unknown paths answer /index.html.
	SPA     bool
	APIPath string
	APIHost string
	// DefaultTTL and MaxTTL bound caching, in seconds.
	DefaultTTL int64
	MaxTTL     int64
	// Orphan leaves the bucket in the cloud when the XR is deleted.
	Orphan bool
	// Assets is the name of the environment's other bucket (empty: none),
	// whose cloud name the front end's may not share where a cloud
	// shortens names.
	Assets string
	// CacheSet is set when the XR chose the TTLs.
	CacheSet bool
}

// NotFoundPage is the document a website bucket answers for a missing
// object: the single-page app's /index.html, whose router takes the path,
// or 404.html.
func (f Frontend) NotFoundPage() string {
	if f.SPA {
		return "index.html"
	}
	return "404.html"
}

// APIPatterns are the paths the CDN routes to the backend: the API path
// and everything under it.
func (f Frontend) APIPatterns() []any { return []any{f.APIPath, f.APIPath + "/*"} }

// APIRoute is what a front end's CDN needs, besides its own configuration,
// to route the API path to the backend's Ingress (on GCP a backend service
// on an internet network endpoint group, on Azure an origin group, origin
// and route; on AWS the distribution's own behaviours). It is a component
// of its own so that removing spec.parameters.frontend.apiPath removes it.
type APIRoute struct{ Frontend }

// URL is where the front end answers.
func (f Frontend) URL() string { return "https://" + f.Host }

// BucketPath is the field that names the front end's bucket: the XR's
// bucketName, or metadata.name it derives from.
func (f Frontend) BucketPath() *field.Path {
	if f.Named {
		return xr.ParametersPath("frontend", "bucketName")
	}
	return field.NewPath("metadata", "name")
}

// Budget is the backend's spend guardrail: a WorkloadBudget that scales
// the backend's Deployment.
type Budget struct {
	*App
	Budget   xr.Budget
	Replicas int64
}

// Kind implements component.Component.
func (Namespace) Kind() component.Kind { return KindNamespace }

// ID implements component.Component.
func (Namespace) ID() string { return "namespace" }

// Condition implements component.Component.
func (Namespace) Condition() string { return ConditionNamespaceReady }

// Kind implements component.Component.
func (Identity) Kind() component.Kind { return KindIdentity }

// ID implements component.Component.
func (Identity) ID() string { return "identity" }

// Condition implements component.Component.
func (Identity) Condition() string { return ConditionIdentityReady }

// Kind implements component.Component.
func (Bucket) Kind() component.Kind { return KindBucket }

// ID implements component.Component.
func (Bucket) ID() string { return "bucket" }

// Condition implements component.Component.
func (Bucket) Condition() string { return ConditionBucketReady }

// Kind implements component.Component.
func (Database) Kind() component.Kind { return KindDatabase }

// ID implements component.Component.
func (Database) ID() string { return "database" }

// Condition implements component.Component.
func (Database) Condition() string { return ConditionDatabaseReady }

// Kind implements component.Component.
func (Connection) Kind() component.Kind { return KindConnection }

// ID implements component.Component.
func (Connection) ID() string { return "connection" }

// Condition implements component.Component.
func (Connection) Condition() string { return ConditionDatabaseReady }

// Kind implements component.Component.
func (Backend) Kind() component.Kind { return KindBackend }

// ID implements component.Component.
func (Backend) ID() string { return "backend" }

// Condition implements component.Component.
func (Backend) Condition() string { return ConditionBackendReady }

// Kind implements component.Component.
func (Ingress) Kind() component.Kind { return KindIngress }

// ID implements component.Component.
func (Ingress) ID() string { return "ingress" }

// Condition implements component.Component.
func (Ingress) Condition() string { return ConditionBackendReady }

// Kind implements component.Component.
func (Frontend) Kind() component.Kind { return KindFrontend }

// ID implements component.Component.
func (Frontend) ID() string { return "frontend" }

// Condition implements component.Component.
func (Frontend) Condition() string { return ConditionFrontendReady }

// Kind implements component.Component.
func (APIRoute) Kind() component.Kind { return KindAPIRoute }

// ID implements component.Component.
func (APIRoute) ID() string { return "frontend-api" }

// Condition implements component.Component.
func (APIRoute) Condition() string { return ConditionFrontendReady }

// Kind implements component.Component.
func (Budget) Kind() component.Kind { return KindBudget }

// ID implements component.Component.
func (Budget) ID() string { return "budget" }

// Condition implements component.Component.
func (Budget) Condition() string { return ConditionBackendReady }
