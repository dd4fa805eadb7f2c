package registry

import (
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

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

// Management policies of imported resources.
var (
	policiesObserve = []any{"Observe"}
	policiesManage  = []any{"Observe", "Create", "Update", "LateInitialize"}
)
