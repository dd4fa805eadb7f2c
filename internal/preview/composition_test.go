package preview

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// comp is a Composition of kind under apiVersion, named name, labelled
// labels, whose pipeline is steps.
func comp(name, apiVersion, kind string, labels map[string]any, steps ...any) xpsim.Object {
	return xpsim.Object{
		"apiVersion": compositionVersion, "kind": compositionKind,
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"compositeTypeRef": map[string]any{"apiVersion": apiVersion, "kind": kind},
			"mode":             "Pipeline",
			"pipeline":         steps,
		},
	}
}

// fnStep is this function's step with an Input of module and release.
func fnStep(module, release string, reqs ...any) map[string]any {
	s := map[string]any{
		"step":        "render",
		"functionRef": map[string]any{"name": "function-cluster-platform"},
		"input":       map[string]any{"apiVersion": inputAPIVersion, "kind": "Input", "module": module, "release": release},
	}
	if len(reqs) > 0 {
		s["requirements"] = map[string]any{"requiredResources": reqs}
	}
	return s
}

func TestCompositionOf(t *testing.T) {
	const v2, legacy = "platform.example.org/v1alpha1", "legacy.platform.example.org/v1alpha1"
	oneStep := comp("cluster-platform", v2, "Cluster", map[string]any{"variant": "one-step"}, fnStep("cluster", ""))
	twoStep := comp("cluster-platform-environment", v2, "Cluster", map[string]any{"variant": "two-step"}, fnStep("cluster", ""))
	legacyComp := comp("cluster-platform-legacy", legacy, "XCluster", nil, fnStep("cluster", ""))
	database := comp("database-platform", v2, "Database", nil, fnStep("database", ""))
	xr := func(apiVersion, kind string, spec map[string]any) xpsim.Object {
		return xpsim.Object{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "a"}, "spec": spec}
	}
	cases := map[string]struct {
		reason string
		comps  []xpsim.Object
		xr     xpsim.Object
		want   string
		err    string
	}{
		"OnlyOneOfItsKind": {
			reason: "An XR that names no Composition is composed with the only one of its kind.",
			comps:  []xpsim.Object{oneStep, database, legacyComp},
			xr:     xr(v2, "Cluster", map[string]any{}),
			want:   "cluster-platform",
		},
		"ByRef": {
			reason: "A namespaced XR's spec.crossplane.compositionRef picks among several of its kind.",
			comps:  []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": map[string]any{"compositionRef": map[string]any{"name": "cluster-platform-environment"}}}),
			want:   "cluster-platform-environment",
		},
		"BySelector": {
			reason: "A namespaced XR's compositionSelector picks among several of its kind.",
			comps:  []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": map[string]any{"compositionSelector": map[string]any{"matchLabels": map[string]any{"variant": "two-step"}}}}),
			want:   "cluster-platform-environment",
		},
		"LegacyByRef": {
			reason: "A legacy XR names its Composition at the top of its spec.",
			comps:  []xpsim.Object{legacyComp, oneStep},
			xr:     xr(legacy, "XCluster", map[string]any{"compositionRef": map[string]any{"name": "cluster-platform-legacy"}}),
			want:   "cluster-platform-legacy",
		},
		"RefNotHeld": {
			reason: "A compositionRef the release's Compositions do not hold is named.",
			comps:  []xpsim.Object{oneStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": map[string]any{"compositionRef": map[string]any{"name": "cluster-platform-r9"}}}),
			err:    `its compositionRef names Composition "cluster-platform-r9", which the release's Compositions do not hold for platform.example.org/v1alpha1 Cluster`,
		},
		"NoneOfItsKind": {
			reason: "A kind the release's Compositions do not compose is named.",
			comps:  []xpsim.Object{database},
			xr:     xr(v2, "Cluster", map[string]any{}),
			err:    "the release's Compositions hold none that composes platform.example.org/v1alpha1 Cluster (compositeTypeRef) and it selects",
		},
		"Ambiguous": {
			reason: "Several of its kind and nothing to choose: the XR must name one.",
			comps:  []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{}),
			err:    "the release's Compositions hold 2 that compose platform.example.org/v1alpha1 Cluster (cluster-platform, cluster-platform-environment): name one in its compositionRef",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := compositionOf(tc.comps, tc.xr)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Fatalf("%s\ncompositionOf(...): -want error, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, str(got, "metadata", "name")); diff != "" {
				t.Errorf("%s\ncompositionOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestStepOf(t *testing.T) {
	const v2 = "platform.example.org/v1alpha1"
	envReq := map[string]any{
		"requirementName": "environment-configs", "apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"matchLabels": map[string]any{"platform.example.org/environment": "cluster-platform-r2"},
	}
	envStep := map[string]any{
		"step": "environment", "functionRef": map[string]any{"name": "function-environment-configs"},
		"input": map[string]any{"apiVersion": envStepAPIVersion, "kind": "Input", "spec": map[string]any{"environmentConfigs": []any{
			map[string]any{"type": "Reference", "ref": map[string]any{"name": "extra"}},
			map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{
				map[string]any{"key": "platform.example.org/environment", "type": "Value", "value": "cluster-platform"},
				map[string]any{"key": "cloud", "type": "FromCompositeFieldPath", "valueFromFieldPath": "metadata.labels.cloud"},
			}}},
		}}},
	}
	cases := map[string]struct {
		reason string
		comp   xpsim.Object
		want   step
		err    string
	}{
		"OneStep": {
			reason: "The step's Input and requirements are read; EnvironmentConfigs are required, not in the context.",
			comp:   comp("r2", v2, "Cluster", nil, fnStep("cluster", "r2", envReq)),
			want: step{
				composition: "r2",
				input:       xpsim.Object{"apiVersion": inputAPIVersion, "kind": "Input", "module": "cluster", "release": "r2"},
				required: map[string]*fnv1.ResourceSelector{"environment-configs": {
					ApiVersion: "apiextensions.crossplane.io/v1beta1", Kind: "EnvironmentConfig",
					Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"platform.example.org/environment": "cluster-platform-r2"}}},
				}},
			},
		},
		"TwoStep": {
			reason: "An earlier function-environment-configs step puts the EnvironmentConfigs it selects (by name, and by the labels of fixed value) in the context.",
			comp:   comp("two", v2, "Cluster", nil, envStep, fnStep("cluster", "")),
			want: step{
				composition: "two",
				input:       xpsim.Object{"apiVersion": inputAPIVersion, "kind": "Input", "module": "cluster", "release": ""},
				required:    map[string]*fnv1.ResourceSelector{},
				inContext:   true,
				selects:     []map[string]string{{"platform.example.org/environment": "cluster-platform"}},
				named:       []string{"extra"},
			},
		},
		"NotThisFunction": {
			reason: "A Composition with no step of this function is named.",
			comp:   comp("other", v2, "Cluster", nil, envStep),
			err:    "Composition other: no step of spec.pipeline has an Input of platform.fn.example.org/v1beta1: it does not call this function",
		},
		"TwoSteps": {
			reason: "Two steps of this function are not previewed.",
			comp:   comp("twice", v2, "Cluster", nil, fnStep("cluster", ""), fnStep("cluster", "")),
			err:    "Composition twice: spec.pipeline[1]: a second step of this function; a preview renders one",
		},
		"BadRequirement": {
			reason: "A required resource with no kind is named by its index.",
			comp:   comp("bad", v2, "Cluster", nil, fnStep("cluster", "", map[string]any{"requirementName": "x", "apiVersion": "v1"})),
			err:    "Composition bad: spec.pipeline[0].requirements.requiredResources[0]: requirementName, apiVersion and kind are required",
		},
		"BadEnvironmentType": {
			reason: "An EnvironmentConfig source a preview cannot read is named.",
			comp: comp("env", v2, "Cluster", nil, map[string]any{"input": map[string]any{"apiVersion": envStepAPIVersion, "kind": "Input", "spec": map[string]any{
				"environmentConfigs": []any{map[string]any{"type": "FromCluster"}},
			}}}, fnStep("cluster", "")),
			err: "Composition env: spec.pipeline[0].input: spec.environmentConfigs[0].type FromCluster is not one a preview reads (Reference, Selector)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := stepOf(tc.comp)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Fatalf("%s\nstepOf(...): -want error, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(step{}), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nstepOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestStepEnvironment: the EnvironmentConfigs an earlier step selects are
// those it names and those carrying a selector's fixed labels.
func TestStepEnvironment(t *testing.T) {
	env := func(name string, labels map[string]any) xpsim.Object {
		return xpsim.Object{"metadata": map[string]any{"name": name, "labels": labels}}
	}
	all := []xpsim.Object{
		env("base", map[string]any{"platform.example.org/environment": "cluster-platform", "baseline": "default"}),
		env("r3-base", map[string]any{"platform.example.org/environment": "cluster-platform-r3", "baseline": "default"}),
		env("extra", nil),
	}
	s := step{selects: []map[string]string{{"platform.example.org/environment": "cluster-platform"}}, named: []string{"extra"}}
	var got []string
	for _, o := range s.environment(all) {
		got = append(got, fmt.Sprint(o["metadata"].(map[string]any)["name"]))
	}
	if diff := cmp.Diff([]string{"base", "extra"}, got); diff != "" {
		t.Errorf("environment(): -want, +got:\n%s", diff)
	}
}
