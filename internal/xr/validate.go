package xr

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Allowed values of enumerated fields.
var (
	TaintEffects     = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	ImportModes      = []string{ImportObserve, ImportManage}
	BudgetPeriods    = []string{"Monthly", "Quarterly", "Annually"}
	EnforcementModes = []string{EnforcementMonitorOnly, EnforcementEnabled}
)

var (
	reCloudName = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	reVersion   = regexp.MustCompile(`^1\.[0-9]{1,3}$`)
	rePoolName  = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	reEmail     = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

// MaxPoolNameLength bounds pool names everywhere; a cloud may be stricter
// (AKS node pools, for one, take at most 12 characters).
const MaxPoolNameLength = 40

// Bounds of an XR. Exceeding one is a Fatal naming the limit: the function
// runs on every reconcile, and an unbounded input would make every call of
// the fleet slow, or a response too large for Crossplane to take.
const (
	// MaxPools is the most pools an XR (or the environment's default
	// pools) may define. EKS's default quota is 30 node groups per cluster,
	// AKS's limit 100 node pools.
	MaxPools = 50
	// MaxNodes is the largest node count of a pool: GKE's, EKS's and AKS's
	// per-pool limit.
	MaxNodes = 1000
	// MaxPoolLabels and MaxPoolTaints bound a pool's node labels and
	// taints.
	MaxPoolLabels = 32
	MaxPoolTaints = 20
	// MaxThresholds and MaxContacts bound a budget's notifications (AWS
	// Budgets takes at most 10 subscribers a notification).
	MaxThresholds = 10
	MaxContacts   = 10
	// MaxConfirmRemovals bounds spec.parameters.confirmRemovals.
	MaxConfirmRemovals = 200
)

// usageInfix joins the two names of a Usage's composition-resource name.
const usageInfix = "-uses-"

// ValidateComposite checks the rules every XR kind shares: the cloud and
// planeId labels, import and confirmRemovals. clouds lists the registered
// cloud labels.
func ValidateComposite(x *Composite, clouds []string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case x.Cloud == "":
		errs = append(errs, field.Required(LabelPath(LabelCloud), "the cloud label selects the cloud layer; supported values: "+quoteAll(clouds)))
	case !slices.Contains(clouds, x.Cloud):
		errs = append(errs, field.NotSupported(LabelPath(LabelCloud), x.Cloud, clouds))
	}
	if x.PlaneID == "" {
		errs = append(errs, field.Required(LabelPath(LabelPlaneID), "the GCP project, AWS account or Azure subscription the resources live in"))
	}
	errs = append(errs, validateImport(x.Import)...)
	return append(errs, validateConfirmRemovals(x.ConfirmRemovals)...)
}

// RequireLocation refuses a Cluster without a location once the
// environment's default (key location) applied.
func RequireLocation(x *Cluster) field.ErrorList {
	if x.Parameters.Location != "" {
		return nil
	}
	return field.ErrorList{field.Required(ParametersPath("location"), "the region (or, on GCP, zone) of the cluster; or environment key location")}
}

// Validate checks the cloud-independent rules of a Cluster XR. clouds lists
// the registered cloud labels. Every error names its field path and, for
// enumerations, the allowed values.
func Validate(xr *Cluster, clouds []string) field.ErrorList {
	errs := ValidateComposite(&xr.Composite, clouds)
	p := xr.Parameters
	if p.Version != "" && !reVersion.MatchString(p.Version) {
		errs = append(errs, field.Invalid(ParametersPath("version"), p.Version, "must be a Kubernetes minor version such as \"1.33\""))
	}
	if p.Domain != "" {
		errs = append(errs, ValidateDomain(ParametersPath("domain"), p.Domain)...)
	}
	np := ParametersPath("network")
	for _, c := range []struct{ name, value string }{
		{"cidr", p.Network.CIDR}, {"podsCidr", p.Network.PodsCIDR}, {"servicesCidr", p.Network.ServicesCIDR},
	} {
		if c.value == "" {
			continue
		}
		if _, err := ParseCIDR(c.value); err != nil {
			errs = append(errs, field.Invalid(np.Child(c.name), c.value, err.Error()))
		}
	}
	errs = append(errs, ValidatePools(p.Pools, ParametersPath("pools"))...)
	if p.Budget != nil {
		errs = append(errs, validateBudget(p.Budget)...)
	}
	if p.Maintenance != nil {
		errs = append(errs, validateMaintenance(p.Maintenance)...)
	}
	return errs
}

// Weekdays are the days a maintenance window may start on.
var Weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// Bounds of a maintenance window's duration, in hours: AKS's planned
// maintenance takes 4 to 24 hours.
const (
	MinMaintenanceHours = 4
	MaxMaintenanceHours = 24
)

var reClock = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// validateMaintenance checks the weekly window's day, start and duration.
func validateMaintenance(m *Maintenance) field.ErrorList {
	var errs field.ErrorList
	mp := ParametersPath("maintenance")
	if !slices.Contains(Weekdays, m.Day) {
		errs = append(errs, field.NotSupported(mp.Child("day"), m.Day, Weekdays))
	}
	if !reClock.MatchString(m.StartTime) {
		errs = append(errs, field.Invalid(mp.Child("startTime"), m.StartTime, "must be a time of day in UTC, HH:MM, such as \"02:00\""))
	}
	switch h := m.DurationHours; {
	case h == nil:
		errs = append(errs, field.Required(mp.Child("durationHours"), fmt.Sprintf("how long the window lasts, %d to %d hours", MinMaintenanceHours, MaxMaintenanceHours)))
	case *h < MinMaintenanceHours || *h > MaxMaintenanceHours:
		errs = append(errs, field.Invalid(mp.Child("durationHours"), *h, fmt.Sprintf("must be %d to %d hours", MinMaintenanceHours, MaxMaintenanceHours)))
	}
	return errs
}

// ValidatePools checks pools, from the XR or from the environment (root
// says which), against the rules every cloud shares: names, node counts,
// disk sizes, labels and taints, and the bounds.
func ValidatePools(pools []Pool, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(pools) > MaxPools {
		return field.ErrorList{field.TooMany(root, len(pools), MaxPools)}
	}
	seen := map[string]string{}
	for _, pool := range pools {
		p := root.Key(pool.Key)
		if other, dup := seen[pool.Name]; dup {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("pools %q and %q both normalise to the name %q", other, pool.Key, pool.Name)))
		}
		seen[pool.Name] = pool.Key
		switch {
		case len(pool.Name) > MaxPoolNameLength || !rePoolName.MatchString(pool.Name):
			errs = append(errs, field.Invalid(p, pool.Key, fmt.Sprintf("a pool name must start with a letter, contain only letters, digits and '-', and be at most %d characters", MaxPoolNameLength)))
		case strings.Contains(pool.Name, usageInfix):
			errs = append(errs, field.Invalid(p, pool.Key, fmt.Sprintf("a pool name must not contain %q, which the names of Usages are made of", usageInfix)))
		}
		errs = append(errs, validateCounts(pool, p)...)
		if pool.DiskSizeGB != nil && (*pool.DiskSizeGB < 20 || *pool.DiskSizeGB > 65536) {
			errs = append(errs, field.Invalid(p.Child("diskSizeGb"), *pool.DiskSizeGB, "must be between 20 and 65536"))
		}
		errs = append(errs, validateLabels(pool.Labels, p.Child("labels"))...)
		errs = append(errs, validateTaints(pool.Taints, p.Child("taints"))...)
	}
	return errs
}

func validateCounts(pool Pool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := pool.MinNodes; n != nil && (*n < 0 || *n > MaxNodes) {
		errs = append(errs, field.Invalid(p.Child("minNodes"), *n, fmt.Sprintf("must be between 0 and %d", MaxNodes)))
	}
	if n := pool.MaxNodes; n != nil && (*n < 1 || *n > MaxNodes) {
		errs = append(errs, field.Invalid(p.Child("maxNodes"), *n, fmt.Sprintf("must be between 1 and %d", MaxNodes)))
	}
	if pool.MinNodes != nil && pool.MaxNodes != nil && *pool.MinNodes > *pool.MaxNodes {
		errs = append(errs, field.Invalid(p.Child("minNodes"), *pool.MinNodes, fmt.Sprintf("must not exceed maxNodes (%d)", *pool.MaxNodes)))
	}
	return errs
}

func validateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	if len(labels) > MaxPoolLabels {
		return field.ErrorList{field.TooMany(p, len(labels), MaxPoolLabels)}
	}
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Key(k), Brief(k), msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(p.Key(k), Brief(labels[k]), msg))
		}
	}
	return errs
}

func validateTaints(taints []Taint, p *field.Path) field.ErrorList {
	if len(taints) > MaxPoolTaints {
		return field.ErrorList{field.TooMany(p, len(taints), MaxPoolTaints)}
	}
	var errs field.ErrorList
	for i, t := range taints {
		tp := p.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(tp.Child("key"), "a taint needs a key"))
		}
		for _, msg := range validation.IsQualifiedName(t.Key) {
			if t.Key != "" {
				errs = append(errs, field.Invalid(tp.Child("key"), Brief(t.Key), msg))
			}
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(tp.Child("value"), Brief(t.Value), msg))
		}
		if !slices.Contains(TaintEffects, t.Effect) {
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, TaintEffects))
		}
	}
	return errs
}

// Brief shortens a value quoted in a message: a 3 MB label value is named,
// not repeated.
func Brief(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:most], len(s))
}

func validateImport(imp Import) field.ErrorList {
	var errs field.ErrorList
	ip := ParametersPath("import")
	if imp.Mode != "" && !slices.Contains(ImportModes, imp.Mode) {
		errs = append(errs, field.NotSupported(ip.Child("mode"), imp.Mode, ImportModes))
	}
	if imp.Enabled && len(imp.Resources) == 0 {
		errs = append(errs, field.Required(ip.Child("resources"), "name at least one resource to import, keyed by composition-resource name"))
	}
	for k, v := range imp.Resources {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, field.Required(ip.Child("resources").Key(k), "the existing cloud name of the resource"))
		}
	}
	return errs
}

func validateConfirmRemovals(names []string) field.ErrorList {
	p := ParametersPath("confirmRemovals")
	if len(names) > MaxConfirmRemovals {
		return field.ErrorList{field.TooMany(p, len(names), MaxConfirmRemovals)}
	}
	var errs field.ErrorList
	for i, n := range names {
		if n == "" {
			errs = append(errs, field.Required(p.Index(i), "a composition-resource name, such as nodepool-batch"))
		}
	}
	return errs
}

func validateBudget(b *Budget) field.ErrorList {
	var errs field.ErrorList
	bp := ParametersPath("budget")
	if len(b.Thresholds) > MaxThresholds {
		errs = append(errs, field.TooMany(bp.Child("thresholds"), len(b.Thresholds), MaxThresholds))
	}
	if len(b.Contacts) > MaxContacts {
		errs = append(errs, field.TooMany(bp.Child("contacts"), len(b.Contacts), MaxContacts))
	}
	if b.LimitUSD <= 0 {
		errs = append(errs, field.Invalid(bp.Child("limitUsd"), b.LimitUSD, "must be greater than zero"))
	}
	if b.Period != "" && !slices.Contains(BudgetPeriods, b.Period) {
		errs = append(errs, field.NotSupported(bp.Child("period"), b.Period, BudgetPeriods))
	}
	if b.Enforcement != "" && !slices.Contains(EnforcementModes, b.Enforcement) {
		errs = append(errs, field.NotSupported(bp.Child("enforcement"), b.Enforcement, EnforcementModes))
	}
	for i, t := range b.Thresholds {
		if t <= 0 || t > 1000 {
			errs = append(errs, field.Invalid(bp.Child("thresholds").Index(i), t, "must be a percentage greater than 0 and at most 1000"))
		}
	}
	for i, c := range b.Contacts {
		if !reEmail.MatchString(c) {
			errs = append(errs, field.Invalid(bp.Child("contacts").Index(i), c, "must be an e-mail address"))
		}
	}
	return append(errs, validateSpendRef(b.SpendRef, bp.Child("spendRef"))...)
}

func validateSpendRef(r *SpendRef, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"apiVersion", r.APIVersion}, {"kind", r.Kind}, {"name", r.Name}, {"fieldPath", r.FieldPath}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), "needed to read the month-to-date spend"))
		}
	}
	return errs
}

// ValidateDomain checks a DNS domain such as prod.example.com.
func ValidateDomain(p *field.Path, domain string) field.ErrorList {
	if strings.HasSuffix(domain, ".") {
		return field.ErrorList{field.Invalid(p, domain, "must not end with a dot")}
	}
	if msgs := validation.IsDNS1123Subdomain(domain); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, domain, "must be a lower-case DNS name such as prod.example.com: "+strings.Join(msgs, "; "))}
	}
	if !strings.Contains(domain, ".") {
		return field.ErrorList{field.Invalid(p, domain, "must have at least two labels, such as example.com")}
	}
	for _, l := range strings.Split(domain, ".") {
		if strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return field.ErrorList{field.Invalid(p, domain, fmt.Sprintf("label %q must not start or end with '-'", l))}
		}
	}
	return nil
}

// ParseCIDR parses an IPv4 CIDR block and requires it to be the network
// address of its prefix (10.0.0.0/16, not 10.0.0.1/16), as every cloud does.
func ParseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("must be an IPv4 CIDR block such as 10.0.0.0/16")
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("must be an IPv4 CIDR block")
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("must be a network address; did you mean %s?", p.Masked())
	}
	return p, nil
}

func quoteAll(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// ValidateCloudName checks the XR's cloud name against the rule every cloud
// layer shares: a lower-case letter, then lower-case letters, digits and
// '-', not ending with '-', at most max characters. product names what is
// named (GKE, EKS, AKS, Cloud SQL, ...); why, when set, explains the limit.
func ValidateCloudName(x *Composite, max int, product, why string) field.ErrorList {
	n := x.BareName
	if n == "" {
		n = x.CloudName
	}
	if len(n) <= max && reCloudName.MatchString(n) && !strings.HasPrefix(n, "xn--") {
		return nil
	}
	p := field.NewPath("metadata", "name")
	switch {
	case x.Labels[LabelClusterName] != "":
		p = LabelPath(LabelClusterName)
	case x.Labels[labelClaimName] != "":
		p = LabelPath(labelClaimName)
	}
	if why != "" {
		why = " (" + why + ")"
	}
	hint := "; set the clusterName label to choose one"
	if x.Labels[LabelClusterName] == "" && x.Kind != "" && !strings.HasSuffix(x.Kind, "Cluster") {
		hint = "; choose another name"
	}
	return field.ErrorList{field.Invalid(p, n, fmt.Sprintf(
		"%s names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', do not start with 'xn--' (a look-alike host's punycode), and have at most %d characters%s%s",
		product, max, why, hint))}
}
