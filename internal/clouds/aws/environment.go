package aws

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/environment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of an application environment on AWS.
var (
	bucketKind = registry.Upjet(Name, "s3", "Bucket", "v1beta2", "spec.forProvider.region").Replaces(
		terraform.Refuse("objectLockEnabled", "aws_s3_bucket.object_lock_enabled", "internal/service/s3/bucket.go:402-408"))
	bucketBlockKind = registry.Upjet(Name, "s3", "BucketPublicAccessBlock", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_public_access_block.bucket", "internal/service/s3/bucket_public_access_block.go:47-51"))
	bucketEncryptionKind = registry.Upjet(Name, "s3", "BucketServerSideEncryptionConfiguration", "v1beta2", "spec.forProvider.region", "spec.forProvider.rule").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_server_side_encryption_configuration.bucket", "internal/service/s3/bucket_server_side_encryption_configuration.go:46-51"))
	bucketOwnershipKind = registry.Upjet(Name, "s3", "BucketOwnershipControls", "v1beta2", "spec.forProvider.region", "spec.forProvider.rule").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_ownership_controls.bucket", "internal/service/s3/bucket_ownership_controls.go:39-44"))
	rolePolicyKind = registry.Upjet(Name, "iam", "RolePolicy", "v1beta1", "spec.forProvider.policy").WithGuarded(registry.WhyIdentity, "spec.forProvider.policy", "spec.forProvider.role", "spec.forProvider.roleSelector", "spec.forProvider.roleRef", "spec.initProvider.policy").Replaces(
		terraform.Refuse("roleSelector", "aws_iam_role_policy.role", "internal/service/iam/role_policy.go:78-83"))
)

// Composition-resource names of an application environment on AWS.
const (
	rAppIdentity         = "identity"
	rAppPodIdentity      = "identity-association"
	rAppBucket           = "bucket"
	rAppBucketBlock      = "bucket-public-access-block"
	rAppBucketEncryption = "bucket-encryption"
	rAppBucketOwnership  = "bucket-ownership"
	rAppBucketAccess     = "bucket-access"
)

// reBucket is S3's rule for bucket names (dots are left out: they break
// TLS on virtual-hosted addresses).
var reBucket = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

func init() {
	kube.ImplementApp(Cloud)
	registry.Implement(Cloud, appIdentity)
	registry.Implement(Cloud, appBucket)
	registry.Check(Cloud, checkAppBucket)
}

// appTags are the tags of an application environment's resources.
func appTags(a *environment.App, name string) map[string]any {
	return map[string]any{"Name": name, "environment": a.Name, "cluster": a.Cluster.CloudName, "managed-by": "crossplane"}
}

// appIdentity renders the backend's IAM role, which EKS Pod Identity lets
// the backend's ServiceAccount assume without keys, and the ServiceAccount
// itself (Pod Identity needs no annotation on it).
func appIdentity(ctx *registry.Context, id environment.Identity) ([]*registry.Resource, error) {
	role := names.Join(maxRoleName, id.Name, "app")
	return []*registry.Resource{
		{
			Name:         rAppIdentity,
			Kind:         roleKind,
			ExternalName: role,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"assumeRolePolicy": assumeRolePolicy("pods.eks.amazonaws.com", true),
				"description":      fmt.Sprintf("Role of the backend of environment %s on EKS cluster %s", id.Name, id.Cluster.CloudName),
				"tags":             appTags(id.App, role),
			}}},
		},
		{
			Name: rAppPodIdentity,
			Kind: podIdentityKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":              id.Location,
				"clusterNameSelector": id.Cluster.Selector(rCluster),
				"namespace":           id.Namespace,
				"serviceAccount":      environment.ServiceAccount,
				"roleArnSelector":     ctx.Selector(rAppIdentity),
				"tags":                appTags(id.App, role),
			}}},
			DependsOn: []string{rAppIdentity},
		},
		kube.ServiceAccount(ctx, id.App, nil, rAppPodIdentity),
	}, nil
}

// appBucket renders a private S3 bucket: public access blocked, encrypted
// at rest, owned by the bucket owner alone, and readable and writable by
// the backend's role through an inline policy.
func appBucket(ctx *registry.Context, b environment.Bucket) ([]*registry.Resource, error) {
	arn := "arn:" + partition(b.Location) + ":s3:::" + b.Name
	sel := ctx.Selector(rAppBucket)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListBucket"],"Resource":%q},{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":%q}]}`, arn, arn+"/*")
	return []*registry.Resource{
		{
			Name:         rAppBucket,
			Kind:         bucketKind,
			ExternalName: b.Name,
			Orphan:       b.Orphan,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":       b.Location,
				"forceDestroy": false,
				"tags":         appTags(b.App, b.Name),
			}}},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				if d := object.String(obs, "status", "atProvider", "bucketRegionalDomainName"); d != "" {
					o.BucketURL = "https://" + d
				}
			},
		},
		{
			Name: rAppBucketBlock,
			Kind: bucketBlockKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":                b.Location,
				"bucketSelector":        sel,
				"blockPublicAcls":       true,
				"blockPublicPolicy":     true,
				"ignorePublicAcls":      true,
				"restrictPublicBuckets": true,
			}}},
			DependsOn: []string{rAppBucket},
		},
		{
			Name: rAppBucketEncryption,
			Kind: bucketEncryptionKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":         b.Location,
				"bucketSelector": sel,
				"rule": []any{map[string]any{
					"applyServerSideEncryptionByDefault": map[string]any{"sseAlgorithm": "AES256"},
					"bucketKeyEnabled":                   true,
				}},
			}}},
			DependsOn: []string{rAppBucket},
		},
		{
			Name: rAppBucketOwnership,
			Kind: bucketOwnershipKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":         b.Location,
				"bucketSelector": sel,
				"rule":           map[string]any{"objectOwnership": "BucketOwnerEnforced"},
			}}},
			DependsOn: []string{rAppBucket},
		},
		{
			Name: rAppBucketAccess,
			Kind: rolePolicyKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"policy":       policy,
				"roleSelector": ctx.Selector(rAppIdentity),
			}}},
			DependsOn: []string{rAppIdentity, rAppBucket},
		},
	}, nil
}

// checkAppBucket refuses what S3 cannot serve here: public and website
// buckets need a bucket policy or website configuration, kinds
// ../shared/crds does not serve; and names S3 refuses.
func checkAppBucket(_ *registry.Context, b environment.Bucket) field.ErrorList {
	var errs field.ErrorList
	p := xr.ParametersPath("bucket")
	why := "needs an S3 bucket policy or website configuration, kinds ../shared/crds does not serve on AWS; serve public content through the backend (spec.parameters.ingress) instead"
	if b.Public {
		errs = append(errs, field.Forbidden(p.Child("public"), "a public bucket "+why))
	}
	if b.Website {
		errs = append(errs, field.Forbidden(p.Child("website"), "a website bucket "+why))
	}
	if !reBucket.MatchString(b.Name) || strings.HasPrefix(b.Name, "xn--") {
		np := p.Child("name")
		if !b.Named {
			np = field.NewPath("metadata", "name")
		}
		errs = append(errs, field.Invalid(np, b.Name, "an S3 bucket name has 3 to 63 lower-case letters, digits and '-', starts and ends with a letter or digit, and does not start with xn--"))
	}
	return errs
}
