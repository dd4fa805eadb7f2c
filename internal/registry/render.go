package registry

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// ClusterResource is the composition-resource name of the managed cluster,
// which receives the XR's spec.forProvider passthrough.
const ClusterResource = "cluster"

// Rendered is a composed resource after all three layers.
type Rendered struct {
	// Name is the composition-resource name.
	Name string
	// Component is the ID of the agnostic component that produced it.
	Component string
	// Condition is the XR condition it reports into.
	Condition string
	Kind      *ResourceKind
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
