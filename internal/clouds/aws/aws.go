// Package aws is the AWS cloud layer: it implements every platform component
// with provider-upjet-aws managed resources (VPC, NAT, IAM, EKS, Route53,
// Budgets) and registers them under the cloud label "aws".
package aws

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "aws"

// Cloud is the AWS cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	// Made public, the node groups rotate to the public subnets; the
	// NAT gateway stays until none runs in the private ones.
	EgressInUse: egressInUse,
	Settings:    settings{},
	Kinds: append([]*registry.ResourceKind{
		vpcKind, igwKind, subnetKind, routeTableKind, routeKind, rtAssociationKind, eipKind, natGatewayKind,
		roleKind, policyAttachKind, rolePolicyKind, clusterKind, clusterAuthKind, nodeGroupKind, addonKind, accessEntryKind, podIdentityKind,
		zoneKind, recordKind, budgetResourceKind,
		rdsInstanceKind, dbSubnetGroupKind, parameterGroupKind, securityGroupKind, sgIngressKind, sqlProviderConfigKind, sqlDatabaseKind,
		bucketKind, bucketBlockKind, bucketEncryptionKind, bucketOwnershipKind,
		bucketPolicyKind, originAccessKind, certificateKind, certValidationKind, distributionKind,
	}, kube.Kinds...),
	Versions: registry.Versions{
		ControlPlane: registry.VersionField{Spec: "spec.forProvider.version", Running: []string{"status.atProvider.version"}},
		Pool:         registry.VersionField{Spec: "spec.forProvider.version", Running: []string{"status.atProvider.version"}},
		Charts:       kube.Charts,
	},
}

func init() {
	cluster.CloudTraits.Register(Name, cluster.Traits{
		InternalLoadBalancerAnnotations: map[string]string{
			"service.beta.kubernetes.io/aws-load-balancer-internal": "true",
			"service.beta.kubernetes.io/aws-load-balancer-scheme":   "internal",
		},
	})
	registry.Implement(Cloud, network)
	registry.Implement(Cloud, egress)
	registry.Implement(Cloud, identity)
	registry.Implement(Cloud, managedCluster)
	registry.Check(Cloud, checkCluster)
	registry.Implement(Cloud, nodePool)
	registry.Implement(Cloud, dnsZone)
	registry.Implement(Cloud, access)
	registry.Implement(Cloud, kube.BoundRelease(bindDNS))
	registry.Implement(Cloud, budget)
	// The generated tables (zz_replacements.go), under the hand-written
	// ones.
	Cloud.Generated(generatedTables, conditions)
	registry.Register(Cloud)
}

// terraform is where this cloud's tables of replacement-only fields come
// from: the Terraform provider provider-upjet-aws v2.6.0 (the CRDs in
// ../shared/crds/aws) wraps, per its Makefile's TERRAFORM_PROVIDER_VERSION,
// built from upbound's fork at f7691456b787. Paths are of that module;
// upjet refuses any update whose Terraform diff requires a new resource.
const terraform lifecycle.Source = "terraform-provider-aws v6.34.0 (provider-upjet-aws v2.6.0)"

// Kinds this cloud composes, at the versions provider-upjet-aws v2 serves,
// each with its table of replacement-only fields (region is every kind's).
var (
	vpcKind = registry.Upjet(Name, "ec2", "VPC", "v1beta1", "spec.forProvider.region", "spec.forProvider.cidrBlock").Replaces(
		terraform.Refuse("cidrBlock", "aws_vpc.cidr_block", "internal/service/ec2/vpc_.go:93-100"),
		terraform.Refuse("instanceTenancy", "aws_vpc.instance_tenancy", "internal/service/ec2/vpc_.go:132-137"))
	igwKind    = registry.Upjet(Name, "ec2", "InternetGateway", "v1beta1", "spec.forProvider.region").Replaces()
	subnetKind = registry.Upjet(Name, "ec2", "Subnet", "v1beta1", "spec.forProvider.region", "spec.forProvider.cidrBlock").Replaces(
		terraform.Refuse("cidrBlock", "aws_subnet.cidr_block", "internal/service/ec2/vpc_subnet.go:83-89"),
		terraform.Refuse("availabilityZone", "aws_subnet.availability_zone", "internal/service/ec2/vpc_subnet.go:69-75"),
		terraform.Refuse("vpcIdSelector", "aws_subnet.vpc_id", "internal/service/ec2/vpc_subnet.go:186-190"))
	routeTableKind = registry.Upjet(Name, "ec2", "RouteTable", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("vpcIdSelector", "aws_route_table.vpc_id", "internal/service/ec2/vpc_route_table.go:161-165"))
	routeKind = registry.Upjet(Name, "ec2", "Route", "v1beta2", "spec.forProvider.region", "spec.forProvider.destinationCidrBlock").Replaces(
		terraform.Refuse("routeTableIdSelector", "aws_route.route_table_id", "internal/service/ec2/vpc_route.go:80-84"),
		terraform.Refuse("destinationCidrBlock", "aws_route.destination_cidr_block", "internal/service/ec2/vpc_route.go:89-95"))
	rtAssociationKind = registry.Upjet(Name, "ec2", "RouteTableAssociation", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("subnetIdSelector", "aws_route_table_association.subnet_id", "internal/service/ec2/vpc_route_table_association.go:56-61"))
	eipKind = registry.Upjet(Name, "ec2", "EIP", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("domain", "aws_eip.domain", "internal/service/ec2/ec2_eip.go:85-91"))
	natGatewayKind = registry.Upjet(Name, "ec2", "NATGateway", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("allocationIdSelector", "aws_nat_gateway.allocation_id", "internal/service/ec2/vpc_nat_gateway.go:54-58"),
		terraform.Refuse("subnetIdSelector", "aws_nat_gateway.subnet_id", "internal/service/ec2/vpc_nat_gateway.go:193-197"),
		terraform.Refuse("connectivityType", "aws_nat_gateway.connectivity_type", "internal/service/ec2/vpc_nat_gateway.go:107-113"))
	roleKind = registry.Upjet(Name, "iam", "Role", "v1beta1", "spec.forProvider.assumeRolePolicy").As(registry.ComputeIdentity).WithGuarded(registry.WhyIdentity, "spec.forProvider.assumeRolePolicy", "spec.forProvider.inlinePolicy", "spec.forProvider.managedPolicyArns", "spec.forProvider.permissionsBoundary", "spec.initProvider.assumeRolePolicy", "spec.initProvider.inlinePolicy", "spec.initProvider.managedPolicyArns").Replaces(
		terraform.Refuse("path", "aws_iam_role.path", "internal/service/iam/role.go:186-192"))
	policyAttachKind = registry.Upjet(Name, "iam", "RolePolicyAttachment", "v1beta1", "spec.forProvider.policyArn").As(registry.ComputeIdentity).WithGuarded(registry.WhyIdentity, "spec.forProvider.policyArn", "spec.forProvider.role", "spec.forProvider.roleSelector", "spec.forProvider.roleRef").Replaces(
		terraform.Refuse("policyArn", "aws_iam_role_policy_attachment.policy_arn", "internal/service/iam/role_policy_attachment.go:42-47"),
		terraform.Refuse("roleSelector", "aws_iam_role_policy_attachment.role", "internal/service/iam/role_policy_attachment.go:48-52"))
	clusterKind = registry.Upjet(Name, "eks", "Cluster", "v1beta2", "spec.forProvider.region", "spec.forProvider.vpcConfig").As(registry.Compute, registry.Credentials).Replaces(
		terraform.Walk("version", "aws_eks_cluster.version (UpdateClusterVersion: one minor up at a time, never down)", "internal/service/eks/cluster.go:439-443, 696-717"),
		terraform.Refuse("roleArnSelector", "aws_eks_cluster.role_arn", "internal/service/eks/cluster.go:387-392"),
		terraform.Refuse("bootstrapSelfManagedAddons", "aws_eks_cluster.bootstrap_self_managed_addons", "internal/service/eks/cluster.go:98-103"),
		terraform.Refuse("accessConfig.bootstrapClusterCreatorAdminPermissions", "aws_eks_cluster.access_config.bootstrap_cluster_creator_admin_permissions", "internal/service/eks/cluster.go:86-90"),
		terraform.Refuse("kubernetesNetworkConfig.ipFamily", "aws_eks_cluster.kubernetes_network_config.ip_family", "internal/service/eks/cluster.go:263-269"),
		terraform.Refuse("kubernetesNetworkConfig.serviceIpv4Cidr", "aws_eks_cluster.kubernetes_network_config.service_ipv4_cidr", "internal/service/eks/cluster.go:270-279"),
		terraform.Refuse("encryptionConfig", "aws_eks_cluster.encryption_config (CustomizeDiff ForceNewIfChange)", "internal/service/eks/cluster.go:60-63"))
	clusterAuthKind = registry.Upjet(Name, "eks", "ClusterAuth", "v1beta1", "spec.forProvider.region").As(registry.Credentials).
			WithoutTable("ClusterAuth is upjet's own kind (no Terraform resource): it only reads the cluster's credentials")
	nodeGroupKind = registry.Upjet(Name, "eks", "NodeGroup", "v1beta2", "spec.forProvider.region", "spec.forProvider.scalingConfig").As(registry.Compute).WithGuarded(registry.WhyNodeCounts, "spec.forProvider.scalingConfig", "spec.initProvider.scalingConfig").Replaces(
		terraform.Walk("version", "aws_eks_node_group.version (UpdateNodegroupVersion: never above the control plane, never down)", "internal/service/eks/node_group.go:372-376, 551-598"),
		terraform.Refuse("clusterNameSelector", "aws_eks_node_group.cluster_name", "internal/service/eks/node_group.go:75-80"),
		terraform.Rotate("instanceTypes", "aws_eks_node_group.instance_types", "internal/service/eks/node_group.go:91-97"),
		terraform.Rotate("capacityType", "aws_eks_node_group.capacity_type", "internal/service/eks/node_group.go:68-74"),
		terraform.Rotate("amiType", "aws_eks_node_group.ami_type", "internal/service/eks/node_group.go:57-63"),
		terraform.Rotate("diskSize", "aws_eks_node_group.disk_size", "internal/service/eks/node_group.go:81-86"),
		terraform.Rotate("subnetIdSelector", "aws_eks_node_group.subnet_ids", "internal/service/eks/node_group.go:306-312"),
		// Rendered only while a generation runs in other subnets than
		// the zones' (nodeSubnets): the selector is resolved once.
		terraform.Rotate("subnetIds", "aws_eks_node_group.subnet_ids", "internal/service/eks/node_group.go:306-312"),
		terraform.Rotate("nodeRoleArnSelector", "aws_eks_node_group.node_role_arn", "internal/service/eks/node_group.go:222-227"),
		terraform.Rotate("launchTemplate", "aws_eks_node_group.launch_template.id/name", "internal/service/eks/node_group.go:109-124"),
		terraform.Rotate("remoteAccess", "aws_eks_node_group.remote_access", "internal/service/eks/node_group.go:233-253")).
		WithNodeCount("status.atProvider.scalingConfig.desiredSize")
	addonKind = registry.Upjet(Name, "eks", "Addon", "v1beta1", "spec.forProvider.region", "spec.forProvider.addonName").Replaces(
		terraform.Refuse("addonName", "aws_eks_addon.addon_name", "internal/service/eks/addon.go:55-60"),
		terraform.Refuse("clusterNameSelector", "aws_eks_addon.cluster_name", "internal/service/eks/addon.go:74-79"))
	accessEntryKind = registry.Upjet(Name, "eks", "AccessEntry", "v1beta1", "spec.forProvider.region").Replaces(
		terraform.Refuse("clusterNameSelector", "aws_eks_access_entry.cluster_name", "internal/service/eks/access_entry.go:55-60"),
		terraform.Refuse("principalArn", "aws_eks_access_entry.principal_arn", "internal/service/eks/access_entry.go:77-82"),
		terraform.Refuse("type", "aws_eks_access_entry.type", "internal/service/eks/access_entry.go:85-91"))
	podIdentityKind = registry.Upjet(Name, "eks", "PodIdentityAssociation", "v1beta1", "spec.forProvider.region", "spec.forProvider.namespace", "spec.forProvider.serviceAccount").WithGuarded(registry.WhyIdentity, "spec.forProvider.namespace", "spec.forProvider.serviceAccount", "spec.forProvider.roleArn", "spec.forProvider.roleArnSelector", "spec.forProvider.roleArnRef", "spec.forProvider.targetRoleArn", "spec.forProvider.targetRoleArnSelector", "spec.forProvider.targetRoleArnRef", "spec.forProvider.clusterName", "spec.forProvider.clusterNameSelector", "spec.forProvider.clusterNameRef").Replaces(
		terraform.Refuse("clusterNameSelector", "aws_eks_pod_identity_association.cluster_name (RequiresReplace)", "internal/service/eks/pod_identity_association.go:78-83"),
		terraform.Refuse("namespace", "aws_eks_pod_identity_association.namespace (RequiresReplace)", "internal/service/eks/pod_identity_association.go:93-98"),
		terraform.Refuse("serviceAccount", "aws_eks_pod_identity_association.service_account (RequiresReplace)", "internal/service/eks/pod_identity_association.go:103-108"))
	zoneKind = registry.Upjet(Name, "route53", "Zone", "v1beta1", "spec.forProvider.name").WithGuarded(registry.WhyHost, "spec.forProvider.name", "spec.initProvider.name").Replaces(
		terraform.Refuse("name", "aws_route53_zone.name", "internal/service/route53/zone.go:76-86"),
		terraform.Refuse("delegationSetId", "aws_route53_zone.delegation_set_id", "internal/service/route53/zone.go:59-65"))
	budgetResourceKind = registry.Upjet(Name, "budgets", "Budget", "v1beta2", "spec.forProvider.budgetType", "spec.forProvider.timeUnit").Replaces(
		terraform.Refuse("accountId", "aws_budgets_budget.account_id", "internal/service/budgets/budget.go:58-64"))
)

// Composition-resource names: stable, documented API (import uses them).
const (
	rNetwork          = "network"
	rInternetGateway  = "internet-gateway"
	rPublicRouteTable = "public-route-table"
	rPublicRoute      = "public-route"
	rPrivateRT        = "private-route-table"
	rPrivateRoute     = "private-route"
	rNATIP            = "nat-eip"
	rNAT              = "nat"
	rClusterRole      = "cluster-role"
	rNodeRole         = "node-role"
	rEBSRole          = "ebs-csi-role"
	rEBSPodIdentity   = "ebs-csi-pod-identity"
	rCluster          = registry.ClusterResource
	rClusterAuth      = "cluster-auth"
	rAddonPrefix      = "addon-"
	rAccessPrefix     = "access-entry-"
	rAdminBinding     = "cluster-admin-binding"
	rPublicZone       = "public-dns-zone"
	rPrivateZone      = "private-dns-zone"
	rBudget           = "budget"
)

// settings are the environment's keys of this cloud, under data.aws,
// decoded once per call (settingsOf). Every key is optional.
type settings struct {
	// Zones are the availability zones to use, by region.
	Zones map[string][]string `json:"zones"`
	// Addons pin the EKS add-ons' versions, by add-on name: the build for
	// each Kubernetes minor (versions), else one build (version).
	Addons map[string]struct {
		// Version is one build for every minor, for an add-on without
		// versions. Without either, EKS's default, named in a Warning.
		Version string `json:"version"`
		// Versions are the builds by Kubernetes minor: an add-on moves to
		// the next minor's build once the control plane runs that minor.
		Versions map[string]string `json:"versions"`
	} `json:"addons"`
	// Admins are the ARNs of the principals that get cluster-admin.
	Admins []string `json:"admins"`
	// AMIType is the nodes' AMI type. Default AL2023_x86_64_STANDARD.
	AMIType string `json:"amiType"`
	// APIAllowedCIDRs restrict a public API endpoint.
	APIAllowedCIDRs []string `json:"apiAllowedCidrs"`
	// BudgetCostFilter replaces the budget's cost filter.
	BudgetCostFilter map[string]any `json:"budgetCostFilter"`
}

// Keys of settings, for messages.
const (
	envZones  = "zones"
	envAddons = "addons"
)

// settingsOf returns this cloud's environment keys.
func settingsOf(env *envcfg.Env) *settings { return envcfg.Section[settings](env, Name) }

// adminGroup is the Kubernetes group access entries of admin principals map
// to; a ClusterRoleBinding makes it cluster-admin. EKS forbids system:
// groups in access entries.
const adminGroup = "platform:cluster-admins"

const defaultAMIType = "AL2023_x86_64_STANDARD"
