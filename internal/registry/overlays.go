package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

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
