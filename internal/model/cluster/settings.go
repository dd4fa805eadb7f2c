package cluster

import (
	"fmt"
	"sync"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Settings are the environment's cluster keys, at the top level of data,
// decoded once per call (see SettingsOf). Every key is optional; the
// Default constants and the README give the defaults. A pointer field tells
// an absent key from its zero value.
type Settings struct {
	// Location is the region of a Cluster whose XR names none.
	Location string `json:"location"`
	// Version is the Kubernetes minor version of a Cluster whose XR names
	// none, e.g. "1.33". Default 1.33.
	Version string `json:"version"`
	// PrivateCluster is the default of spec.parameters.privateCluster:
	// private nodes with NAT egress. Default true.
	PrivateCluster *bool `json:"privateCluster"`
	// PrivateEndpoint also makes the API server private (GKE's private
	// endpoint, EKS without public access, an AKS private cluster); then
	// Crossplane must reach it from inside the network. Default false.
	PrivateEndpoint *bool `json:"privateEndpoint"`
	// Network are the default address ranges of spec.parameters.network.
	Network struct {
		// CIDR is the node network. Default 10.0.0.0/16.
		CIDR string `json:"cidr"`
		// PodsCIDR is the pod range. Default 10.100.0.0/14.
		PodsCIDR string `json:"podsCidr"`
		// ServicesCIDR is the service range. Default 10.104.0.0/20.
		ServicesCIDR string `json:"servicesCidr"`
	} `json:"network"`
	// Sizes map size classes to the cloud's machine types.
	Sizes map[string]string `json:"sizes"`
	// NodeDefaults are the defaults of a pool's fields.
	NodeDefaults struct {
		// MachineType is the machine type of a pool that names neither
		// size nor machineType; it wins over Size.
		MachineType string `json:"machineType"`
		// Size is the size class of a pool that names neither size nor
		// machineType. Default medium.
		Size string `json:"size"`
		// MinNodes is a pool's minimum node count. Default 1.
		MinNodes *int64 `json:"minNodes"`
		// MaxNodes is a pool's maximum node count. Default 3.
		MaxNodes *int64 `json:"maxNodes"`
		// DiskSizeGB is a node's disk size in GB. Default 100.
		DiskSizeGB *int64 `json:"diskSizeGb"`
	} `json:"nodeDefaults"`
	// Pools are pool specs like the XR's, decoded and validated by the
	// XR's own decoder (xr.DecodePools).
	Pools map[string]any `json:"pools"`
	// Charts override the built-in chart catalog field by field.
	Charts map[string]ChartSettings `json:"charts"`
	// Monitoring configures the kube-prometheus-stack add-on.
	Monitoring struct {
		// Enabled installs kube-prometheus-stack. Default true.
		Enabled *bool `json:"enabled"`
		// Retention is Prometheus's retention. Default 15d.
		Retention string `json:"retention"`
		// GrafanaAdminSecret is the Secret, in the monitoring namespace of
		// the workload cluster, that holds Grafana's admin credentials:
		// never a literal.
		GrafanaAdminSecret struct {
			// Name is the Secret's name. Default grafana-admin.
			Name string `json:"name"`
			// UserKey is the key of the user name. Default admin-user.
			UserKey string `json:"userKey"`
			// PasswordKey is the key of the password. Default
			// admin-password.
			PasswordKey string `json:"passwordKey"`
		} `json:"grafanaAdminSecret"`
	} `json:"monitoring"`
	// Ingress configures the ingress-nginx add-on.
	Ingress struct {
		// Replicas are the controller's replicas. Default 2.
		Replicas *int64 `json:"replicas"`
		// Internal annotates the controller's Service with the cloud's
		// internal load-balancer annotation. Default true.
		Internal *bool `json:"internal"`
	} `json:"ingress"`
	// Budget configures budgets: the default enforcement, and where spend
	// comes from when the XR names no spend object.
	Budget budget.Settings `json:"budget"`
	// DNS configures the domain's delegation and certificates.
	DNS struct {
		// ParentZone is the zone a Cluster's domain is delegated from when
		// its XR names none (spec.parameters.parentZone).
		ParentZone xr.ParentZone `json:"parentZone"`
		// Issuer is the Cluster's ACME DNS01 ClusterIssuer.
		Issuer struct {
			// Name is the ClusterIssuer's name. Default letsencrypt.
			Name string `json:"name"`
			// Server is the ACME directory. Default Let's Encrypt's
			// production one.
			Server string `json:"server"`
			// Email is the ACME account's email address.
			Email string `json:"email"`
		} `json:"issuer"`
		// CertificateSecret is the Secret of the domain's certificate, in
		// the ingress controller's namespace. Default wildcard-tls.
		CertificateSecret string `json:"certificateSecret"`
	} `json:"dns"`
	// Lifecycle configures upgrades and rotations.
	Lifecycle LifecycleSettings `json:"lifecycle"`
	// Rollout orders the fleet's changes in waves: a Cluster adopts the
	// environment's version only once the earlier waves run it and are
	// Ready (package rollout, docs/rollouts.md).
	Rollout rollout.Settings `json:"rollout"`
	// Original are the original platform's keys.
	Original

	once    sync.Once
	renamed []string

	// Prices are the cost estimate's price table, in USD.
	Prices struct {
		// ControlPlanePerHour is the control plane's price per hour.
		ControlPlanePerHour *float64 `json:"controlPlanePerHour"`
		// MachineTypes are the prices of a node per hour, by machine type.
		MachineTypes map[string]float64 `json:"machineTypes"`
		// SpotMachineTypes are the prices of spot nodes.
		SpotMachineTypes map[string]float64 `json:"spotMachineTypes"`
	} `json:"prices"`
}

// LifecycleSettings are the environment's key lifecycle: which Kubernetes
// versions a Cluster may run, and how many node pools move at a time.
type LifecycleSettings struct {
	// Versions is the supported window of Kubernetes minors; either end
	// may be left open.
	Versions struct {
		// Min is the oldest minor a Cluster may run or be asked for.
		Min string `json:"min"`
		// Max is the newest minor a Cluster may run or be asked for.
		Max string `json:"max"`
	} `json:"versions"`
	// ParallelPools is how many node pools of a Cluster are upgraded, or
	// rotated, at a time. Default 1.
	ParallelPools *int64 `json:"parallelPools"`
}

// Original are the keys of the original platform's EnvironmentConfigs,
// each read under its modern name (see Settings.Renamed). A modern key
// that is set wins over its original one.
type Original struct {
	// DefaultMachineType is the original platform's name of
	// nodeDefaults.machineType, read as it with a Warning.
	DefaultMachineType string `json:"defaultMachineType"`
	// DefaultDiskSizeGB is the original platform's name of
	// nodeDefaults.diskSizeGb, read as it with a Warning.
	DefaultDiskSizeGB *int64 `json:"defaultDiskSizeGb"`
	// DefaultNodeCount is the original platform's name of
	// nodeDefaults.minNodes, read as it with a Warning.
	DefaultNodeCount *int64 `json:"defaultNodeCount"`
	// DefaultRegion is the original platform's name of location, read as
	// it with a Warning.
	DefaultRegion string `json:"defaultRegion"`
	// IngressReplicas is the original platform's name of
	// ingress.replicas, read as it with a Warning.
	IngressReplicas *int64 `json:"ingress_replicas"`
}

// originalKeys are the original platform's keys and their modern names.
var originalKeys = []struct{ old, new string }{
	{"defaultMachineType", "nodeDefaults.machineType"},
	{"defaultDiskSizeGb", "nodeDefaults.diskSizeGb"},
	{"defaultNodeCount", "nodeDefaults.minNodes"},
	{"defaultRegion", "location"},
	{"ingress_replicas", "ingress.replicas"},
}

// adopt reads the original platform's keys into their modern fields where
// those are unset, once per Settings, and returns one warning per original
// key present: read under its new name, or ignored because the new name is
// set too.
func (s *Settings) adopt() []string {
	o := s.Original
	var out []string
	for _, k := range originalKeys {
		var present, taken bool
		switch k.old {
		case "defaultMachineType":
			present, taken = o.DefaultMachineType != "", adoptValue(&s.NodeDefaults.MachineType, o.DefaultMachineType)
		case "defaultDiskSizeGb":
			present, taken = o.DefaultDiskSizeGB != nil, adoptPtr(&s.NodeDefaults.DiskSizeGB, o.DefaultDiskSizeGB)
		case "defaultNodeCount":
			present, taken = o.DefaultNodeCount != nil, adoptPtr(&s.NodeDefaults.MinNodes, o.DefaultNodeCount)
		case "defaultRegion":
			present, taken = o.DefaultRegion != "", adoptValue(&s.Location, o.DefaultRegion)
		case "ingress_replicas":
			present, taken = o.IngressReplicas != nil, adoptPtr(&s.Ingress.Replicas, o.IngressReplicas)
		}
		switch {
		case !present:
		case taken:
			out = append(out, fmt.Sprintf("environment key %s is the original platform's; it is read as %s: rename it", k.old, k.new))
		default:
			out = append(out, fmt.Sprintf("environment key %s is the original platform's name of %s, which is set too and wins: remove %s", k.old, k.new, k.old))
		}
	}
	return out
}

// adoptValue sets *dst to v when *dst is empty, reporting whether it did.
func adoptValue(dst *string, v string) bool {
	if *dst != "" || v == "" {
		return false
	}
	*dst = v
	return true
}

// adoptPtr sets *dst to v when *dst is unset, reporting whether it did.
func adoptPtr[T any](dst **T, v *T) bool {
	if *dst != nil || v == nil {
		return false
	}
	*dst = v
	return true
}

// ChartSettings override one chart of the catalog: a field that is set
// (even to "") replaces the built-in one.
type ChartSettings struct {
	// Repository is the Helm repository's URL. Default: the built-in
	// catalog's.
	Repository *string `json:"repository"`
	// Chart is the chart's name in the repository. Default: the built-in
	// catalog's, else the key.
	Chart *string `json:"chart"`
	// Version is the chart's version. Default: the built-in catalog's.
	Version *string `json:"version"`
	// Namespace is the namespace the release is installed in. Default:
	// the built-in catalog's, else the key.
	Namespace *string `json:"namespace"`
	// Values is a Go template that renders the release's Helm values as
	// YAML. Default: the built-in catalog's.
	Values *string `json:"values"`
	// Disabled leaves the chart out of every Cluster.
	Disabled *bool `json:"disabled"`
}

// SettingsOf returns the environment's cluster keys, decoded once per Env,
// with the original platform's keys read under their modern names.
func SettingsOf(env *envcfg.Env) *Settings {
	s := envcfg.Section[Settings](env)
	s.once.Do(func() { s.renamed = s.adopt() })
	return s
}

// Renamed are the warnings about the original platform's keys the
// environment uses: one per key.
func (s *Settings) Renamed() []string { return s.renamed }
