package platform

import (
	"fmt"
	"sync"

	"github.com/seed-6471616d/function-cluster-platform/internal/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Settings are the environment's cluster keys, at the top level of data,
// decoded once per call (see SettingsOf). Every key is optional; the
// Default constants and the README give the defaults. A pointer field tells
// an absent key from its zero value.
type Settings struct {
	// Location is the region of a Cluster whose XR names none.
	Location        string `json:"location"`
	Version         string `json:"version"`
	PrivateCluster  *bool  `json:"privateCluster"`
	PrivateEndpoint *bool  `json:"privateEndpoint"`
	Network         struct {
		CIDR         string `json:"cidr"`
		PodsCIDR     string `json:"podsCidr"`
		ServicesCIDR string `json:"servicesCidr"`
	} `json:"network"`
	// Sizes map size classes to the cloud's machine types.
	Sizes        map[string]string `json:"sizes"`
	NodeDefaults struct {
		// MachineType is the machine type of a pool that names neither
		// size nor machineType; it wins over Size.
		MachineType string `json:"machineType"`
		Size        string `json:"size"`
		MinNodes    *int64 `json:"minNodes"`
		MaxNodes    *int64 `json:"maxNodes"`
		DiskSizeGB  *int64 `json:"diskSizeGb"`
	} `json:"nodeDefaults"`
	// Pools are pool specs like the XR's, decoded and validated by the
	// XR's own decoder (xr.DecodePools).
	Pools map[string]any `json:"pools"`
	// Charts override the built-in chart catalog field by field.
	Charts     map[string]ChartSettings `json:"charts"`
	Monitoring struct {
		Enabled            *bool  `json:"enabled"`
		Retention          string `json:"retention"`
		GrafanaAdminSecret struct {
			Name        string `json:"name"`
			UserKey     string `json:"userKey"`
			PasswordKey string `json:"passwordKey"`
		} `json:"grafanaAdminSecret"`
	} `json:"monitoring"`
	Ingress struct {
		Replicas *int64 `json:"replicas"`
		Internal *bool  `json:"internal"`
	} `json:"ingress"`
	// Budget configures budgets: the default enforcement, and where spend
	// comes from when the XR names no spend object.
	Budget budget.Settings `json:"budget"`
	// DNS configures the domain's delegation and certificates.
	DNS struct {
		ParentZone xr.ParentZone `json:"parentZone"`
		Issuer     struct {
			Name   string `json:"name"`
			Server string `json:"server"`
			Email  string `json:"email"`
		} `json:"issuer"`
		CertificateSecret string `json:"certificateSecret"`
	} `json:"dns"`
	// Lifecycle configures upgrades and rotations.
	Lifecycle LifecycleSettings `json:"lifecycle"`
	// Original are the original platform's keys.
	Original

	once    sync.Once
	renamed []string

	Prices struct {
		ControlPlanePerHour *float64           `json:"controlPlanePerHour"`
		MachineTypes        map[string]float64 `json:"machineTypes"`
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
		Min string `json:"min"`
		Max string `json:"max"`
	} `json:"versions"`
	// ParallelPools is how many node pools of a Cluster are upgraded, or
	// rotated, at a time.
	ParallelPools *int64 `json:"parallelPools"`
}

// Original are the keys of the original platform's EnvironmentConfigs,
// each read under its modern name (see Settings.Renamed). A modern key
// that is set wins over its original one.
type Original struct {
	DefaultMachineType string `json:"defaultMachineType"`
	DefaultDiskSizeGB  *int64 `json:"defaultDiskSizeGb"`
	DefaultNodeCount   *int64 `json:"defaultNodeCount"`
	DefaultRegion      string `json:"defaultRegion"`
	IngressReplicas    *int64 `json:"ingress_replicas"`
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
	Repository *string `json:"repository"`
	Chart      *string `json:"chart"`
	Version    *string `json:"version"`
	Namespace  *string `json:"namespace"`
	Values     *string `json:"values"`
	Disabled   *bool   `json:"disabled"`
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
