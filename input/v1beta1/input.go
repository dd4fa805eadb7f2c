// Package v1beta1 contains the input type of function-cluster-platform.
// +kubebuilder:object:generate=true
// +groupName=platform.fn.example.org
// +versionName=v1beta1
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Modules of the function.
const (
	// ModuleCluster renders a complete cluster platform from a Cluster XR.
	ModuleCluster = "cluster"
	// ModuleBudget renders the budget guardrail of plain workloads.
	ModuleBudget = "budget"
	// ModuleDatabase renders a private managed PostgreSQL server from a
	// Database XR.
	ModuleDatabase = "database"
	// ModuleEnvironment renders an application's environment on a
	// Cluster from an AppEnvironment XR.
	ModuleEnvironment = "environment"
)

// Input configures a pipeline step of function-cluster-platform.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Module selects what the step renders: cluster (a cluster platform
	// from a Cluster XR), database (a private managed database from a
	// Database XR), environment (an application's environment on a Cluster
	// from an AppEnvironment XR) or budget (a spend guardrail for
	// Deployments).
	// +kubebuilder:validation:Enum=cluster;database;environment;budget
	// +kubebuilder:default=cluster
	// +optional
	Module string `json:"module,omitempty"`

	// TTL overrides how long Crossplane may cache the step's response.
	// +optional
	TTL *TTL `json:"ttl,omitempty"`

	// Release names the platform release this step belongs to: the value
	// of the label platform.example.org/release on the Composition that
	// holds it. The function writes it to the XR's status.platformRelease
	// and its PlatformRelease condition, which the fleet controller reads
	// to move XRs from release to release in waves.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	// +optional
	Release string `json:"release,omitempty"`
}

// TTL is how long Crossplane may wait before calling the function again.
type TTL struct {
	// Converging is the TTL while the XR waits for what Crossplane does not
	// watch for it: another XR (the Cluster it runs on, or a value one of
	// its resources reports), or a WorkloadBudget's spend. Short, so that
	// progress shows quickly. Defaults to the function's --ttl-converging
	// flag.
	// +optional
	Converging *metav1.Duration `json:"converging,omitempty"`

	// Ready is the TTL otherwise: once everything is ready, and while the
	// XR waits only for its own composed resources, whose changes re-run
	// it. Longer, so that an XR costs little. Defaults to the function's
	// --ttl-ready flag.
	// +optional
	Ready *metav1.Duration `json:"ready,omitempty"`
}
