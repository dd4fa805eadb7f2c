// Package cluster is the Cluster's model: what a production cluster
// platform needs, free of any cloud. Build turns a Cluster XR and its
// environment into a Plan of Components (package component); a cloud
// (internal/clouds/...) implements each kind of Component with concrete
// managed resources. The environment's typed settings, the chart catalog,
// the values templates and the cost estimate are the Cluster's too.
package cluster

import (
	"net/netip"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of Component.
const (
	KindNetwork       component.Kind = "Network"
	KindEgress        component.Kind = "Egress"
	KindIdentity      component.Kind = "Identity"
	KindCluster       component.Kind = "Cluster"
	KindNodePool      component.Kind = "NodePool"
	KindDNSZone       component.Kind = "DNSZone"
	KindClusterAccess component.Kind = "ClusterAccess"
	KindRelease       component.Kind = "Release"
	KindBudget        component.Kind = "Budget"
	KindDNSIdentity   component.Kind = "DNSIdentity"
	KindCertificates  component.Kind = "Certificates"
	KindDNSDelegation component.Kind = "DNSDelegation"
	KindDNSBinding    component.Kind = "DNSBinding"
	// KindPrivateServices is implemented only by the clouds whose
	// Traits.PrivateServices is set (TestRegistrations).
	KindPrivateServices component.Kind = "PrivateServices"
)

// Kinds lists the cluster module's Component kinds: every cloud implements
// each of them.
var Kinds = []component.Kind{KindNetwork, KindEgress, KindIdentity, KindCluster, KindNodePool, KindDNSZone, KindClusterAccess, KindRelease, KindBudget,
	KindDNSIdentity, KindDNSBinding, KindCertificates, KindDNSDelegation}

// OptionalKinds lists the cluster module's Component kinds that only the
// clouds whose Traits offer them implement.
var OptionalKinds = []component.Kind{KindPrivateServices}

// Condition types of the XR. Every Component reports into one of them.
const (
	ConditionNetworkReady   = "NetworkReady"
	ConditionClusterReady   = "ClusterReady"
	ConditionNodePoolsReady = "NodePoolsReady"
	ConditionAddonsReady    = "AddonsReady"
	ConditionDNSReady       = "DnsReady"
	ConditionBudgetOK       = budget.ConditionBudgetOK
)

// Network is the cluster's network: node, pod and service address ranges.
type Network struct {
	// Location is the cluster's region (or zone, on GCP).
	Location     string
	CIDR         netip.Prefix
	PodsCIDR     netip.Prefix
	ServicesCIDR netip.Prefix
	// Private clusters keep nodes off the internet.
	Private bool
}

// Egress is outbound internet access (NAT) for private nodes.
type Egress struct {
	// Location is the cluster's.
	Location string
}

// PrivateServices is private services access in the cluster's network: a
// range reserved for the cloud's managed services and the network's
// peering with them, which the Databases that join the Cluster use (GCP's
// Cloud SQL). It is planned only when spec.parameters.network.
// privateServices asks for it, on a cloud whose Traits.PrivateServices is
// set.
type PrivateServices struct{}

// Identity is what the cluster and its nodes run as.
type Identity struct {
	// Location is the cluster's.
	Location string
}

// Cluster is the managed Kubernetes control plane.
type Cluster struct {
	// Name is the cloud name of the cluster.
	Name string
	// Version is the Kubernetes version the control plane's resource asks
	// for: the XR's target, or the next step towards it (see package
	// lifecycle).
	Version string
	// Running is the minor the control plane runs, as its provider reports
	// it; the target before the cluster exists. Add-on builds are chosen
	// for it.
	Running  string
	Location string
	// Private clusters have private nodes behind NAT.
	Private bool
	// PrivateEndpoint also keeps the API server off the internet; then
	// Crossplane must reach it from inside the network.
	PrivateEndpoint bool
	// PoolVersions are the versions of the pools the cluster's resource
	// composes itself (AKS's system pool), by pool name.
	PoolVersions map[string]string
	// Maintenance is the weekly window for the cloud's automatic
	// upgrades; nil for the cloud's default.
	Maintenance *Maintenance
	// PrivatePath is the field that decides Private, for messages that
	// refuse a change of it (see Plan.PrivatePath).
	PrivatePath *field.Path
	// Network is the cluster's network, for what the control plane's
	// resource and the cloud's rules need of its address ranges.
	Network Network
	// Pools are the cluster's node pools, as planned: what waits for the
	// nodes names them by their current generation
	// (registry.Current), and the cloud's rules check their names.
	Pools []NodePool
}

// Maintenance is a weekly window, in UTC, for a cloud's automatic upgrades.
type Maintenance struct {
	// Day is the weekday it starts on: Monday … Sunday.
	Day string
	// Start is its start, "HH:MM".
	Start string
	// Hours is how long it lasts.
	Hours int64
}

// NodePool is one group of worker nodes.
type NodePool struct {
	// Name is the normalised pool name, Key the pool's key in the XR (or
	// in the environment's pools, when FromEnvironment).
	Name            string
	Key             string
	FromEnvironment bool
	MachineType     string
	MinNodes        int64
	MaxNodes        int64
	// Floor is the node count the pool is held at while the budget is
	// exhausted; nil while it runs normally.
	Floor      *int64
	Spot       bool
	DiskSizeGB int64
	Labels     map[string]string
	Taints     []Taint
	// Fixed is set for nodes the cloud composes with the cluster (see
	// Traits.FixedPools): the estimate counts them as they are.
	Fixed bool
	// Version is the Kubernetes version the pool's resource asks for;
	// empty where the cloud upgrades pools itself (GKE on a release
	// channel).
	Version string
	// Generation is empty for a pool's first generation. A rotation
	// replaces a pool with a new generation beside it, whose resources are
	// named <name>-<Generation> (see Rotatable).
	Generation string
	// Keep is the node count a new generation holds at least while an
	// older one still runs: the older ones' observed nodes.
	Keep int64
	// Parallel is how many node pools rotate at a time (environment key
	// lifecycle.parallelPools).
	Parallel int64
	// Location and Private are the cluster's.
	Location string
	Private  bool
}

// Bounds are the node counts to compose for the pool: its floor for both
// while the budget holds it there, its minimum (at least the nodes a
// rotation keeps) and maximum otherwise. The maximum is at least one, which
// every cloud's autoscaler requires.
func (p NodePool) Bounds() (minNodes, maxNodes int64) {
	if p.Floor != nil {
		return *p.Floor, max(*p.Floor, 1)
	}
	minNodes = max(p.MinNodes, p.Keep)
	return minNodes, max(p.MaxNodes, minNodes, 1)
}

// Initial is the node count the pool is created with: its minimum, or the
// nodes a rotation keeps, within its bounds (a budget's floor included).
func (p NodePool) Initial() int64 {
	minNodes, maxNodes := p.Bounds()
	return min(max(p.MinNodes, p.Keep, minNodes), maxNodes)
}

// CloudName is the pool's name in the cloud, at most limit characters:
// name (the pool's name as the cloud spells it), followed, for a rotated
// generation, by sep and the generation, name cut short to make room.
func (p NodePool) CloudName(name string, limit int, sep string) string {
	if p.Generation == "" {
		return name
	}
	if room := limit - len(sep) - len(p.Generation); len(name) > room {
		name = strings.TrimRight(name[:room], "-")
	}
	return name + sep + p.Generation
}

// Gen implements Rotatable.
func (p NodePool) Gen() string { return p.Generation }

// AtOnce implements Rotatable.
func (p NodePool) AtOnce() int { return int(p.Parallel) }

// Rotated implements Rotatable.
func (p NodePool) Rotated(gen string, keep int64) component.Component {
	p.Generation, p.Keep = gen, keep
	return p
}

// Taint is a node taint with a Kubernetes effect (NoSchedule, ...).
type Taint struct {
	Key    string
	Value  string
	Effect string
}

// ConstantEffect is the effect in the upper snake case GKE and EKS use:
// NoSchedule becomes NO_SCHEDULE.
func (t Taint) ConstantEffect() string {
	var b strings.Builder
	for i, r := range t.Effect {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// DNSZone is a DNS zone for the platform's domain.
type DNSZone struct {
	Domain  string
	Private bool
	// Location is the cluster's.
	Location string
}

// DNSIdentity is the keyless cloud identity that external-dns and
// cert-manager run as: allowed to change the records of the cluster's
// public zone and nothing else. A DNSBinding binds each of their
// ServiceAccounts to it.
type DNSIdentity struct {
	Domain string
	// Location is the cluster's.
	Location string
}

// DNSBinding lets the ServiceAccount of a chart's release act as the DNS
// identity through the cloud's workload identity, without a key. It is a
// component of its own so that disabling the chart in the XR, or its
// zones, removes it, and nothing else does.
type DNSBinding struct {
	Chart          string
	ServiceAccount ServiceAccount
	// Location is the cluster's; Access reaches it.
	Location string
	Access   Access
}

// ServiceAccount is a Kubernetes ServiceAccount of the new cluster.
type ServiceAccount struct {
	Namespace string
	Name      string
}

// Certificates are TLS for the platform's domain: a cert-manager
// ClusterIssuer that solves ACME DNS01 challenges in the public zone as
// the DNS identity, and a certificate for the domain and *.domain that the
// ingress controller serves by default.
type Certificates struct {
	Domain string
	// Issuer is the ClusterIssuer's name, Server and Email its ACME
	// directory and account e-mail (optional).
	Issuer string
	Server string
	Email  string
	// Namespace and Secret locate the wildcard certificate's Secret: the
	// ingress controller's namespace.
	Namespace string
	Secret    string
	// SolverNamespace is cert-manager's namespace, whose ServiceAccount
	// solves the challenges.
	SolverNamespace string
	// Location is the cluster's; Access reaches it.
	Location string
	Access   Access
}

// DNSDelegation publishes the public zone's name servers as NS records of
// the domain in a parent zone, so that the domain resolves.
type DNSDelegation struct {
	Domain string
	// ParentZone is the parent zone as the cloud names it: a Cloud DNS
	// managed zone name, a Route53 hosted zone ID, an Azure DNS zone name.
	ParentZone string
	// ParentDomain is the parent zone's domain, which the domain is under
	// (Azure names records relative to it).
	ParentDomain string
	// ParentGroup is where the parent zone lives when the cloud needs it:
	// a GCP project or an Azure resource group; empty means the XR's own.
	ParentGroup string
	// FromEnvironment is set when the environment named the parent zone.
	FromEnvironment bool
}

// Path is the field path of the parent zone, for messages.
func (d DNSDelegation) Path() *field.Path {
	if d.FromEnvironment {
		return envPath("dns", "parentZone")
	}
	return xr.ParametersPath("parentZone")
}

// Access is how Crossplane reaches the new cluster: the Helm and
// Kubernetes provider configs built from the cluster's credentials.
type Access struct {
	// Name is the name of both provider configs.
	Name string
	// Pools are the cluster's node pools, which the provider configs wait
	// for (see Cluster.Pools).
	Pools []NodePool
}

// Release is a Helm release of an add-on chart.
type Release struct {
	Name string
	// ProviderConfig is the name of the Helm ProviderConfig of
	// Access that installs the release.
	ProviderConfig string
	Repository     string
	Chart          string
	Version        string
	Namespace      string
	Values         map[string]any
	// RunsAs, when set, is the DNS identity the release's ServiceAccount
	// (named ServiceAccount) acts as, through the chart's DNSBinding: the
	// cloud adds the values and dependencies that use it.
	RunsAs         *DNSIdentity
	ServiceAccount string
}

// Budget is a cost guardrail for the cluster.
type Budget struct {
	Name       string
	LimitUSD   float64
	Period     string
	Thresholds []float64
	Contacts   []string
}

// Kind implements Component.
func (Network) Kind() component.Kind { return KindNetwork }

// ID implements Component.
func (Network) ID() string { return "network" }

// Condition implements Component.
func (Network) Condition() string { return ConditionNetworkReady }

// Kind implements Component.
func (Egress) Kind() component.Kind { return KindEgress }

// ID implements Component.
func (Egress) ID() string { return "egress" }

// Condition implements Component.
func (Egress) Condition() string { return ConditionNetworkReady }

// Kind implements Component.
func (PrivateServices) Kind() component.Kind { return KindPrivateServices }

// ID implements Component.
func (PrivateServices) ID() string { return PrivateServicesID }

// Condition implements Component.
func (PrivateServices) Condition() string { return ConditionNetworkReady }

// PrivateServicesID is the ID of the PrivateServices component.
const PrivateServicesID = "private-services"

// Kind implements Component.
func (Identity) Kind() component.Kind { return KindIdentity }

// ID implements Component.
func (Identity) ID() string { return "identity" }

// Condition implements Component.
func (Identity) Condition() string { return ConditionClusterReady }

// Kind implements Component.
func (Cluster) Kind() component.Kind { return KindCluster }

// ID implements Component.
func (Cluster) ID() string { return "cluster" }

// Condition implements Component.
func (Cluster) Condition() string { return ConditionClusterReady }

// Kind implements Component.
func (NodePool) Kind() component.Kind { return KindNodePool }

// ID implements Component.
func (p NodePool) ID() string { return PoolID(p.Name) }

// Condition implements Component.
func (NodePool) Condition() string { return ConditionNodePoolsReady }

// Kind implements Component.
func (DNSZone) Kind() component.Kind { return KindDNSZone }

// ID implements Component.
func (z DNSZone) ID() string {
	if z.Private {
		return "dns/private"
	}
	return "dns/public"
}

// Condition implements Component.
func (DNSZone) Condition() string { return ConditionDNSReady }

// Kind implements Component.
func (Access) Kind() component.Kind { return KindClusterAccess }

// ID implements Component.
func (Access) ID() string { return "access" }

// Condition implements Component.
func (Access) Condition() string { return ConditionAddonsReady }

// Kind implements Component.
func (Release) Kind() component.Kind { return KindRelease }

// ID implements Component.
func (r Release) ID() string { return "release/" + r.Name }

// Condition implements Component.
func (Release) Condition() string { return ConditionAddonsReady }

// Kind implements Component.
func (Budget) Kind() component.Kind { return KindBudget }

// ID implements Component.
func (Budget) ID() string { return "budget" }

// Condition implements Component.
func (Budget) Condition() string { return ConditionBudgetOK }

// Kind implements Component.
func (DNSIdentity) Kind() component.Kind { return KindDNSIdentity }

// ID implements Component.
func (DNSIdentity) ID() string { return "dns/identity" }

// Condition implements Component.
func (DNSIdentity) Condition() string { return ConditionDNSReady }

// Kind implements Component.
func (DNSBinding) Kind() component.Kind { return KindDNSBinding }

// ID implements Component.
func (b DNSBinding) ID() string { return DNSBindingID(b.Chart) }

// Condition implements Component.
func (DNSBinding) Condition() string { return ConditionDNSReady }

// DNSBindingID is the component ID of a chart's DNSBinding.
func DNSBindingID(chart string) string { return "dns/binding/" + chart }

// Kind implements Component.
func (Certificates) Kind() component.Kind { return KindCertificates }

// ID implements Component.
func (Certificates) ID() string { return "dns/certificates" }

// Condition implements Component.
func (Certificates) Condition() string { return ConditionDNSReady }

// Kind implements Component.
func (DNSDelegation) Kind() component.Kind { return KindDNSDelegation }

// ID implements Component.
func (DNSDelegation) ID() string { return "dns/delegation" }

// Condition implements Component.
func (DNSDelegation) Condition() string { return ConditionDNSReady }

// PoolID is the component ID of the pool with the supplied name.
func PoolID(name string) string { return "pool/" + name }

// NodePoolResource is the composition-resource name of a node pool, the
// same on every cloud: nodepool-<pool>, and for a rotated generation
// nodepool-<pool>-<generation>.
func NodePoolResource(p NodePool) string {
	if p.Generation == "" {
		return "nodepool-" + p.Name
	}
	return "nodepool-" + p.Name + "-" + p.Generation
}
