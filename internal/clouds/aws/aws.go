// Package aws is the AWS cloud layer: it implements every platform component
// with provider-upjet-aws managed resources (VPC, NAT, IAM, EKS, Route53,
// Budgets) and registers them under the cloud label "aws".
package aws

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "aws"

// Cloud is the AWS cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	Traits: platform.Traits{
		InternalLoadBalancerAnnotations: map[string]string{
			"service.beta.kubernetes.io/aws-load-balancer-internal": "true",
			"service.beta.kubernetes.io/aws-load-balancer-scheme":   "internal",
		},
	},
	Validate: validate,
	Settings: settings{},
}

func init() {
	registry.Implement(Cloud, network)
	registry.Implement(Cloud, egress)
	registry.Implement(Cloud, identity)
	registry.Implement(Cloud, cluster)
	registry.Implement(Cloud, nodePool)
	registry.Implement(Cloud, dnsZone)
	registry.Implement(Cloud, access)
	registry.Implement(Cloud, kube.BoundRelease(bindDNS))
	registry.Implement(Cloud, budget)
	registry.Register(Cloud)
}

// Kinds this cloud composes, at the versions provider-upjet-aws v2 serves.
var (
	vpcKind            = registry.Upjet(Name, "ec2", "VPC", "v1beta1", "spec.forProvider.region", "spec.forProvider.cidrBlock").WithImmutable("spec.forProvider.cidrBlock")
	igwKind            = registry.Upjet(Name, "ec2", "InternetGateway", "v1beta1", "spec.forProvider.region")
	subnetKind         = registry.Upjet(Name, "ec2", "Subnet", "v1beta1", "spec.forProvider.region", "spec.forProvider.cidrBlock").WithImmutable("spec.forProvider.cidrBlock", "spec.forProvider.availabilityZone")
	routeTableKind     = registry.Upjet(Name, "ec2", "RouteTable", "v1beta1", "spec.forProvider.region")
	routeKind          = registry.Upjet(Name, "ec2", "Route", "v1beta2", "spec.forProvider.region", "spec.forProvider.destinationCidrBlock")
	rtAssociationKind  = registry.Upjet(Name, "ec2", "RouteTableAssociation", "v1beta1", "spec.forProvider.region")
	eipKind            = registry.Upjet(Name, "ec2", "EIP", "v1beta1", "spec.forProvider.region")
	natGatewayKind     = registry.Upjet(Name, "ec2", "NATGateway", "v1beta1", "spec.forProvider.region")
	roleKind           = registry.Upjet(Name, "iam", "Role", "v1beta1", "spec.forProvider.assumeRolePolicy").WithGuarded(registry.WhyIdentity, "spec.forProvider.assumeRolePolicy", "spec.forProvider.inlinePolicy", "spec.forProvider.managedPolicyArns", "spec.forProvider.permissionsBoundary", "spec.initProvider.assumeRolePolicy", "spec.initProvider.inlinePolicy", "spec.initProvider.managedPolicyArns")
	policyAttachKind   = registry.Upjet(Name, "iam", "RolePolicyAttachment", "v1beta1", "spec.forProvider.policyArn").WithGuarded(registry.WhyIdentity, "spec.forProvider.policyArn", "spec.forProvider.role", "spec.forProvider.roleSelector", "spec.forProvider.roleRef")
	clusterKind        = registry.Upjet(Name, "eks", "Cluster", "v1beta2", "spec.forProvider.region", "spec.forProvider.vpcConfig").WithImmutable("spec.forProvider.kubernetesNetworkConfig")
	clusterAuthKind    = registry.Upjet(Name, "eks", "ClusterAuth", "v1beta1", "spec.forProvider.region")
	nodeGroupKind      = registry.Upjet(Name, "eks", "NodeGroup", "v1beta2", "spec.forProvider.region", "spec.forProvider.scalingConfig").WithGuarded(registry.WhyNodeCounts, "spec.forProvider.scalingConfig", "spec.initProvider.scalingConfig")
	addonKind          = registry.Upjet(Name, "eks", "Addon", "v1beta1", "spec.forProvider.region", "spec.forProvider.addonName")
	accessEntryKind    = registry.Upjet(Name, "eks", "AccessEntry", "v1beta1", "spec.forProvider.region")
	podIdentityKind    = registry.Upjet(Name, "eks", "PodIdentityAssociation", "v1beta1", "spec.forProvider.region", "spec.forProvider.namespace", "spec.forProvider.serviceAccount").WithGuarded(registry.WhyIdentity, "spec.forProvider.namespace", "spec.forProvider.serviceAccount", "spec.forProvider.roleArn", "spec.forProvider.roleArnSelector", "spec.forProvider.roleArnRef", "spec.forProvider.targetRoleArn", "spec.forProvider.targetRoleArnSelector", "spec.forProvider.targetRoleArnRef", "spec.forProvider.clusterName", "spec.forProvider.clusterNameSelector", "spec.forProvider.clusterNameRef")
	zoneKind           = registry.Upjet(Name, "route53", "Zone", "v1beta1", "spec.forProvider.name").WithImmutable("spec.forProvider.name")
	budgetResourceKind = registry.Upjet(Name, "budgets", "Budget", "v1beta2", "spec.forProvider.budgetType", "spec.forProvider.timeUnit")
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
	// Addons pin the EKS add-ons' versions, by add-on name.
	Addons map[string]struct {
		Version string `json:"version"`
	} `json:"addons"`
	// Admins are the ARNs of the principals that get cluster-admin.
	Admins  []string `json:"admins"`
	AMIType string   `json:"amiType"`
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
