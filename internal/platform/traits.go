package platform

// Traits are the facts about a cloud that the agnostic layer needs, such as
// how to make a Kubernetes Service load balancer internal. A cloud supplies
// them when it registers.
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
}
