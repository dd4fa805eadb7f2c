// Package azure is the Azure cloud layer: it implements every platform
// component with provider-upjet-azure managed resources (resource group,
// VNet, NAT gateway, managed identity, AKS, DNS, consumption budgets) and
// registers them under the cloud label "azure".
package azure

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "azure"

// Cloud is the Azure cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	// Made public, the cluster moves to the load balancer's outbound in
	// place; the NAT gateway stays until it reports that it has.
	EgressInUse: egressInUse,
	Settings:    settings{},
	Kinds: append([]*registry.ResourceKind{
		resourceGroupKind, vnetKind, subnetKind, publicIPKind, natGatewayKind, natSubnetKind, natIPKind, identityKind, roleAssignKind,
		clusterKind, nodePoolKind, dnsZoneKind, privateZoneKind, zoneLinkKind, nsRecordKind, budgetKind,
		flexibleServerKind, flexibleServerDBKind, storageAccountKind, containerKind, federationKind,
		fdProfileKind, fdEndpointKind, fdOriginGroupKind, fdOriginKind, fdRouteKind, fdCustomDomainKind, fdAssociationKind, txtRecordKind, cnameRecordKind, aRecordKind,
	}, kube.Kinds...),
	Versions: registry.Versions{
		// kubernetesVersion may be an alias (1.33); AKS reports the patch
		// it runs. A pool reports the version it asked for.
		ControlPlane: registry.VersionField{Spec: "spec.forProvider.kubernetesVersion", Running: []string{"status.atProvider.currentKubernetesVersion"}},
		Pool:         registry.VersionField{Spec: "spec.forProvider.orchestratorVersion", Running: []string{"status.atProvider.orchestratorVersion"}},
		SystemPools: map[string]registry.VersionField{
			systemPoolName: {Spec: "spec.forProvider.defaultNodePool.orchestratorVersion", Running: []string{"status.atProvider.defaultNodePool.orchestratorVersion"}},
		},
		Charts: kube.Charts,
	},
}

func init() {
	cluster.CloudTraits.Register(Name, cluster.Traits{
		PodRange: true,
		InternalLoadBalancerAnnotations: map[string]string{
			"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
		},
		WorkloadIdentityPodLabels: map[string]string{"azure.workload.identity/use": "true"},
		FixedPools:                systemPool,
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
	registry.Check(Cloud, checkBudget)
	// The generated tables (zz_replacements.go), under the hand-written
	// ones.
	Cloud.Generated(generatedTables, conditions)
	registry.Register(Cloud)
}

// terraform is where this cloud's tables of replacement-only fields come
// from: the Terraform provider provider-upjet-azure v2.7.0 (the CRDs in
// ../shared/crds/azure) wraps, per its Makefile's TERRAFORM_PROVIDER_VERSION
// (built from upbound's fork of that release). Paths are of that module;
// upjet refuses any update whose Terraform diff requires a new resource,
// and azurerm fails an update of a field it changes only by cycling a node
// pool when no temporaryNameForRotation is set.
const terraform lifecycle.Source = "terraform-provider-azurerm v4.80.0 (provider-upjet-azure v2.7.0)"

// Where azurerm declares the AKS fields.
const (
	aksCluster  = "internal/services/containers/kubernetes_cluster_resource.go"
	aksNodePool = "internal/services/containers/kubernetes_nodepool.go"
	aksPool     = "internal/services/containers/kubernetes_cluster_node_pool_resource.go"
)

// inGroupReplaces are the table entries of every resource in a resource
// group: another group is another resource.
func inGroupReplaces(resource, where string) lifecycle.Field {
	return terraform.Refuse("resourceGroupNameSelector", resource+".resource_group_name", where)
}

// Kinds this cloud composes, at the versions provider-upjet-azure v2 serves,
// each with its table of replacement-only fields (location is every
// kind's).
var (
	resourceGroupKind = registry.Upjet(Name, "", "ResourceGroup", "v1beta1", "spec.forProvider.location").Replaces()
	vnetKind          = registry.Upjet(Name, "network", "VirtualNetwork", "v1beta2", "spec.forProvider.location").Replaces(
		inGroupReplaces("azurerm_virtual_network", "internal/services/network/virtual_network_resource.go:77"),
		// In place in Terraform, but the cluster's subnets and pods use
		// these addresses: a change is refused.
		terraform.Refuse("addressSpace", "azurerm_virtual_network.address_space (in place in Terraform; the subnets' and pods' addresses)", "internal/services/network/virtual_network_resource.go"))
	subnetKind = registry.Upjet(Name, "network", "Subnet", "v1beta2").Replaces(
		inGroupReplaces("azurerm_subnet", "internal/services/network/subnet_resource.go:145"),
		terraform.Refuse("virtualNetworkNameSelector", "azurerm_subnet.virtual_network_name", "internal/services/network/subnet_resource.go:147-150"),
		terraform.Refuse("addressPrefixes", "azurerm_subnet.address_prefixes (in place in Terraform; Azure refuses to change a subnet in use)", "internal/services/network/subnet_resource.go"))
	publicIPKind = registry.Upjet(Name, "network", "PublicIP", "v1beta1", "spec.forProvider.location", "spec.forProvider.allocationMethod").Replaces(
		inGroupReplaces("azurerm_public_ip", "internal/services/network/public_ip_resource.go:66"),
		terraform.Refuse("sku", "azurerm_public_ip.sku", "internal/services/network/public_ip_resource.go:108-111"),
		terraform.Refuse("zones", "azurerm_public_ip.zones", "internal/services/network/public_ip_resource.go:178"),
		terraform.Refuse("ipVersion", "azurerm_public_ip.ip_version", "internal/services/network/public_ip_resource.go:97-101"))
	natGatewayKind = registry.Upjet(Name, "network", "NATGateway", "v1beta1", "spec.forProvider.location").Replaces(
		inGroupReplaces("azurerm_nat_gateway", "internal/services/network/nat_gateway_resource.go:80"),
		terraform.Refuse("skuName", "azurerm_nat_gateway.sku_name", "internal/services/network/nat_gateway_resource.go:89-92"),
		terraform.Refuse("zones", "azurerm_nat_gateway.zones", "internal/services/network/nat_gateway_resource.go:97-100"))
	natSubnetKind = registry.Upjet(Name, "network", "SubnetNATGatewayAssociation", "v1beta1").Replaces(
		terraform.Refuse("subnetIdSelector", "azurerm_subnet_nat_gateway_association.subnet_id", "internal/services/network/subnet_nat_gateway_association_resource.go:42-45"),
		terraform.Refuse("natGatewayIdSelector", "azurerm_subnet_nat_gateway_association.nat_gateway_id", "internal/services/network/subnet_nat_gateway_association_resource.go:49-52"))
	natIPKind = registry.Upjet(Name, "network", "NATGatewayPublicIPAssociation", "v1beta1").Replaces(
		terraform.Refuse("natGatewayIdSelector", "azurerm_nat_gateway_public_ip_association.nat_gateway_id", "internal/services/network/nat_gateway_public_ip_association_resource.go:44-47"),
		terraform.Refuse("publicIpAddressIdSelector", "azurerm_nat_gateway_public_ip_association.public_ip_address_id", "internal/services/network/nat_gateway_public_ip_association_resource.go:51-54"))
	identityKind = registry.Upjet(Name, "managedidentity", "UserAssignedIdentity", "v1beta1", "spec.forProvider.location", "spec.forProvider.name").As(registry.ComputeIdentity).Replaces(
		inGroupReplaces("azurerm_user_assigned_identity", "internal/services/managedidentity/user_assigned_identity_resource.go:71"),
		terraform.Refuse("name", "azurerm_user_assigned_identity.name", "internal/services/managedidentity/user_assigned_identity_resource.go:66-67"))
	// A role assignment has no update at all.
	roleAssignKind = registry.Upjet(Name, "authorization", "RoleAssignment", "v1beta1", "spec.forProvider.principalId", "spec.forProvider.scope").As(registry.ComputeIdentity).WithGuarded(registry.WhyIdentity, "spec.forProvider.principalId", "spec.forProvider.scope", "spec.forProvider.roleDefinitionName", "spec.forProvider.roleDefinitionId", "spec.forProvider.roleDefinitionIdSelector", "spec.forProvider.roleDefinitionIdRef", "spec.forProvider.condition", "spec.forProvider.delegatedManagedIdentityResourceId", "spec.initProvider.principalId", "spec.initProvider.scope", "spec.initProvider.roleDefinitionName").Replaces(
		terraform.Refuse("scope", "azurerm_role_assignment.scope", "internal/services/authorization/role_assignment_resource.go:62-65"),
		terraform.Refuse("principalId", "azurerm_role_assignment.principal_id", "internal/services/authorization/role_assignment_resource.go:101-104"),
		terraform.Refuse("principalType", "azurerm_role_assignment.principal_type", "internal/services/authorization/role_assignment_resource.go:107-111"),
		terraform.Refuse("roleDefinitionName", "azurerm_role_assignment.role_definition_name", "internal/services/authorization/role_assignment_resource.go:91-95"),
		terraform.Refuse("roleDefinitionId", "azurerm_role_assignment.role_definition_id", "internal/services/authorization/role_assignment_resource.go:82-86"),
		terraform.Refuse("description", "azurerm_role_assignment.description", "internal/services/authorization/role_assignment_resource.go:132-135"),
		terraform.Refuse("condition", "azurerm_role_assignment.condition", "internal/services/authorization/role_assignment_resource.go:139-142"))
	clusterKind = registry.Upjet(Name, "containerservice", "KubernetesCluster", "v1beta2", "spec.forProvider.location", "spec.forProvider.defaultNodePool").As(registry.Compute, registry.Credentials).
			WithGuarded(registry.WhyNodeCounts, "spec.forProvider.defaultNodePool.minCount", "spec.forProvider.defaultNodePool.maxCount", "spec.forProvider.defaultNodePool.nodeCount").Replaces(
		terraform.Walk("kubernetesVersion", "azurerm_kubernetes_cluster.kubernetes_version (the control plane only; no skipped minor)", aksCluster+":727-732, 2678-2697"),
		terraform.Walk("defaultNodePool.orchestratorVersion", "azurerm_kubernetes_cluster.default_node_pool.orchestrator_version (never above the control plane)", aksNodePool),
		inGroupReplaces("azurerm_kubernetes_cluster", aksCluster+":217"),
		terraform.Refuse("dnsPrefix", "azurerm_kubernetes_cluster.dns_prefix", aksCluster+":466-469"),
		terraform.Refuse("privateClusterEnabled", "azurerm_kubernetes_cluster.private_cluster_enabled", aksCluster+":1434-1437"),
		terraform.Refuse("roleBasedAccessControlEnabled", "azurerm_kubernetes_cluster.role_based_access_control_enabled", aksCluster+":1461-1465"),
		terraform.Refuse("oidcIssuerEnabled", "azurerm_kubernetes_cluster.oidc_issuer_enabled (true to false)", aksCluster+":71-74"),
		terraform.Refuse("networkProfile.networkPlugin", "azurerm_kubernetes_cluster.network_profile.network_plugin", aksCluster+":116-133"),
		terraform.Refuse("networkProfile.networkPluginMode", "azurerm_kubernetes_cluster.network_profile.network_plugin_mode", aksCluster+":140-142"),
		terraform.Refuse("networkProfile.networkPolicy", "azurerm_kubernetes_cluster.network_profile.network_policy (but to cilium)", aksCluster+":143-161"),
		terraform.Refuse("networkProfile.networkDataPlane", "azurerm_kubernetes_cluster.network_profile.network_data_plane (but azure to cilium)", aksCluster+":103-115"),
		terraform.Refuse("networkProfile.podCidr", "azurerm_kubernetes_cluster.network_profile.pod_cidr", aksCluster+":162-164"),
		terraform.Refuse("networkProfile.serviceCidr", "azurerm_kubernetes_cluster.network_profile.service_cidr", aksCluster+":1192-1196"),
		terraform.Refuse("networkProfile.dnsServiceIp", "azurerm_kubernetes_cluster.network_profile.dns_service_ip", aksCluster+":1149-1153"),
		terraform.Refuse("networkProfile.loadBalancerSku", "azurerm_kubernetes_cluster.network_profile.load_balancer_sku", aksCluster+":1211-1215"),
		// The system pool cannot be renamed without replacing the
		// cluster; its other fields azurerm changes by cycling it through
		// temporaryNameForRotation, which does not drain it.
		terraform.Refuse("defaultNodePool.name", "azurerm_kubernetes_cluster.default_node_pool.name (replaces the cluster)", aksCluster+":91-102"),
		terraform.Cycle("defaultNodePool.vmSize", "azurerm_kubernetes_cluster.default_node_pool.vm_size", aksNodePool+":66-72"),
		terraform.Cycle("defaultNodePool.osDiskSizeGb", "azurerm_kubernetes_cluster.default_node_pool.os_disk_size_gb", aksNodePool+":168-173"),
		terraform.Cycle("defaultNodePool.osDiskType", "azurerm_kubernetes_cluster.default_node_pool.os_disk_type", aksNodePool+":175-183"),
		terraform.Cycle("defaultNodePool.osSku", "azurerm_kubernetes_cluster.default_node_pool.os_sku", aksNodePool+":185-198"),
		terraform.Cycle("defaultNodePool.zones", "azurerm_kubernetes_cluster.default_node_pool.zones", aksNodePool+":268"),
		terraform.Cycle("defaultNodePool.vnetSubnetIdSelector", "azurerm_kubernetes_cluster.default_node_pool.vnet_subnet_id", aksNodePool+":206-210"),
		terraform.Cycle("defaultNodePool.maxPods", "azurerm_kubernetes_cluster.default_node_pool.max_pods", aksNodePool+":127-131"),
		terraform.Cycle("defaultNodePool.onlyCriticalAddonsEnabled", "azurerm_kubernetes_cluster.default_node_pool.only_critical_addons_enabled", aksNodePool+":228-231"),
		terraform.Cycle("defaultNodePool.kubeletConfig", "azurerm_kubernetes_cluster.default_node_pool.kubelet_config", aksNodePool+":81"),
		terraform.Cycle("defaultNodePool.linuxOsConfig", "azurerm_kubernetes_cluster.default_node_pool.linux_os_config", aksNodePool+":83"),
		terraform.Cycle("defaultNodePool.fipsEnabled", "azurerm_kubernetes_cluster.default_node_pool.fips_enabled", aksNodePool+":85-88"),
		terraform.Cycle("defaultNodePool.hostEncryptionEnabled", "azurerm_kubernetes_cluster.default_node_pool.host_encryption_enabled", aksNodePool+":280-283"))
	// A user pool is rotated blue/green under a new name, rather than
	// cycled through temporaryNameForRotation (which does not cordon and
	// drain, azurerm's docs say), so that AKS drains the old pool as it
	// deletes it.
	nodePoolKind = registry.Upjet(Name, "containerservice", "KubernetesClusterNodePool", "v1beta2").As(registry.Compute).
			WithGuarded(registry.WhyNodeCounts, "spec.forProvider.minCount", "spec.forProvider.maxCount", "spec.forProvider.nodeCount", "spec.forProvider.autoScalingEnabled", "spec.initProvider.nodeCount").Replaces(
		terraform.Walk("orchestratorVersion", "azurerm_kubernetes_cluster_node_pool.orchestrator_version (never above the control plane)", aksPool+":325"),
		terraform.Refuse("kubernetesClusterIdSelector", "azurerm_kubernetes_cluster_node_pool.kubernetes_cluster_id", aksPool+":175-178"),
		terraform.Rotate("vmSize", "azurerm_kubernetes_cluster_node_pool.vm_size (cycles only with temporary_name_for_rotation)", aksPool+":191-197, 1008-1095"),
		terraform.Rotate("osDiskSizeGb", "azurerm_kubernetes_cluster_node_pool.os_disk_size_gb (cycles only)", aksPool+":332-337"),
		terraform.Rotate("osDiskType", "azurerm_kubernetes_cluster_node_pool.os_disk_type (cycles only)", aksPool+":339-347"),
		terraform.Rotate("osSku", "azurerm_kubernetes_cluster_node_pool.os_sku", aksPool+":70-83, 1029-1040"),
		terraform.Rotate("osType", "azurerm_kubernetes_cluster_node_pool.os_type", aksPool+":364-367"),
		terraform.Rotate("zones", "azurerm_kubernetes_cluster_node_pool.zones (cycles only)", aksPool+":470"),
		terraform.Rotate("vnetSubnetIdSelector", "azurerm_kubernetes_cluster_node_pool.vnet_subnet_id (cycles only)", aksPool+":435-439"),
		terraform.Rotate("podSubnetId", "azurerm_kubernetes_cluster_node_pool.pod_subnet_id (cycles only)", aksPool+":375-379"),
		terraform.Rotate("maxPods", "azurerm_kubernetes_cluster_node_pool.max_pods (cycles only)", aksPool+":269-273"),
		// A pool rendered without priority asks for Regular (azurerm's
		// default): a Spot pool made regular rotates, rather than keeping
		// Spot with upgrade settings AKS refuses on Spot pools
		// (its CustomizeDiff, kubernetes_cluster_node_pool_resource.go:92-116).
		terraform.Rotate("priority", "azurerm_kubernetes_cluster_node_pool.priority (default Regular)", aksPool+":381-389").Defaults("Regular"),
		terraform.Rotate("evictionPolicy", "azurerm_kubernetes_cluster_node_pool.eviction_policy", aksPool+":214-217"),
		terraform.Rotate("spotMaxPrice", "azurerm_kubernetes_cluster_node_pool.spot_max_price", aksPool+":405-408"),
		terraform.Rotate("kubeletConfig", "azurerm_kubernetes_cluster_node_pool.kubelet_config (cycles only)", aksPool+":224"),
		terraform.Rotate("linuxOsConfig", "azurerm_kubernetes_cluster_node_pool.linux_os_config (cycles only)", aksPool+":226"),
		terraform.Rotate("fipsEnabled", "azurerm_kubernetes_cluster_node_pool.fips_enabled (cycles only)", aksPool+":228-231"),
		terraform.Rotate("hostEncryptionEnabled", "azurerm_kubernetes_cluster_node_pool.host_encryption_enabled (cycles only)", aksPool+":482-485"),
		terraform.Rotate("ultraSsdEnabled", "azurerm_kubernetes_cluster_node_pool.ultra_ssd_enabled (cycles only)", aksPool+":429-433"),
		terraform.Rotate("gpuInstance", "azurerm_kubernetes_cluster_node_pool.gpu_instance", aksPool+":233-236")).
		WithNodeCount("status.atProvider.nodeCount")
	dnsZoneKind = registry.Upjet(Name, "network", "DNSZone", "v1beta2").Replaces(
		inGroupReplaces("azurerm_dns_zone", "internal/services/dns/dns_zone_resource.go:63"))
	privateZoneKind = registry.Upjet(Name, "network", "PrivateDNSZone", "v1beta2").Replaces(
		inGroupReplaces("azurerm_private_dns_zone", "internal/services/privatedns/private_dns_zone_resource.go:61"))
	zoneLinkKind = registry.Upjet(Name, "network", "PrivateDNSZoneVirtualNetworkLink", "v1beta1").Replaces(
		inGroupReplaces("azurerm_private_dns_zone_virtual_network_link", "internal/services/privatedns/private_dns_zone_virtual_network_link_resource.go:68"),
		terraform.Refuse("privateDnsZoneNameSelector", "azurerm_private_dns_zone_virtual_network_link.private_dns_zone_name", "internal/services/privatedns/private_dns_zone_virtual_network_link_resource.go:60-63"),
		terraform.Refuse("virtualNetworkIdSelector", "azurerm_private_dns_zone_virtual_network_link.virtual_network_id", "internal/services/privatedns/private_dns_zone_virtual_network_link_resource.go:70-73"))
	budgetKind = registry.Upjet(Name, "consumption", "BudgetResourceGroup", "v1beta2", "spec.forProvider.name", "spec.forProvider.amount").Replaces(
		terraform.Refuse("name", "azurerm_consumption_budget_resource_group.name", "internal/services/consumption/consumption_budget_resource_group_resource.go:43-46"),
		terraform.Refuse("resourceGroupIdSelector", "azurerm_consumption_budget_resource_group.resource_group_id", "internal/services/consumption/consumption_budget_resource_group_resource.go:49-52"),
		terraform.Refuse("timeGrain", "azurerm_consumption_budget_resource_group.time_grain", "internal/services/consumption/consumption_budget_base.go:235-239"))
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
		// Size is its size class. Default small.
		Size string `json:"size"`
		// MinNodes is its minimum node count. Default 1.
		MinNodes *int64 `json:"minNodes"`
		// MaxNodes is its maximum node count. Default 3.
		MaxNodes *int64 `json:"maxNodes"`
	} `json:"systemPool"`
	// SKUTier is AKS's SKU tier. Default Standard.
	SKUTier string `json:"skuTier"`
	// NATPublicIPAssociation composes the NAT gateway's public IP
	// association, a kind ../shared/crds does not serve (see README).
	NATPublicIPAssociation bool `json:"natPublicIpAssociation"`
	// NetworkPolicy is the network policy engine. Default cilium (Azure
	// CNI overlay with the Cilium data plane).
	NetworkPolicy string `json:"networkPolicy"`
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
