// Package gcp is the GCP cloud layer: it implements every platform component
// with provider-upjet-gcp managed resources (GKE, VPC, Cloud NAT, Cloud DNS,
// IAM) and registers them under the cloud label "gcp".
package gcp

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "gcp"

// Cloud is the GCP cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	Traits: platform.Traits{
		PodRange: true,
		InternalLoadBalancerAnnotations: map[string]string{
			"networking.gke.io/load-balancer-type": "Internal",
		},
		PoolZones: poolZones,
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

// Kinds this cloud composes, at the versions provider-upjet-gcp v3 serves.
var (
	networkKind    = registry.Upjet(Name, "compute", "Network", "v1beta1")
	subnetworkKind = registry.Upjet(Name, "compute", "Subnetwork", "v1beta2", "spec.forProvider.region", "spec.forProvider.ipCidrRange").
			WithImmutable("spec.forProvider.ipCidrRange", "spec.forProvider.secondaryIpRange")
	routerKind    = registry.Upjet(Name, "compute", "Router", "v1beta2", "spec.forProvider.region")
	routerNATKind = registry.Upjet(Name, "compute", "RouterNAT", "v1beta2", "spec.forProvider.region", "spec.forProvider.sourceSubnetworkIpRangesToNat")
	saKind        = registry.Upjet(Name, "cloudplatform", "ServiceAccount", "v1beta1")
	iamMemberKind = registry.Upjet(Name, "cloudplatform", "ProjectIAMMember", "v1beta2", "spec.forProvider.member", "spec.forProvider.role").WithGuarded(registry.WhyIdentity, identityGrant...)
	clusterKind   = registry.Upjet(Name, "container", "Cluster", "v1beta2", "spec.forProvider.location").
			WithImmutable("spec.forProvider.networkingMode", "spec.forProvider.ipAllocationPolicy", "spec.forProvider.privateClusterConfig.masterIpv4CidrBlock")
	nodePoolKind = registry.Upjet(Name, "container", "NodePool", "v1beta2", "spec.forProvider.location").
			WithGuarded(registry.WhyNodeCounts, "spec.forProvider.autoscaling", "spec.forProvider.nodeCount")
	zoneKind = registry.Upjet(Name, "dns", "ManagedZone", "v1beta2", "spec.forProvider.dnsName").
			WithImmutable("spec.forProvider.dnsName", "spec.forProvider.visibility")
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
)

// settings are the environment's keys of this cloud, under data.gcp,
// decoded once per call (settingsOf). Every key is optional.
type settings struct {
	ReleaseChannel     string   `json:"releaseChannel"`
	ControlPlaneCIDR   string   `json:"controlPlaneCidr"`
	NodeRoles          []string `json:"nodeServiceAccountRoles"`
	DeletionProtection bool     `json:"deletionProtection"`
	// CredentialsSecret is the Secret holding the service account key
	// the in-cluster providers use.
	CredentialsSecret struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Key       string `json:"key"`
	} `json:"credentialsSecret"`
}

// envControlPlaneCIDR is the key of settings.ControlPlaneCIDR, for messages.
const envControlPlaneCIDR = "controlPlaneCidr"

// settingsOf returns this cloud's environment keys.
func settingsOf(env *envcfg.Env) *settings { return envcfg.Section[settings](env, Name) }

// Defaults of this cloud's environment keys.
const (
	defaultReleaseChannel   = "REGULAR"
	defaultControlPlaneCIDR = "172.16.0.0/28"
)

// defaultNodeRoles are the project roles of the node service account: the
// least-privilege node role and read access to Artifact Registry.
var defaultNodeRoles = []string{"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
