package registry

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// A Principal is who wrote an overlay. The two have different powers: the
// platform team configures the fleet, an XR's author (a tenant, on
// Crossplane v2 a user of the XR's namespace) configures one platform.
type Principal int

// Principals.
const (
	// Platform is the platform team: EnvironmentConfig data.overrides.
	Platform Principal = iota
	// Tenant is the XR's author: spec.parameters.overrides and the
	// spec.forProvider passthrough.
	Tenant
)

// Rules of the overrides policy, quoted in every refusal.
const (
	ruleIdentity = "what a resource is (apiVersion, kind, name, namespace) is the function's"
	ruleReserved = "labels and annotations of the crossplane.io, platform.example.org, upbound.io, kubernetes.io and k8s.io domains are reserved: they carry external names, import markers and the function's own bookkeeping"
	ruleMetadata = "metadata.labels and metadata.annotations merge key by key; replacing them whole would drop reserved keys"
	ruleImport   = "an imported resource's management and deletion policies are set by spec.parameters.import; no override weakens import protection"
	ruleTenant   = "an XR's overrides reach spec.forProvider, spec.initProvider and non-reserved metadata labels and annotations only; management and deletion policies, provider configs, connection-secret targets and every other field are the platform's"
	ruleSecret   = "credentials are the platform's: they reach a resource only as references the platform sets"
	ruleRefs     = "references to other resources (…Ref, …Refs, …Selector) and the fields they resolve are the platform's: the function wires them, and a value set there could point at another tenant's resources"
	ruleVersion  = "versions move only through spec.parameters.version (or the environment's version), in the steps the lifecycle walks (Kubernetes one minor at a time, control plane first; PostgreSQL in the steps its cloud upgrades in place): an override would skip, downgrade or put a node pool ahead of its control plane"
)

// reCredentialKey matches field names that hold or locate credentials.
var reCredentialKey = regexp.MustCompile(`(?i)(secret|password|passwd|credential|token|privatekey|masterauth)`)

// reservedDomains are the label and annotation domains overlays never set.
var reservedDomains = []string{"crossplane.io", "platform.example.org", "upbound.io", "kubernetes.io", "k8s.io"}

// Reserved reports whether a label or annotation key belongs to a reserved
// domain (or a subdomain of one).
func Reserved(key string) bool {
	i := strings.LastIndex(key, "/")
	if i < 0 {
		return false
	}
	prefix := key[:i]
	for _, d := range reservedDomains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return true
		}
	}
	return false
}

// checkPolicy returns every path of an overlay that the principal may not
// set on the rendered resource, each with the rule it breaks. root is the
// overlay's own field path, for messages, which already names the first
// skip segments of the overlay's paths; imported says whether the resource
// is (or was) imported.
func checkPolicy(root *field.Path, skip int, who Principal, rd *Rendered, imported bool, ov map[string]any) field.ErrorList {
	var errs field.ErrorList
	walk(ov, nil, func(path []string, v any) {
		if reason := refusal(who, rd, imported, path, v); reason != "" {
			errs = append(errs, field.Forbidden(fieldPath(root, path[skip:]), reason))
		}
	})
	return errs
}

// walk calls leaf for every leaf of an overlay: a value that is not an
// object (a scalar, a list or null, which replace what is there), with its
// path. Empty objects change nothing and are skipped. Lists are leaves, but
// the objects inside them are walked too, under index segments, so that a
// credential inside a list is found.
func walk(v map[string]any, path []string, leaf func(path []string, v any)) {
	for _, k := range slices.Sorted(maps.Keys(v)) {
		p := append(slices.Clip(path), k)
		switch t := v[k].(type) {
		case map[string]any:
			walk(t, p, leaf)
		case []any:
			leaf(p, t)
			for i, item := range t {
				if m, ok := item.(map[string]any); ok {
					walk(m, append(slices.Clip(p), "["+strconv.Itoa(i)+"]"), leaf)
				}
			}
		default:
			leaf(p, t)
		}
	}
}

// refusal returns the rule a principal breaks by setting path to v, or "".
func refusal(who Principal, rd *Rendered, imported bool, path []string, v any) string {
	k := rd.Kind
	if r := structural(path, v); r != "" {
		return r
	}
	if imported && under(path, "spec") && (len(path) == 1 || path[1] == "managementPolicies" || path[1] == "deletionPolicy") {
		return ruleImport
	}
	if walked(k, path) {
		return ruleVersion
	}
	if who == Platform {
		return ""
	}
	return tenant(rd, path)
}

// walked reports whether an overlay path sets, or holds, a version field of
// the kind (a Walk entry of its table), in spec.forProvider or
// spec.initProvider.
func walked(k *ResourceKind, path []string) bool {
	if len(path) < 2 || path[0] != "spec" || (path[1] != "forProvider" && path[1] != "initProvider") {
		return false
	}
	p := "spec.forProvider." + strings.Join(path[2:], ".")
	for _, f := range k.Replacements {
		if f.Action != lifecycle.Walk {
			continue
		}
		if p == f.Path || strings.HasPrefix(f.Path, p+".") || strings.HasPrefix(p, f.Path+".") {
			return true
		}
	}
	return false
}

// structural is the part of the policy both principals share: identity,
// reserved labels and annotations.
func structural(path []string, v any) string {
	switch {
	case len(path) == 1 && (path[0] == "apiVersion" || path[0] == "kind"):
		return ruleIdentity
	case under(path, "metadata"):
		if len(path) == 1 {
			return ruleMetadata
		}
		switch path[1] {
		case "name", "namespace", "generateName":
			return ruleIdentity
		case "labels", "annotations":
			if len(path) == 2 {
				if _, isMap := v.(map[string]any); !isMap {
					return ruleMetadata
				}
			}
			if len(path) >= 3 && Reserved(path[2]) {
				return ruleReserved
			}
		}
	}
	return ""
}

// tenant is what an XR's author may not set beyond the structural rules:
// anything outside spec.forProvider and spec.initProvider of a managed
// resource and non-reserved labels and annotations; credentials and
// references inside them; and the paths the kind guards.
func tenant(rd *Rendered, path []string) string {
	k := rd.Kind
	if under(path, "metadata") && len(path) >= 3 && (path[1] == "labels" || path[1] == "annotations") {
		return ""
	}
	if !k.Managed() || len(path) < 2 || path[0] != "spec" || (path[1] != "forProvider" && path[1] != "initProvider") {
		// Only managed resources have forProvider and initProvider; a
		// ProviderConfig or a Usage is the platform's through and through.
		return ruleTenant
	}
	dotted := strings.Join(path, ".")
	for _, g := range k.Guarded {
		if dotted == g.Path || strings.HasPrefix(dotted, g.Path+".") || strings.HasPrefix(g.Path, dotted+".") {
			return g.Why
		}
	}
	for _, o := range k.Opaque {
		if dotted == o || strings.HasPrefix(dotted, o+".") {
			// Payloads such as Helm values or an Object's manifest are
			// not provider fields: their keys mean nothing to the provider.
			return ""
		}
	}
	if resolvesReference(rd, path) {
		return ruleRefs
	}
	for _, seg := range path[2:] {
		switch {
		case reCredentialKey.MatchString(seg):
			return ruleSecret
		case object.IsReference(seg):
			return ruleRefs
		}
	}
	return ""
}

// resolvesReference reports whether an overlay path under spec.forProvider
// or spec.initProvider sets a field of the kind that a reference resolves
// (a value there is used instead of a reference, and could name another
// tenant's resource), or replaces a list or object under which the rendered
// resource holds a reference the function wires. Index segments of list
// items are passed over: the CRDs' paths name a list's items by the list.
func resolvesReference(rd *Rendered, path []string) bool {
	refs, _ := rd.Kind.References()
	if len(refs) == 0 || len(path) < 3 {
		return false
	}
	segs := make([]string, 0, len(path))
	for _, s := range path[2:] {
		if !strings.HasPrefix(s, "[") {
			segs = append(segs, s)
		}
	}
	dotted := strings.Join(segs, ".")
	for _, r := range refs {
		if dotted == r || strings.HasPrefix(dotted, r+".") {
			return true
		}
		if strings.HasPrefix(r, dotted+".") && wiresReference(at(rd.Object, path)) {
			return true
		}
	}
	return false
}

// at is the value of an object at an overlay path, or nil.
func at(o object.Object, path []string) any {
	var cur any = map[string]any(o)
	for _, s := range path {
		switch t := cur.(type) {
		case map[string]any:
			cur = t[s]
		case []any:
			i, err := strconv.Atoi(strings.Trim(s, "[]"))
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			cur = t[i]
		default:
			return nil
		}
	}
	return cur
}

// wiresReference reports whether a rendered value holds a reference or a
// selector anywhere inside it.
func wiresReference(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, item := range t {
			if object.IsReference(k) || wiresReference(item) {
				return true
			}
		}
	case []any:
		for _, item := range t {
			if wiresReference(item) {
				return true
			}
		}
	}
	return false
}

// WhyNodeCounts is why node counts are guarded: they come from the pools'
// minNodes and maxNodes, where bounds and budget enforcement apply.
const WhyNodeCounts = "node counts come from spec.parameters.pools (minNodes, maxNodes), where the bounds and budget enforcement apply"

// WhyIdentity is why identities, trusts and grants are guarded: an XR's
// author who could edit them could make its workloads act as anyone, or
// anyone act as them.
const WhyIdentity = "who may act as an identity, and what it may do, is the platform's: an XR's overrides may not widen a role, a grant or a trust"

// WhyRecord is why a DNS record's zone, name and values are guarded: the
// zone is shared, a parent zone by other teams, a Cluster's zone by its
// environments.
const WhyRecord = "a record lives in a zone others share: its zone, name and values come from the XR's parameters (domain and parentZone, an environment's frontend.host), so that no XR can take over another's name"

// WhyHost is why the hosts a resource serves or publishes are guarded:
// hosts are global, and a namespace uses only those the platform team
// assigned it (environment key tenancy), which the XR's parameters are
// checked against.
const WhyHost = "hosts are global: a resource serves or publishes only the hosts of the XR's parameters (spec.parameters.domain, ingress.host, frontend.host), which must be assigned to its namespace (environment key tenancy)"

// WhyPrivate is why a database's network exposure is guarded: it is
// reachable only privately, whoever asks.
const WhyPrivate = "a database is reachable only privately: public access is not the XR author's to open"

// A Guard is a path of a kind that only the function sets for tenants,
// with why.
type Guard struct {
	// Path is a dotted field path, such as spec.forProvider.chart.
	Path string
	// Why is the rule quoted when an XR's overrides set it.
	Why string
}

// under reports whether path starts with the supplied segment.
func under(path []string, first string) bool { return len(path) > 0 && path[0] == first }

// fieldPath is the field path of an overlay path under root. Index
// segments ("[3]") become list indexes.
func fieldPath(root *field.Path, path []string) *field.Path {
	p := root
	for _, s := range path {
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			if i, err := strconv.Atoi(s[1 : len(s)-1]); err == nil {
				p = p.Index(i)
				continue
			}
		}
		if strings.ContainsAny(s, "./") {
			// A label or annotation key such as crossplane.io/external-name.
			p = p.Key(s)
			continue
		}
		p = p.Child(s)
	}
	return p
}
