package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/secret"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

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
		kind *ResourceKind
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
