package aws

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// conditions are the conditions on which the AWS provider replaces a
// resource for a change of a field its custom diff replaces only on a
// condition (the generated entries with a Rule), read from its source at
// the upstream commit each names (the files of the schema extract, not
// the v6.34.0 tag) and evaluated the way it evaluates them: old is what
// the resource has, new what the render asks for, each "" / false / no
// block when unset, as Terraform's GetChange gives them.
var conditions = registry.Conditions{
	// Every regional resource's region (the provider's interceptor).
	"*.region": {
		Source: "internal/provider/sdkv2/region.go:105-112@0073593e7d69",
		Why:    "the provider changes a region in place only between unset and its own region, and provider-upjet-aws configures that region from the resource's own spec.forProvider.region, which is never unset: every change is another region (the hand entry of every Upjet kind refuses it)",
	},
	// Only dedicated to default is a tenancy change the VPC makes in place.
	"aws_vpc.instance_tenancy": {
		Replaces: func(d lifecycle.Diff) bool {
			return lifecycle.Str(d.Old) != "dedicated" || lifecycle.Str(d.New) != "default"
		},
		Summary: "unless it goes from dedicated to default", Source: "internal/service/ec2/vpc_.go:515-520@00081ce41cc6",
	},
	// A subnet that assigned IPv6 addresses on creation cannot have its
	// IPv6 range changed in place.
	"aws_subnet.ipv6_cidr_block": {
		Replaces: func(d lifecycle.Diff) bool { return lifecycle.Bool(d.OldAt("assignIpv6AddressOnCreation")) },
		Summary:  "when the subnet had assignIpv6AddressOnCreation", Source: "internal/service/ec2/vpc_subnet.go:195-208@00cda125a19d",
	},
	// Envelope encryption cannot be disabled once enabled.
	"aws_eks_cluster.encryption_config": {
		Replaces: lifecycle.Unsets, Summary: "when the block is removed (len(old) == 1 && len(new) == 0)", Source: "internal/service/eks/cluster.go:64-67@fff78e64ecf1",
	},
	"aws_eks_cluster.compute_config.node_role_arn": {
		Replaces: nodeRoleReplaced,
		Summary:  "when an Auto Mode node role that was set changes, unless Auto Mode or its node pools go with the role unset",
		Source:   "internal/service/eks/cluster.go:1964-2001@fff78e64ecf1",
	},
}

// nodeRoleReplaced is validateAutoModeComputeConfigCustomizeDiff: with a
// compute config on either side, a node role that was set and changes
// replaces the cluster, but where the new config turns Auto Mode off, or
// drops its built-in node pools, and unsets the role.
func nodeRoleReplaced(d lifecycle.Diff) bool {
	if lifecycle.Len(d.OldAt("computeConfig")) == 0 || lifecycle.Len(d.NewAt("computeConfig")) == 0 {
		return false
	}
	old, new := lifecycle.Str(d.Old), lifecycle.Str(d.New)
	if new == "" && (!lifecycle.Bool(d.NewAt("computeConfig.enabled")) || lifecycle.Len(d.NewAt("computeConfig.nodePools")) == 0) {
		return false
	}
	return old != "" && old != new
}
