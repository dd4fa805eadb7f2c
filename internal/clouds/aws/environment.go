package aws

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of an application environment on AWS.
var (
	bucketKind = registry.Upjet(Name, "s3", "Bucket", "v1beta2", "spec.forProvider.region").Replaces(
		terraform.Refuse("objectLockEnabled", "aws_s3_bucket.object_lock_enabled", "internal/service/s3/bucket.go:402-408"))
	bucketBlockKind = registry.Upjet(Name, "s3", "BucketPublicAccessBlock", "v1beta1", "spec.forProvider.region").
			WithGuarded(registry.WhyIdentity, "spec.forProvider.blockPublicAcls", "spec.forProvider.blockPublicPolicy", "spec.forProvider.ignorePublicAcls", "spec.forProvider.restrictPublicBuckets", "spec.forProvider.bucket", "spec.forProvider.bucketSelector", "spec.forProvider.bucketRef", "spec.initProvider").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_public_access_block.bucket", "internal/service/s3/bucket_public_access_block.go:47-51"))
	bucketEncryptionKind = registry.Upjet(Name, "s3", "BucketServerSideEncryptionConfiguration", "v1beta2", "spec.forProvider.region", "spec.forProvider.rule").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_server_side_encryption_configuration.bucket", "internal/service/s3/bucket_server_side_encryption_configuration.go:46-51"))
	bucketOwnershipKind = registry.Upjet(Name, "s3", "BucketOwnershipControls", "v1beta2", "spec.forProvider.region", "spec.forProvider.rule").
				WithGuarded(registry.WhyIdentity, "spec.forProvider.rule", "spec.forProvider.bucket", "spec.forProvider.bucketSelector", "spec.forProvider.bucketRef", "spec.initProvider").Replaces(
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
func appTags(a *appenvironment.App, name string) map[string]any {
	return map[string]any{"Name": name, "environment": a.Name, "cluster": a.Cluster.CloudName, "managed-by": "crossplane"}
}

// appIdentity renders the backend's IAM role, which EKS Pod Identity lets
// the backend's ServiceAccount assume without keys, and the ServiceAccount
// itself (Pod Identity needs no annotation on it).
func appIdentity(ctx *registry.Context, id appenvironment.Identity) ([]*registry.Resource, error) {
	role := names.JoinFor(id.Tenant, maxRoleName, id.Name, "app")
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
				"clusterNameSelector": clusterref.Selector(id.Cluster, rCluster),
				"namespace":           id.Namespace,
				"serviceAccount":      appenvironment.ServiceAccount,
				"roleArnSelector":     ctx.Selector(rAppIdentity),
				"tags":                appTags(id.App, role),
			}}},
			DependsOn: []string{rAppIdentity},
		},
		kube.ServiceAccount(ctx, id.App, nil, rAppPodIdentity),
	}, nil
}

// bucketParts are the composition-resource names of a private bucket's
// parts.
type bucketParts struct{ bucket, block, encryption, ownership string }

// assetsParts are the environment's bucket's.
var assetsParts = bucketParts{rAppBucket, rAppBucketBlock, rAppBucketEncryption, rAppBucketOwnership}

// bucketARN is the ARN of the S3 bucket name in region's partition.
func bucketARN(region, name string) string { return "arn:" + partition(region) + ":s3:::" + name }

// appBucket renders a private S3 bucket and the inline policy that lets
// the backend's role, and no one else, read and write it.
func appBucket(ctx *registry.Context, b appenvironment.Bucket) ([]*registry.Resource, error) {
	arn := bucketARN(b.Location, b.Name)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListBucket"],"Resource":%q},{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":%q}]}`, arn, arn+"/*")
	out := privateBucket(ctx, b.App, assetsParts, b.Name, b.Orphan)
	out[0].Outputs = func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
		if d := object.String(obs, "status", "atProvider", "bucketRegionalDomainName"); d != "" {
			o.BucketURL = "https://" + d
		}
	}
	return append(out, &registry.Resource{
		Name: rAppBucketAccess,
		Kind: rolePolicyKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"policy":       policy,
			"roleSelector": ctx.Selector(rAppIdentity),
		}}},
		DependsOn: []string{rAppIdentity, rAppBucket},
	}), nil
}

// privateBucket renders an S3 bucket closed to the public: public access
// blocked, encrypted at rest, owned by the bucket owner alone (no ACLs).
// The bucket comes first.
func privateBucket(ctx *registry.Context, a *appenvironment.App, n bucketParts, name string, orphan bool) []*registry.Resource {
	sel := ctx.Selector(n.bucket)
	return []*registry.Resource{
		{
			Name:         n.bucket,
			Kind:         bucketKind,
			ExternalName: name,
			Orphan:       orphan,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":       a.Location,
				"forceDestroy": false,
				"tags":         appTags(a, name),
			}}},
		},
		{
			Name: n.block,
			Kind: bucketBlockKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":                a.Location,
				"bucketSelector":        sel,
				"blockPublicAcls":       true,
				"blockPublicPolicy":     true,
				"ignorePublicAcls":      true,
				"restrictPublicBuckets": true,
			}}},
			DependsOn: []string{n.bucket},
		},
		{
			Name: n.encryption,
			Kind: bucketEncryptionKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":         a.Location,
				"bucketSelector": sel,
				"rule": []any{map[string]any{
					"applyServerSideEncryptionByDefault": map[string]any{"sseAlgorithm": "AES256"},
					"bucketKeyEnabled":                   true,
				}},
			}}},
			DependsOn: []string{n.bucket},
		},
		{
			Name: n.ownership,
			Kind: bucketOwnershipKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":         a.Location,
				"bucketSelector": sel,
				"rule":           map[string]any{"objectOwnership": "BucketOwnerEnforced"},
			}}},
			DependsOn: []string{n.bucket},
		},
	}
}

// checkAppBucket refuses public and website buckets, which S3 serves
// over plain HTTP to anyone, with every object listable by policy: on AWS
// a site is served by spec.parameters.frontend, a private bucket that only
// its CloudFront distribution reads, with TLS for its host. It refuses
// names S3 refuses too.
func checkAppBucket(_ *registry.Context, b appenvironment.Bucket) field.ErrorList {
	var errs field.ErrorList
	p := xr.ParametersPath("bucket")
	why := "would open the bucket to the internet over plain HTTP; on AWS a site is served by spec.parameters.frontend (a private bucket only its CloudFront distribution reads, with TLS for its host), and other public content through the backend (spec.parameters.ingress)"
	if b.Public {
		errs = append(errs, field.Forbidden(p.Child("public"), "a public bucket "+why))
	}
	if b.Website {
		errs = append(errs, field.Forbidden(p.Child("website"), "a website bucket "+why))
	}
	np := p.Child("name")
	if !b.Named {
		np = field.NewPath("metadata", "name")
	}
	return append(errs, checkBucketName(np, b.Name)...)
}

// checkBucketName refuses a bucket name S3 refuses, naming the field it
// comes from.
func checkBucketName(p *field.Path, name string) field.ErrorList {
	if reBucket.MatchString(name) && !strings.HasPrefix(name, "xn--") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "an S3 bucket name has 3 to 63 lower-case letters, digits and '-', starts and ends with a letter or digit, and does not start with xn--")}
}
