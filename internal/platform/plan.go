package platform

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// envPath is the field path of an environment key, for messages.
func envPath(keys ...string) *field.Path {
	p := field.NewPath("environment")
	for _, k := range keys {
		p = p.Child(k)
	}
	return p
}

// A Plan is the agnostic description of an XR's platform.
type Plan struct {
	// Components in creation order.
	Components []Component
	// Cluster is the cluster component.
	Cluster Cluster
	// Network is the network component.
	Network Network
	// Pools are the node pool components, sorted by name.
	Pools []NodePool
	// Access is the cluster access component.
	Access ClusterAccess
	// Budget is the budget component, nil when the XR has none.
	Budget *Budget
	// BudgetEnforcement is the XR's budget enforcement mode.
	BudgetEnforcement string

	x *xr.Composite
	// disabledCharts are charts the XR or the environment switched off.
	disabledCharts map[string]bool
}

// Build plans the platform of an XR. Every error names a field path: of the
// XR for bad input, of the environment for bad configuration.
func Build(x *xr.Composite, env *envcfg.Env, traits Traits) (*Plan, field.ErrorList) {
	var errs field.ErrorList
	p := &Plan{x: x, disabledCharts: map[string]bool{}}
	par := x.Parameters
	private := par.Private(env.Bool(DefaultPrivateCluster, "privateCluster"))

	net, nerrs := network(par.Network, env)
	errs = append(errs, nerrs...)
	net.Private = private
	p.Network = net
	p.Components = append(p.Components, net)
	if private {
		p.Components = append(p.Components, Egress{})
	}
	p.Components = append(p.Components, Identity{})

	p.Cluster = Cluster{
		Name:            x.ClusterName,
		Version:         firstNonEmpty(par.Version, env.String(DefaultVersion, "version")),
		Location:        par.Location,
		Private:         private,
		PrivateEndpoint: private && env.Bool(DefaultPrivateEndpoint, "privateEndpoint"),
	}
	p.Components = append(p.Components, p.Cluster)

	pools, perrs := nodePools(par.Pools, env)
	errs = append(errs, perrs...)
	p.Pools = pools
	for _, np := range pools {
		p.Components = append(p.Components, np)
	}

	if par.DNSZones() && par.Domain != "" {
		p.Components = append(p.Components, DNSZone{Domain: par.Domain})
		if private {
			p.Components = append(p.Components, DNSZone{Domain: par.Domain, Private: true})
		}
	}

	p.Access = ClusterAccess{Name: x.Name}
	p.Components = append(p.Components, p.Access)

	releases, rerrs := p.releases(env, traits)
	errs = append(errs, rerrs...)
	for _, r := range releases {
		p.Components = append(p.Components, r)
	}

	if b := par.Budget; b != nil {
		p.Budget = &Budget{
			Name:       x.ClusterName,
			LimitUSD:   b.LimitUSD,
			Period:     firstNonEmpty(b.Period, budget.DefaultPeriod),
			Thresholds: b.Thresholds,
			Contacts:   b.Contacts,
		}
		if len(p.Budget.Thresholds) == 0 {
			p.Budget.Thresholds = budget.DefaultThresholds
		}
		p.BudgetEnforcement = firstNonEmpty(b.Enforcement, budget.DefaultEnforcement)
		p.Components = append(p.Components, *p.Budget)
	}
	return p, errs
}

// network resolves the address ranges and checks that they parse and do not
// overlap.
func network(n xr.Network, env *envcfg.Env) (Network, field.ErrorList) {
	var errs field.ErrorList
	var out Network
	for _, r := range []struct {
		key, value, def string
		into            *netip.Prefix
	}{
		{"cidr", n.CIDR, DefaultNetworkCIDR, &out.CIDR},
		{"podsCidr", n.PodsCIDR, DefaultPodsCIDR, &out.PodsCIDR},
		{"servicesCidr", n.ServicesCIDR, DefaultServicesCIDR, &out.ServicesCIDR},
	} {
		path := xr.ParametersPath("network", r.key)
		v := r.value
		if v == "" {
			path = envPath("network", r.key)
			v = env.String(r.def, "network", r.key)
		}
		pfx, err := xr.ParseCIDR(v)
		if err != nil {
			errs = append(errs, field.Invalid(path, v, err.Error()))
			continue
		}
		*r.into = pfx
	}
	if len(errs) > 0 {
		return out, errs
	}
	errs = append(errs, CheckOverlaps(map[string]netip.Prefix{
		"spec.parameters.network.cidr":         out.CIDR,
		"spec.parameters.network.podsCidr":     out.PodsCIDR,
		"spec.parameters.network.servicesCidr": out.ServicesCIDR,
	})...)
	return out, errs
}

// CheckOverlaps reports every pair of the named ranges that overlap.
func CheckOverlaps(ranges map[string]netip.Prefix) field.ErrorList {
	var errs field.ErrorList
	names := slices.Sorted(maps.Keys(ranges))
	for i, a := range names {
		for _, b := range names[i+1:] {
			if ranges[a].Overlaps(ranges[b]) {
				errs = append(errs, field.Invalid(field.NewPath(a), ranges[a].String(), fmt.Sprintf("overlaps %s (%s); address ranges must be disjoint", b, ranges[b])))
			}
		}
	}
	return errs
}

// nodePools resolves each pool's machine type and bounds. Pools default to
// environment key pools when the XR names none.
func nodePools(pools []xr.Pool, env *envcfg.Env) ([]NodePool, field.ErrorList) {
	var errs field.ErrorList
	root := xr.ParametersPath("pools")
	if len(pools) == 0 {
		pools = defaultPools(env)
		root = envPath("pools")
	}
	sizes := env.StringMap("sizes")
	out := make([]NodePool, 0, len(pools))
	for _, pool := range pools {
		pp := root.Key(pool.Key)
		np := NodePool{
			Name:       pool.Name,
			Key:        pool.Key,
			Spot:       pool.Spot,
			Labels:     pool.Labels,
			MinNodes:   deref(pool.MinNodes, env.Int(DefaultMinNodes, "nodeDefaults", "minNodes")),
			DiskSizeGB: deref(pool.DiskSizeGB, env.Int(DefaultDiskSizeGB, "nodeDefaults", "diskSizeGb")),
		}
		np.MaxNodes = deref(pool.MaxNodes, max(np.MinNodes, env.Int(DefaultMaxNodes, "nodeDefaults", "maxNodes")))
		if np.MinNodes > np.MaxNodes {
			errs = append(errs, field.Invalid(pp.Child("minNodes"), np.MinNodes, fmt.Sprintf("must not exceed maxNodes (%d)", np.MaxNodes)))
		}
		for _, t := range pool.Taints {
			np.Taints = append(np.Taints, Taint(t))
		}
		switch {
		case pool.MachineType != "":
			// An explicit machine type wins over the size class.
			np.MachineType = pool.MachineType
		default:
			size := firstNonEmpty(pool.Size, env.String(DefaultPoolSize, "nodeDefaults", "size"))
			mt, ok := sizes[size]
			if !ok {
				classes := slices.Sorted(maps.Keys(sizes))
				if len(classes) == 0 {
					env.Need("sizes")
					errs = append(errs, field.Invalid(pp.Child("size"), size, "the environment defines no size classes (key sizes); set machineType or add sizes to the cloud's EnvironmentConfig"))
					continue
				}
				errs = append(errs, field.NotSupported(pp.Child("size"), size, classes))
				continue
			}
			np.MachineType = mt
		}
		out = append(out, np)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

// defaultPools reads environment key pools, a map of pool specs like the
// XR's, defaulting to one pool "default" of the default size.
func defaultPools(env *envcfg.Env) []xr.Pool {
	m := env.Map("pools")
	if len(m) == 0 {
		return []xr.Pool{{Key: "default", Name: "default"}}
	}
	out := make([]xr.Pool, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		spec, _ := m[k].(map[string]any)
		pool := xr.Pool{Key: k, Name: xr.NormalisePoolName(k)}
		pool.Size, _ = spec["size"].(string)
		pool.MachineType, _ = spec["machineType"].(string)
		pool.Spot, _ = spec["spot"].(bool)
		if f, ok := spec["minNodes"].(float64); ok {
			i := int64(f)
			pool.MinNodes = &i
		}
		if f, ok := spec["maxNodes"].(float64); ok {
			i := int64(f)
			pool.MaxNodes = &i
		}
		out = append(out, pool)
	}
	return out
}

// Catalog is the chart catalog: the built-in defaults overridden field by
// field by environment key charts.
func Catalog(env *envcfg.Env) map[string]ChartSpec {
	out := make(map[string]ChartSpec, len(DefaultCharts))
	for k, v := range DefaultCharts {
		out[k] = v
	}
	for name, raw := range env.Map("charts") {
		m, _ := raw.(map[string]any)
		c := out[name]
		str := func(key string, into *string) {
			if s, ok := m[key].(string); ok {
				*into = s
			}
		}
		str("repository", &c.Repository)
		str("chart", &c.Chart)
		str("version", &c.Version)
		str("namespace", &c.Namespace)
		str("values", &c.Values)
		if b, ok := m["disabled"].(bool); ok {
			c.Disabled = b
		}
		if c.Chart == "" {
			c.Chart = name
		}
		if c.Namespace == "" {
			c.Namespace = name
		}
		out[name] = c
	}
	return out
}

// releases resolves the add-on charts: the catalog, switched and versioned
// by the XR's charts, values templated and then merged with the XR's values.
func (p *Plan) releases(env *envcfg.Env, traits Traits) ([]Release, field.ErrorList) {
	var errs field.ErrorList
	catalog := Catalog(env)
	cp := xr.ParametersPath("charts")
	for _, name := range slices.Sorted(maps.Keys(p.x.Parameters.Charts)) {
		if _, ok := catalog[name]; !ok {
			errs = append(errs, field.NotSupported(cp.Key(name), name, slices.Sorted(maps.Keys(catalog))))
		}
	}
	mon := ValuesMonitoring{
		Enabled:   env.Bool(DefaultMonitoringEnabled, "monitoring", "enabled"),
		Retention: env.String(DefaultMonitoringRetention, "monitoring", "retention"),
		GrafanaAdminSecret: SecretKeys{
			Name:        env.String(DefaultGrafanaSecretName, "monitoring", "grafanaAdminSecret", "name"),
			UserKey:     env.String(DefaultGrafanaSecretUserKey, "monitoring", "grafanaAdminSecret", "userKey"),
			PasswordKey: env.String(DefaultGrafanaSecretPassword, "monitoring", "grafanaAdminSecret", "passwordKey"),
		},
	}
	ing := ValuesIngress{
		Replicas: env.Int(DefaultIngressReplicas, "ingress", "replicas"),
		Internal: env.Bool(DefaultIngressInternal, "ingress", "internal"),
	}
	if ing.Internal {
		ing.ServiceAnnotations = traits.InternalLoadBalancerAnnotations
	}
	if ing.ServiceAnnotations == nil {
		ing.ServiceAnnotations = map[string]string{}
	}
	data := ValuesData{
		Cluster: ValuesCluster{
			Name:      p.Cluster.Name,
			Cloud:     p.x.Cloud,
			Location:  p.Cluster.Location,
			Domain:    p.x.Parameters.Domain,
			Namespace: p.x.Namespace,
			Private:   p.Cluster.Private,
		},
		Cloud:      ValuesCloud{Name: p.x.Cloud, InternalLoadBalancerAnnotations: traits.InternalLoadBalancerAnnotations},
		Ingress:    ing,
		Monitoring: mon,
	}

	var out []Release
	for _, name := range slices.Sorted(maps.Keys(catalog)) {
		spec := catalog[name]
		xc := p.x.Parameters.Charts[name]
		disabled := spec.Disabled || xc.Disabled || (name == ChartMonitoring && !mon.Enabled)
		if disabled {
			p.disabledCharts[name] = true
			continue
		}
		values, err := RenderValues(name, spec.Values, data)
		if err != nil {
			errs = append(errs, field.Invalid(envPath("charts", name, "values"), "(template)", err.Error()))
			continue
		}
		overlay.Merge(values, xc.Values)
		if leak := FindPlaintextSecret(values); leak != "" {
			errs = append(errs, field.Forbidden(cp.Key(name).Child("values"), fmt.Sprintf("%s holds a plaintext credential; reference a Secret instead (for example existingSecret)", leak)))
			continue
		}
		r := Release{
			Name:           name,
			ProviderConfig: p.Access.Name,
			Repository:     spec.Repository,
			Chart:          firstNonEmpty(spec.Chart, name),
			Version:        firstNonEmpty(xc.Version, spec.Version),
			Namespace:      firstNonEmpty(spec.Namespace, name),
			Values:         values,
		}
		if r.Version == "" {
			env.Need("charts", name, "version")
		}
		if r.Repository == "" {
			env.Need("charts", name, "repository")
			continue
		}
		out = append(out, r)
	}
	return out, errs
}

// Retired reports whether the XR's spec removed the component with the
// supplied ID, and why. Only a spec that says so removes a component whose
// resources exist: a component the plan merely cannot render (say, a DNS
// zone whose domain was removed) is kept.
func (p *Plan) Retired(id string) (bool, string) {
	par := p.x.Parameters
	zonesOff := par.CreateDNSZones != nil && !*par.CreateDNSZones
	switch {
	case strings.HasPrefix(id, "pool/"):
		name := strings.TrimPrefix(id, "pool/")
		for _, np := range p.Pools {
			if np.Name == name {
				return false, ""
			}
		}
		return true, fmt.Sprintf("pool %q is no longer in spec.parameters.pools", name)
	case id == "egress":
		return !p.Cluster.Private, "the cluster is no longer private"
	case id == "dns/public":
		return zonesOff, "spec.parameters.createDnsZones is false"
	case id == "dns/private":
		if zonesOff {
			return true, "spec.parameters.createDnsZones is false"
		}
		return !p.Cluster.Private, "the cluster is no longer private"
	case strings.HasPrefix(id, "release/"):
		name := strings.TrimPrefix(id, "release/")
		return p.disabledCharts[name], fmt.Sprintf("chart %q is disabled", name)
	case id == "budget":
		return par.Budget == nil, "spec.parameters.budget was removed"
	}
	return false, ""
}

func deref(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
