package xpsim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/fieldpath"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// EnvStepAPIVersion is the API version of function-environment-configs'
// Input.
const EnvStepAPIVersion = "environmentconfigs.fn.crossplane.io/v1beta1"

// An EnvStep is a pipeline step of function-environment-configs, which
// selects EnvironmentConfigs and merges their data into the pipeline
// context before the steps after it. It plays that function (v0.7,
// crossplane-contrib/function-environment-configs fn.go at fd738e4:
// buildRequirements, getSelectedEnvConfigs, mergeEnvConfigsData) with
// the defaults of its Input (input/v1beta1/composition_environment.go): a
// source without a type is a Reference, a selector without a mode is
// Single, a label matcher without a type reads the XR
// (FromCompositeFieldPath) and is Required.
type EnvStep struct {
	sources  []envSource
	optional bool
	defaults map[string]any
}

type envSource struct {
	ref      string
	selector *envSelector
}

type envSelector struct {
	multiple bool
	min, max *int
	labels   []envLabel
}

type envLabel struct {
	key, value, fromPath string
	optional             bool
}

// ParseEnvStep reads the Input of a function-environment-configs step. It
// refuses, naming the field, what it does not play: toFieldPath, and a
// sortByFieldPath other than metadata.name.
func ParseEnvStep(in Object) (*EnvStep, error) {
	spec, _ := in["spec"].(map[string]any)
	s := &EnvStep{}
	if d, ok := spec["defaultData"].(map[string]any); ok {
		s.defaults = d
	}
	if p, _ := spec["policy"].(map[string]any); p["resolution"] == "Optional" {
		s.optional = true
	}
	configs, _ := spec["environmentConfigs"].([]any)
	for i, c := range configs {
		cm, _ := c.(map[string]any)
		field := fmt.Sprintf("spec.environmentConfigs[%d]", i)
		if cm["toFieldPath"] != nil {
			return nil, fmt.Errorf("%s.toFieldPath is not played by a preview", field)
		}
		switch t, _ := cm["type"].(string); t {
		case "", "Reference":
			ref, _ := cm["ref"].(map[string]any)
			name, _ := ref["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("%s.ref.name is required", field)
			}
			s.sources = append(s.sources, envSource{ref: name})
		case "Selector":
			sel, err := parseEnvSelector(field+".selector", cm["selector"])
			if err != nil {
				return nil, err
			}
			s.sources = append(s.sources, envSource{selector: sel})
		default:
			return nil, fmt.Errorf("%s.type %q is not Reference or Selector", field, t)
		}
	}
	return s, nil
}

func parseEnvSelector(field string, v any) (*envSelector, error) {
	sm, _ := v.(map[string]any)
	sel := &envSelector{}
	switch mode, _ := sm["mode"].(string); mode {
	case "", "Single":
	case "Multiple":
		sel.multiple = true
	default:
		return nil, fmt.Errorf("%s.mode %q is not Single or Multiple", field, mode)
	}
	if p, _ := sm["sortByFieldPath"].(string); p != "" && p != "metadata.name" {
		return nil, fmt.Errorf("%s.sortByFieldPath %q is not played by a preview (metadata.name is)", field, p)
	}
	for _, k := range []struct {
		name string
		into **int
	}{{"minMatch", &sel.min}, {"maxMatch", &sel.max}} {
		if n, ok := sm[k.name].(float64); ok {
			i := int(n)
			*k.into = &i
		}
	}
	labels, _ := sm["matchLabels"].([]any)
	for j, l := range labels {
		lm, _ := l.(map[string]any)
		lf := fmt.Sprintf("%s.matchLabels[%d]", field, j)
		key, _ := lm["key"].(string)
		if key == "" {
			return nil, fmt.Errorf("%s.key is required", lf)
		}
		m := envLabel{key: key, optional: lm["fromFieldPathPolicy"] == "Optional"}
		switch t, _ := lm["type"].(string); t {
		case "Value":
			if m.value, _ = lm["value"].(string); m.value == "" {
				return nil, fmt.Errorf("%s.value is required", lf)
			}
		case "", "FromCompositeFieldPath":
			if m.fromPath, _ = lm["valueFromFieldPath"].(string); m.fromPath == "" {
				return nil, fmt.Errorf("%s.valueFromFieldPath is required", lf)
			}
		default:
			return nil, fmt.Errorf("%s.type %q is not Value or FromCompositeFieldPath", lf, t)
		}
		sel.labels = append(sel.labels, m)
	}
	return sel, nil
}

// Context returns the pipeline context the step leaves for xr, from the
// EnvironmentConfigs there are, or the error the step's Fatal would give.
func (s *EnvStep) Context(xr Object, configs []Object) (Object, error) {
	merged := map[string]any{}
	for i, src := range s.sources {
		field := fmt.Sprintf("spec.environmentConfigs[%d]", i)
		var picked []Object
		switch {
		case src.ref != "":
			for _, c := range configs {
				if name(c) == src.ref {
					picked = append(picked, c)
				}
			}
			if len(picked) == 0 && !s.optional {
				return nil, fmt.Errorf("%s: EnvironmentConfig %q not found", field, src.ref)
			}
		default:
			want := map[string]string{}
			for _, l := range src.selector.labels {
				if l.fromPath == "" {
					want[l.key] = l.value
					continue
				}
				v, err := fieldpath.Pave(xr).GetString(l.fromPath)
				if err != nil {
					if l.optional {
						continue
					}
					return nil, fmt.Errorf("%s: cannot read %s of the XR: %w", field, l.fromPath, err)
				}
				want[l.key] = v
			}
			if len(want) == 0 {
				continue // function-environment-configs requires nothing for it
			}
			for _, c := range configs {
				meta, _ := c["metadata"].(map[string]any)
				labels, _ := meta["labels"].(map[string]any)
				if hasLabels(labels, want) {
					picked = append(picked, c)
				}
			}
			slices.SortFunc(picked, func(a, b Object) int { return cmp.Compare(name(a), name(b)) })
			var err error
			if picked, err = src.selector.pick(picked); err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
		}
		for _, c := range picked {
			if d, ok := c["data"].(map[string]any); ok {
				overlay.Merge(merged, overlay.DeepCopy(d))
			}
		}
	}
	if s.defaults != nil {
		base := overlay.DeepCopy(s.defaults)
		overlay.Merge(base, merged)
		merged = base
	}
	env := Object{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}
	for k, v := range merged {
		env[k] = v
	}
	return Object{envcfg.ContextKey: map[string]any(env)}, nil
}

// pick applies a selector's mode to the configs it matched, in order.
func (sel *envSelector) pick(matched []Object) ([]Object, error) {
	if !sel.multiple {
		if len(matched) != 1 {
			return nil, fmt.Errorf("mode Single selects %d EnvironmentConfigs, want exactly one", len(matched))
		}
		return matched, nil
	}
	if sel.min != nil && len(matched) < *sel.min {
		return nil, fmt.Errorf("selects %d EnvironmentConfigs, fewer than its minMatch %d", len(matched), *sel.min)
	}
	if sel.max != nil && len(matched) > *sel.max {
		matched = matched[:*sel.max]
	}
	return matched, nil
}

// name is an object's metadata.name.
func name(o Object) string {
	meta, _ := o["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	return n
}
