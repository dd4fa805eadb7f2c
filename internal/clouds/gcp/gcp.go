// Package gcp is the GCP cloud layer: it implements every platform component
// with provider-upjet-gcp managed resources (GKE, VPC, Cloud NAT, Cloud DNS,
// IAM) and registers them under the cloud label "gcp".
package gcp

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "gcp"

// Cloud is the GCP cloud layer.
var Cloud = &registry.Cloud{
	Name:     Name,
	Settings: settings{},
	Kinds: append([]*registry.ResourceKind{
		networkKind, subnetworkKind, routerKind, routerNATKind, saKind, iamMemberKind, clusterKind, nodePoolKind,
		zoneKind, zoneIAMMemberKind, recordSetKind,
		globalAddressKind, serviceConnectionKind, sqlInstanceKind, sqlDatabaseKind, sqlUserKind,
		bucketKind, bucketIAMMemberKind, saIAMMemberKind,
		backendBucketKind, backendServiceKind, endpointGroupKind, endpointKind, urlMapKind, managedCertificateKind, httpsProxyKind, httpProxyKind, forwardingRuleKind,
	}, kube.Kinds...),
	Versions: registry.Versions{
		// minMasterVersion is a floor; the master reports what it runs.
		ControlPlane: registry.VersionField{Spec: "spec.forProvider.minMasterVersion", Running: []string{"status.atProvider.masterVersion"}},
		Pool:         registry.VersionField{Spec: "spec.forProvider.version", Running: []string{"status.atProvider.version"}},
		ExactPools:   true,
		AutoUpgrade:  onReleaseChannel,
		Charts:       kube.Charts,
	},
	// A cluster made public keeps its private nodes (privateClusterConfig),
	// and with them its Cloud NAT.
	EgressInUse: egressInUse,
}

func init() {
	cluster.CloudTraits.Register(Name, cluster.Traits{
		PodRange: true,
		InternalLoadBalancerAnnotations: map[string]string{
			"networking.gke.io/load-balancer-type": "Internal",
		},
		PoolZones: poolZones,
		// Cloud SQL reaches a Cluster's network through private services
		// access, which the Cluster composes (privateServices).
		PrivateServices: true,
	})
	registry.Implement(Cloud, network)
	registry.Implement(Cloud, egress)
	registry.Implement(Cloud, privateServices)
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
// from: the Terraform provider provider-upjet-gcp v3.0.0 (the CRDs in
// ../shared/crds/gcp) wraps, per its Makefile's TERRAFORM_PROVIDER_VERSION
// and go.mod. Paths are of that module; upjet refuses any update whose
// Terraform diff requires a new resource.
const terraform lifecycle.Source = "terraform-provider-google v7.39.0 (provider-upjet-gcp v3.0.0)"

// Kinds this cloud composes, at the versions provider-upjet-gcp v3 serves,
// each with its table of replacement-only fields.
var (
	networkKind = registry.Upjet(Name, "compute", "Network", "v1beta1").Replaces(
		terraform.Refuse("project", "google_compute_network.project", "google/services/compute/resource_compute_network.go:301-305"),
		terraform.Refuse("autoCreateSubnetworks", "google_compute_network.auto_create_subnetworks", "google/services/compute/resource_compute_network.go:153-156"),
		terraform.Refuse("description", "google_compute_network.description", "google/services/compute/resource_compute_network.go:165-168"))
	subnetworkKind = registry.Upjet(Name, "compute", "Subnetwork", "v1beta2", "spec.forProvider.region", "spec.forProvider.ipCidrRange").Replaces(
		terraform.Refuse("project", "google_compute_subnetwork.project", "google/services/compute/resource_compute_subnetwork.go:756-760"),
		terraform.Refuse("networkSelector", "google_compute_subnetwork.network", "google/services/compute/resource_compute_subnetwork.go:430-433"),
		terraform.Refuse("ipCidrRange", "google_compute_subnetwork.ip_cidr_range (ForceNew unless the new range contains the old)", "google/services/compute/resource_compute_subnetwork.go"),
		// In place in Terraform, but GKE allocates pods and services from
		// these ranges (ipAllocationPolicy names them): refused as well.
		terraform.Refuse("secondaryIpRange", "google_compute_subnetwork.secondary_ip_range (in place in Terraform; GKE's pod and service ranges)", "google/services/compute/resource_compute_subnetwork.go"))
	routerKind = registry.Upjet(Name, "compute", "Router", "v1beta2", "spec.forProvider.region").Replaces(
		terraform.Refuse("project", "google_compute_router.project", "google/services/compute/resource_compute_router.go:324-328"),
		terraform.Refuse("networkSelector", "google_compute_router.network", "google/services/compute/resource_compute_router.go:284-287"))
	routerNATKind = registry.Upjet(Name, "compute", "RouterNAT", "v1beta2", "spec.forProvider.region", "spec.forProvider.sourceSubnetworkIpRangesToNat").Replaces(
		terraform.Refuse("project", "google_compute_router_nat.project", "google/services/compute/resource_compute_router_nat.go:542-546"),
		terraform.Refuse("routerSelector", "google_compute_router_nat.router", "google/services/compute/resource_compute_router_nat.go:312-315"))
	saKind = registry.Upjet(Name, "cloudplatform", "ServiceAccount", "v1beta1").As(registry.ComputeIdentity).Replaces(
		terraform.Refuse("project", "google_service_account.project", "google/services/resourcemanager/resource_google_service_account.go:114-118"))
	iamMemberKind = registry.Upjet(Name, "cloudplatform", "ProjectIAMMember", "v1beta2", "spec.forProvider.member", "spec.forProvider.role").WithGuarded(registry.WhyIdentity, identityGrant...).Replaces(
		terraform.Refuse("project", "google_project_iam_member.project", "google/services/resourcemanager/iam_project.go:35-38"),
		terraform.Refuse("member", "google_project_iam_member.member", "google/tpgiamresource/resource_iam_member.go:69-72"),
		terraform.Refuse("role", "google_project_iam_member.role", "google/tpgiamresource/resource_iam_member.go:64-67"))
	clusterKind = registry.Upjet(Name, "container", "Cluster", "v1beta2", "spec.forProvider.location").As(registry.Compute, registry.Credentials).Replaces(
		terraform.Walk("minMasterVersion", "google_container_cluster.min_master_version (a floor: only an upgrade above the running master is sent)", "google/services/container/resource_container_cluster.go:1522-1526, 4512-4541"),
		terraform.Refuse("project", "google_container_cluster.project", "google/services/container/resource_container_cluster.go:1726-1730"),
		terraform.Refuse("networkSelector", "google_container_cluster.network", "google/services/container/resource_container_cluster.go:1536-1540"),
		terraform.Refuse("subnetworkSelector", "google_container_cluster.subnetwork", "google/services/container/resource_container_cluster.go:1734-1738"),
		terraform.Refuse("networkingMode", "google_container_cluster.networking_mode", "google/services/container/resource_container_cluster.go:1920-1924"),
		terraform.Refuse("initialNodeCount", "google_container_cluster.initial_node_count", "google/services/container/resource_container_cluster.go:1113-1116"),
		terraform.Refuse("ipAllocationPolicy", "google_container_cluster.ip_allocation_policy (range names)", "google/services/container/resource_container_cluster.go:1767-1812"),
		terraform.Refuse("privateClusterConfig.masterIpv4CidrBlock", "google_container_cluster.private_cluster_config.master_ipv4_cidr_block", "google/services/container/resource_container_cluster.go:2030-2034"),
		terraform.Refuse("nodeConfig", "google_container_cluster.node_config (the default pool's; rendered in initProvider only, so that its diff is dropped once the default pool is gone)", "google/services/container/node_config.go:279-284"))
	nodePoolKind = registry.Upjet(Name, "container", "NodePool", "v1beta2", "spec.forProvider.location").As(registry.Compute).
			WithGuarded(registry.WhyNodeCounts, "spec.forProvider.autoscaling", "spec.forProvider.nodeCount").Replaces(
		terraform.Walk("version", "google_container_node_pool.version (never above the master, never down)", "google/services/container/resource_container_node_pool.go"),
		terraform.Refuse("project", "google_container_node_pool.project", "google/services/container/resource_container_node_pool.go:226-230"),
		terraform.Refuse("clusterSelector", "google_container_node_pool.cluster", "google/services/container/resource_container_node_pool.go:233-236"),
		// machine_type, disk_size_gb, disk_type, labels and taints change
		// in place (GKE re-creates the nodes, surging): node_config.go:
		// 536-541, 291-304, update 3823-3896.
		terraform.Rotate("nodeConfig.spot", "google_container_node_pool.node_config.spot", "google/services/container/node_config.go:616-619"),
		terraform.Rotate("nodeConfig.serviceAccountSelector", "google_container_node_pool.node_config.service_account", "google/services/container/node_config.go:624-628"),
		terraform.Rotate("nodeConfig.oauthScopes", "google_container_node_pool.node_config.oauth_scopes", "google/services/container/node_config.go:560-564"),
		terraform.Rotate("nodeConfig.shieldedInstanceConfig", "google_container_node_pool.node_config.shielded_instance_config", "google/services/container/node_config.go:646-665"),
		terraform.Rotate("nodeConfig.preemptible", "google_container_node_pool.node_config.preemptible", "google/services/container/node_config.go"),
		terraform.Rotate("nodeConfig.guestAccelerator", "google_container_node_pool.node_config.guest_accelerator", "google/services/container/node_config.go"),
		terraform.Rotate("nodeConfig.minCpuPlatform", "google_container_node_pool.node_config.min_cpu_platform", "google/services/container/node_config.go"),
		terraform.Rotate("nodeConfig.metadata", "google_container_node_pool.node_config.metadata", "google/services/container/node_config.go"),
		terraform.Rotate("maxPodsPerNode", "google_container_node_pool.max_pods_per_node", "google/services/container/resource_container_node_pool.go:397-400"),
		terraform.Rotate("networkConfig", "google_container_node_pool.network_config", "google/services/container/resource_container_node_pool.go:538-660")).
		WithNodeCount("status.atProvider.nodeCount")
	zoneKind = registry.Upjet(Name, "dns", "ManagedZone", "v1beta2", "spec.forProvider.dnsName").WithGuarded(registry.WhyHost, "spec.forProvider.dnsName", "spec.initProvider.dnsName").Replaces(
		terraform.Refuse("project", "google_dns_managed_zone.project", "google/services/dns/resource_dns_managed_zone.go:424-428"),
		terraform.Refuse("dnsName", "google_dns_managed_zone.dns_name", "google/services/dns/resource_dns_managed_zone.go:145-148"),
		terraform.Refuse("visibility", "google_dns_managed_zone.visibility", "google/services/dns/resource_dns_managed_zone.go:375-378"))
)

// Composition-resource names: stable, documented API (import uses them).
const (
	rNetwork        = "network"
	rSubnet         = "subnet"
	rRouter         = "router"
	rNAT            = "nat"
	rServiceAccount = "node-service-account"
	rIAMPrefix      = "node-iam-"
	rCluster        = registry.ClusterResource
	rPublicZone     = "public-dns-zone"
	rPrivateZone    = "private-dns-zone"
	// Private services access: other names than a Database's own
	// (rPSARange, rPSAConnect), so that a Database's selector of the
	// Cluster's connection never finds one of a Database's, which carry
	// the same labels when the two XRs share a name.
	rPrivateServicesRange      = "private-services-range"
	rPrivateServicesConnection = "private-services-connection"
)

// settings are the environment's keys of this cloud, under data.gcp,
// decoded once per call (settingsOf). Every key is optional.
type settings struct {
	// ReleaseChannel is GKE's release channel, on which GKE upgrades the
	// pools itself; UNSPECIFIED pins versions, and the function walks the
	// pools too. Default REGULAR.
	ReleaseChannel string `json:"releaseChannel"`
	// ControlPlaneCIDR is the control plane's range of a private cluster,
	// checked against the other ranges. Default 172.16.0.0/28.
	ControlPlaneCIDR string `json:"controlPlaneCidr"`
	// NodeRoles are the project roles of the node service account.
	// Default roles/container.defaultNodeServiceAccount and
	// roles/artifactregistry.reader.
	NodeRoles []string `json:"nodeServiceAccountRoles"`
	// DeletionProtection is GKE's deletion protection of the cluster.
	// Default false.
	DeletionProtection bool `json:"deletionProtection"`
	// CredentialsSecret is the Secret holding the service account key
	// the in-cluster providers use.
	CredentialsSecret struct {
		// Name is the Secret's name. Default gcp-creds.
		Name string `json:"name"`
		// Namespace is its namespace. Default: where the XR's connection
		// secrets go (a namespaced XR's own namespace, else
		// connectionSecretNamespace).
		Namespace string `json:"namespace"`
		// Key is the key of the service account key in it. Default
		// credentials.
		Key string `json:"key"`
	} `json:"credentialsSecret"`
}

// envControlPlaneCIDR is the key of settings.ControlPlaneCIDR, for messages.
const envControlPlaneCIDR = "controlPlaneCidr"

// settingsOf returns this cloud's environment keys.
func settingsOf(env *envcfg.Env) *settings { return envcfg.Section[settings](env, Name) }

// Defaults of this cloud's environment keys.
const (
	defaultReleaseChannel = "REGULAR"
	// unspecifiedChannel is no release channel: versions are pinned.
	unspecifiedChannel      = "UNSPECIFIED"
	defaultControlPlaneCIDR = "172.16.0.0/28"
)

// defaultNodeRoles are the project roles of the node service account: the
// least-privilege node role and read access to Artifact Registry.
var defaultNodeRoles = []string{"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
