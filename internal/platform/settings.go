package platform

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Settings are the environment's cluster keys, at the top level of data,
// decoded once per call (see SettingsOf). Every key is optional; the
// Default constants and the README give the defaults. A pointer field tells
// an absent key from its zero value.
type Settings struct {
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
		Size       string `json:"size"`
		MinNodes   *int64 `json:"minNodes"`
		MaxNodes   *int64 `json:"maxNodes"`
		DiskSizeGB *int64 `json:"diskSizeGb"`
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
	Prices struct {
		ControlPlanePerHour *float64           `json:"controlPlanePerHour"`
		MachineTypes        map[string]float64 `json:"machineTypes"`
	} `json:"prices"`
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

// SettingsOf returns the environment's cluster keys, decoded once per Env.
func SettingsOf(env *envcfg.Env) *Settings { return envcfg.Section[Settings](env) }
