package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Readiness is how a composed resource's readiness is derived from its
// observed state.
type Readiness int

// Readiness rules.
const (
	// ReadyCondition: ready when the observed resource's Ready condition
	// is True. The rule for every managed resource.
	ReadyCondition Readiness = iota
	// ReadyWhenObserved: ready once the resource exists. For kinds with no
	// conditions, such as ProviderConfig and Usage.
	ReadyWhenObserved
	// ReadyWhenReported: ready when the Ready condition is True and the
	// provider reports the kind's Reported field: for resources whose
	// provider says Ready once created but whose cloud finishes later (a
	// managed certificate is issued once its DNS is in place).
	ReadyWhenReported
)

// A ResourceKind is one concrete Kubernetes kind a cloud composes, with the exact
// apiVersion it is served at for each XR scope.
type ResourceKind struct {
	// Kind is the Kubernetes kind, e.g. "Subnetwork".
	Kind string
	// ClusterKind is the kind composed by cluster-scoped XRs when it is
	// not Kind: a legacy XR's kind (XDatabase for Database).
	ClusterKind string
	// Namespaced is the apiVersion composed by namespaced XRs (a .m.
	// group), e.g. "compute.gcp.m.upbound.io/v1beta1".
	Namespaced string
	// Cluster is the apiVersion composed by cluster-scoped XRs (a legacy
	// group), e.g. "compute.gcp.upbound.io/v1beta2".
	Cluster string
	// Provider names the provider-config family (a key of the
	// environment's providerConfigs) whose reference the resource gets;
	// empty for kinds that take no providerConfigRef.
	Provider string
	// Ready is the readiness rule.
	Ready Readiness
	// Reported is the dotted path of the observed field that says the
	// cloud finished (ReadyWhenReported).
	Reported string
	// Required lists dotted field paths that overlays must not remove.
	Required []string
	// Replacements is the kind's table of the fields its provider can
	// change only by replacing the cloud resource, from the wrapped
	// Terraform provider's schema, each with what the function does about
	// a change: refuse it, rotate the node pool, let the provider cycle it,
	// or walk the version (see package lifecycle). Every kind a cloud
	// composes declares its table (Replaces), even when it holds nothing
	// but the region, so that a kind nobody checked fails
	// TestReplacements.
	Replacements []lifecycle.Field
	// Declared is set once the kind's table was declared.
	Declared bool
	// Table is the Terraform resource whose schema the kind's generated
	// table of replacement-only fields was read from (Cloud.Generated),
	// such as google_container_node_pool; empty when none was merged.
	Table string
	// NoTable says why the kind has no generated table: it wraps no
	// Terraform resource (provider-kubernetes, -helm and -sql kinds,
	// ProviderConfigs, Usages, nested XRs). Set with WithoutTable.
	NoTable string
	// NodeCount is the dotted path of the node count a node pool kind's
	// provider reports (for the capacity a rotation keeps).
	NodeCount string
	// Guarded lists paths under spec.forProvider and spec.initProvider that
	// an XR's overrides may not set, each with why (say, a Helm chart's
	// source, or node counts that bounds and budget enforcement own).
	Guarded []Guard
	// Opaque lists dotted paths of payloads whose keys are not provider
	// fields (Helm values, an Object's manifest): the policy's checks of
	// field names do not apply inside them.
	Opaque []string
	// Roles are the kind's deletion roles, which decide the dependency
	// edges that get a Usage (UsageRules).
	Roles DeletionRole
}

// Replaces declares the kind's table of replacement-only fields: the
// region every Upjet kind has, and fields.
func (k *ResourceKind) Replaces(fields ...lifecycle.Field) *ResourceKind {
	k.Replacements = append(k.Replacements, fields...)
	k.Declared = true
	return k
}

// WithoutTable declares that the kind has no generated table of
// replacement-only fields, and why: it wraps no Terraform resource.
func (k *ResourceKind) WithoutTable(why string) *ResourceKind {
	k.NoTable = why
	k.Declared = true
	return k
}

// A Table is a kind's generated table of replacement-only fields: every
// attribute of the wrapped Terraform resource its schema forces a new
// resource for, by its spec.forProvider path (cmd/replacegen writes
// them into each cloud's zz_replacements.go).
type Table struct {
	// Resource is the Terraform resource, such as
	// google_container_node_pool.
	Resource string
	// Fields are its entries, each with the attribute and the file and
	// lines of the schema it was read from; their action is Refuse, or
	// Raise for a custom diff's replacement of a decrease. An entry its
	// provider replaces only on a condition names its Rule.
	Fields []lifecycle.Field
}

// Conditions are a cloud's conditions on which its provider replaces a
// resource for a change of a field that its custom diff (or a Framework
// plan modifier) replaces only on a condition: by Terraform
// resource.attribute, or *.attribute for one of every resource (a provider
// wrapper's region), each with the provider source it was read from. Every
// generated entry with a Rule has one: either evaluated (Replaces), or
// saying Why it is not, and then every change is refused (or rotates a
// node pool), as without one.
type Conditions map[string]lifecycle.Condition

// of is the condition of a Terraform resource.attribute.
func (cs Conditions) of(attr string) (lifecycle.Condition, string, bool) {
	if c, ok := cs[attr]; ok {
		return c, attr, true
	}
	if _, a, ok := strings.Cut(attr, "."); ok {
		if c, ok := cs["*."+a]; ok {
			return c, "*." + a, true
		}
	}
	return lifecycle.Condition{}, "", false
}

// Unregistered checks a cloud's conditions against its generated tables:
// each generated entry with a Rule whose attribute has no condition, and
// each condition that names no such attribute, in words. Each cloud's
// tests hold it empty (a missing registration fails a test).
func (cs Conditions) Unregistered(tables map[string]Table) []string {
	var out []string
	used := map[string]bool{}
	for key, t := range tables {
		for _, f := range t.Fields {
			if f.Rule == "" {
				continue
			}
			attr := attribute(f.Attribute)
			_, k, ok := cs.of(attr)
			if !ok {
				out = append(out, fmt.Sprintf("%s %s: %s replaces it on a condition (%s), which the cloud's conditions do not give: write it (Replaces, from the provider's source), or say Why every change is refused", key, f.Path, attr, f.Rule))
				continue
			}
			used[k] = true
		}
	}
	for k, c := range cs {
		if !used[k] {
			out = append(out, fmt.Sprintf("condition %s names no generated entry with a rule", k))
		}
		if c.Source == "" || (c.Replaces == nil) == (c.Why == "") || c.Replaces != nil && c.Summary == "" {
			out = append(out, fmt.Sprintf("condition %s needs a Source, and either Replaces with a Summary or Why", k))
		}
	}
	slices.Sort(out)
	return out
}

// Generated merges each kind's generated table (keyed by GVK of its
// namespaced apiVersion and kind) into its hand-written one. A hand entry
// wins: a path it lists keeps its action, and so does every generated path
// of the same Terraform attribute (a reference's Ref and Selector beside a
// field). Other generated entries are refused, or, on a kind that rotates
// (a node pool), rotate it; a generated Raise (a custom diff that replaces
// the resource when the value decreases) stays a Raise on a kind that does
// not rotate. Each generated entry with a Rule, and each hand-written one
// of the same attribute, whose attribute has an evaluated condition gets
// it (but a Raise or a Walk, which decide themselves, and a reference or
// selector, whose change is to a value the function does not see): a
// change it says the provider makes in place passes. A table of a kind the
// cloud does not list panics: it is a programming error.
func (c *Cloud) Generated(tables map[string]Table, conds Conditions) {
	byKey := make(map[string]*ResourceKind, len(c.Kinds))
	for _, k := range c.Kinds {
		byKey[GVK(k.Namespaced, k.Kind)] = k
	}
	for key, t := range tables {
		k, ok := byKey[key]
		if !ok {
			panic(fmt.Sprintf("cloud %q has a generated table of replacement-only fields for %s, which its Kinds do not list", c.Name, key))
		}
		k.merge(t, conds)
	}
}

// merge merges a generated table into the kind's hand-written one, and
// gives each entry its condition.
func (k *ResourceKind) merge(t Table, conds Conditions) {
	hand := make(map[string]lifecycle.Action, len(k.Replacements))
	attrs := make(map[string]lifecycle.Action, len(k.Replacements))
	for _, f := range k.Replacements {
		hand[f.Path] = f.Action
		attrs[attribute(f.Attribute)] = f.Action
	}
	def := lifecycle.Refuse
	if k.Rotates() {
		def = lifecycle.Rotate
	}
	for _, f := range t.Fields {
		if _, ok := hand[f.Path]; ok {
			continue
		}
		if f.Action != lifecycle.Raise || k.Rotates() {
			// A custom diff's replacement of a decrease stays a Raise.
			f.Action = def
		}
		f.Generated = true
		if a, ok := attrs[attribute(f.Attribute)]; ok && a != lifecycle.Walk {
			f.Action = a
		}
		k.Replacements = append(k.Replacements, f)
	}
	for i, f := range k.Replacements {
		segs := strings.Split(f.Path, ".")
		if f.Action == lifecycle.Raise || f.Action == lifecycle.Walk || f.Condition != nil || f.Generated && f.Rule == "" || object.IsReference(segs[len(segs)-1]) {
			continue
		}
		if cond, _, ok := conds.of(attribute(f.Attribute)); ok && cond.Evaluated() {
			k.Replacements[i] = f.When(cond)
		}
	}
	k.Table = t.Resource
	k.Declared = true
}

// attribute is the Terraform resource.attribute an entry's Attribute
// starts with.
func attribute(a string) string {
	a, _, _ = strings.Cut(a, " ")
	return strings.TrimSuffix(a, ":")
}

// WithNodeCount returns the node pool kind with the dotted path of the node
// count its provider reports.
func (k *ResourceKind) WithNodeCount(path string) *ResourceKind {
	k.NodeCount = path
	return k
}

// ReadyWhen makes the kind ready only once its provider reports the
// dotted status path as well as Ready (ReadyWhenReported).
func (k *ResourceKind) ReadyWhen(path string) *ResourceKind {
	k.Ready, k.Reported = ReadyWhenReported, path
	return k
}

// Rotates reports whether a changed field of the kind rotates it.
func (k *ResourceKind) Rotates() bool {
	for _, f := range k.Replacements {
		if f.Action == lifecycle.Rotate {
			return true
		}
	}
	return false
}

// WithGuarded returns the kind with paths an XR's overrides may not set,
// all for the supplied reason.
func (k *ResourceKind) WithGuarded(why string, paths ...string) *ResourceKind {
	for _, p := range paths {
		k.Guarded = append(k.Guarded, Guard{Path: p, Why: why})
	}
	return k
}

// APIVersion returns the apiVersion of the kind for the supplied scope.
func (k *ResourceKind) APIVersion(s xr.Scope) string {
	if s == xr.Namespaced {
		return k.Namespaced
	}
	return k.Cluster
}

// Name returns the kind's name for the supplied scope.
func (k *ResourceKind) Name(s xr.Scope) string {
	if s != xr.Namespaced && k.ClusterKind != "" {
		return k.ClusterKind
	}
	return k.Kind
}

// Managed reports whether the kind is a Crossplane managed resource, which
// takes a providerConfigRef and managementPolicies.
func (k *ResourceKind) Managed() bool { return k.Provider != "" }

// GVK is the key of a kind at an apiVersion in tables generated from CRDs:
// "compute.gcp.m.upbound.io/v1beta1, Kind=Network".
func GVK(apiVersion, kind string) string { return apiVersion + ", Kind=" + kind }

// References returns the dotted paths, under spec.forProvider, of the
// kind's fields that a reference or selector beside them resolves, in
// either scope, as cmd/refgen read them from the provider CRDs; and
// whether the CRD of each scope the kind is served in was read.
func (k *ResourceKind) References() ([]string, bool) {
	var out []string
	known := true
	for _, s := range []xr.Scope{xr.Namespaced, xr.ClusterScoped} {
		if k.APIVersion(s) == "" {
			continue
		}
		paths, ok := referenceFields[GVK(k.APIVersion(s), k.Name(s))]
		known = known && ok
		out = append(out, paths...)
	}
	return out, known
}

// Usage kinds, which Crossplane's protection group serves at v1beta1.
var (
	// usageKind protects one namespaced resource from deletion while
	// another uses it.
	usageKind = &ResourceKind{Kind: "Usage", Namespaced: "protection.crossplane.io/v1beta1", Ready: ReadyWhenObserved}
	// clusterUsageKind is the same for cluster-scoped resources.
	clusterUsageKind = &ResourceKind{Kind: "ClusterUsage", Cluster: "protection.crossplane.io/v1beta1", Ready: ReadyWhenObserved}
)

// LabelInUse is the label Crossplane's Usage controller puts on what a
// Usage protects, "true" while one does.
const LabelInUse = "crossplane.io/in-use"

// AnnotationDeletionAttempt is the annotation Crossplane's Usage webhook
// puts on a Usage when it refused a deletion of what the Usage protects
// (crossplane v2.3.4 internal/protection/usage.go). With replayDeletion,
// deleting that Usage deletes what it protects.
const AnnotationDeletionAttempt = "usage.crossplane.io/deletion-attempt-with-policy"

// UsageKind returns the Usage kind for the supplied scope.
func UsageKind(s xr.Scope) *ResourceKind {
	if s == xr.Namespaced {
		return usageKind
	}
	return clusterUsageKind
}

// Upjet declares a kind of a provider-upjet provider, whose API groups follow
// one convention: group "compute" of provider "gcp" is served as
// compute.gcp.m.upbound.io/v1beta1 to namespaced XRs and as
// compute.gcp.upbound.io/<legacy> to cluster-scoped ones. The empty group is
// the provider's own (azure.m.upbound.io). The provider name is also the
// provider-config family.
func Upjet(provider, group, kind, legacy string, required ...string) *ResourceKind {
	g := provider
	if group != "" {
		g = group + "." + provider
	}
	return &ResourceKind{
		Kind:       kind,
		Namespaced: g + ".m.upbound.io/v1beta1",
		Cluster:    g + ".upbound.io/" + legacy,
		Provider:   provider,
		Required:   required,
		// No cloud resource moves to another region: a region is where
		// the provider looks for it.
		Replacements: []lifecycle.Field{
			{Path: "spec.forProvider.region", Attribute: "region (the upjet provider's region of every resource: another region is another resource)", Action: lifecycle.Refuse},
			{Path: "spec.forProvider.location", Attribute: "location (every resource's region or zone, ForceNew in the Terraform providers)", Action: lifecycle.Refuse},
		},
	}
}
