package aws

import (
	"cmp"
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of an environment's front end on AWS. Replacement-only fields from
// terraform-provider-aws v6.34.0: CloudFront's distribution has one
// (staging, which is never rendered), its origin access control none.
var (
	distributionKind = registry.Upjet(Name, "cloudfront", "Distribution", "v1beta2", "spec.forProvider.origin", "spec.forProvider.defaultCacheBehavior", "spec.forProvider.viewerCertificate").Replaces().
				WithGuarded(registry.WhyRecord, "spec.forProvider.aliases", "spec.forProvider.viewerCertificate", "spec.initProvider.aliases", "spec.initProvider.viewerCertificate")
	originAccessKind = registry.Upjet(Name, "cloudfront", "OriginAccessControl", "v1beta1", "spec.forProvider.name").Replaces()
	certificateKind  = registry.Upjet(Name, "acm", "Certificate", "v1beta2", "spec.forProvider.region", "spec.forProvider.domainName").
				WithGuarded(registry.WhyRecord, "spec.forProvider.domainName", "spec.forProvider.subjectAlternativeNames", "spec.forProvider.validationOption", "spec.initProvider.domainName", "spec.initProvider.subjectAlternativeNames", "spec.initProvider.validationOption").Replaces(
		terraform.Refuse("domainName", "aws_acm_certificate.domain_name", "internal/service/acm/certificate.go:96-104"),
		terraform.Refuse("keyAlgorithm", "aws_acm_certificate.key_algorithm", "internal/service/acm/certificate.go:136-143"),
		terraform.Refuse("subjectAlternativeNames", "aws_acm_certificate.subject_alternative_names", "internal/service/acm/certificate.go:213-226"),
		terraform.Refuse("validationMethod", "aws_acm_certificate.validation_method", "internal/service/acm/certificate.go:238-245"))
	certValidationKind = registry.Upjet(Name, "acm", "CertificateValidation", "v1beta1", "spec.forProvider.region", "spec.forProvider.validationRecordFqdns").Replaces(
		terraform.Refuse("certificateArnSelector", "aws_acm_certificate_validation.certificate_arn", "internal/service/acm/certificate_validation.go:40-44"),
		terraform.Refuse("validationRecordFqdns", "aws_acm_certificate_validation.validation_record_fqdns", "internal/service/acm/certificate_validation.go:45-50"))
	bucketPolicyKind = registry.Upjet(Name, "s3", "BucketPolicy", "v1beta1", "spec.forProvider.region", "spec.forProvider.policy").
				WithGuarded(registry.WhyIdentity, "spec.forProvider.policy", "spec.forProvider.bucket", "spec.forProvider.bucketSelector", "spec.forProvider.bucketRef", "spec.initProvider.policy").Replaces(
		terraform.Refuse("bucketSelector", "aws_s3_bucket_policy.bucket", "internal/service/s3/bucket_policy.go:39-43"))
)

// Composition-resource names of a front end on AWS.
const (
	rSiteBucket            = "frontend-bucket"
	rSiteBucketBlock       = "frontend-bucket-public-access-block"
	rSiteBucketEncryption  = "frontend-bucket-encryption"
	rSiteBucketOwnership   = "frontend-bucket-ownership"
	rSiteBucketPolicy      = "frontend-bucket-policy"
	rSiteOriginAccess      = "frontend-origin-access"
	rSiteCertificate       = "frontend-certificate"
	rSiteCertificateRecord = "frontend-certificate-record"
	rSiteCertificateValid  = "frontend-certificate-validation"
	rSiteCDN               = "frontend-cdn"
	rSiteRecord            = "frontend-dns"
	rSiteRecordIPv6        = "frontend-dns-ipv6"
)

// siteParts are the front end's bucket's parts.
var siteParts = bucketParts{rSiteBucket, rSiteBucketBlock, rSiteBucketEncryption, rSiteBucketOwnership}

// CloudFront's constants.
const (
	// cloudFrontRegion is where CloudFront reads its certificates from
	// (ACM in us-east-1 only).
	cloudFrontRegion = "us-east-1"
	// cachingDisabled and allViewerExceptHost are AWS-managed cache and
	// origin request policies (CloudFront Developer Guide, "Use managed
	// cache policies" and "Use managed origin request policies"): the API
	// is never cached and gets every header, cookie and query string but
	// Host, so that its Ingress sees its own host name.
	cachingDisabled     = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
	allViewerExceptHost = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
	// originSite and originAPI are the distribution's origin IDs.
	originSite = "site"
	originAPI  = "api"
	// maxOriginAccessName bounds an origin access control's name.
	maxOriginAccessName = 64
	// validationTTL is the TTL of the certificate's validation record.
	validationTTL = 300
)

func init() {
	registry.Implement(Cloud, appFrontend)
	registry.Implement(Cloud, appAPIRoute)
	registry.Check(Cloud, checkAppFrontend)
}

// appAPIRoute composes nothing of its own: CloudFront routes the API path
// in the distribution (frontend-cdn), as an origin and cache behaviours.
func appAPIRoute(*registry.Context, appenvironment.APIRoute) ([]*registry.Resource, error) {
	return nil, nil
}

// appFrontend renders the front end: a private bucket that only the
// environment's CloudFront distribution may read (through an origin access
// control, and a bucket policy conditioned on the distribution's ARN), an
// ACM certificate for the host in us-east-1 validated by a record in the
// Cluster's public zone, the distribution (TLS 1.2 or later, HTTP
// redirected to HTTPS, compression, the single-page mapping, and the API
// path to the backend's Ingress over HTTPS, uncached), and alias records
// for the host. What needs an observed value (the validation record, the
// certificate's ARN, the distribution's ARN and domain) waits for it.
func appFrontend(ctx *registry.Context, f appenvironment.Frontend) ([]*registry.Resource, error) {
	out := privateBucket(ctx, f.App, siteParts, f.Bucket, f.Orphan)
	out = append(out,
		&registry.Resource{
			Name: rSiteOriginAccess,
			Kind: originAccessKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"name":                          names.JoinFor(f.Tenant, maxOriginAccessName, f.Name, "frontend"),
				"description":                   "CloudFront reads the front end of environment " + f.Name,
				"originAccessControlOriginType": "s3",
				"signingBehavior":               "always",
				"signingProtocol":               "sigv4",
			}}},
		},
		&registry.Resource{
			Name: rSiteCertificate,
			Kind: certificateKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":           cloudFrontRegion,
				"domainName":       f.Host,
				"validationMethod": "DNS",
				"keyAlgorithm":     "RSA_2048",
				"tags":             appTags(f.App, f.Host),
			}}},
		},
		certificateRecord(ctx, f),
		certificateValidation(ctx, f),
		distribution(ctx, f),
		sitePolicy(ctx, f),
		aliasRecord(ctx, f, rSiteRecord, "A"),
		aliasRecord(ctx, f, rSiteRecordIPv6, "AAAA"),
	)
	return out, nil
}

// certificateRecord is the CNAME that proves to ACM that the Cluster's zone
// holds the host: its name and value are the certificate's, once reported.
// The record belongs to this certificate alone, so it may overwrite a
// record its predecessor left with the same name and value.
func certificateRecord(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{Name: rSiteCertificateRecord, Kind: recordKind, DependsOn: []string{rSiteCertificate}}
	name, value, typ := validationOption(ctx, f)
	if name == "" || value == "" {
		r.Pending = "waits for " + rSiteCertificate + " to report its DNS validation record"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"zoneIdSelector": clusterref.Selector(f.Cluster, rPublicZone),
		"name":           name,
		"type":           typ,
		"ttl":            validationTTL,
		"records":        []any{value},
		"allowOverwrite": true,
	}}}
	return r
}

// validationOption is the certificate's DNS validation record, as ACM
// reports it, for the host alone: a record for another name, or one not
// under the host, is no record of this front end's (empty).
func validationOption(ctx *registry.Context, f appenvironment.Frontend) (name, value, typ string) {
	for _, v := range object.Get(ctx.Observed(rSiteCertificate), "status", "atProvider", "domainValidationOptions").GetListValue().GetValues() {
		opt := v.GetStructValue()
		name = object.String(opt, "resourceRecordName")
		if object.String(opt, "domainName") == f.Host && strings.HasSuffix(strings.TrimSuffix(name, "."), "."+f.Host) {
			return name, object.String(opt, "resourceRecordValue"), cmp.Or(object.String(opt, "resourceRecordType"), "CNAME")
		}
	}
	return "", "", ""
}

// certificateValidation waits, in ACM, until the certificate is issued.
func certificateValidation(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{Name: rSiteCertificateValid, Kind: certValidationKind, DependsOn: []string{rSiteCertificate, rSiteCertificateRecord}}
	name, _, _ := validationOption(ctx, f)
	if name == "" {
		r.Pending = "waits for " + rSiteCertificate + " to report its DNS validation record"
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"region":                 cloudFrontRegion,
		"certificateArnSelector": ctx.Selector(rSiteCertificate),
		"validationRecordFqdns":  []any{strings.TrimSuffix(name, ".")},
	}}}
	return r
}

// distribution is the CloudFront distribution in front of the bucket. It
// is composed once the certificate is issued (CloudFront refuses one that
// is not) and takes its ARN, which no selector resolves.
func distribution(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{
		Name:      rSiteCDN,
		Kind:      distributionKind,
		DependsOn: []string{rSiteBucket, rSiteOriginAccess, rSiteCertificateValid},
		Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
			o.CDNEndpoint = object.String(obs, "status", "atProvider", "domainName")
		},
	}
	arn := object.String(ctx.Observed(rSiteCertificate), "status", "atProvider", "arn")
	if arn == "" {
		r.Pending = "waits for the ARN of " + rSiteCertificate
		return r
	}
	origins := []any{map[string]any{
		"originId":                      originSite,
		"domainName":                    bucketDomain(f.Location, f.Bucket),
		"originAccessControlIdSelector": ctx.Selector(rSiteOriginAccess),
	}}
	var behaviours []any
	if f.APIPath != "" {
		origins = append(origins, map[string]any{
			"originId":   originAPI,
			"domainName": f.APIHost,
			"customOriginConfig": map[string]any{
				"httpPort":             80,
				"httpsPort":            443,
				"originProtocolPolicy": "https-only",
				"originSslProtocols":   []any{"TLSv1.2"},
			},
		})
		for _, pattern := range f.APIPatterns() {
			behaviours = append(behaviours, map[string]any{
				"pathPattern":           pattern,
				"targetOriginId":        originAPI,
				"viewerProtocolPolicy":  "https-only",
				"allowedMethods":        []any{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"},
				"cachedMethods":         []any{"GET", "HEAD"},
				"compress":              true,
				"cachePolicyId":         cachingDisabled,
				"originRequestPolicyId": allViewerExceptHost,
			})
		}
	}
	fp := map[string]any{
		"comment":           "Front end of environment " + f.Name,
		"enabled":           true,
		"isIpv6Enabled":     true,
		"httpVersion":       "http2and3",
		"priceClass":        "PriceClass_100",
		"aliases":           []any{f.Host},
		"defaultRootObject": "index.html",
		"origin":            origins,
		"defaultCacheBehavior": map[string]any{
			"targetOriginId":       originSite,
			"viewerProtocolPolicy": "redirect-to-https",
			"allowedMethods":       []any{"GET", "HEAD", "OPTIONS"},
			"cachedMethods":        []any{"GET", "HEAD"},
			"compress":             true,
			"minTtl":               0,
			"defaultTtl":           f.DefaultTTL,
			"maxTtl":               f.MaxTTL,
			"forwardedValues": map[string]any{
				"queryString": false,
				"cookies":     map[string]any{"forward": "none"},
			},
		},
		"restrictions": map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}},
		"viewerCertificate": map[string]any{
			"acmCertificateArn":      arn,
			"sslSupportMethod":       "sni-only",
			"minimumProtocolVersion": "TLSv1.2_2021",
		},
		"tags": appTags(f.App, f.Host),
	}
	if behaviours != nil {
		fp["orderedCacheBehavior"] = behaviours
	}
	if f.SPA {
		// Without s3:ListBucket, S3 answers a missing object with 403:
		// the single-page app's own router answers it. CloudFront applies
		// custom error responses to every origin, so the API's own 403s
		// become the page too (documented).
		fp["customErrorResponse"] = []any{map[string]any{
			"errorCode":          403,
			"responseCode":       200,
			"responsePagePath":   "/index.html",
			"errorCachingMinTtl": 10,
		}}
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": fp}}
	return r
}

// sitePolicy lets the environment's distribution, and only it, read the
// bucket's objects: the condition names its ARN, once observed.
func sitePolicy(ctx *registry.Context, f appenvironment.Frontend) *registry.Resource {
	r := &registry.Resource{Name: rSiteBucketPolicy, Kind: bucketPolicyKind, DependsOn: []string{rSiteBucket, rSiteBucketBlock}}
	arn := object.String(ctx.Observed(rSiteCDN), "status", "atProvider", "arn")
	if arn == "" {
		r.Pending = "waits for the ARN of " + rSiteCDN
		return r
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Sid":"CloudFrontReadsTheFrontEnd","Effect":"Allow","Principal":{"Service":"cloudfront.amazonaws.com"},"Action":"s3:GetObject","Resource":%q,"Condition":{"StringEquals":{"AWS:SourceArn":%q}}}]}`,
		bucketARN(f.Location, f.Bucket)+"/*", arn)
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"region":         f.Location,
		"bucketSelector": ctx.Selector(rSiteBucket),
		"policy":         policy,
	}}}
	return r
}

// aliasRecord publishes the host in the Cluster's public zone as an alias
// of the distribution, once its domain is observed.
func aliasRecord(ctx *registry.Context, f appenvironment.Frontend, name, typ string) *registry.Resource {
	r := &registry.Resource{Name: name, Kind: recordKind, DependsOn: []string{rSiteCDN}}
	obs := ctx.Observed(rSiteCDN)
	domain, zone := object.String(obs, "status", "atProvider", "domainName"), object.String(obs, "status", "atProvider", "hostedZoneId")
	if domain == "" || zone == "" {
		r.Pending = "waits for the domain name of " + rSiteCDN
		return r
	}
	r.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
		"zoneIdSelector": clusterref.Selector(f.Cluster, rPublicZone),
		"name":           f.Host,
		"type":           typ,
		"alias":          map[string]any{"name": domain, "zoneId": zone, "evaluateTargetHealth": false},
	}}}
	return r
}

// bucketDomain is an S3 bucket's regional domain name, CloudFront's origin.
func bucketDomain(region, bucket string) string {
	return bucket + ".s3." + region + ".amazonaws.com"
}

// checkAppFrontend refuses a front end CloudFront cannot serve here: its
// certificates come from ACM in us-east-1 of the aws partition alone; and
// bucket names S3 refuses.
func checkAppFrontend(_ *registry.Context, f appenvironment.Frontend) field.ErrorList {
	var errs field.ErrorList
	if p := partition(f.Location); p != "aws" {
		errs = append(errs, field.Forbidden(xr.ParametersPath("frontend"), fmt.Sprintf("the Cluster runs in partition %s (region %s): CloudFront serves custom hosts with ACM certificates from us-east-1 of the aws partition only", p, f.Location)))
	}
	return append(errs, checkBucketName(f.BucketPath(), f.Bucket)...)
}
