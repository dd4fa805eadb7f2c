package registry

import (
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// Versions are how a cloud's resources ask for Kubernetes versions and
// report the ones they run, for the lifecycle's decisions (package
// lifecycle).
type Versions struct {
	// ControlPlane is the version field of the cluster resource
	// (ClusterResource).
	ControlPlane VersionField
	// Pool is the version field of the node pool resources.
	Pool VersionField
	// SystemPools are the version fields, on the cluster resource, of the
	// pools it composes itself (AKS's system pool), by pool name.
	SystemPools map[string]VersionField
	// ExactPools is set where a pool must be asked for the exact version
	// the control plane runs rather than its minor (GKE: the Terraform
	// provider sees a change forever in a fuzzy node version).
	ExactPools bool
	// AutoUpgrade reports whether, in the environment, the cloud upgrades
	// the control plane and the pools itself (GKE on a release channel);
	// nil means never.
	AutoUpgrade func(env *envcfg.Env) bool
	// Charts are where the add-on charts' releases ask for their
	// versions, for the rollout to hold them.
	Charts ChartVersions
}

// ChartVersions are where the release of an add-on chart asks for its
// chart's version.
type ChartVersions struct {
	// Resource is the composition-resource name of a chart's release.
	Resource func(chart string) string
	// Field is the release's version field.
	Field VersionField
}

// Observed returns what the observed release of chart asks for, and what
// it runs: what it asks for while it is Ready and its provider reconciles
// it, else "". Both are "" when the release is not observed, or the cloud
// names no release resource.
func (v ChartVersions) Observed(observed map[string]*structpb.Struct, chart string) (asked, runs string) {
	if v.Resource == nil {
		return "", ""
	}
	obs := observed[v.Resource(chart)]
	if obs == nil {
		return "", ""
	}
	asked = v.Field.Asked(obs)
	if c, ok := object.FindCondition(obs, "Synced"); ok && c.Status == "False" {
		return asked, ""
	}
	return asked, v.Field.Runs(obs)
}

// A VersionField is where a resource asks for a version and where its
// provider reports the one it runs.
type VersionField struct {
	// Spec is the dotted path of the version the resource asks for.
	Spec string
	// Running are the dotted paths where the provider reports the version
	// the cloud runs, tried in order.
	Running []string
}

// Asked is the version the observed resource asks for; "" when none.
func (f VersionField) Asked(obs *structpb.Struct) string {
	if f.Spec == "" {
		return ""
	}
	return object.String(obs, strings.Split(f.Spec, ".")...)
}

// Runs is the version the observed resource's provider reports it runs.
// A resource that is ready but reports none runs what it asks for; one
// that is not ready and reports none runs nothing known yet ("").
func (f VersionField) Runs(obs *structpb.Struct) string {
	for _, p := range f.Running {
		if v := object.String(obs, strings.Split(p, ".")...); v != "" {
			return v
		}
	}
	if obs != nil && object.IsConditionTrue(obs, "Ready") {
		return f.Asked(obs)
	}
	return ""
}
