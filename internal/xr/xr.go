// Package xr decodes the function's composite resources (XRs), one typed
// struct per kind: the Cluster (xr.go), the Database, the AppEnvironment and
// the WorkloadBudget, on what every kind shares (Composite: its labels,
// scope, import, overrides). Each kind's decoder reads it from the observed
// composite resource and reports every malformed field with its path; its
// validation is cloud-independent. What an XR asks the clouds for is its
// model's (internal/model/...).
package xr

import (
	"maps"
	"slices"
	"sort"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// Labels of the XR that select the cloud layer and the EnvironmentConfigs.
const (
	LabelCloud       = "cloud"
	LabelPlaneID     = "planeId"
	LabelPlaneType   = "planeType"
	LabelClusterName = "clusterName"

	// Labels Crossplane sets: on XRs of a claim, the claim's name and
	// namespace; on composed resources, those and the composite's name.
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
	LabelComposite      = "crossplane.io/composite"
	labelClaimName      = LabelClaimName

	// AnnotationCompositionResourceName is the annotation Crossplane sets
	// on every composed resource: its composition-resource name.
	AnnotationCompositionResourceName = "crossplane.io/composition-resource-name"
)

// The Cluster's API: namespaced (Crossplane v2) and legacy (cluster-scoped
// XCluster with the claim Cluster).
const (
	// LegacyGroup is the API group of every legacy XR and claim.
	LegacyGroup             = "legacy.platform.example.org"
	ClusterAPIVersion       = "platform.example.org/v1alpha1"
	ClusterKind             = "Cluster"
	LegacyClusterAPIVersion = "legacy.platform.example.org/v1alpha1"
	LegacyClusterKind       = "XCluster"
)

// StatusLocation is the field of a Cluster's status that says where it
// runs: its spec.parameters.location, or the environment's location when
// the spec names none. The XRs that name the Cluster (clusterRef) read it
// there, as they cannot read the Cluster's environment.
const StatusLocation = "location"

// The APIs of the kinds other modules compose: the Database (nested in an
// AppEnvironment) and the AppEnvironment, namespaced and legacy.
const (
	DatabaseAPIVersion             = "platform.example.org/v1alpha1"
	DatabaseKind                   = "Database"
	LegacyDatabaseAPIVersion       = "legacy.platform.example.org/v1alpha1"
	LegacyDatabaseKind             = "XDatabase"
	AppEnvironmentAPIVersion       = "platform.example.org/v1alpha1"
	AppEnvironmentKind             = "AppEnvironment"
	LegacyAppEnvironmentAPIVersion = "legacy.platform.example.org/v1alpha1"
	LegacyAppEnvironmentKind       = "XAppEnvironment"
	WorkloadBudgetAPIVersion       = "platform.example.org/v1alpha1"
	WorkloadBudgetKind             = "WorkloadBudget"
)

// Scope is where an XR lives, which decides the API groups it composes.
type Scope string

// Scopes of an XR.
const (
	// Namespaced XRs (Crossplane v2) compose the namespaced .m. API groups
	// into their own namespace.
	Namespaced Scope = "Namespaced"
	// Cluster-scoped XRs (legacy v1 XRDs with claims, or v2 scope: Cluster)
	// compose the legacy cluster-scoped API groups.
	ClusterScoped Scope = "Cluster"
)

// Import modes.
const (
	ImportObserve = "observe"
	ImportManage  = "manage"
)

// Budget enforcement modes.
const (
	EnforcementMonitorOnly = "monitor-only"
	EnforcementEnabled     = "enabled"
)

// Composite is what every XR kind shares: its identity and scope, the
// labels that select the cloud layer and the EnvironmentConfigs, its observed
// conditions and status, and the parameters every module takes the same way
// (import, overrides, confirmRemovals).
type Composite struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	Labels     map[string]string
	Scope      Scope
	Deleting   bool
	// CreationTimestamp is when the XR was stored; zero when unknown.
	CreationTimestamp time.Time

	// Cloud, PlaneID and PlaneType come from the labels.
	Cloud     string
	PlaneID   string
	PlaneType string
	// CloudName is the name the XR's cloud resources derive from. Decoded,
	// it is BareName; the engine then gives an XR of a tenant's namespace
	// the name its namespace's tenancy derives (names.Tenant), or the one
	// its running resources were named with.
	CloudName string
	// BareName is the name the XR's owner chose: the clusterName label of
	// a Cluster, else the claim's name for an XR of a claim, else
	// metadata.name.
	BareName string
	// Chosen says that BareName is a cloud name the owner chose outright
	// (a Cluster's clusterName label), which the tenancy of names checks
	// as a chosen name rather than derives from.
	Chosen bool

	// Import is spec.parameters.import.
	Import Import
	// Overrides is spec.parameters.overrides, keyed by composition-resource
	// name.
	Overrides map[string]map[string]any
	// ConfirmRemovals lists composition-resource names whose removal the
	// XR's owner confirms: resources held because an input other than the
	// spec (the environment, the planeType label) stopped rendering them.
	ConfirmRemovals []string
	// ForProvider is passed through into the managed cluster's
	// spec.forProvider (the seed-compatible escape hatch of a Cluster).
	ForProvider map[string]any

	// ConnectionSecret is a legacy XR's spec.writeConnectionSecretToRef,
	// which Crossplane sets; empty for Crossplane v2 XRs.
	ConnectionSecret SecretRef

	// Conditions are the XR's observed status conditions.
	Conditions []object.Condition

	// Status is the XR's observed status, as sent by Crossplane.
	Status *structpb.Struct
}

// SecretRef names a Secret.
type SecretRef struct {
	Name      string
	Namespace string
}

// Cluster is the observed Cluster XR.
type Cluster struct {
	Composite
	Parameters Parameters
	// Renamed are the original platform's fields the XR uses, read under
	// their new names (see compat).
	Renamed []Renamed
}

// Parameters is spec.parameters of a Cluster, but for the parameters every
// kind shares (see Composite).
type Parameters struct {
	Location       string
	Version        string
	Domain         string
	CreateDNSZones *bool
	PrivateCluster *bool
	Network        Network
	Pools          []Pool
	Charts         map[string]Chart
	Budget         *Budget
	// ParentZone, when set, is the zone the domain is delegated from.
	ParentZone ParentZone
	// Maintenance, when set, is the weekly window of the cloud's
	// automatic upgrades.
	Maintenance *Maintenance
}

// Maintenance is spec.parameters.maintenance: a weekly window, in UTC,
// for the cloud's automatic upgrades.
type Maintenance struct {
	// Day is the weekday the window starts on, Monday … Sunday.
	Day string
	// StartTime is when it starts, "HH:MM" in UTC.
	StartTime string
	// DurationHours is how long it lasts.
	DurationHours *int64
}

// ParentZone is the zone a Cluster's domain is delegated from, as the
// cloud names it (spec.parameters.parentZone, or environment key
// dns.parentZone).
type ParentZone struct {
	// Name is a Cloud DNS managed zone's name, a Route53 hosted zone's ID
	// or an Azure DNS zone's name (its domain).
	Name string `json:"name"`
	// Group is the GCP project or Azure resource group of the parent zone;
	// empty means the XR's project, or on Azure is required.
	Group string `json:"group"`
}

// Network is spec.parameters.network.
type Network struct {
	CIDR         string
	PodsCIDR     string
	ServicesCIDR string
	// PrivateServices asks for private services access in the network: a
	// range reserved for a cloud's managed services and the network's
	// peering with them, which the Databases that join the Cluster use
	// (GCP's Cloud SQL). Off unless the spec sets it.
	PrivateServices bool
}

// Pool is one entry of spec.parameters.pools.
type Pool struct {
	// Key is the pool's key as written in the XR.
	Key string
	// Name is the normalised pool name used in resource names.
	Name        string
	Size        string
	MachineType string
	MinNodes    *int64
	MaxNodes    *int64
	Spot        bool
	DiskSizeGB  *int64
	Labels      map[string]string
	Taints      []Taint
}

// Taint is a Kubernetes node taint.
type Taint struct {
	Key    string
	Value  string
	Effect string
}

// Chart is one entry of spec.parameters.charts.
type Chart struct {
	Disabled bool
	Version  string
	Values   map[string]any
}

// Budget is spec.parameters.budget.
type Budget struct {
	LimitUSD    float64
	Period      string
	Thresholds  []float64
	Contacts    []string
	Enforcement string
	SpendRef    *SpendRef
}

// SpendRef names the object that holds month-to-date spend in USD.
type SpendRef struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	FieldPath  string
}

// Import is spec.parameters.import.
type Import struct {
	Enabled   bool
	Mode      string
	Resources map[string]string
	Only      bool
	Release   bool
}

// Field paths used in messages.
var (
	pathLabels     = field.NewPath("metadata", "labels")
	pathParameters = field.NewPath("spec", "parameters")
)

// ParametersPath returns the field path of a parameter, for messages.
func ParametersPath(child ...string) *field.Path {
	p := pathParameters
	for _, c := range child {
		p = p.Child(c)
	}
	return p
}

// LabelPath returns the field path of an XR label, for messages.
func LabelPath(key string) *field.Path {
	return pathLabels.Key(key)
}

// The fields each decoder knows, by object. Fields maps them to the field
// paths of each XR kind, which TestXRDs compares with the XRDs' schemas: a
// field one knows and the other does not fails the test.
var (
	// commonParameters are the parameters every XR kind takes.
	commonParameters = []string{"import", "overrides", "confirmRemovals"}
	fieldsImport     = []string{"enabled", "mode", "resources", "only", "release"}

	fieldsClusterParameters = append([]string{"location", "version", "domain", "createDnsZones", "privateCluster",
		"network", "pools", "charts", "budget", "parentZone", "maintenance"}, commonParameters...)
	fieldsMaintenance    = []string{"day", "startTime", "durationHours"}
	fieldsParentZone     = []string{"name", "group"}
	fieldsClusterNetwork = []string{"cidr", "podsCidr", "servicesCidr", "privateServices"}
	fieldsPool           = []string{"size", "machineType", "minNodes", "maxNodes", "spot", "diskSizeGb", "labels", "taints"}
	fieldsTaint          = []string{"key", "value", "effect"}
	fieldsChart          = []string{"disabled", "version", "values"}
	fieldsBudget         = []string{"limitUsd", "period", "thresholds", "contacts", "enforcement", "spendRef"}
	fieldsSpendRef       = []string{"apiVersion", "kind", "name", "namespace", "fieldPath"}

	fieldsDatabaseParameters = append([]string{"engine", "version", "size", "storageGb", "highAvailability",
		"backupRetentionDays", "deletionProtection", "location", "clusterRef", "databases", "network"}, commonParameters...)
	fieldsClusterRef      = []string{"name"}
	fieldsDatabaseNetwork = []string{"cidr"}

	fieldsAppParameters = append([]string{"clusterRef", "namespace", "backend", "database", "bucket", "ingress",
		"frontend", "budget", "deletionPolicy"}, commonParameters...)
	fieldsAppFrontend = []string{"host", "spa", "apiPath", "defaultTtlSeconds", "maxTtlSeconds", "bucketName"}
	fieldsBackend     = []string{"image", "port", "replicas", "env", "resources"}
	fieldsResources   = []string{"requests", "limits"}
	fieldsAppDatabase = []string{"size", "engine", "version", "storageGb"}
	fieldsAppBucket   = []string{"name", "public", "website"}
	fieldsAppIngress  = []string{"host", "tls"}
	fieldsAppBudget   = []string{"limitUsd", "enforcement", "thresholds", "spendRef"}
)

// Fields are the fields the decoders know, by XR kind and by the field path
// of the object that holds them ("*" for any key of a map, "[]" for the
// items of a list).
var Fields = map[string]map[string][]string{
	ClusterKind: {
		"spec.parameters":                  fieldsClusterParameters,
		"spec.parameters.network":          fieldsClusterNetwork,
		"spec.parameters.pools.*":          fieldsPool,
		"spec.parameters.pools.*.taints[]": fieldsTaint,
		"spec.parameters.charts.*":         fieldsChart,
		"spec.parameters.budget":           fieldsBudget,
		"spec.parameters.budget.spendRef":  fieldsSpendRef,
		"spec.parameters.import":           fieldsImport,
		"spec.parameters.maintenance":      fieldsMaintenance,
	},
	DatabaseKind: {
		"spec.parameters":            fieldsDatabaseParameters,
		"spec.parameters.clusterRef": fieldsClusterRef,
		"spec.parameters.network":    fieldsDatabaseNetwork,
		"spec.parameters.import":     fieldsImport,
	},
	AppEnvironmentKind: {
		"spec.parameters":                   fieldsAppParameters,
		"spec.parameters.clusterRef":        fieldsClusterRef,
		"spec.parameters.backend":           fieldsBackend,
		"spec.parameters.backend.resources": fieldsResources,
		"spec.parameters.database":          fieldsAppDatabase,
		"spec.parameters.bucket":            fieldsAppBucket,
		"spec.parameters.ingress":           fieldsAppIngress,
		"spec.parameters.frontend":          fieldsAppFrontend,
		"spec.parameters.budget":            fieldsAppBudget,
		"spec.parameters.budget.spendRef":   fieldsSpendRef,
		"spec.parameters.import":            fieldsImport,
	},
}

// decodeComposite reads what every XR kind shares: metadata, labels and
// scope. Each kind decodes its spec; the parameters every kind takes are
// read by decodeCommon.
func decodeComposite(s *structpb.Struct) Composite {
	x := Composite{
		APIVersion: object.String(s, "apiVersion"),
		Kind:       object.String(s, "kind"),
		Name:       object.String(s, "metadata", "name"),
		Namespace:  object.String(s, "metadata", "namespace"),
		Labels:     object.StringMap(s, "metadata", "labels"),
		Deleting:   DeletionRequested(s),
		Conditions: object.Conditions(s),
		Status:     object.Get(s, "status").GetStructValue(),
		ConnectionSecret: SecretRef{
			Name:      object.String(s, "spec", "writeConnectionSecretToRef", "name"),
			Namespace: object.String(s, "spec", "writeConnectionSecretToRef", "namespace"),
		},
	}
	if ts := object.String(s, "metadata", "creationTimestamp"); ts != "" {
		if t, err := time.Parse(time.RFC3339, ts); err == nil {
			x.CreationTimestamp = t
		}
	}
	x.Scope = ClusterScoped
	if x.Namespace != "" {
		x.Scope = Namespaced
	}
	x.Cloud = x.Labels[LabelCloud]
	x.PlaneID = x.Labels[LabelPlaneID]
	x.PlaneType = x.Labels[LabelPlaneType]
	// A claim's XR has a generated name; the claim's name is the one its
	// owner chose.
	x.CloudName = x.Labels[labelClaimName]
	if x.CloudName == "" {
		x.CloudName = x.Name
	}
	x.BareName = x.CloudName
	return x
}

// Tenant is the namespace whose tenancy of names the XR is under: its own,
// or for the XR of a claim the claim's; empty for a cluster-scoped XR of
// no claim, which only the platform team can create.
func (x *Composite) Tenant() string {
	if x.Namespace != "" {
		return x.Namespace
	}
	return x.Labels[LabelClaimNamespace]
}

// decodeCommon reads the parameters every XR kind takes from the fields of
// spec.parameters.
func (d *decoder) decodeCommon(x *Composite, f map[string]*structpb.Value, p *field.Path) {
	ip := p.Child("import")
	imp := d.fields(f["import"], ip, fieldsImport...)
	x.Import = Import{
		Mode:      d.str(imp["mode"], ip.Child("mode")),
		Resources: d.stringMap(imp["resources"], ip.Child("resources")),
	}
	if b := d.boolean(imp["enabled"], ip.Child("enabled")); b != nil {
		x.Import.Enabled = *b
	}
	if b := d.boolean(imp["only"], ip.Child("only")); b != nil {
		x.Import.Only = *b
	}
	if b := d.boolean(imp["release"], ip.Child("release")); b != nil {
		x.Import.Release = *b
	}

	x.ConfirmRemovals = d.strings(f["confirmRemovals"], p.Child("confirmRemovals"))

	op := p.Child("overrides")
	ov := d.object(f["overrides"], op)
	if len(ov) > 0 {
		x.Overrides = make(map[string]map[string]any, len(ov))
	}
	for k, v := range ov {
		if m := d.anyMap(v, op.Key(k)); m != nil {
			x.Overrides[k] = m
		}
	}
}

// Decode reads the observed Cluster XR. It returns every type error it
// finds, each naming its field path; semantic checks are Validate's job.
func Decode(s *structpb.Struct) (*Cluster, field.ErrorList) {
	d := &decoder{}
	x := &Cluster{Composite: decodeComposite(s)}
	if n := x.Labels[LabelClusterName]; n != "" {
		x.CloudName, x.BareName, x.Chosen = n, n, true
	}
	spec := object.Get(s, "spec")
	sp := field.NewPath("spec")
	sf := d.object(spec, sp)
	x.ForProvider = d.anyMap(sf["forProvider"], sp.Child("forProvider"))
	f := d.fields(sf["parameters"], pathParameters, fieldsClusterParameters...)
	x.Parameters = d.parameters(f, pathParameters)
	d.compat(x, sf)
	d.decodeCommon(&x.Composite, f, pathParameters)
	return x, d.errs
}

func (d *decoder) parameters(f map[string]*structpb.Value, p *field.Path) Parameters {
	out := Parameters{
		Location:       d.str(f["location"], p.Child("location")),
		Version:        d.str(f["version"], p.Child("version")),
		Domain:         d.str(f["domain"], p.Child("domain")),
		CreateDNSZones: d.boolean(f["createDnsZones"], p.Child("createDnsZones")),
		PrivateCluster: d.boolean(f["privateCluster"], p.Child("privateCluster")),
	}
	zp := p.Child("parentZone")
	zf := d.fields(f["parentZone"], zp, fieldsParentZone...)
	out.ParentZone = ParentZone{Name: d.str(zf["name"], zp.Child("name")), Group: d.str(zf["group"], zp.Child("group"))}

	np := p.Child("network")
	nf := d.fields(f["network"], np, fieldsClusterNetwork...)
	out.Network = Network{
		CIDR:         d.str(nf["cidr"], np.Child("cidr")),
		PodsCIDR:     d.str(nf["podsCidr"], np.Child("podsCidr")),
		ServicesCIDR: d.str(nf["servicesCidr"], np.Child("servicesCidr")),
	}
	if b := d.boolean(nf["privateServices"], np.Child("privateServices")); b != nil {
		out.Network.PrivateServices = *b
	}

	out.Pools = d.pools(f["pools"], p.Child("pools"))

	cp := p.Child("charts")
	charts := d.object(f["charts"], cp)
	if len(charts) > 0 {
		out.Charts = make(map[string]Chart, len(charts))
	}
	for _, k := range slices.Sorted(maps.Keys(charts)) {
		kp := cp.Key(k)
		c := d.fields(charts[k], kp, fieldsChart...)
		ch := Chart{
			Version: d.str(c["version"], kp.Child("version")),
			Values:  d.anyMap(c["values"], kp.Child("values")),
		}
		if b := d.boolean(c["disabled"], kp.Child("disabled")); b != nil {
			ch.Disabled = *b
		}
		out.Charts[k] = ch
	}

	if bv, ok := f["budget"]; ok && !isNull(bv) {
		out.Budget = d.budget(bv, p.Child("budget"))
	}
	if mv, ok := f["maintenance"]; ok && !isNull(mv) {
		mp := p.Child("maintenance")
		mf := d.fields(mv, mp, fieldsMaintenance...)
		out.Maintenance = &Maintenance{
			Day:           d.str(mf["day"], mp.Child("day")),
			StartTime:     d.str(mf["startTime"], mp.Child("startTime")),
			DurationHours: d.integer(mf["durationHours"], mp.Child("durationHours")),
		}
	}

	return out
}

// DecodePools reads a map of pool specs, such as the environment's pools,
// with the same rules as spec.parameters.pools. p is its field path.
func DecodePools(v *structpb.Value, p *field.Path) ([]Pool, field.ErrorList) {
	d := &decoder{}
	return d.pools(v, p), d.errs
}

func (d *decoder) pools(v *structpb.Value, p *field.Path) []Pool {
	pools := d.object(v, p)
	if len(pools) > MaxPools {
		// Not one more byte is decoded: the count alone is the error.
		d.errs = append(d.errs, field.TooMany(p, len(pools), MaxPools))
		return nil
	}
	out := make([]Pool, 0, len(pools))
	for _, k := range slices.Sorted(maps.Keys(pools)) {
		out = append(out, d.pool(k, pools[k], p.Key(k)))
	}
	return out
}

func (d *decoder) pool(key string, v *structpb.Value, p *field.Path) Pool {
	f := d.fields(v, p, fieldsPool...)
	pool := Pool{
		Key:         key,
		Name:        NormalisePoolName(key),
		Size:        d.str(f["size"], p.Child("size")),
		MachineType: d.str(f["machineType"], p.Child("machineType")),
		MinNodes:    d.integer(f["minNodes"], p.Child("minNodes")),
		MaxNodes:    d.integer(f["maxNodes"], p.Child("maxNodes")),
		DiskSizeGB:  d.integer(f["diskSizeGb"], p.Child("diskSizeGb")),
		Labels:      d.stringMap(f["labels"], p.Child("labels")),
	}
	if b := d.boolean(f["spot"], p.Child("spot")); b != nil {
		pool.Spot = *b
	}
	tp := p.Child("taints")
	for i, t := range d.list(f["taints"], tp) {
		ip := tp.Index(i)
		tf := d.fields(t, ip, fieldsTaint...)
		pool.Taints = append(pool.Taints, Taint{
			Key:    d.str(tf["key"], ip.Child("key")),
			Value:  d.str(tf["value"], ip.Child("value")),
			Effect: d.str(tf["effect"], ip.Child("effect")),
		})
	}
	return pool
}

func (d *decoder) budget(v *structpb.Value, p *field.Path) *Budget {
	f := d.fields(v, p, fieldsBudget...)
	b := &Budget{
		Period:      d.str(f["period"], p.Child("period")),
		Contacts:    d.strings(f["contacts"], p.Child("contacts")),
		Enforcement: d.str(f["enforcement"], p.Child("enforcement")),
	}
	if n := d.number(f["limitUsd"], p.Child("limitUsd")); n != nil {
		b.LimitUSD = *n
	}
	tp := p.Child("thresholds")
	for i, t := range d.list(f["thresholds"], tp) {
		if n := d.number(t, tp.Index(i)); n != nil {
			b.Thresholds = append(b.Thresholds, *n)
		}
	}
	b.SpendRef = d.spendRef(f["spendRef"], p.Child("spendRef"))
	return b
}

func (d *decoder) spendRef(v *structpb.Value, p *field.Path) *SpendRef {
	if v == nil || isNull(v) {
		return nil
	}
	f := d.fields(v, p, fieldsSpendRef...)
	return &SpendRef{
		APIVersion: d.str(f["apiVersion"], p.Child("apiVersion")),
		Kind:       d.str(f["kind"], p.Child("kind")),
		Name:       d.str(f["name"], p.Child("name")),
		Namespace:  d.str(f["namespace"], p.Child("namespace")),
		FieldPath:  d.str(f["fieldPath"], p.Child("fieldPath")),
	}
}

// NormalisePoolName turns a pool key into the name used in resource names:
// lower case, with every character outside [a-z0-9-] replaced by '-'.
func NormalisePoolName(key string) string { return names.Normalise(key) }

// PoolNames returns the normalised names of the pools, sorted.
func (p Parameters) PoolNames() []string {
	out := make([]string, 0, len(p.Pools))
	for _, pool := range p.Pools {
		out = append(out, pool.Name)
	}
	sort.Strings(out)
	return out
}

// Private reports whether the cluster is private, with the supplied default.
func (p Parameters) Private(def bool) bool {
	if p.PrivateCluster == nil {
		return def
	}
	return *p.PrivateCluster
}

// DNSZones reports whether DNS zones are wanted: createDnsZones, which
// defaults to true when a domain is set.
func (p Parameters) DNSZones() bool {
	if p.CreateDNSZones == nil {
		return p.Domain != ""
	}
	return *p.CreateDNSZones
}
