package preview

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// The pipeline steps a Composition's Input names: this function's, and
// function-environment-configs', which merges EnvironmentConfigs into the
// pipeline context before it.
const (
	inputAPIVersion    = "platform.fn.example.org/v1beta1"
	envStepAPIVersion  = "environmentconfigs.fn.crossplane.io/v1beta1"
	compositionKind    = "Composition"
	compositionVersion = "apiextensions.crossplane.io/v1"
)

// A step is what a Composition decides about this function's pipeline step
// for an XR: the step's Input, the resources Crossplane fetches for it
// before the first call (its requirements.requiredResources), and, when an
// earlier step runs function-environment-configs, which EnvironmentConfigs
// that step selects into the pipeline context.
type step struct {
	composition string
	input       xpsim.Object
	required    map[string]*fnv1.ResourceSelector
	// inContext is set when an earlier step merges EnvironmentConfigs into
	// the context; selects are the static labels of its selectors and
	// named the configs it references by name.
	inContext bool
	selects   []map[string]string
	named     []string
}

// LoadCompositions reads the Compositions of files or folders: those a
// release cuts, which a preview renders the fleet with. Other objects in
// them are skipped; files that hold no Composition are an error.
func LoadCompositions(paths []string) ([]xpsim.Object, error) {
	files, err := xpsim.Files(paths...)
	if err != nil {
		return nil, fmt.Errorf("cannot read the Compositions: %w", err)
	}
	var comps []xpsim.Object
	for _, f := range files {
		objs, err := xpsim.Load(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read the Compositions: %w", err)
		}
		for _, o := range objs {
			if o["apiVersion"] == compositionVersion && o["kind"] == compositionKind {
				comps = append(comps, o)
			}
		}
	}
	if len(comps) == 0 {
		return nil, fmt.Errorf("no %s %s in %s", compositionVersion, compositionKind, strings.Join(paths, ", "))
	}
	return comps, nil
}

// compositionOf picks the Composition Crossplane composes the XR with
// among comps: the one its compositionRef names, or else the one of its
// kind its compositionSelector selects, or the only one of its kind.
func compositionOf(comps []xpsim.Object, x xpsim.Object) (xpsim.Object, error) {
	kind, apiVersion := fmt.Sprint(x["kind"]), fmt.Sprint(x["apiVersion"])
	var ofKind []xpsim.Object
	for _, c := range comps {
		if str(c, "spec", "compositeTypeRef", "apiVersion") == apiVersion && str(c, "spec", "compositeTypeRef", "kind") == kind {
			ofKind = append(ofKind, c)
		}
	}
	// A namespaced XR says how it is composed under spec.crossplane, a
	// legacy one (and a claim's) at the top of its spec.
	sel, ok := dig(x, "spec", "crossplane").(map[string]any)
	if !ok {
		sel, _ = x["spec"].(map[string]any)
	}
	if ref := str(sel, "compositionRef", "name"); ref != "" {
		for _, c := range ofKind {
			if str(c, "metadata", "name") == ref {
				return c, nil
			}
		}
		return nil, fmt.Errorf("its compositionRef names Composition %q, which the release's Compositions do not hold for %s %s", ref, apiVersion, kind)
	}
	if labels, _ := dig(sel, "compositionSelector", "matchLabels").(map[string]any); len(labels) > 0 {
		ofKind = slices.DeleteFunc(ofKind, func(c xpsim.Object) bool {
			have, _ := dig(c, "metadata", "labels").(map[string]any)
			for k, v := range labels {
				if have[k] != v {
					return true
				}
			}
			return false
		})
	}
	switch len(ofKind) {
	case 1:
		return ofKind[0], nil
	case 0:
		return nil, fmt.Errorf("the release's Compositions hold none that composes %s %s (compositeTypeRef) and it selects", apiVersion, kind)
	}
	names := make([]string, len(ofKind))
	for i, c := range ofKind {
		names[i] = str(c, "metadata", "name")
	}
	return nil, fmt.Errorf("the release's Compositions hold %d that compose %s %s (%s): name one in its compositionRef", len(ofKind), apiVersion, kind, strings.Join(names, ", "))
}

// stepOf reads this function's step of a Composition, and whether an
// earlier step merges EnvironmentConfigs into the context.
func stepOf(c xpsim.Object) (step, error) {
	s := step{composition: str(c, "metadata", "name")}
	pipeline, _ := dig(c, "spec", "pipeline").([]any)
	for i, p := range pipeline {
		ps, _ := p.(map[string]any)
		in, _ := ps["input"].(map[string]any)
		switch {
		case in["apiVersion"] == envStepAPIVersion && s.input == nil:
			s.inContext = true
			if err := s.readEnvStep(in); err != nil {
				return s, fmt.Errorf("Composition %s: spec.pipeline[%d].input: %w", s.composition, i, err)
			}
		case in["apiVersion"] == inputAPIVersion && in["kind"] == "Input":
			if s.input != nil {
				return s, fmt.Errorf("Composition %s: spec.pipeline[%d]: a second step of this function; a preview renders one", s.composition, i)
			}
			s.input = in
			reqs, _ := dig(ps, "requirements", "requiredResources").([]any)
			s.required = map[string]*fnv1.ResourceSelector{}
			for j, r := range reqs {
				rm, _ := r.(map[string]any)
				name, sel, err := selectorOf(rm)
				if err != nil {
					return s, fmt.Errorf("Composition %s: spec.pipeline[%d].requirements.requiredResources[%d]: %w", s.composition, i, j, err)
				}
				s.required[name] = sel
			}
		}
	}
	if s.input == nil {
		return s, fmt.Errorf("Composition %s: no step of spec.pipeline has an Input of %s: it does not call this function", s.composition, inputAPIVersion)
	}
	return s, nil
}

// selectorOf reads one of a step's required resources.
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
	switch labels, _ := r["matchLabels"].(map[string]any); {
	case r["name"] != nil:
		sel.Match = &fnv1.ResourceSelector_MatchName{MatchName: fmt.Sprint(r["name"])}
	default:
		ml := &fnv1.MatchLabels{Labels: map[string]string{}}
		for k, v := range labels {
			ml.Labels[k] = fmt.Sprint(v)
		}
		sel.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: ml}
	}
	return name, sel, nil
}

// readEnvStep reads which EnvironmentConfigs function-environment-configs
// selects: by name (type Reference), or by the labels of its selectors
// whose value is fixed (type Value); labels taken from the XR
// (FromCompositeFieldPath) are the layering the function does itself when
// it merges the context (xpsim.MergeEnvironment: baseline, cloud,
// planeType), so they are not read here.
func (s *step) readEnvStep(in map[string]any) error {
	configs, _ := dig(in, "spec", "environmentConfigs").([]any)
	for i, e := range configs {
		em, _ := e.(map[string]any)
		switch em["type"] {
		case "Reference":
			name := str(em, "ref", "name")
			if name == "" {
				return fmt.Errorf("spec.environmentConfigs[%d].ref.name is required", i)
			}
			s.named = append(s.named, name)
		case "Selector", nil:
			labels := map[string]string{}
			ml, _ := dig(em, "selector", "matchLabels").([]any)
			for _, l := range ml {
				lm, _ := l.(map[string]any)
				if t, _ := lm["type"].(string); t == "" || t == "Value" {
					labels[fmt.Sprint(lm["key"])] = fmt.Sprint(lm["value"])
				}
			}
			s.selects = append(s.selects, labels)
		default:
			return fmt.Errorf("spec.environmentConfigs[%d].type %v is not one a preview reads (Reference, Selector)", i, em["type"])
		}
	}
	return nil
}

// environment returns the EnvironmentConfigs the step's earlier
// function-environment-configs step selects of env.
func (s step) environment(env []xpsim.Object) []xpsim.Object {
	var out []xpsim.Object
	for _, o := range env {
		labels, _ := dig(o, "metadata", "labels").(map[string]any)
		if slices.Contains(s.named, str(o, "metadata", "name")) || slices.ContainsFunc(s.selects, func(want map[string]string) bool {
			for k, v := range want {
				if labels[k] != v {
					return false
				}
			}
			return true
		}) {
			out = append(out, o)
		}
	}
	return out
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
