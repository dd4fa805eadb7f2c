package preview

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The objects a release's Compositions are read from, and the API version
// of this function's Input, by which its step is found.
const (
	inputAPIVersion = "platform.fn.example.org/v1beta1"
	compositionAV   = "apiextensions.crossplane.io/v1"
	compositionKind = "Composition"
	xrdKind         = "CompositeResourceDefinition"
)

// Compositions are a release's Compositions, each read once with this
// function's step, and the XRDs beside them, whose default and enforced
// Composition Crossplane applies.
type Compositions struct {
	byName map[string]*composition
	names  []string
	// defaults and enforced are the XRDs' Composition names, by the
	// group/kind of their XRs.
	defaults, enforced map[string]string
}

// A composition is one Composition: what it composes, its labels, and
// this function's step of it.
type composition struct {
	name   string
	of     string // group/kind of the XRs it composes
	labels map[string]any
	step   step
}

// A step is what a Composition decides about this function's step: its
// Input, the resources Crossplane fetches for it before the first call
// (requirements.requiredResources), and an earlier step of
// function-environment-configs, which merges EnvironmentConfigs into the
// pipeline context.
type step struct {
	input    xpsim.Object
	required map[string]*fnv1.ResourceSelector
	env      *xpsim.EnvStep
}

// LoadCompositions reads the Compositions (and the XRDs, for their default
// and enforced Compositions) of files or folders, as ParseCompositions.
func LoadCompositions(paths []string) (*Compositions, error) {
	objs, err := xpsim.Load(paths...)
	if err != nil {
		return nil, fmt.Errorf("cannot read the Compositions: %w", err)
	}
	cs, err := ParseCompositions(objs)
	if err != nil {
		return nil, err
	}
	if len(cs.names) == 0 {
		return nil, fmt.Errorf("no %s %s in %s", compositionAV, compositionKind, strings.Join(paths, ", "))
	}
	return cs, nil
}

// ParseCompositions reads a release's Compositions among objs, and the
// XRDs' default and enforced Compositions; other objects are skipped. A
// Composition that calls this function in no step, or in two, one named
// twice, or a step it cannot read is an error naming the field.
func ParseCompositions(objs []xpsim.Object) (*Compositions, error) {
	cs := &Compositions{byName: map[string]*composition{}, defaults: map[string]string{}, enforced: map[string]string{}}
	for _, o := range objs {
		if o["kind"] == xrdKind && strings.HasPrefix(fmt.Sprint(o["apiVersion"]), "apiextensions.crossplane.io/") {
			of := str(o, "spec", "group") + "/" + str(o, "spec", "names", "kind")
			if n := str(o, "spec", "defaultCompositionRef", "name"); n != "" {
				cs.defaults[of] = n
			}
			if n := str(o, "spec", "enforcedCompositionRef", "name"); n != "" {
				cs.enforced[of] = n
			}
			continue
		}
		if o["apiVersion"] != compositionAV || o["kind"] != compositionKind {
			continue
		}
		c := &composition{name: str(o, "metadata", "name")}
		if _, dup := cs.byName[c.name]; dup {
			return nil, fmt.Errorf("the Composition %q is named twice: give each release's Compositions apart", c.name)
		}
		group, _, _ := strings.Cut(str(o, "spec", "compositeTypeRef", "apiVersion"), "/")
		c.of = group + "/" + str(o, "spec", "compositeTypeRef", "kind")
		c.labels, _ = dig(o, "metadata", "labels").(map[string]any)
		var err error
		if c.step, err = stepOf(o); err != nil {
			return nil, fmt.Errorf("the Composition %s: %w", c.name, err)
		}
		cs.byName[c.name] = c
		cs.names = append(cs.names, c.name)
	}
	slices.Sort(cs.names)
	return cs, nil
}

// of picks the Composition Crossplane composes the XR with
// (crossplane v2.4 internal/controller/apiextensions/composite/api.go and
// the XRD's order, definition/reconciler.go): the XRD's enforced one;
// else the one its compositionRef names; else, with a compositionSelector,
// the one of its kind it selects (Crossplane takes one at random among
// several: a preview asks for a ref); else the XRD's default; else the
// only one of its kind. Crossplane keeps the ref it picked on the XR: an
// XR read back from the API server names its Composition.
func (cs *Compositions) of(x xpsim.Object) (*composition, error) {
	group, _, _ := strings.Cut(fmt.Sprint(x["apiVersion"]), "/")
	of := group + "/" + fmt.Sprint(x["kind"])
	// A legacy XR (and a claim) says how it is composed at the top of its
	// spec, a namespaced one under spec.crossplane.
	sel, _ := dig(x, rollout.CrossplaneSpec(namespaced(x))...).(map[string]any)
	named := func(name, by string) (*composition, error) {
		c, ok := cs.byName[name]
		if !ok || c.of != of {
			return nil, fmt.Errorf("%s names Composition %q, which these Compositions do not hold for %s", by, name, of)
		}
		return c, nil
	}
	if n := cs.enforced[of]; n != "" {
		return named(n, "its XRD's enforcedCompositionRef")
	}
	if n := str(sel, "compositionRef", "name"); n != "" {
		return named(n, "its compositionRef")
	}
	var ofKind []*composition
	for _, n := range cs.names {
		if c := cs.byName[n]; c.of == of {
			ofKind = append(ofKind, c)
		}
	}
	labels, _ := dig(sel, "compositionSelector", "matchLabels").(map[string]any)
	switch {
	case len(labels) > 0:
		ofKind = slices.DeleteFunc(ofKind, func(c *composition) bool {
			for k, v := range labels {
				if c.labels[k] != v {
					return true
				}
			}
			return false
		})
	case cs.defaults[of] != "":
		return named(cs.defaults[of], "its XRD's defaultCompositionRef")
	}
	var how string
	if len(labels) > 0 {
		how = fmt.Sprintf(" with the labels of its compositionSelector %v", labels)
	}
	switch len(ofKind) {
	case 1:
		return ofKind[0], nil
	case 0:
		return nil, fmt.Errorf("these Compositions hold none for %s%s", of, how)
	}
	names := make([]string, len(ofKind))
	for i, c := range ofKind {
		names[i] = c.name
	}
	return nil, fmt.Errorf("these Compositions hold %d for %s%s (%s): name one in its compositionRef", len(ofKind), of, how, strings.Join(names, ", "))
}

// stepOf reads this function's step of a Composition, and an earlier step
// of function-environment-configs.
func stepOf(c xpsim.Object) (step, error) {
	var s step
	var env *xpsim.EnvStep
	pipeline, _ := dig(c, "spec", "pipeline").([]any)
	for i, p := range pipeline {
		ps, _ := p.(map[string]any)
		in, _ := ps["input"].(map[string]any)
		switch {
		case in["apiVersion"] == xpsim.EnvStepAPIVersion && s.input == nil:
			var err error
			if env, err = xpsim.ParseEnvStep(in); err != nil {
				return s, fmt.Errorf("spec.pipeline[%d].input: %w", i, err)
			}
		case in["apiVersion"] == inputAPIVersion && in["kind"] == "Input":
			if s.input != nil {
				return s, fmt.Errorf("spec.pipeline[%d]: a second step of this function; a preview renders one", i)
			}
			s.input, s.env = in, env
			reqs, _ := dig(ps, "requirements", "requiredResources").([]any)
			s.required = map[string]*fnv1.ResourceSelector{}
			for j, r := range reqs {
				rm, _ := r.(map[string]any)
				name, sel, err := selectorOf(rm)
				if err != nil {
					return s, fmt.Errorf("spec.pipeline[%d].requirements.requiredResources[%d]: %w", i, j, err)
				}
				s.required[name] = sel
			}
		}
	}
	if s.input == nil {
		return s, fmt.Errorf("no step of spec.pipeline has an Input of %s: it does not call this function", inputAPIVersion)
	}
	return s, nil
}

// selectorOf reads one of a step's required resources: by name, or by
// labels, never both (Crossplane's schema refuses both).
func selectorOf(r map[string]any) (string, *fnv1.ResourceSelector, error) {
	name, _ := r["requirementName"].(string)
	apiVersion, _ := r["apiVersion"].(string)
	kind, _ := r["kind"].(string)
	if name == "" || apiVersion == "" || kind == "" {
		return "", nil, fmt.Errorf("requirementName, apiVersion and kind are required")
	}
	sel := &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind}
	if ns, ok := r["namespace"].(string); ok {
		sel.Namespace = &ns
	}
	labels, hasLabels := r["matchLabels"].(map[string]any)
	match, hasName := r["name"].(string)
	switch {
	case hasName && hasLabels:
		return "", nil, fmt.Errorf("name and matchLabels: name one or the other")
	case hasName && match != "":
		sel.Match = &fnv1.ResourceSelector_MatchName{MatchName: match}
	case hasLabels:
		ml := &fnv1.MatchLabels{Labels: map[string]string{}}
		for k, v := range labels {
			ml.Labels[k] = fmt.Sprint(v)
		}
		sel.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: ml}
	default:
		return "", nil, fmt.Errorf("name or matchLabels is required")
	}
	return name, sel, nil
}

// namespaced reports whether an XR is of the namespaced schema, its
// Crossplane fields under spec.crossplane, rather than of the legacy one
// (group xr.LegacyGroup), whose XRs and claims hold them under spec.
func namespaced(x xpsim.Object) bool {
	group, _, _ := strings.Cut(fmt.Sprint(x["apiVersion"]), "/")
	return group != xr.LegacyGroup
}

// dig returns the value at path of a nested map, or nil.
func dig(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// str returns the string at path of a nested map, or "".
func str(o map[string]any, path ...string) string {
	s, _ := dig(o, path...).(string)
	return s
}
