package gcp

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of an application environment on GCP.
var (
	bucketKind = registry.Upjet(Name, "storage", "Bucket", "v1beta2", "spec.forProvider.location").Replaces(
		terraform.Refuse("project", "google_storage_bucket.project", "google/services/storage/resource_storage_bucket.go:204-208"))
	bucketIAMMemberKind = registry.Upjet(Name, "storage", "BucketIAMMember", "v1beta2", "spec.forProvider.member", "spec.forProvider.role").WithGuarded(registry.WhyIdentity, append(identityGrant, "spec.forProvider.bucket", "spec.forProvider.bucketSelector", "spec.forProvider.bucketRef")...).Replaces(
		terraform.Refuse("bucketSelector", "google_storage_bucket_iam_member.bucket", "google/services/storage/iam_storage_bucket.go:33-36"),
		terraform.Refuse("member", "google_storage_bucket_iam_member.member", "google/tpgiamresource/resource_iam_member.go:69-72"),
		terraform.Refuse("role", "google_storage_bucket_iam_member.role", "google/tpgiamresource/resource_iam_member.go:64-67"))
	saIAMMemberKind = registry.Upjet(Name, "cloudplatform", "ServiceAccountIAMMember", "v1beta2", "spec.forProvider.member", "spec.forProvider.role").WithGuarded(registry.WhyIdentity, append(identityGrant, "spec.forProvider.serviceAccountId", "spec.forProvider.serviceAccountIdSelector", "spec.forProvider.serviceAccountIdRef")...).Replaces(
		terraform.Refuse("serviceAccountIdSelector", "google_service_account_iam_member.service_account_id", "google/services/resourcemanager/iam_service_account.go:36-39"),
		terraform.Refuse("member", "google_service_account_iam_member.member", "google/tpgiamresource/resource_iam_member.go:69-72"),
		terraform.Refuse("role", "google_service_account_iam_member.role", "google/tpgiamresource/resource_iam_member.go:64-67"))
)

// identityGrant are the fields of an IAM member that say who gets what.
var identityGrant = []string{"spec.forProvider.member", "spec.forProvider.role", "spec.forProvider.condition", "spec.forProvider.project", "spec.initProvider.member", "spec.initProvider.role"}

// Composition-resource names of an application environment on GCP.
const (
	rAppIdentity       = "identity"
	rAppWorkloadUser   = "identity-workload-user"
	rAppBucket         = "bucket"
	rAppBucketAccess   = "bucket-access"
	rAppBucketReadable = "bucket-public-read"
)

// Roles an application environment's identities get.
const (
	roleWorkloadIdentityUser = "roles/iam.workloadIdentityUser"
	roleObjectAdmin          = "roles/storage.objectAdmin"
	roleObjectViewer         = "roles/storage.objectViewer"
)

// reBucket is Cloud Storage's rule for bucket names without dots (dotted
// names need domain verification).
var reBucket = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$`)

func init() {
	kube.ImplementApp(Cloud)
	registry.Implement(Cloud, appIdentity)
	registry.Implement(Cloud, appBucket)
	registry.Check(Cloud, checkAppIdentity)
	registry.Check(Cloud, checkAppBucket)
	registry.Check(Cloud, checkAppDatabase)
}

// checkAppDatabase refuses an environment's database on a Cluster without
// private services access at once, rather than leave its nested Database
// refused (checkDBNetwork).
func checkAppDatabase(_ *registry.Context, d appenvironment.Database) field.ErrorList {
	return needPrivateServices(d.Cluster, xr.ParametersPath("database"))
}

// appAccountID is the ID of the backend's Google service account.
func appAccountID(a *appenvironment.App) string {
	return names.JoinFor(a.Tenant, maxAccountID, a.Name, "workload")
}

// appAccountEmail is its e-mail.
func appAccountEmail(ctx *registry.Context, a *appenvironment.App) string {
	return appAccountID(a) + "@" + ctx.XR.PlaneID + ".iam.gserviceaccount.com"
}

// appIdentity renders the backend's Google service account, the binding
// that lets the backend's Kubernetes ServiceAccount act as it through GKE
// workload identity (no key exists), and the ServiceAccount, annotated
// with it.
func appIdentity(ctx *registry.Context, id appenvironment.Identity) ([]*registry.Resource, error) {
	email := appAccountEmail(ctx, id.App)
	return []*registry.Resource{
		{
			Name:         rAppIdentity,
			Kind:         saKind,
			ExternalName: appAccountID(id.App),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":     ctx.XR.PlaneID,
				"displayName": "Backend of " + id.Name,
				"description": fmt.Sprintf("Workload identity of environment %s (namespace %s) on GKE cluster %s", id.Name, id.Namespace, id.Cluster.CloudName),
			}}},
		},
		{
			Name: rAppWorkloadUser,
			Kind: saIAMMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"serviceAccountIdSelector": ctx.Selector(rAppIdentity),
				"role":                     roleWorkloadIdentityUser,
				"member":                   fmt.Sprintf("serviceAccount:%s.svc.id.goog[%s/%s]", ctx.XR.PlaneID, id.Namespace, appenvironment.ServiceAccount),
			}}},
			DependsOn: []string{rAppIdentity},
		},
		kube.ServiceAccount(ctx, id.App, map[string]any{"iam.gke.io/gcp-service-account": email}, rAppWorkloadUser),
	}, nil
}

// appBucket renders a Cloud Storage bucket with uniform access, closed to
// the public unless public, and the grant that lets the backend's service
// account read and write its objects.
func appBucket(ctx *registry.Context, b appenvironment.Bucket) ([]*registry.Resource, error) {
	fp := map[string]any{
		"project":                  ctx.XR.PlaneID,
		"location":                 strings.ToUpper(b.Location),
		"uniformBucketLevelAccess": true,
		"publicAccessPrevention":   "enforced",
		"forceDestroy":             false,
		"labels":                   map[string]any{"environment": b.App.Name, "managed-by": "crossplane"},
	}
	if b.Public {
		fp["publicAccessPrevention"] = "inherited"
	}
	if b.Website {
		fp["website"] = map[string]any{"mainPageSuffix": "index.html", "notFoundPage": "404.html"}
	}
	out := []*registry.Resource{
		{
			Name:         rAppBucket,
			Kind:         bucketKind,
			ExternalName: b.Name,
			Orphan:       b.Orphan,
			Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				if object.String(obs, "status", "atProvider", "url") != "" {
					o.BucketURL = "https://storage.googleapis.com/" + b.Name
				}
			},
		},
		{
			Name: rAppBucketAccess,
			Kind: bucketIAMMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"bucketSelector": ctx.Selector(rAppBucket),
				"role":           roleObjectAdmin,
				"member":         "serviceAccount:" + appAccountEmail(ctx, b.App),
			}}},
			DependsOn: []string{rAppBucket, rAppIdentity},
		},
	}
	if b.Public {
		out = append(out, &registry.Resource{
			Name: rAppBucketReadable,
			Kind: bucketIAMMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"bucketSelector": ctx.Selector(rAppBucket),
				"role":           roleObjectViewer,
				"member":         "allUsers",
			}}},
			DependsOn: []string{rAppBucket},
		})
	}
	return out, nil
}

// checkAppIdentity refuses a name too short for a service account ID.
func checkAppIdentity(_ *registry.Context, id appenvironment.Identity) field.ErrorList {
	if n := len(appAccountID(id.App)); n < 6 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), id.Name, "the backend's service account ID derives from it and needs 6 to 30 characters")}
	}
	return nil
}

// checkAppBucket refuses names Cloud Storage refuses.
func checkAppBucket(_ *registry.Context, b appenvironment.Bucket) field.ErrorList {
	p := xr.ParametersPath("bucket", "name")
	if !b.Named {
		p = field.NewPath("metadata", "name")
	}
	return checkBucketName(p, b.Name)
}

// checkBucketName refuses a bucket name Cloud Storage refuses, naming the
// field it comes from.
func checkBucketName(p *field.Path, name string) field.ErrorList {
	if reBucket.MatchString(name) && !strings.HasPrefix(name, "goog") && !strings.Contains(name, "google") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "a Cloud Storage bucket name has 3 to 63 lower-case letters, digits, '-' and '_', starts and ends with a letter or digit, and neither starts with goog nor contains google")}
}
