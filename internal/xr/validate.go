package xr

import (
	"fmt"
	"net/netip"
	"regexp"
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

// Validate checks the cloud-independent rules of the XR. clouds lists the
// registered cloud labels. Every error names its field path and, for
// enumerations, the allowed values.
func Validate(xr *Composite, clouds []string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case xr.Cloud == "":
		errs = append(errs, field.Required(LabelPath(LabelCloud), "the cloud label selects the cloud layer; supported values: "+quoteAll(clouds)))
	case !contains(clouds, xr.Cloud):
		errs = append(errs, field.NotSupported(LabelPath(LabelCloud), xr.Cloud, clouds))
	}
	if xr.PlaneID == "" {
		errs = append(errs, field.Required(LabelPath(LabelPlaneID), "the GCP project, AWS account or Azure subscription the cluster lives in"))
	}
	p := xr.Parameters
	if p.Location == "" {
		errs = append(errs, field.Required(ParametersPath("location"), "the region (or, on GCP, zone) of the cluster"))
	}
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
	errs = append(errs, validatePools(p.Pools)...)
	errs = append(errs, validateImport(p.Import)...)
	if p.Budget != nil {
		errs = append(errs, validateBudget(p.Budget)...)
	}
	return errs
}

func validatePools(pools []Pool) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]string{}
	pp := ParametersPath("pools")
	for _, pool := range pools {
		p := pp.Key(pool.Key)
		if other, dup := seen[pool.Name]; dup {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("pools %q and %q both normalise to the name %q", other, pool.Key, pool.Name)))
		}
		seen[pool.Name] = pool.Key
		if len(pool.Name) > MaxPoolNameLength || !rePoolName.MatchString(pool.Name) {
			errs = append(errs, field.Invalid(p, pool.Key, fmt.Sprintf("a pool name must start with a letter, contain only letters, digits and '-', and be at most %d characters", MaxPoolNameLength)))
		}
		if pool.MinNodes != nil && *pool.MinNodes < 0 {
			errs = append(errs, field.Invalid(p.Child("minNodes"), *pool.MinNodes, "must be zero or more"))
		}
		if pool.MaxNodes != nil && *pool.MaxNodes < 1 {
			errs = append(errs, field.Invalid(p.Child("maxNodes"), *pool.MaxNodes, "must be one or more"))
		}
		if pool.MinNodes != nil && pool.MaxNodes != nil && *pool.MinNodes > *pool.MaxNodes {
			errs = append(errs, field.Invalid(p.Child("minNodes"), *pool.MinNodes, fmt.Sprintf("must not exceed maxNodes (%d)", *pool.MaxNodes)))
		}
		if pool.DiskSizeGB != nil && (*pool.DiskSizeGB < 20 || *pool.DiskSizeGB > 65536) {
			errs = append(errs, field.Invalid(p.Child("diskSizeGb"), *pool.DiskSizeGB, "must be between 20 and 65536"))
		}
		for k := range pool.Labels {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(p.Child("labels").Key(k), k, msg))
			}
		}
		for i, t := range pool.Taints {
			tp := p.Child("taints").Index(i)
			if t.Key == "" {
				errs = append(errs, field.Required(tp.Child("key"), "a taint needs a key"))
			}
			for _, msg := range validation.IsQualifiedName(t.Key) {
				if t.Key != "" {
					errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
				}
			}
			if !contains(TaintEffects, t.Effect) {
				errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, TaintEffects))
			}
		}
	}
	return errs
}

func validateImport(imp Import) field.ErrorList {
	var errs field.ErrorList
	ip := ParametersPath("import")
	if imp.Mode != "" && !contains(ImportModes, imp.Mode) {
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

func validateBudget(b *Budget) field.ErrorList {
	var errs field.ErrorList
	bp := ParametersPath("budget")
	if b.LimitUSD <= 0 {
		errs = append(errs, field.Invalid(bp.Child("limitUsd"), b.LimitUSD, "must be greater than zero"))
	}
	if b.Period != "" && !contains(BudgetPeriods, b.Period) {
		errs = append(errs, field.NotSupported(bp.Child("period"), b.Period, BudgetPeriods))
	}
	if b.Enforcement != "" && !contains(EnforcementModes, b.Enforcement) {
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

// ValidateClusterName checks the cluster's cloud name against the rule every
// cloud layer shares: a lower-case letter, then lower-case letters, digits
// and '-', not ending with '-', at most max characters. product names the
// managed cluster (GKE, EKS, AKS); why, when set, explains the limit.
func ValidateClusterName(x *Composite, max int, product, why string) field.ErrorList {
	if len(x.ClusterName) <= max && reCloudName.MatchString(x.ClusterName) {
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
	return field.ErrorList{field.Invalid(p, x.ClusterName, fmt.Sprintf(
		"%s cluster names start with a lower-case letter, contain only lower-case letters, digits and '-', do not end with '-', and have at most %d characters%s; set the clusterName label to choose one",
		product, max, why))}
}
