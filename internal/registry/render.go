package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/secret"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ClusterResource is the composition-resource name of the managed cluster,
// which receives the XR's spec.forProvider passthrough.
const ClusterResource = "cluster"

// Management policies of imported resources.
var (
	policiesObserve = []any{"Observe"}
	policiesManage  = []any{"Observe", "Create", "Update", "LateInitialize"}
)

// Rendered is a composed resource after all three layers.
type Rendered struct {
	// Name is the composition-resource name.
	Name string
	// Component is the ID of the agnostic component that produced it.
	Component string
	// Condition is the XR condition it reports into.
	Condition string
	Kind      *Kind
	// Object is the complete desired object; nil when Pending.
	Object    object.Object
	DependsOn []string
	// Uses are what it needs of other XRs.
	Uses    []Use
	Pending string
	// OnOtherXR is the Resource's: the Pending waits for another XR.
	OnOtherXR bool
	Outputs   OutputsFunc
	// UsageBy names the dependent a Usage belongs to; empty for resources
	// that are not Usages.
	UsageBy string
	// Base is the name overrides and import keys use for a resource of a
	// rotated generation (its name without the generation's suffix);
	// empty when it is Name.
	Base string
	// Retire, when set, says why an observed resource that is no longer
	// wanted is removed: an older generation of a node pool whose new
	// generation is ready. It has no Object.
	Retire string
	// Rotation is set on a node pool resource that is rotating, or waits
	// to rotate.
	Rotation *Rotation
	// setBy records, for each leaf an overlay set (its dotted path in
	// Object), the field path of the overlay that set it last, such as
	// spec.parameters.overrides.cluster.spec.forProvider.datapathProvider:
	// a refused change names the input it came from.
	setBy map[string]string
}

// SetBy returns the field paths of the overlays that set the dotted path
// of the object, or a field under it or above it, in path order; none when
// no overlay did (the value is the cloud layer's own).
func (rd *Rendered) SetBy(path string) []string {
	var out []string
	for p, src := range rd.setBy {
		switch {
		case p == path || strings.HasPrefix(p, path+"."):
			out = append(out, src)
		case strings.HasPrefix(path, p+"."):
			// The overlay set a whole object or list above the field.
			out = append(out, src+strings.TrimPrefix(path, p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// overlaid reports whether an overlay set the dotted path, or a field
// under it or above it.
func (rd *Rendered) overlaid(path string) bool { return len(rd.SetBy(path)) > 0 }

// remember records the leaves of an overlay merged into the object: each
// dotted path under the object, with the field path of the overlay's value.
func (rd *Rendered) remember(root *field.Path, skip int, ov map[string]any) {
	walk(ov, nil, func(path []string, _ any) {
		for _, s := range path {
			if strings.HasPrefix(s, "[") {
				// Inside a list, which the overlay replaced whole.
				return
			}
		}
		if rd.setBy == nil {
			rd.setBy = map[string]string{}
		}
		rd.setBy[strings.Join(path, ".")] = fieldPath(root, path[skip:]).String()
	})
}

// Key is the name overrides and import keys use for the resource.
func (rd *Rendered) Key() string {
	if rd.Base != "" {
		return rd.Base
	}
	return rd.Name
}

// InvalidError is bad input found while rendering, each error naming its
// field path: overlays the overrides policy refuses, import and override
// keys that name no composed resource, overlays that remove required
// fields.
type InvalidError struct {
	Errs field.ErrorList
}

// Error implements error.
func (e *InvalidError) Error() string { return e.Errs.ToAggregate().Error() }

// Render runs the cloud layer over the supplied components, wraps every
// resource in the registry's envelope, applies the overlays and adds a
// Usage for each dependency edge whose deletion order matters (UsageRules).
// The result is in a stable order: components in
// plan order, each followed by the Usages of its resources.
//
// Before anything is returned, the final desired state is checked: the
// overlays against the overrides policy, import and override keys against
// the names this XR composes, generated names and cloud names for clashes,
// immutable fields against the observed resources, and every value for
// plaintext credentials. A refusal is an error; the caller returns it as a
// Fatal result, so that Crossplane changes nothing.
func (c *Cloud) Render(ctx *Context, comps []component.Component) ([]*Rendered, error) {
	if checked := c.CheckAll(ctx, comps); len(checked) > 0 {
		return nil, &InvalidError{Errs: checked}
	}
	comps = ctx.currentGenerations(comps)
	out := make([]*Rendered, 0, 3*len(comps))
	byName := make(map[string]*Rendered, 3*len(comps))
	for _, comp := range comps {
		rs, err := c.renderComponent(ctx, comp)
		if err != nil {
			return nil, err
		}
		for _, rd := range rs {
			if prev, dup := byName[rd.Name]; dup {
				return nil, fmt.Errorf("generated names clash: composed resource %q is rendered for both %s and %s; rename one of them (a pool's name is part of the names of its resources)", rd.Name, prev.Component, comp.ID())
			}
			out = append(out, rd)
			byName[rd.Name] = rd
		}
	}
	errs := checkKeys(ctx, out)

	out = importOnly(ctx, out, byName)

	for _, rd := range out {
		for _, d := range rd.DependsOn {
			if _, ok := byName[d]; !ok {
				return nil, fmt.Errorf("composed resource %q depends on %q, which is not rendered", rd.Name, d)
			}
		}
	}

	errs = append(errs, applyOverlays(ctx, out, true)...)
	if len(errs) > 0 {
		return nil, &InvalidError{Errs: errs}
	}
	out, err := c.rotate(ctx, comps, out, byName)
	if err != nil {
		return nil, err
	}
	if err := checkCloudNames(out); err != nil {
		return nil, err
	}
	if err := checkReplacements(ctx, out); err != nil {
		return nil, err
	}
	if err := checkSecrets(out); err != nil {
		return nil, err
	}
	return withUsages(ctx, out, byName)
}

// renderComponent runs the cloud's implementation of a component and wraps
// each resource in the registry's envelope. The resources of a rotated
// generation must be named <name>-<generation>.
func (c *Cloud) renderComponent(ctx *Context, comp component.Component) ([]*Rendered, error) {
	impl, ok := c.impls[comp.Kind()]
	if !ok {
		return nil, fmt.Errorf("cloud %q does not implement %s (needed for %s)", c.Name, comp.Kind(), comp.ID())
	}
	rs, err := impl(ctx, comp)
	if err != nil {
		return nil, fmt.Errorf("cannot render %s: %w", comp.ID(), err)
	}
	gen := generation(comp)
	out := make([]*Rendered, 0, len(rs))
	for _, r := range rs {
		if gen != "" && !strings.HasSuffix(r.Name, "-"+gen) {
			return nil, fmt.Errorf("cannot render %s: its generation %q's resource %q is not named <name>-%s", comp.ID(), gen, r.Name, gen)
		}
		out = append(out, envelope(ctx, comp, r))
	}
	return out, nil
}

// generation is a rotatable component's generation; empty for the first,
// and for components that do not rotate.
func generation(comp component.Component) string {
	if r, ok := comp.(component.Rotatable); ok {
		return r.Gen()
	}
	return ""
}

// checkKeys checks that every key of spec.parameters.import.resources names
// a managed resource this XR composes, and every key of
// spec.parameters.overrides a resource it composes: a typo would otherwise
// create a new resource instead of adopting one, or silently not apply.
func checkKeys(ctx *Context, rs []*Rendered) field.ErrorList {
	par := ctx.XR
	if len(par.Import.Resources) == 0 && len(par.Overrides) == 0 {
		return nil
	}
	var errs field.ErrorList
	var all, importable []string
	for _, rd := range rs {
		all = append(all, rd.Key())
		if rd.Kind.Managed() {
			importable = append(importable, rd.Key())
		}
	}
	all, importable = slices.Compact(slices.Sorted(slices.Values(all))), slices.Compact(slices.Sorted(slices.Values(importable)))
	ip := xr.ParametersPath("import", "resources")
	for _, k := range slices.Sorted(maps.Keys(par.Import.Resources)) {
		if _, ok := slices.BinarySearch(importable, k); !ok {
			errs = append(errs, field.Invalid(ip.Key(k), k, "names no managed resource this XR composes; importable names: "+strings.Join(importable, ", ")))
		}
	}
	op := xr.ParametersPath("overrides")
	for _, k := range slices.Sorted(maps.Keys(par.Overrides)) {
		if _, ok := slices.BinarySearch(all, k); !ok {
			errs = append(errs, field.Invalid(op.Child(k), k, "names no resource this XR composes; known names: "+strings.Join(all, ", ")))
		}
	}
	return errs
}

// checkCloudNames refuses two composed resources of one kind with the same
// external name: they would be the same cloud resource.
func checkCloudNames(rs []*Rendered) error {
	type cloudName struct {
		kind *Kind
		ext  string
	}
	seen := make(map[cloudName]string, len(rs))
	for _, rd := range rs {
		ext := object.AnnotationOf(rd.Object, AnnotationExternalName)
		if ext == "" {
			continue
		}
		key := cloudName{rd.Kind, ext}
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("generated names clash: composed resources %q and %q would both be %s %q in the cloud; rename one of them", prev, rd.Name, rd.Kind.Kind, ext)
		}
		seen[key] = rd.Name
	}
	return nil
}

// checkSecrets refuses a final desired state that holds a credential in
// plaintext, wherever it came from: the catalog, chart values, overrides of
// either principal or the forProvider passthrough.
func checkSecrets(rs []*Rendered) error {
	var msgs []string
	for _, rd := range rs {
		if rd.Object == nil {
			continue
		}
		for _, leak := range secret.Find(map[string]any(rd.Object)) {
			msgs = append(msgs, fmt.Sprintf("composed resource %q would hold a plaintext credential at %s", rd.Name, leak))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s; credentials reach composed resources only as references to Secrets (for example existingSecret or a secretRef), never as values", strings.Join(msgs, "; "))
}

// envelope completes a cloud implementation's resource: apiVersion and kind
// for the XR's scope, labels and annotations, external name, provider config
// reference and, for imported resources, management policies.
func envelope(ctx *Context, comp component.Component, r *Resource) *Rendered {
	rd := &Rendered{
		Name:      r.Name,
		Component: comp.ID(),
		Condition: comp.Condition(),
		Kind:      r.Kind,
		DependsOn: r.DependsOn,
		Uses:      r.Uses,
		Pending:   r.Pending,
		OnOtherXR: r.OnOtherXR,
		Outputs:   r.Outputs,
		Retire:    r.Retire,
	}
	if gen := generation(comp); gen != "" {
		rd.Base = strings.TrimSuffix(r.Name, "-"+gen)
	}
	if r.Pending != "" || r.Retire != "" {
		return rd
	}
	o := r.Body
	if o == nil {
		o = object.Object{}
	}
	o["apiVersion"] = r.Kind.APIVersion(ctx.XR.Scope)
	o["kind"] = r.Kind.Name(ctx.XR.Scope)
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[LabelResource] = r.Name
	labels[LabelCloud] = ctx.Cloud.Name
	if x := ctx.XR; x.CloudName != x.BareName && x.BareName != "" {
		labels[LabelCloudName] = x.CloudName
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[AnnotationComponent] = comp.ID()
	if gen := generation(comp); gen != "" {
		ann[AnnotationGeneration] = gen
	}
	if r.ExternalName != "" {
		ann[AnnotationExternalName] = r.ExternalName
	}
	if r.Kind.Managed() {
		spec, _ := o["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			o["spec"] = spec
		}
		if _, set := spec["providerConfigRef"]; !set {
			spec["providerConfigRef"] = ctx.ProviderConfigRef(r.Kind.Provider)
		}
		if r.Orphan {
			if ctx.Namespaced() {
				spec["managementPolicies"] = policies(xr.ImportManage)
			} else {
				spec["deletionPolicy"] = "Orphan"
			}
		}
		applyImport(ctx, rd.Key(), r.Name, ann, spec)
	}
	rd.Object = o
	return rd
}

// applyImport sets the external name, annotation and management policies of
// an imported resource (key is the name import.resources uses, name its
// own). A resource that was imported before keeps its external name and
// stays undeletable after import is turned off, unless the XR sets
// import.release.
func applyImport(ctx *Context, key, name string, ann, spec map[string]any) {
	imp := ctx.XR.Import
	if ext, ok := imp.Resources[key]; ok && imp.Enabled {
		mode := imp.Mode
		if mode == "" {
			mode = xr.ImportObserve
		}
		ann[AnnotationExternalName] = ext
		ann[AnnotationImportMode] = mode
		spec["managementPolicies"] = policies(mode)
		return
	}
	obs := ctx.Observed(name)
	prev := object.Annotation(obs, AnnotationImportMode)
	if prev == "" {
		return
	}
	// The resource was imported and no longer is: it is the same cloud
	// resource, so it keeps its external name.
	if ext := object.Annotation(obs, AnnotationExternalName); ext != "" {
		ann[AnnotationExternalName] = ext
	}
	if imp.Release {
		return
	}
	ann[AnnotationImportMode] = prev
	spec["managementPolicies"] = policies(xr.ImportManage)
}

func policies(mode string) []any {
	if mode == xr.ImportManage {
		return append([]any(nil), policiesManage...)
	}
	return append([]any(nil), policiesObserve...)
}

// importOnly drops every resource the XR does not import when import.only
// is set, and the dependencies on them.
func importOnly(ctx *Context, rs []*Rendered, byName map[string]*Rendered) []*Rendered {
	imp := ctx.XR.Import
	if !imp.Enabled || !imp.Only {
		return rs
	}
	kept := rs[:0]
	for _, rd := range rs {
		if _, ok := imp.Resources[rd.Key()]; ok {
			kept = append(kept, rd)
			continue
		}
		delete(byName, rd.Name)
	}
	for _, rd := range kept {
		deps := make([]string, 0, len(rd.DependsOn))
		for _, d := range rd.DependsOn {
			if _, ok := byName[d]; ok {
				deps = append(deps, d)
			}
		}
		rd.DependsOn = deps
	}
	return kept
}

// overlaySource is one source of overlays.
type overlaySource struct {
	who Principal
	// root is the field path of the source's overlay of a resource.
	root func(name string) *field.Path
	// skip is how many leading segments of an overlay's paths the root
	// already names.
	skip     int
	overlays map[string]map[string]any
}

// applyOverlays merges into the rendered resources, in order, the
// environment's overrides (the platform team's), the XR's
// spec.parameters.overrides and the XR's spec.forProvider passthrough (the
// XR author's), each checked against the overrides policy of its principal
// first, each keyed by a resource's Key (every generation of a node pool
// takes its overlays). It returns every refusal; with warn, it warns of an
// environment overlay that matches no resource.
func applyOverlays(ctx *Context, rs []*Rendered, warn bool) field.ErrorList {
	sources := make([]overlaySource, 0, 3)
	if env := ctx.Env.Shared().Overrides; len(env) > 0 {
		sources = append(sources, overlaySource{who: Platform, overlays: env,
			root: func(name string) *field.Path { return field.NewPath("environment", "overrides", name) }})
	}
	if len(ctx.XR.Overrides) > 0 {
		sources = append(sources, overlaySource{who: Tenant, overlays: ctx.XR.Overrides,
			root: func(name string) *field.Path { return xr.ParametersPath("overrides").Child(name) }})
	}
	if len(ctx.XR.ForProvider) > 0 {
		sources = append(sources, overlaySource{who: Tenant, skip: 2,
			overlays: map[string]map[string]any{ClusterResource: {"spec": map[string]any{"forProvider": ctx.XR.ForProvider}}},
			root:     func(string) *field.Path { return field.NewPath("spec", "forProvider") }})
	}
	if len(sources) == 0 {
		return nil
	}
	byKey := make(map[string][]*Rendered, len(rs))
	for _, rd := range rs {
		byKey[rd.Key()] = append(byKey[rd.Key()], rd)
	}
	var errs field.ErrorList
	for _, src := range sources {
		for _, name := range slices.Sorted(maps.Keys(src.overlays)) {
			ov := src.overlays[name]
			targets, ok := byKey[name]
			if !ok {
				if warn && src.who == Platform {
					ctx.Warn("environment overrides.%s matches no composed resource; known names: %s", name, strings.Join(slices.Sorted(maps.Keys(byKey)), ", "))
				}
				// The XR's keys were checked against every name it composes.
				continue
			}
			root := src.root(name)
			for _, rd := range targets {
				if perrs := checkPolicy(root, src.skip, src.who, rd, imported(ctx, rd), ov); len(perrs) > 0 {
					errs = append(errs, perrs...)
					continue
				}
				if rd.Object == nil {
					continue
				}
				overlay.Merge(rd.Object, ov)
				rd.remember(root, src.skip, ov)
				for _, p := range rd.Kind.Required {
					if _, ok := object.Lookup(rd.Object, p); !ok {
						errs = append(errs, field.Forbidden(root, fmt.Sprintf("removes %s, which %s %q requires", p, rd.Kind.Kind, name)))
					}
				}
			}
		}
	}
	return errs
}

// imported reports whether a rendered resource is, or was, imported, and
// not released: its management policies are import's.
func imported(ctx *Context, rd *Rendered) bool {
	if rd.Object != nil {
		return object.AnnotationOf(rd.Object, AnnotationImportMode) != ""
	}
	imp := ctx.XR.Import
	if _, ok := imp.Resources[rd.Name]; ok && imp.Enabled {
		return true
	}
	return !imp.Release && object.Annotation(ctx.Observed(rd.Name), AnnotationImportMode) != ""
}

// checkReplacements refuses to change what a cloud cannot change in
// place: the external name (a new one would make the provider adopt or
// create a different resource), and each field of the kind's table whose
// action is Refuse (regions, address ranges, zones), whichever input the new
// value came from, the XR or its environment. Every change is named with
// its old and new value and the Terraform attribute behind it. A Rotate
// field found changed here belongs to a resource that was not rotated (an
// imported pool is refused before): it is refused too. A Cycle change is
// made, with a warning.
func checkReplacements(ctx *Context, rs []*Rendered) error {
	var msgs []string
	for _, rd := range rs {
		obs := ctx.Observed(rd.Name)
		if obs == nil || rd.Object == nil {
			continue
		}
		was := object.Annotation(obs, AnnotationExternalName)
		now := object.AnnotationOf(rd.Object, AnnotationExternalName)
		if was != "" && now != "" && now != was {
			msgs = append(msgs, fmt.Sprintf("composed resource %q is %q in the cloud and would become %q: cloud names are immutable once created (check the clusterName label, metadata.name and spec.parameters)", rd.Name, was, now))
		}
		for _, ch := range lifecycle.CompareOverlaid(rd.Kind.Replacements, rd.Object, obs, rd.overlaid).Changes {
			// who gives the new value, and how the owner takes it back.
			who, undo := "the XR and its environment now give", "restore the value (spec.parameters, or the environment key it defaults from), or create a new XR"
			if by := rd.SetBy(ch.Path); len(by) > 0 {
				who, undo = overriddenBy(by), "restore the value or remove the override, or create a new XR"
			}
			switch {
			case ch.Action == lifecycle.Cycle:
				ctx.Warn("composed resource %q changes %s: %s, which the provider makes by cycling it through a temporary copy that is not cordoned and drained: its pods are evicted without honouring PodDisruptionBudgets", rd.Name, ch, ch.Attribute)
			case ch.Action == lifecycle.Raise:
				msgs = append(msgs, fmt.Sprintf("composed resource %q has %s %s, which its provider can only raise in place (%s); %s the lower %s: %s",
					rd.Name, ch.Path, lifecycle.Show(ch.Old), ch.Attribute, who, lifecycle.Show(ch.New), undo))
			case ch.Stuck:
				msgs = append(msgs, fmt.Sprintf("composed resource %q asks for %s %s, but the cloud resource still has %s and its provider refuses to replace it (%s): %s",
					rd.Name, ch.Path, lifecycle.Show(ch.New), lifecycle.Show(ch.Old), ch.Attribute, stuckUndo(rd.SetBy(ch.Path), undo)))
			default:
				msgs = append(msgs, fmt.Sprintf("composed resource %q has %s %s, which its provider can change only by replacing the cloud resource (%s); %s %s: %s",
					rd.Name, ch.Path, lifecycle.Show(ch.Old), ch.Attribute, who, lifecycle.Show(ch.New), undo))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// overriddenBy says which overlays give a refused value: the field paths
// of the XR's overrides, its spec.forProvider passthrough or the
// environment's overrides that set it.
func overriddenBy(by []string) string {
	if len(by) == 1 {
		return "the override " + by[0] + " now gives"
	}
	return "the overrides " + strings.Join(by, ", ") + " now give"
}

// stuckUndo is how the owner takes back a value the provider refuses,
// naming the overlays that set it.
func stuckUndo(by []string, undo string) string {
	if len(by) == 0 {
		return undo
	}
	return "it comes from " + strings.Join(by, ", ") + ": " + undo
}

// withUsages inserts after each resource one Usage per dependency edge
// whose deletion order matters (NeedsUsage), so that Crossplane deletes
// those dependents before what they use. A Usage's name is generated from
// the two it joins; one that clashes with another composed resource's
// name is refused.
//
// A Usage names both its ends (resourceRef) and is rendered only once both
// exist; until then it is Pending, and the engine composes it later without
// holding anything for it. Named ends spare Crossplane's Usage controller
// resolving a selector, which lists every resource of that kind in the
// namespace (uncached) and retries while an end does not exist yet. The
// selectors stay, ignored by Crossplane beside a resourceRef, so that
// UsageEnds can read which composed resources a Usage joins.
func withUsages(ctx *Context, rs []*Rendered, byName map[string]*Rendered) ([]*Rendered, error) {
	out := make([]*Rendered, 0, 2*len(rs))
	uk := UsageKind(ctx.XR.Scope)
	usages := map[string]string{}
	for _, rd := range rs {
		out = append(out, rd)
		if rd.Retire != "" {
			continue
		}
		ends := make([]usageEnd, 0, len(rd.DependsOn)+len(rd.Uses))
		for _, d := range rd.DependsOn {
			of := byName[d]
			ends = append(ends, usageEnd{name: d, kind: of.Kind, selector: ctx.Selector(d), observed: ctx.Observed(d)})
		}
		for _, u := range rd.Uses {
			if _, clash := byName[u.Name]; clash {
				return nil, fmt.Errorf("generated names clash: %q, which composed resource %q uses in another XR, is the name of one of this XR's composed resources", u.Name, rd.Name)
			}
			ends = append(ends, usageEnd{name: u.Name, kind: u.Kind, selector: u.Selector, observed: u.Observed})
		}
		byRef := object.String(ctx.Observed(rd.Name), "metadata", "name")
		for _, of := range ends {
			if _, ok := NeedsUsage(rd.Kind, of.kind); !ok {
				continue
			}
			d := of.name
			name := UsageName(rd.Name, d)
			if clash, ok := byName[name]; ok {
				return nil, fmt.Errorf("generated names clash: the Usage that protects %q while %q uses it would be named %q, which is the name of the composed resource of %s; rename it (no pool name may make a resource name end in -uses-<resource>)", d, rd.Name, name, clash.Component)
			}
			if prev, ok := usages[name]; ok {
				return nil, fmt.Errorf("generated names clash: the Usages %s and %s would both be named %q; rename one of the resources they join", prev, rd.Name+" on "+d, name)
			}
			usages[name] = rd.Name + " on " + d
			u := &Rendered{
				Name:      name,
				Component: rd.Component,
				Condition: rd.Condition,
				Kind:      uk,
				UsageBy:   rd.Name,
			}
			ofRef := object.String(of.observed, "metadata", "name")
			if byRef == "" || ofRef == "" {
				u.Pending = fmt.Sprintf("waits until %s and %s exist, to name them", rd.Name, d)
				out = append(out, u)
				continue
			}
			u.Object = object.Object{
				"apiVersion": uk.APIVersion(ctx.XR.Scope),
				"kind":       uk.Kind,
				"metadata": map[string]any{
					"labels":      map[string]any{LabelCloud: ctx.Cloud.Name},
					"annotations": map[string]any{AnnotationComponent: rd.Component},
				},
				"spec": map[string]any{
					"replayDeletion": true,
					"of":             usageRef(ctx, of.kind, of.selector, ofRef),
					"by":             usageRef(ctx, rd.Kind, ctx.Selector(rd.Name), byRef),
				},
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// usageEnd is what a Usage protects: one of the XR's composed resources
// (selected by controller and labels) or a resource of another XR (by its
// labels), and its observed state (nil until it exists).
type usageEnd struct {
	name     string
	kind     *Kind
	selector map[string]any
	observed *structpb.Struct
}

// usageRef is one end of a Usage: the resource named name, in the Usage's
// namespace, and the selector that would find it (which Crossplane ignores
// beside the name).
func usageRef(ctx *Context, k *Kind, selector map[string]any, name string) map[string]any {
	return map[string]any{
		"apiVersion":       k.APIVersion(ctx.XR.Scope),
		"kind":             k.Name(ctx.XR.Scope),
		"resourceRef":      map[string]any{"name": name},
		"resourceSelector": selector,
	}
}

// UsageName is the composition-resource name of the Usage that protects of
// while by uses it.
func UsageName(by, of string) string { return by + "-uses-" + of }
