package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
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
	Pending   string
	Outputs   OutputsFunc
	// UsageBy names the dependent a Usage belongs to; empty for resources
	// that are not Usages.
	UsageBy string
}

// Render runs the cloud layer over the supplied components, wraps every
// resource in the registry's envelope, applies the overlays and adds one
// Usage per dependency edge. The result is in a stable order: components in
// plan order, each followed by the Usages of its resources.
func (c *Cloud) Render(ctx *Context, comps []platform.Component) ([]*Rendered, error) {
	out := make([]*Rendered, 0, 3*len(comps))
	byName := make(map[string]*Rendered, 3*len(comps))
	for _, comp := range comps {
		impl, ok := c.impls[comp.Kind()]
		if !ok {
			return nil, fmt.Errorf("cloud %q does not implement %s (needed for %s)", c.Name, comp.Kind(), comp.ID())
		}
		rs, err := impl(ctx, comp)
		if err != nil {
			return nil, fmt.Errorf("cannot render %s: %w", comp.ID(), err)
		}
		for _, r := range rs {
			if _, dup := byName[r.Name]; dup {
				return nil, fmt.Errorf("cloud %q renders composed resource %q twice", c.Name, r.Name)
			}
			rd := envelope(ctx, comp, r)
			out = append(out, rd)
			byName[r.Name] = rd
		}
	}

	out = importOnly(ctx, out, byName)

	for _, rd := range out {
		for _, d := range rd.DependsOn {
			if _, ok := byName[d]; !ok {
				return nil, fmt.Errorf("composed resource %q depends on %q, which is not rendered", rd.Name, d)
			}
		}
	}

	if err := applyOverlays(ctx, byName); err != nil {
		return nil, err
	}
	if err := checkImmutable(ctx, out); err != nil {
		return nil, err
	}
	return withUsages(ctx, out, byName), nil
}

// envelope completes a cloud implementation's resource: apiVersion and kind
// for the XR's scope, labels and annotations, external name, provider config
// reference and, for imported resources, management policies.
func envelope(ctx *Context, comp platform.Component, r *Resource) *Rendered {
	rd := &Rendered{
		Name:      r.Name,
		Component: comp.ID(),
		Condition: comp.Condition(),
		Kind:      r.Kind,
		DependsOn: r.DependsOn,
		Pending:   r.Pending,
		Outputs:   r.Outputs,
	}
	if r.Pending != "" {
		return rd
	}
	o := r.Body
	if o == nil {
		o = object.Object{}
	}
	o["apiVersion"] = r.Kind.APIVersion(ctx.XR.Scope)
	o["kind"] = r.Kind.Kind
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
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[AnnotationComponent] = comp.ID()
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
		applyImport(ctx, r.Name, ann, spec)
	}
	rd.Object = o
	return rd
}

// applyImport sets the external name, annotation and management policies of
// an imported resource. A resource that was imported before keeps its
// external name and stays undeletable after import is turned off, unless the
// XR sets import.release.
func applyImport(ctx *Context, name string, ann, spec map[string]any) {
	imp := ctx.XR.Parameters.Import
	if ext, ok := imp.Resources[name]; ok && imp.Enabled {
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
	imp := ctx.XR.Parameters.Import
	if !imp.Enabled || !imp.Only {
		return rs
	}
	kept := rs[:0]
	for _, rd := range rs {
		if _, ok := imp.Resources[rd.Name]; ok {
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

// overlaySource is one source of overlays, for messages.
type overlaySource struct {
	path     string
	overlays map[string]map[string]any
}

// applyOverlays merges, in order, the environment's overrides, the XR's
// spec.parameters.overrides and the XR's spec.forProvider passthrough.
func applyOverlays(ctx *Context, byName map[string]*Rendered) error {
	sources := make([]overlaySource, 0, 3)
	if env := ctx.Env.Map("overrides"); len(env) > 0 {
		m := make(map[string]map[string]any, len(env))
		for k, v := range env {
			if vm, ok := v.(map[string]any); ok {
				m[k] = vm
			}
		}
		sources = append(sources, overlaySource{path: "EnvironmentConfig data.overrides", overlays: m})
	}
	if len(ctx.XR.Parameters.Overrides) > 0 {
		sources = append(sources, overlaySource{path: "spec.parameters.overrides", overlays: ctx.XR.Parameters.Overrides})
	}
	if len(ctx.XR.ForProvider) > 0 {
		sources = append(sources, overlaySource{path: "spec.forProvider", overlays: map[string]map[string]any{
			ClusterResource: {"spec": map[string]any{"forProvider": ctx.XR.ForProvider}},
		}})
	}
	for _, src := range sources {
		for _, name := range slices.Sorted(maps.Keys(src.overlays)) {
			ov := src.overlays[name]
			rd, ok := byName[name]
			if !ok {
				ctx.Warn("%s.%s matches no composed resource; known names: %s", src.path, name, strings.Join(slices.Sorted(maps.Keys(byName)), ", "))
				continue
			}
			if rd.Object == nil {
				continue
			}
			if err := checkOverlay(src.path+"."+name, ov); err != nil {
				return err
			}
			overlay.Merge(rd.Object, ov)
			for _, p := range rd.Kind.Required {
				if _, ok := object.Lookup(rd.Object, p); !ok {
					return fmt.Errorf("%s.%s removes %s, which %s %q requires", src.path, name, p, rd.Kind.Kind, name)
				}
			}
		}
	}
	return nil
}

// checkOverlay refuses overlays that would change what a resource is rather
// than how it is configured.
func checkOverlay(path string, ov map[string]any) error {
	for _, k := range []string{"apiVersion", "kind"} {
		if _, ok := ov[k]; ok {
			return fmt.Errorf("%s.%s cannot be overridden", path, k)
		}
	}
	meta, _ := ov["metadata"].(map[string]any)
	for _, k := range []string{"name", "namespace", "generateName"} {
		if _, ok := meta[k]; ok {
			return fmt.Errorf("%s.metadata.%s cannot be overridden: the function never names composed resources; use the %s annotation", path, k, AnnotationExternalName)
		}
	}
	if meta != nil {
		if l, ok := meta["labels"].(map[string]any); ok {
			for _, k := range []string{LabelResource, LabelCloud} {
				if _, ok := l[k]; ok {
					return fmt.Errorf("%s.metadata.labels[%s] cannot be overridden", path, k)
				}
			}
		}
	}
	return nil
}

// checkImmutable refuses to rename or move an existing cloud resource: a
// changed external name would make the provider adopt or create a different
// one, and no provider moves a resource to another region in place.
func checkImmutable(ctx *Context, rs []*Rendered) error {
	for _, rd := range rs {
		obs := ctx.Observed(rd.Name)
		if obs == nil || rd.Object == nil {
			continue
		}
		was := object.Annotation(obs, AnnotationExternalName)
		now := object.AnnotationOf(rd.Object, AnnotationExternalName)
		if was != "" && now != "" && now != was {
			return fmt.Errorf("composed resource %q is %q in the cloud and would become %q: cloud names are immutable once created (check the clusterName label, metadata.name and spec.parameters)", rd.Name, was, now)
		}
		for _, p := range rd.Kind.Immutable {
			was := object.String(obs, strings.Split(p, ".")...)
			now, _ := object.Lookup(rd.Object, p)
			if s, ok := now.(string); ok && was != "" && s != was {
				return fmt.Errorf("composed resource %q has %s %q, which cannot change once it exists (the XR now asks for %q): restore spec.parameters.location, or create a new XR to move the platform", rd.Name, p, was, s)
			}
		}
	}
	return nil
}

// withUsages inserts after each resource one Usage per dependency edge, so
// that Crossplane deletes dependents before what they use.
func withUsages(ctx *Context, rs []*Rendered, byName map[string]*Rendered) []*Rendered {
	out := make([]*Rendered, 0, 2*len(rs))
	uk := UsageKind(ctx.XR.Scope)
	for _, rd := range rs {
		out = append(out, rd)
		for _, d := range rd.DependsOn {
			of := byName[d]
			u := &Rendered{
				Name:      UsageName(rd.Name, d),
				Component: rd.Component,
				Condition: rd.Condition,
				Kind:      uk,
				UsageBy:   rd.Name,
				Object: object.Object{
					"apiVersion": uk.APIVersion(ctx.XR.Scope),
					"kind":       uk.Kind,
					"metadata": map[string]any{
						"labels":      map[string]any{LabelCloud: ctx.Cloud.Name},
						"annotations": map[string]any{AnnotationComponent: rd.Component},
					},
					"spec": map[string]any{
						"replayDeletion": true,
						"of":             usageRef(ctx, of),
						"by":             usageRef(ctx, rd),
					},
				},
			}
			out = append(out, u)
		}
	}
	return out
}

func usageRef(ctx *Context, rd *Rendered) map[string]any {
	return map[string]any{
		"apiVersion":       rd.Kind.APIVersion(ctx.XR.Scope),
		"kind":             rd.Kind.Kind,
		"resourceSelector": ctx.Selector(rd.Name),
	}
}

// UsageName is the composition-resource name of the Usage that protects of
// while by uses it.
func UsageName(by, of string) string { return by + "-uses-" + of }
