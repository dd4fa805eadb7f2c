package cluster

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/secret"
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
	Components []component.Component
	// Cluster is the cluster component.
	Cluster Cluster
	// Network is the network component.
	Network Network
	// Pools are the node pool components, sorted by name.
	Pools []NodePool
	// Access is the cluster access component.
	Access Access
	// Budget is the budget component, nil when the XR has none.
	Budget *Budget
	// BudgetEnforcement is the XR's budget enforcement mode.
	BudgetEnforcement string

	x *xr.Cluster
	// ids are the IDs of the plan's components.
	ids map[string]bool
	// chartsOff say why each catalog chart without a release is off: the
	// environment disabled it, or it lacks a repository.
	chartsOff map[string]string
	// dns is set when the XR has a domain and its zones.
	dns bool
	// traits are the cloud's.
	traits Traits
}

// Build plans the platform of an XR. Every error names a field path: of the
// XR for bad input, of the environment for bad configuration.
func Build(x *xr.Cluster, env *envcfg.Env, traits Traits) (*Plan, field.ErrorList) {
	var errs field.ErrorList
	p := &Plan{x: x, chartsOff: map[string]string{}, traits: traits}
	defer p.index()
	par := x.Parameters
	s := SettingsOf(env)
	private := par.Private(envcfg.Or(s.PrivateCluster, DefaultPrivateCluster))

	net, nerrs := network(par.Network, s, traits)
	errs = append(errs, nerrs...)
	net.Private = private
	net.Location = par.Location
	p.Network = net
	p.Components = append(p.Components, net)
	if par.Network.PrivateServices {
		if traits.PrivateServices {
			p.Components = append(p.Components, PrivateServices{})
		} else {
			errs = append(errs, field.Invalid(xr.ParametersPath("network", "privateServices"), true,
				fmt.Sprintf("private services access is for Cloud SQL on GCP; on cloud %q a Database joins the Cluster's network without it: remove the field", x.Cloud)))
		}
	}
	if private {
		p.Components = append(p.Components, Egress{Location: par.Location})
	}
	p.Components = append(p.Components, Identity{Location: par.Location})

	pools, perrs := nodePools(par.Pools, env, s)
	parallel := envcfg.Or(s.Lifecycle.ParallelPools, DefaultParallelPools)
	for i := range pools {
		pools[i].Location, pools[i].Private, pools[i].Parallel = par.Location, private, parallel
	}
	p.Pools = pools
	p.Cluster = Cluster{
		Name:            x.CloudName,
		Version:         cmp.Or(par.Version, s.Version, DefaultVersion),
		Location:        par.Location,
		Private:         private,
		PrivateEndpoint: private && envcfg.Or(s.PrivateEndpoint, DefaultPrivateEndpoint),
		PrivatePath:     p.PrivatePath(),
		Network:         net,
		Pools:           pools,
	}
	if m := par.Maintenance; m != nil {
		p.Cluster.Maintenance = &Maintenance{Day: m.Day, Start: m.StartTime, Hours: envcfg.Or(m.DurationHours, 0)}
	}
	p.Cluster.Running = p.Cluster.Version
	p.Components = append(p.Components, p.Cluster)

	errs = append(errs, perrs...)
	errs = append(errs, s.Rollout.Validate(field.NewPath("environment", "rollout"))...)
	for _, np := range pools {
		p.Components = append(p.Components, np)
	}

	p.dns = par.DNSZones() && par.Domain != ""
	if p.dns {
		p.Components = append(p.Components, DNSZone{Domain: par.Domain, Location: par.Location})
		if private {
			p.Components = append(p.Components, DNSZone{Domain: par.Domain, Private: true, Location: par.Location})
		}
	}

	p.Access = Access{Name: x.Name, Pools: pools}
	p.Components = append(p.Components, p.Access)

	releases, rerrs := p.releases(env, s, traits)
	errs = append(errs, rerrs...)
	dns := p.dnsAutomation(releases, s)
	for _, r := range releases {
		p.Components = append(p.Components, r)
	}
	p.Components = append(p.Components, dns...)

	if b := par.Budget; b != nil {
		p.Budget = &Budget{
			Name:       x.CloudName,
			LimitUSD:   b.LimitUSD,
			Period:     cmp.Or(b.Period, budget.DefaultPeriod),
			Thresholds: b.Thresholds,
			Contacts:   b.Contacts,
		}
		if len(p.Budget.Thresholds) == 0 {
			p.Budget.Thresholds = budget.DefaultThresholds
		}
		p.BudgetEnforcement = cmp.Or(b.Enforcement, s.Budget.Enforcement, budget.DefaultEnforcement)
		if e := s.Budget.Enforcement; e != "" && e != xr.EnforcementEnabled && e != xr.EnforcementMonitorOnly {
			errs = append(errs, field.NotSupported(envPath("budget", "enforcement"), e, []string{xr.EnforcementEnabled, xr.EnforcementMonitorOnly}))
		}
		p.Components = append(p.Components, *p.Budget)
	}
	return p, errs
}

// network resolves the address ranges and checks that they parse and do not
// overlap. The pod range is resolved and checked only on clouds whose pods
// take addresses from a range of their own (traits.PodRange): on AWS, pods
// take VPC addresses, so a podsCidr there neither matters nor conflicts.
func network(n xr.Network, s *Settings, traits Traits) (Network, field.ErrorList) {
	var errs field.ErrorList
	var out Network
	ranges := map[string]netip.Prefix{}
	for _, r := range []struct {
		key, value, env string
		into            *netip.Prefix
		used            bool
	}{
		{"cidr", n.CIDR, cmp.Or(s.Network.CIDR, DefaultNetworkCIDR), &out.CIDR, true},
		{"podsCidr", n.PodsCIDR, cmp.Or(s.Network.PodsCIDR, DefaultPodsCIDR), &out.PodsCIDR, traits.PodRange},
		{"servicesCidr", n.ServicesCIDR, cmp.Or(s.Network.ServicesCIDR, DefaultServicesCIDR), &out.ServicesCIDR, true},
	} {
		if !r.used {
			continue
		}
		path := xr.ParametersPath("network", r.key)
		v := r.value
		if v == "" {
			path = envPath("network", r.key)
			v = r.env
		}
		pfx, err := xr.ParseCIDR(v)
		if err != nil {
			errs = append(errs, field.Invalid(path, v, err.Error()))
			continue
		}
		*r.into = pfx
		ranges[path.String()] = pfx
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, CheckOverlaps(ranges)
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
// environment key pools when the XR names none; those are decoded and
// validated exactly like the XR's.
func nodePools(pools []xr.Pool, env *envcfg.Env, s *Settings) ([]NodePool, field.ErrorList) {
	var errs field.ErrorList
	fromEnv := len(pools) == 0
	root := xr.ParametersPath("pools")
	if fromEnv {
		root = envPath("pools")
		pools, errs = defaultPools(s, root)
		errs = append(errs, xr.ValidatePools(pools, root)...)
		if len(errs) > 0 {
			return nil, errs
		}
	}
	sizes, nd := s.Sizes, s.NodeDefaults
	out := make([]NodePool, 0, len(pools))
	for _, pool := range pools {
		pp := root.Key(pool.Key)
		np := NodePool{
			Name:            pool.Name,
			Key:             pool.Key,
			FromEnvironment: fromEnv,
			Spot:            pool.Spot,
			Labels:          pool.Labels,
			MinNodes:        envcfg.Or(pool.MinNodes, envcfg.Or(nd.MinNodes, DefaultMinNodes)),
			DiskSizeGB:      envcfg.Or(pool.DiskSizeGB, envcfg.Or(nd.DiskSizeGB, DefaultDiskSizeGB)),
		}
		np.MaxNodes = envcfg.Or(pool.MaxNodes, max(np.MinNodes, envcfg.Or(nd.MaxNodes, DefaultMaxNodes)))
		if np.MinNodes > np.MaxNodes {
			errs = append(errs, field.Invalid(pp.Child("minNodes"), np.MinNodes, fmt.Sprintf("must not exceed maxNodes (%d)", np.MaxNodes)))
		}
		if np.MaxNodes > xr.MaxNodes || np.MinNodes < 0 {
			errs = append(errs, field.Invalid(envPath("nodeDefaults"), fmt.Sprintf("%d..%d", np.MinNodes, np.MaxNodes), fmt.Sprintf("pool %q: node counts must be between 0 and %d", pool.Key, xr.MaxNodes)))
		}
		for _, t := range pool.Taints {
			np.Taints = append(np.Taints, Taint(t))
		}
		switch {
		case pool.MachineType != "":
			// An explicit machine type wins over the size class.
			np.MachineType = pool.MachineType
		case pool.Size == "" && nd.MachineType != "":
			np.MachineType = nd.MachineType
		default:
			size := cmp.Or(pool.Size, nd.Size, DefaultPoolSize)
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

// PoolPath is the field path of a pool: its entry in spec.parameters.pools,
// or in the environment's pools when it came from there.
func PoolPath(p NodePool) *field.Path {
	if p.FromEnvironment {
		return envPath("pools").Key(p.Key)
	}
	return xr.ParametersPath("pools").Key(p.Key)
}

// defaultPools reads environment key pools, a map of pool specs like the
// XR's, defaulting to one pool "default" of the default size.
func defaultPools(s *Settings, root *field.Path) ([]xr.Pool, field.ErrorList) {
	m := s.Pools
	if len(m) == 0 {
		return []xr.Pool{{Key: "default", Name: "default"}}, nil
	}
	v, err := structpb.NewValue(m)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(root, "(object)", err.Error())}
	}
	return xr.DecodePools(v, root)
}

// Catalog is the chart catalog: the built-in defaults overridden field by
// field by environment key charts.
func Catalog(s *Settings) map[string]ChartSpec {
	out := maps.Clone(DefaultCharts)
	for name, cs := range s.Charts {
		c := out[name]
		c.Repository = envcfg.Or(cs.Repository, c.Repository)
		c.Chart = envcfg.Or(cs.Chart, c.Chart)
		c.Version = envcfg.Or(cs.Version, c.Version)
		c.Namespace = envcfg.Or(cs.Namespace, c.Namespace)
		c.Values = envcfg.Or(cs.Values, c.Values)
		c.Disabled = envcfg.Or(cs.Disabled, c.Disabled)
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
func (p *Plan) releases(env *envcfg.Env, s *Settings, traits Traits) ([]Release, field.ErrorList) {
	var errs field.ErrorList
	catalog := Catalog(s)
	cp := xr.ParametersPath("charts")
	for _, name := range slices.Sorted(maps.Keys(p.x.Parameters.Charts)) {
		if _, ok := catalog[name]; !ok {
			errs = append(errs, field.NotSupported(cp.Key(name), name, slices.Sorted(maps.Keys(catalog))))
		}
	}
	m, gs := s.Monitoring, s.Monitoring.GrafanaAdminSecret
	mon := ValuesMonitoring{
		Enabled:   envcfg.Or(m.Enabled, DefaultMonitoringEnabled),
		Retention: cmp.Or(m.Retention, DefaultMonitoringRetention),
		GrafanaAdminSecret: SecretKeys{
			Name:        cmp.Or(gs.Name, DefaultGrafanaSecretName),
			UserKey:     cmp.Or(gs.UserKey, DefaultGrafanaSecretUserKey),
			PasswordKey: cmp.Or(gs.PasswordKey, DefaultGrafanaSecretPassword),
		},
	}
	ing := ValuesIngress{
		Replicas: envcfg.Or(s.Ingress.Replicas, DefaultIngressReplicas),
		Internal: envcfg.Or(s.Ingress.Internal, DefaultIngressInternal),
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

	on := map[string]bool{}
	for name, spec := range catalog {
		xc := p.x.Parameters.Charts[name]
		switch {
		case xc.Disabled:
		case spec.Disabled:
			p.chartsOff[name] = fmt.Sprintf("the environment disables chart %q (charts.%s.disabled)", name, name)
		case name == ChartMonitoring && !mon.Enabled:
			p.chartsOff[name] = fmt.Sprintf("the environment turns monitoring off (monitoring.enabled), which disables chart %q", name)
		case name == ChartExternalDNS && !p.dns:
			p.chartsOff[name] = fmt.Sprintf("chart %q publishes records of the XR's domain, and the XR has no domain with zones (spec.parameters.domain, createDnsZones)", name)
		case spec.Repository == "":
			env.Need("charts", name, "repository")
			p.chartsOff[name] = fmt.Sprintf("the environment's chart catalog has no repository for %q", name)
		default:
			on[name] = true
		}
	}
	if p.dns && on[ChartCertManager] && on[ChartIngress] {
		data.DNS.CertificateSecret = cmp.Or(catalog[ChartIngress].Namespace, ChartIngress) + "/" + cmp.Or(s.DNS.CertificateSecret, DefaultCertificateSecret)
	}

	var out []Release
	for _, name := range slices.Sorted(maps.Keys(catalog)) {
		if !on[name] {
			continue
		}
		spec := catalog[name]
		xc := p.x.Parameters.Charts[name]
		values, err := RenderValues(name, spec.Values, data)
		if err != nil {
			errs = append(errs, field.Invalid(envPath("charts", name, "values"), "(template)", err.Error()))
			continue
		}
		overlay.Merge(values, xc.Values)
		if leaks := secret.Find(values); len(leaks) > 0 {
			for _, leak := range leaks {
				errs = append(errs, field.Forbidden(cp.Key(name).Child("values"), fmt.Sprintf("%s holds a plaintext credential; reference a Secret instead (for example existingSecret)", leak)))
			}
			continue
		}
		r := Release{
			Name:           name,
			ProviderConfig: p.Access.Name,
			Repository:     spec.Repository,
			Chart:          cmp.Or(spec.Chart, name),
			Version:        cmp.Or(xc.Version, spec.Version),
			Namespace:      cmp.Or(spec.Namespace, name),
			Values:         values,
		}
		if r.Version == "" {
			env.Need("charts", name, "version")
		}
		out = append(out, r)
	}
	return out, errs
}

// dnsAutomation makes the domain work: the DNS identity that cert-manager
// and external-dns run as (their releases name their ServiceAccounts and
// say so), the certificates when cert-manager and the ingress controller
// both run, and the delegation from a parent zone when the XR or the
// environment names one. Nothing without a domain and its zones.
func (p *Plan) dnsAutomation(releases []Release, s *Settings) []component.Component {
	if !p.dns {
		return nil
	}
	par := p.x.Parameters
	id := &DNSIdentity{Domain: par.Domain, Location: par.Location}
	var bindings []component.Component
	byName := map[string]*Release{}
	for i := range releases {
		r := &releases[i]
		byName[r.Name] = r
		if r.Name != ChartCertManager && r.Name != ChartExternalDNS {
			continue
		}
		r.RunsAs, r.ServiceAccount = id, r.Name
		overlay.Merge(r.Values, map[string]any{"serviceAccount": map[string]any{"create": true, "name": r.Name}})
		bindings = append(bindings, DNSBinding{Chart: r.Name, ServiceAccount: ServiceAccount{Namespace: r.Namespace, Name: r.Name}, Location: par.Location, Access: p.Access})
	}
	var out []component.Component
	if len(bindings) > 0 {
		out = append(out, *id)
	}
	out = append(out, bindings...)
	if cm, ing := byName[ChartCertManager], byName[ChartIngress]; cm != nil && ing != nil {
		iss := s.DNS.Issuer
		out = append(out, Certificates{
			Domain:          par.Domain,
			Issuer:          cmp.Or(iss.Name, DefaultIssuer),
			Server:          cmp.Or(iss.Server, DefaultACMEServer),
			Email:           iss.Email,
			Namespace:       ing.Namespace,
			Secret:          cmp.Or(s.DNS.CertificateSecret, DefaultCertificateSecret),
			SolverNamespace: cm.Namespace,
			Location:        par.Location,
			Access:          p.Access,
		})
	}
	parent, fromEnv := par.ParentZone, false
	if parent.Name == "" {
		parent, fromEnv = s.DNS.ParentZone, true
	}
	if parent.Name != "" {
		out = append(out, DNSDelegation{Domain: par.Domain, ParentZone: parent.Name, ParentGroup: parent.Group, FromEnvironment: fromEnv})
	}
	return out
}

// Removal says why the component with the supplied ID no longer renders a
// resource, and whether the XR's spec removed it. Removal authority belongs
// to the XR's owner alone: fleet-wide inputs (the environment, the planeType
// label, the step's Input) may add and update composed resources but never
// withdraw one. So a component is removed by the spec only when the spec
// states it (a pool left out of spec.parameters.pools, privateCluster:
// false for the NAT, createDnsZones: false, a chart disabled in the XR, a
// budget removed); a component that another input stopped rendering is
// held. A zone goes only when the spec removes zones (DESIGN.md: data goes
// only by an explicit removal), not with the privacy it served.
func (p *Plan) Removal(id string) component.Removal {
	par := p.x.Parameters
	zonesOff := par.CreateDNSZones != nil && !*par.CreateDNSZones
	publicBySpec := par.PrivateCluster != nil && !*par.PrivateCluster
	wanted := component.Removal{Why: fmt.Sprintf("its component %s is still composed, but no longer with this resource (an input other than the spec changed, such as the environment)", id)}
	if p.ids[id] {
		return wanted
	}
	switch {
	case strings.HasPrefix(id, "pool/"):
		name := strings.TrimPrefix(id, "pool/")
		if len(par.Pools) > 0 {
			return component.Removal{BySpec: true, Why: fmt.Sprintf("pool %q is no longer in spec.parameters.pools", name)}
		}
		return component.Removal{
			Why:     fmt.Sprintf("pool %q is not among the environment's pools, which apply because spec.parameters.pools names none", name),
			Confirm: "name the pools to keep in spec.parameters.pools",
		}
	case id == "egress":
		if publicBySpec {
			return component.Removal{BySpec: true, Why: "spec.parameters.privateCluster is false"}
		}
		return component.Removal{Why: "the environment's privateCluster is false", Confirm: "set spec.parameters.privateCluster to false"}
	case id == "release/"+ChartExternalDNS && zonesOff:
		return component.Removal{BySpec: true, Why: "spec.parameters.createDnsZones is false"}
	case strings.HasPrefix(id, DNSBindingID("")) && p.x.Parameters.Charts[strings.TrimPrefix(id, DNSBindingID(""))].Disabled:
		return component.Removal{BySpec: true, Why: fmt.Sprintf("chart %q is disabled in spec.parameters.charts", strings.TrimPrefix(id, DNSBindingID("")))}
	case id == "dns/identity" && p.x.Parameters.Charts[ChartCertManager].Disabled && p.x.Parameters.Charts[ChartExternalDNS].Disabled:
		return component.Removal{BySpec: true, Why: fmt.Sprintf("charts %q and %q, which run as the DNS identity, are disabled in spec.parameters.charts", ChartCertManager, ChartExternalDNS)}
	case id == "dns/certificates" && p.x.Parameters.Charts[ChartCertManager].Disabled:
		return component.Removal{BySpec: true, Why: fmt.Sprintf("chart %q is disabled in spec.parameters.charts", ChartCertManager)}
	case strings.HasPrefix(id, "dns/"):
		switch {
		case zonesOff:
			return component.Removal{BySpec: true, Why: "spec.parameters.createDnsZones is false"}
		// A zone holds records: a cluster made public keeps its private
		// zone until its owner removes the zones, or names it.
		case id == "dns/private" && publicBySpec:
			return component.Removal{Why: "spec.parameters.privateCluster is false, which opens the cluster but does not remove a zone", Confirm: "set spec.parameters.createDnsZones to false"}
		case id == "dns/private" && !p.Cluster.Private:
			return component.Removal{Why: "the environment's privateCluster is false", Confirm: "set spec.parameters.createDnsZones to false"}
		}
		return component.Removal{Why: "spec.parameters.domain is not set", Confirm: "set spec.parameters.createDnsZones to false"}
	case strings.HasPrefix(id, "release/"):
		name := strings.TrimPrefix(id, "release/")
		if p.x.Parameters.Charts[name].Disabled {
			return component.Removal{BySpec: true, Why: fmt.Sprintf("chart %q is disabled in spec.parameters.charts", name)}
		}
		if why, ok := p.chartsOff[name]; ok {
			return component.Removal{Why: why, Confirm: fmt.Sprintf("set spec.parameters.charts.%s.disabled to true", name)}
		}
		return component.Removal{Why: fmt.Sprintf("the environment's chart catalog no longer has %q", name)}
	case id == "budget":
		return component.Removal{BySpec: true, Why: "spec.parameters.budget was removed"}
	case id == PrivateServicesID:
		// Only the spec asks for it: the environment has no say.
		return component.Removal{BySpec: true, Why: "spec.parameters.network.privateServices is no longer true"}
	}
	return component.Removal{Why: fmt.Sprintf("this XR no longer renders component %s", id)}
}

// KeepEgress composes the egress of a cluster that is no longer private,
// for as long as what runs still uses it (registry.Cloud.EgressInUse): it
// is then removed as the spec asked, once nothing is behind it.
func (p *Plan) KeepEgress() {
	if p.ids[Egress{}.ID()] {
		return
	}
	i := slices.IndexFunc(p.Components, func(c component.Component) bool { return c.ID() == p.Network.ID() })
	p.Components = slices.Insert(p.Components, i+1, component.Component(Egress{Location: p.Cluster.Location}))
	p.index()
}

// PrivatePath is the field that decides whether the cluster is private:
// spec.parameters.privateCluster when the XR sets it, else the
// environment's privateCluster, for messages that refuse a change of it.
func (p *Plan) PrivatePath() *field.Path {
	if p.x.Parameters.PrivateCluster != nil {
		return xr.ParametersPath("privateCluster")
	}
	return field.NewPath("environment", "privateCluster")
}

// Replace puts c in place of the plan's component with the same ID: in
// Components, and in Cluster or Pools.
func (p *Plan) Replace(c component.Component) {
	for i, have := range p.Components {
		if have.ID() == c.ID() {
			p.Components[i] = c
		}
	}
	switch t := c.(type) {
	case Cluster:
		p.Cluster = t
	case NodePool:
		for i := range p.Pools {
			if p.Pools[i].Name == t.Name {
				p.Pools[i] = t
			}
		}
	}
}

// index records the IDs of the plan's components.
func (p *Plan) index() {
	p.ids = make(map[string]bool, len(p.Components))
	for _, c := range p.Components {
		p.ids[c.ID()] = true
	}
}
