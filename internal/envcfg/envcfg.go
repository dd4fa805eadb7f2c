// Package envcfg selects, layers and reads the platform's EnvironmentConfigs.
//
// Configs are layered baseline < cloud < planeType (later wins), selected by
// the labels baseline: default, cloud: <label> and planeType: <label> among
// every platform EnvironmentConfig. They arrive either as a step-level
// required resource (the shipped Composition fetches all platform configs by
// one static label, so one call per reconcile is enough), as the environment
// that function-environment-configs wrote into the pipeline context, or, when
// neither is there, through a requirement the function returns itself.
package envcfg

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// Where EnvironmentConfigs come from.
const (
	// ContextKey is the pipeline context key function-environment-configs
	// writes the merged environment to.
	ContextKey = "apiextensions.crossplane.io/environment"

	// RequirementName is the requirementName of the step-level
	// requiredResources entry in the shipped Composition.
	RequirementName = "environment-configs"

	// FallbackRequirementName is the requirement the function returns when
	// neither the context nor the step-level requirement supplied configs.
	// It differs from RequirementName so that a step-level entry and a
	// fetched one can be told apart, which keeps requirements stable.
	FallbackRequirementName = "platform-environment-configs"

	// SelectorLabel selects every platform EnvironmentConfig.
	SelectorLabel = "platform.example.org/environment"
	// SelectorValue is the value of SelectorLabel.
	SelectorValue = "cluster-platform"

	// APIVersion and Kind of an EnvironmentConfig.
	APIVersion = "apiextensions.crossplane.io/v1beta1"
	Kind       = "EnvironmentConfig"

	// OldAPIVersion is the API version EnvironmentConfigs had before
	// Crossplane 1.18. Crossplane v2 serves APIVersion only, so a config
	// written as OldAPIVersion never reaches the function: Crossplane does
	// not serve it, and crossplane render, which matches a requirement's
	// API version exactly, skips it.
	OldAPIVersion = "apiextensions.crossplane.io/v1alpha1"
)

// APIVersionHint ends every message about EnvironmentConfigs that were not
// found: the commonest reason for one is a config written as
// OldAPIVersion.
const APIVersionHint = "Crossplane v2 serves EnvironmentConfigs only as " + APIVersion +
	", so configs written as " + OldAPIVersion + " are not found (crossplane render --required-resources and --extra-resources skip them too): " +
	"set their apiVersion to " + APIVersion + ", data and labels unchanged"

// Layer labels.
const (
	LabelBaseline  = "baseline"
	LabelCloud     = "cloud"
	LabelPlaneType = "planeType"

	// BaselineValue is the value of the baseline label.
	BaselineValue = "default"
)

// Selector is the requirement that fetches every platform EnvironmentConfig.
func Selector() *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: APIVersion,
		Kind:       Kind,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{SelectorLabel: SelectorValue},
		}},
	}
}

// Env is the layered environment of one XR.
type Env struct {
	data map[string]any
	// Sources names the configs merged, lowest precedence first.
	Sources []string

	missing map[string]bool
	// invalid are the wrongly typed values read, by path.
	invalid map[string]*field.Error
	// sections are the sections decoded so far (see Section).
	sections map[sectionKey]any
}

// Resolution is the outcome of Resolve.
type Resolution struct {
	// Env is the layered environment; nil when it is not available yet.
	Env *Env
	// Require is set when the function must ask Crossplane for the configs
	// (or keep asking, so that the requirement stays stable).
	Require bool
	// Warnings name layers that were expected but not found.
	Warnings []string
	// Layers are the names of the configs of each layer (by layer label)
	// that was found, when configs were delivered as required resources.
	Layers map[string][]string
	// Missing are the layers the XR selects that have no config. It is
	// empty when the environment came from the pipeline context alone,
	// whose layers are not known.
	Missing []Layer
	// Original, when set, are requirements for the original platform's
	// EnvironmentConfigs (selected by their layer label alone), by
	// requirement name: asked for when no platform config exists.
	Original map[string]*fnv1.ResourceSelector
}

// OriginalRequirementPrefix prefixes the requirements for the original
// platform's EnvironmentConfigs, one per layer.
const OriginalRequirementPrefix = "original-environment-"

// originalSelectors select the original platform's EnvironmentConfigs of
// each layer by its label alone, as its pipeline did.
func originalSelectors(cloud, planeType string) map[string]*fnv1.ResourceSelector {
	out := map[string]*fnv1.ResourceSelector{}
	for label, value := range map[string]string{LabelBaseline: BaselineValue, LabelCloud: cloud, LabelPlaneType: planeType} {
		if value == "" {
			continue
		}
		out[OriginalRequirementPrefix+strings.ToLower(label)] = &fnv1.ResourceSelector{
			ApiVersion: APIVersion,
			Kind:       Kind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{label: value}}},
		}
	}
	return out
}

// originalItems returns the configs Crossplane delivered for the original
// requirements, and whether it delivered any answer to them.
func originalItems(req *fnv1.RunFunctionRequest) ([]*fnv1.Resource, bool) {
	var out []*fnv1.Resource
	asked := false
	for name, rs := range req.GetRequiredResources() {
		if strings.HasPrefix(name, OriginalRequirementPrefix) {
			asked = true
			out = append(out, rs.GetItems()...)
		}
	}
	return out, asked
}

// A Layer is one layer of the environment: the label that selects its
// configs, and the value the XR selects.
type Layer struct {
	Label string
	Value string
}

// String is the layer's selector, such as cloud=gcp.
func (l Layer) String() string { return l.Label + "=" + l.Value }

// errEmptyContext is the message for an environment that is present in the
// pipeline context but empty: an earlier step selected no config.
const errEmptyContext = "the pipeline context holds an empty environment (key %q): an earlier step, such as function-environment-configs, selected no EnvironmentConfig for this XR; nothing is rendered from built-in defaults, so Crossplane changes nothing until it selects one (labelled %s=%s with %s=%s, %s=%s or %s=%s). " + APIVersionHint

// Resolve selects and layers the EnvironmentConfigs for an XR of the supplied
// cloud and plane type. It returns an error when no environment can be
// found after the configs were fetched, and when the pipeline context holds
// an empty environment: the desired state cannot be computed without one,
// and built-in defaults are no substitute for the platform team's settings.
func Resolve(req *fnv1.RunFunctionRequest, cloud, planeType string) (Resolution, error) {
	var res Resolution
	env := &Env{data: map[string]any{}}

	emptyContext := false
	if v, ok := req.GetContext().GetFields()[ContextKey]; ok {
		m := v.GetStructValue().AsMap()
		delete(m, "apiVersion")
		delete(m, "kind")
		if len(m) > 0 {
			env.data = m
			env.Sources = append(env.Sources, "context:"+ContextKey)
		} else {
			emptyContext = true
		}
	}

	items, bootstrap := req.GetRequiredResources()[RequirementName]
	if !bootstrap {
		if emptyContext {
			return res, fmt.Errorf(errEmptyContext, ContextKey, SelectorLabel, SelectorValue, LabelBaseline, BaselineValue, LabelCloud, cloud, LabelPlaneType, planeType)
		}
		var fetched bool
		items, fetched = req.GetRequiredResources()[FallbackRequirementName]
		// Ask for the configs unless the context already has an
		// environment; once asked, keep asking so the requirement is stable.
		res.Require = fetched || len(env.Sources) == 0
		if !fetched && len(env.Sources) == 0 {
			return res, nil
		}
	}

	pool := items.GetItems()
	layers := selectLayers(pool, cloud, planeType)
	fromContext := len(env.Sources) > 0
	if !fromContext && !anyConfig(layers) {
		// No platform config: the original platform's, selected by their
		// layer labels alone, may exist. Ask for them, and keep asking
		// while they are used so that the requirements stay stable.
		original, asked := originalItems(req)
		res.Original = originalSelectors(cloud, planeType)
		if !asked {
			return res, nil
		}
		pool = original
		layers = selectLayers(pool, cloud, planeType)
	}
	for _, l := range layers {
		for _, c := range l.configs {
			overlay.Merge(env.data, object.Get(c, "data").GetStructValue().AsMap())
			name := object.String(c, "metadata", "name")
			env.Sources = append(env.Sources, name)
			if res.Layers == nil {
				res.Layers = map[string][]string{}
			}
			res.Layers[l.label] = append(res.Layers[l.label], name)
		}
	}
	if len(env.Sources) == 0 {
		return res, fmt.Errorf("no EnvironmentConfig found: expected configs labelled %s=%s with %s=%s, %s=%s or %s=%s (or, as the original platform's, with those labels alone), or an environment in the pipeline context key %q. %s",
			SelectorLabel, SelectorValue, LabelBaseline, BaselineValue, LabelCloud, cloud, LabelPlaneType, planeType, ContextKey, APIVersionHint)
	}
	for _, l := range layers {
		if len(l.configs) == 0 && len(pool) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("no EnvironmentConfig labelled %s=%s; that layer is skipped", l.label, l.value))
		}
		if len(l.configs) == 0 && !fromContext {
			res.Missing = append(res.Missing, Layer{Label: l.label, Value: l.value})
		}
	}
	res.Env = env
	return res, nil
}

// RequireLayers returns an error naming every layer of the supplied labels
// that has no config. An XR that already composes resources needs every
// layer it was composed with: rendering it without one would silently
// replace the platform team's settings with built-in defaults. why says
// why the layers are needed, for the message.
func (r Resolution) RequireLayers(why string, labels ...string) error {
	var missing []string
	for _, l := range r.Missing {
		if slices.Contains(labels, l.Label) {
			missing = append(missing, l.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("no EnvironmentConfig labelled %s=%s and %s, but %s; restore the config (or correct the XR's labels): Crossplane changes nothing meanwhile",
		SelectorLabel, SelectorValue, strings.Join(missing, ", "), why)
}

// anyConfig reports whether any layer has a config.
func anyConfig(layers []layer) bool {
	for _, l := range layers {
		if len(l.configs) > 0 {
			return true
		}
	}
	return false
}

type layer struct {
	label, value string
	configs      []*structpb.Struct
}

// selectLayers picks the baseline, cloud and planeType configs, each layer
// sorted by name so that the merge order is deterministic.
func selectLayers(items []*fnv1.Resource, cloud, planeType string) []layer {
	layers := []layer{
		{label: LabelBaseline, value: BaselineValue},
		{label: LabelCloud, value: cloud},
		{label: LabelPlaneType, value: planeType},
	}
	for _, it := range items {
		r := it.GetResource()
		for i := range layers {
			if layers[i].value != "" && object.Label(r, layers[i].label) == layers[i].value {
				layers[i].configs = append(layers[i].configs, r)
			}
		}
	}
	for i := range layers {
		sort.Slice(layers[i].configs, func(a, b int) bool {
			return object.String(layers[i].configs[a], "metadata", "name") < object.String(layers[i].configs[b], "metadata", "name")
		})
	}
	if planeType == "" {
		layers = layers[:2]
	}
	return layers
}

// New returns an environment holding the supplied data, for tests and for
// callers that layer configs themselves.
func New(data map[string]any) *Env {
	if data == nil {
		data = map[string]any{}
	}
	return &Env{data: data}
}

// Data returns the layered data. Callers must not modify it.
func (e *Env) Data() map[string]any { return e.data }

// lookup returns the value at a dotted path. Keys that contain dots (such as
// machine types in price tables) are reached with Child.
func (e *Env) lookup(path ...string) (any, bool) {
	var cur any = e.data
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok || cur == nil {
			return nil, false
		}
	}
	return cur, true
}

// Need records that a key without a default was needed but is missing, so that
// it is named in a Warning.
func (e *Env) Need(path ...string) {
	if e.missing == nil {
		e.missing = map[string]bool{}
	}
	e.missing[strings.Join(path, ".")] = true
}

// Missing returns the needed keys that were missing, sorted.
func (e *Env) Missing() []string {
	out := make([]string, 0, len(e.missing))
	for k := range e.missing {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
