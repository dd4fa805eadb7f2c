// Package azure is the Azure cloud layer: it implements every platform
// component with provider-upjet-azure managed resources (resource group,
// VNet, NAT gateway, managed identity, AKS, DNS, consumption budgets) and
// registers them under the cloud label "azure".
package azure

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "azure"

// Cloud is the Azure cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	Traits: platform.Traits{
		PodRange: true,
		InternalLoadBalancerAnnotations: map[string]string{
			"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
		},
		WorkloadIdentityPodLabels: map[string]string{"azure.workload.identity/use": "true"},
		FixedPools:                systemPool,
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

// Kinds this cloud composes, at the versions provider-upjet-azure v2 serves.
var (
	resourceGroupKind = registry.Upjet(Name, "", "ResourceGroup", "v1beta1", "spec.forProvider.location")
	vnetKind          = registry.Upjet(Name, "network", "VirtualNetwork", "v1beta2", "spec.forProvider.location").WithImmutable("spec.forProvider.addressSpace")
	subnetKind        = registry.Upjet(Name, "network", "Subnet", "v1beta2").WithImmutable("spec.forProvider.addressPrefixes")
	publicIPKind      = registry.Upjet(Name, "network", "PublicIP", "v1beta1", "spec.forProvider.location", "spec.forProvider.allocationMethod")
	natGatewayKind    = registry.Upjet(Name, "network", "NATGateway", "v1beta1", "spec.forProvider.location")
	natSubnetKind     = registry.Upjet(Name, "network", "SubnetNATGatewayAssociation", "v1beta1")
	natIPKind         = registry.Upjet(Name, "network", "NATGatewayPublicIPAssociation", "v1beta1")
	identityKind      = registry.Upjet(Name, "managedidentity", "UserAssignedIdentity", "v1beta1", "spec.forProvider.location", "spec.forProvider.name")
	roleAssignKind    = registry.Upjet(Name, "authorization", "RoleAssignment", "v1beta1", "spec.forProvider.principalId", "spec.forProvider.scope").WithGuarded(registry.WhyIdentity, "spec.forProvider.principalId", "spec.forProvider.scope", "spec.forProvider.roleDefinitionName", "spec.forProvider.roleDefinitionId", "spec.forProvider.roleDefinitionIdSelector", "spec.forProvider.roleDefinitionIdRef", "spec.forProvider.condition", "spec.forProvider.delegatedManagedIdentityResourceId", "spec.initProvider.principalId", "spec.initProvider.scope", "spec.initProvider.roleDefinitionName")
	clusterKind       = registry.Upjet(Name, "containerservice", "KubernetesCluster", "v1beta2", "spec.forProvider.location", "spec.forProvider.defaultNodePool").
				WithImmutable("spec.forProvider.networkProfile.podCidr", "spec.forProvider.networkProfile.serviceCidr", "spec.forProvider.networkProfile.dnsServiceIp", "spec.forProvider.networkProfile.networkPlugin", "spec.forProvider.networkProfile.networkPluginMode").
				WithGuarded(registry.WhyNodeCounts, "spec.forProvider.defaultNodePool.minCount", "spec.forProvider.defaultNodePool.maxCount", "spec.forProvider.defaultNodePool.nodeCount")
	nodePoolKind = registry.Upjet(Name, "containerservice", "KubernetesClusterNodePool", "v1beta2").
			WithGuarded(registry.WhyNodeCounts, "spec.forProvider.minCount", "spec.forProvider.maxCount", "spec.forProvider.nodeCount", "spec.forProvider.autoScalingEnabled", "spec.initProvider.nodeCount")
	dnsZoneKind     = registry.Upjet(Name, "network", "DNSZone", "v1beta2")
	privateZoneKind = registry.Upjet(Name, "network", "PrivateDNSZone", "v1beta2")
	zoneLinkKind    = registry.Upjet(Name, "network", "PrivateDNSZoneVirtualNetworkLink", "v1beta1")
	budgetKind      = registry.Upjet(Name, "consumption", "BudgetResourceGroup", "v1beta2", "spec.forProvider.name", "spec.forProvider.amount")
)

// Composition-resource names: stable, documented API (import uses them).
const (
	rResourceGroup   = "resource-group"
	rNetwork         = "network"
	rSubnet          = "subnet"
	rNATIP           = "nat-public-ip"
	rNAT             = "nat"
	rNATSubnet       = "nat-subnet-association"
	rNATIPAssoc      = "nat-public-ip-association" //nolint:gosec // a composition-resource name, not a credential
	rIdentity        = "control-plane-identity"
	rRoleAssignment  = "network-role-assignment"
	rCluster         = registry.ClusterResource
	rPublicZone      = "public-dns-zone"
	rPrivateZone     = "private-dns-zone"
	rPrivateZoneLink = "private-dns-zone-link"
	rBudget          = "budget"
)

// settings are the environment's keys of this cloud, under data.azure,
// decoded once per call (settingsOf). Every key is optional.
type settings struct {
	// SystemPool is AKS's default node pool, which runs system pods.
	SystemPool struct {
		// MachineType wins over Size; without either mapped, the
		// environment's nodeDefaults.machineType applies.
		MachineType string `json:"machineType"`
		Size        string `json:"size"`
		MinNodes    *int64 `json:"minNodes"`
		MaxNodes    *int64 `json:"maxNodes"`
	} `json:"systemPool"`
	SKUTier string `json:"skuTier"`
	// NATPublicIPAssociation composes the NAT gateway's public IP
	// association, a kind ../shared/crds does not serve (see README).
	NATPublicIPAssociation bool   `json:"natPublicIpAssociation"`
	NetworkPolicy          string `json:"networkPolicy"`
}

// envSystemPool is the key of settings.SystemPool, for messages.
const envSystemPool = "systemPool"

// settingsOf returns this cloud's environment keys.
func settingsOf(env *envcfg.Env) *settings { return envcfg.Section[settings](env, Name) }

// Defaults of this cloud's environment keys.
const (
	defaultSKUTier       = "Standard"
	defaultSystemSize    = "small"
	defaultSystemMin     = 1
	defaultSystemMax     = 3
	defaultNetworkPolicy = "cilium"
	systemPoolName       = "system"
)
