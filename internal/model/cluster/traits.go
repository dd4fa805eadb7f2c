package cluster

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
)

// Traits are the facts about a cloud that the Cluster's model needs, such
// as how to make a Kubernetes Service load balancer internal. Each cloud
// registers its own (CloudTraits.Register) from init.
type Traits struct {
	// InternalLoadBalancerAnnotations make a Service of type LoadBalancer
	// internal to the cluster's network on this cloud.
	InternalLoadBalancerAnnotations map[string]string
	// PodRange says whether pods take addresses from a range of their own
	// (network.podsCidr), which must then not overlap the others.
	PodRange bool
	// WorkloadIdentityPodLabels are the labels a pod needs to run as its
	// ServiceAccount's cloud identity (Azure's workload identity webhook
	// acts only on labelled pods).
	WorkloadIdentityPodLabels map[string]string
	// PoolZones, when set, is how many zones a node pool of a cluster in
	// location spans when the pool's bounds count nodes per zone (a
	// regional GKE cluster's); unset, bounds count nodes in all.
	PoolZones func(location string) int64
	// FixedPools, when set, are the nodes the cloud composes with the
	// cluster itself rather than as a pool of the plan (AKS's system
	// pool): the estimate counts them.
	FixedPools func(env *envcfg.Env) []NodePool
	// PrivateServices says whether the cloud's managed databases reach a
	// cluster's network through private services access that the Cluster
	// composes (GCP: Cloud SQL peers with the network): the cloud
	// implements KindPrivateServices, and a Cluster may ask for it
	// (spec.parameters.network.privateServices).
	PrivateServices bool
}

// CloudTraits are the clouds' Traits, by cloud label.
var CloudTraits = component.ByCloud[Traits]{}
