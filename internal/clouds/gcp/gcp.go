// Package gcp is the GCP cloud layer: it implements every platform component
// with provider-upjet-gcp managed resources (GKE, VPC, Cloud NAT, Cloud DNS,
// IAM) and registers them under the cloud label "gcp".
package gcp

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Name is the cloud label.
const Name = "gcp"

// Cloud is the GCP cloud layer.
var Cloud = &registry.Cloud{
	Name: Name,
	Traits: platform.Traits{
		InternalLoadBalancerAnnotations: map[string]string{
			"networking.gke.io/load-balancer-type": "Internal",
		},
	},
	Validate: validate,
}

func init() {
	registry.Implement(Cloud, network)
	registry.Implement(Cloud, egress)
	registry.Implement(Cloud, identity)
	registry.Implement(Cloud, cluster)
	registry.Implement(Cloud, nodePool)
	registry.Implement(Cloud, dnsZone)
	registry.Implement(Cloud, access)
	registry.Implement(Cloud, kube.Release)
	registry.Implement(Cloud, budget)
	registry.Register(Cloud)
}

// kind declares a provider-upjet-gcp kind: group "compute" becomes
// compute.gcp.m.upbound.io/v1beta1 for namespaced XRs and
// compute.gcp.upbound.io/<legacy> for cluster-scoped ones.
func kind(group, k, legacy string, required ...string) *registry.Kind {
	return &registry.Kind{
		Kind:       k,
		Namespaced: group + ".gcp.m.upbound.io/v1beta1",
		Cluster:    group + ".gcp.upbound.io/" + legacy,
		Provider:   Name,
		Required:   required,
	}
}

// Kinds this cloud composes, at the versions provider-upjet-gcp v3 serves.
var (
	networkKind    = kind("compute", "Network", "v1beta1")
	subnetworkKind = kind("compute", "Subnetwork", "v1beta2", "spec.forProvider.region", "spec.forProvider.ipCidrRange")
	routerKind     = kind("compute", "Router", "v1beta2", "spec.forProvider.region")
	routerNATKind  = kind("compute", "RouterNAT", "v1beta2", "spec.forProvider.region", "spec.forProvider.sourceSubnetworkIpRangesToNat")
	saKind         = kind("cloudplatform", "ServiceAccount", "v1beta1")
	iamMemberKind  = kind("cloudplatform", "ProjectIAMMember", "v1beta2", "spec.forProvider.member", "spec.forProvider.role")
	clusterKind    = kind("container", "Cluster", "v1beta2", "spec.forProvider.location")
	nodePoolKind   = kind("container", "NodePool", "v1beta2", "spec.forProvider.location")
	zoneKind       = kind("dns", "ManagedZone", "v1beta2", "spec.forProvider.dnsName")
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
	rPoolPrefix     = "nodepool-"
	rPublicZone     = "public-dns-zone"
	rPrivateZone    = "private-dns-zone"
)

// Environment keys of this cloud, under data.gcp.
const (
	envReleaseChannel   = "releaseChannel"
	envControlPlaneCIDR = "controlPlaneCidr"
	envNodeRoles        = "nodeServiceAccountRoles"
	envDeletionProtect  = "deletionProtection"
	envCredentials      = "credentialsSecret"
)

// Defaults of this cloud's environment keys.
const (
	defaultReleaseChannel   = "REGULAR"
	defaultControlPlaneCIDR = "172.16.0.0/28"
)

// defaultNodeRoles are the project roles of the node service account: the
// least-privilege node role and read access to Artifact Registry.
var defaultNodeRoles = []string{"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
