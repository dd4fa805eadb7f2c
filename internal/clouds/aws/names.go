package aws

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// AWS name rules.
const (
	// maxClusterName keeps every derived name within AWS's limits: IAM
	// role names (64) such as <cluster>-ebs-csi, and EKS's 100.
	maxClusterName = 40
	// subnetBits splits the VPC into eight subnets: private ones first,
	// public ones from the fifth on, so at most four zones.
	subnetBits = 3
	maxZones   = 4
	minZones   = 2
)

var (
	reAccount = regexp.MustCompile(`^[0-9]{12}$`)
	reRegion  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$`)
	rfc1918   = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16")}
)

// checkCluster checks AWS's rules: names, account ID, region, availability
// zones and address ranges.
func checkCluster(ctx *registry.Context, c cluster.Cluster) field.ErrorList {
	x := ctx.XR
	var errs field.ErrorList
	errs = append(errs, xr.ValidateCloudName(x, maxClusterName, "EKS cluster", "IAM role names derive from it")...)
	if x.PlaneID != "" && !reAccount.MatchString(x.PlaneID) {
		errs = append(errs, field.Invalid(xr.LabelPath(xr.LabelPlaneID), x.PlaneID, "must be a 12-digit AWS account ID"))
	}
	loc := c.Location
	if loc != "" && !reRegion.MatchString(loc) {
		errs = append(errs, field.Invalid(xr.ParametersPath("location"), loc, "must be an AWS region such as eu-west-1"))
	}
	if z := zones(ctx.Env, loc); len(z) < minZones || len(z) > maxZones {
		errs = append(errs, field.Invalid(field.NewPath("environment", Name, envZones, loc), z, fmt.Sprintf("EKS needs %d to %d availability zones", minZones, maxZones)))
	}
	if b := c.Network.CIDR.Bits(); c.Network.CIDR.IsValid() && (b < 16 || b > 24) {
		errs = append(errs, field.Invalid(xr.ParametersPath("network", "cidr"), c.Network.CIDR.String(), "an AWS VPC here must be a /16 to /24, split into eight subnets"))
	}
	svc := c.Network.ServicesCIDR
	if b := svc.Bits(); svc.IsValid() && (b < 12 || b > 24 || !within(svc, rfc1918)) {
		errs = append(errs, field.Invalid(xr.ParametersPath("network", "servicesCidr"), svc.String(), "EKS needs a /12 to /24 service range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"))
	}
	return errs
}

func within(p netip.Prefix, in []netip.Prefix) bool {
	for _, r := range in {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// zones are the availability zones of the region: environment key
// aws.zones.<region>, or the region's "a" and "b" zones.
func zones(env *envcfg.Env, region string) []string {
	if z := settingsOf(env).Zones[region]; len(z) > 0 {
		return z
	}
	return []string{region + "a", region + "b"}
}

// zoneID is the short form of a zone in composition-resource names: "a" for
// eu-west-1a.
func zoneID(region, zone string) string {
	if s := strings.TrimPrefix(zone, region); s != zone && s != "" {
		return s
	}
	return strings.ToLower(zone)
}

// partition is the ARN partition of a region.
func partition(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	default:
		return "aws"
	}
}

// policyARN is the ARN of an AWS managed policy.
func policyARN(region, name string) string {
	return "arn:" + partition(region) + ":iam::aws:policy/" + name
}

// base is the cloud name every other name derives from.
func base(ctx *registry.Context) string { return ctx.XR.CloudName }

// tags are the AWS tags of every resource.
func tags(ctx *registry.Context, name string) map[string]any {
	return map[string]any{
		"Name":       name,
		"cluster":    base(ctx),
		"managed-by": "crossplane",
	}
}

// Subnet tiers: nodes and the control plane's interfaces live in private
// subnets; load balancers and the NAT gateway in public ones.
const (
	labelTier   = "platform.example.org/subnet-tier"
	tierPublic  = "public"
	tierPrivate = "private"
)

// tierSelector selects every subnet of a tier composed for this XR.
func tierSelector(tier string) object.Object {
	return object.Object{"matchControllerRef": true, "matchLabels": map[string]any{labelTier: tier}}
}

func subnetName(tier, zone string) string { return "subnet-" + tier + "-" + zone }

// nodeTier is where nodes run: private subnets behind the NAT gateway for
// private clusters, public subnets otherwise.
func nodeTier(private bool) string {
	if private {
		return tierPrivate
	}
	return tierPublic
}
