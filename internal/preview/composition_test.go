package preview

import (
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
		"apiVersion": compositionAV, "kind": compositionKind,
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

// xrd is an XRD of kind in group with a default and an enforced
// Composition ("" for none).
func xrd(group, kind, def, enforced string) xpsim.Object {
	spec := map[string]any{"group": group, "names": map[string]any{"kind": kind}}
	if def != "" {
		spec["defaultCompositionRef"] = map[string]any{"name": def}
	}
	if enforced != "" {
		spec["enforcedCompositionRef"] = map[string]any{"name": enforced}
	}
	return xpsim.Object{"apiVersion": "apiextensions.crossplane.io/v2", "kind": xrdKind, "metadata": map[string]any{"name": kind}, "spec": spec}
}

func TestCompositionsOf(t *testing.T) {
	const v2, legacy = "platform.example.org/v1alpha1", "legacy.platform.example.org/v1alpha1"
	oneStep := comp("cluster-platform", v2, "Cluster", map[string]any{"variant": "one-step"}, fnStep("cluster", ""))
	twoStep := comp("cluster-platform-environment", v2, "Cluster", map[string]any{"variant": "two-step"}, fnStep("cluster", ""))
	legacyComp := comp("cluster-platform-legacy", legacy, "XCluster", map[string]any{"variant": "one-step"}, fnStep("cluster", ""))
	compat := comp("cluster-platform-compat", legacy, "XCluster", nil, fnStep("cluster", ""))
	database := comp("database-platform", v2, "Database", nil, fnStep("database", ""))
	xr := func(apiVersion, kind string, spec map[string]any) xpsim.Object {
		return xpsim.Object{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "a"}, "spec": spec}
	}
	ref := func(name string) map[string]any {
		return map[string]any{"compositionRef": map[string]any{"name": name}}
	}
	selector := func(k, v string) map[string]any {
		return map[string]any{"compositionSelector": map[string]any{"matchLabels": map[string]any{k: v}}}
	}
	cases := map[string]struct {
		reason string
		objs   []xpsim.Object
		xr     xpsim.Object
		want   string
		err    string
	}{
		"OnlyOneOfItsKind": {
			reason: "An XR that names no Composition is composed with the only one of its kind.",
			objs:   []xpsim.Object{oneStep, database, legacyComp},
			xr:     xr(v2, "Cluster", map[string]any{}),
			want:   "cluster-platform",
		},
		"ByRef": {
			reason: "A namespaced XR's spec.crossplane.compositionRef picks among several of its kind.",
			objs:   []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": ref("cluster-platform-environment")}),
			want:   "cluster-platform-environment",
		},
		"NamespacedRefAtTheTopIsAField": {
			reason: "A namespaced XR's spec.compositionRef is a field of its own, not Crossplane's.",
			objs:   []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", ref("cluster-platform-environment")),
			err:    "these Compositions hold 2 for platform.example.org/Cluster (cluster-platform, cluster-platform-environment): name one in its compositionRef",
		},
		"BySelector": {
			reason: "A namespaced XR's compositionSelector picks among several of its kind.",
			objs:   []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": selector("variant", "two-step")}),
			want:   "cluster-platform-environment",
		},
		"SelectorSelectsNone": {
			reason: "A selector that selects none is named with its labels.",
			objs:   []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": selector("variant", "three-step")}),
			err:    "these Compositions hold none for platform.example.org/Cluster with the labels of its compositionSelector map[variant:three-step]",
		},
		"LegacyByRef": {
			reason: "A legacy XR (and a claim) names its Composition at the top of its spec.",
			objs:   []xpsim.Object{legacyComp, compat},
			xr:     xr(legacy, "XCluster", ref("cluster-platform-compat")),
			want:   "cluster-platform-compat",
		},
		"LegacySelector": {
			reason: "A legacy XR's compositionSelector is at the top of its spec.",
			objs:   []xpsim.Object{legacyComp, compat},
			xr:     xr(legacy, "XCluster", selector("variant", "one-step")),
			want:   "cluster-platform-legacy",
		},
		"XRDDefault": {
			reason: "With neither ref nor selector, the XRD's defaultCompositionRef picks among several.",
			objs:   []xpsim.Object{legacyComp, compat, xrd("legacy.platform.example.org", "XCluster", "cluster-platform-compat", "")},
			xr:     xr(legacy, "XCluster", map[string]any{}),
			want:   "cluster-platform-compat",
		},
		"XRDDefaultAfterSelector": {
			reason: "An XR's selector comes before the XRD's default.",
			objs:   []xpsim.Object{legacyComp, compat, xrd("legacy.platform.example.org", "XCluster", "cluster-platform-compat", "")},
			xr:     xr(legacy, "XCluster", selector("variant", "one-step")),
			want:   "cluster-platform-legacy",
		},
		"XRDEnforced": {
			reason: "The XRD's enforcedCompositionRef wins over the XR's own ref.",
			objs:   []xpsim.Object{legacyComp, compat, xrd("legacy.platform.example.org", "XCluster", "", "cluster-platform-compat")},
			xr:     xr(legacy, "XCluster", ref("cluster-platform-legacy")),
			want:   "cluster-platform-compat",
		},
		"RefNotHeld": {
			reason: "A compositionRef these Compositions do not hold is named.",
			objs:   []xpsim.Object{oneStep},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": ref("cluster-platform-r9")}),
			err:    `its compositionRef names Composition "cluster-platform-r9", which these Compositions do not hold for platform.example.org/Cluster`,
		},
		"RefOfAnotherKind": {
			reason: "A compositionRef to a Composition of another kind is refused.",
			objs:   []xpsim.Object{oneStep, database},
			xr:     xr(v2, "Cluster", map[string]any{"crossplane": ref("database-platform")}),
			err:    `its compositionRef names Composition "database-platform", which these Compositions do not hold for platform.example.org/Cluster`,
		},
		"NoneOfItsKind": {
			reason: "A kind these Compositions do not compose is named.",
			objs:   []xpsim.Object{database},
			xr:     xr(v2, "Cluster", map[string]any{}),
			err:    "these Compositions hold none for platform.example.org/Cluster",
		},
		"Ambiguous": {
			reason: "Several of its kind and nothing to choose (Crossplane would take one at random): the XR must name one.",
			objs:   []xpsim.Object{oneStep, twoStep},
			xr:     xr(v2, "Cluster", map[string]any{}),
			err:    "these Compositions hold 2 for platform.example.org/Cluster (cluster-platform, cluster-platform-environment): name one in its compositionRef",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs, err := ParseCompositions(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cs.of(tc.xr)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Fatalf("%s\nof(...): -want error, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got.name); diff != "" {
				t.Errorf("%s\nof(...): -want, +got:\n%s", tc.reason, diff)
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

func TestParseCompositions(t *testing.T) {
	const v2 = "platform.example.org/v1alpha1"
	envReq := map[string]any{
		"requirementName": "environment-configs", "apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"matchLabels": map[string]any{"platform.example.org/environment": "cluster-platform-r2"},
	}
	envStep := map[string]any{
		"step": "environment", "functionRef": map[string]any{"name": "function-environment-configs"},
		"input": map[string]any{"apiVersion": xpsim.EnvStepAPIVersion, "kind": "Input", "spec": map[string]any{"environmentConfigs": []any{
			map[string]any{"ref": map[string]any{"name": "extra"}},
		}}},
	}
	cases := map[string]struct {
		reason  string
		objs    []xpsim.Object
		want    step
		withEnv bool
		err     string
	}{
		"OneStep": {
			reason: "The step's Input and requirements are read.",
			objs:   []xpsim.Object{comp("r2", v2, "Cluster", nil, fnStep("cluster", "r2", envReq))},
			want: step{
				input: xpsim.Object{"apiVersion": inputAPIVersion, "kind": "Input", "module": "cluster", "release": "r2"},
				required: map[string]*fnv1.ResourceSelector{"environment-configs": {
					ApiVersion: "apiextensions.crossplane.io/v1beta1", Kind: "EnvironmentConfig",
					Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"platform.example.org/environment": "cluster-platform-r2"}}},
				}},
			},
		},
		"TwoStep": {
			reason:  "An earlier function-environment-configs step is read with this function's.",
			objs:    []xpsim.Object{comp("two", v2, "Cluster", nil, envStep, fnStep("cluster", ""))},
			want:    step{input: xpsim.Object{"apiVersion": inputAPIVersion, "kind": "Input", "module": "cluster", "release": ""}, required: map[string]*fnv1.ResourceSelector{}},
			withEnv: true,
		},
		"NotThisFunction": {
			reason: "A Composition with no step of this function is named.",
			objs:   []xpsim.Object{comp("other", v2, "Cluster", nil, envStep)},
			err:    "the Composition other: no step of spec.pipeline has an Input of platform.fn.example.org/v1beta1: it does not call this function",
		},
		"TwoSteps": {
			reason: "Two steps of this function are not previewed.",
			objs:   []xpsim.Object{comp("twice", v2, "Cluster", nil, fnStep("cluster", ""), fnStep("cluster", ""))},
			err:    "the Composition twice: spec.pipeline[1]: a second step of this function; a preview renders one",
		},
		"NamedTwice": {
			reason: "Two Compositions of one name (two releases' folders given as one) are refused.",
			objs:   []xpsim.Object{comp("r2", v2, "Cluster", nil, fnStep("cluster", "")), comp("r2", v2, "Cluster", nil, fnStep("cluster", ""))},
			err:    `the Composition "r2" is named twice: give each release's Compositions apart`,
		},
		"RequirementWithoutKind": {
			reason: "A required resource with no kind is named by its index.",
			objs:   []xpsim.Object{comp("bad", v2, "Cluster", nil, fnStep("cluster", "", map[string]any{"requirementName": "x", "apiVersion": "v1", "matchLabels": map[string]any{}}))},
			err:    "the Composition bad: spec.pipeline[0].requirements.requiredResources[0]: requirementName, apiVersion and kind are required",
		},
		"RequirementNameAndLabels": {
			reason: "A required resource by name and by labels is refused, as Crossplane's schema does.",
			objs:   []xpsim.Object{comp("bad", v2, "Cluster", nil, fnStep("cluster", "", map[string]any{"requirementName": "x", "apiVersion": "v1", "kind": "ConfigMap", "name": "a", "matchLabels": map[string]any{"a": "b"}}))},
			err:    "the Composition bad: spec.pipeline[0].requirements.requiredResources[0]: name and matchLabels: name one or the other",
		},
		"RequirementNeither": {
			reason: "A required resource with neither name nor labels is refused.",
			objs:   []xpsim.Object{comp("bad", v2, "Cluster", nil, fnStep("cluster", "", map[string]any{"requirementName": "x", "apiVersion": "v1", "kind": "ConfigMap", "name": ""}))},
			err:    "the Composition bad: spec.pipeline[0].requirements.requiredResources[0]: name or matchLabels is required",
		},
		"EnvironmentNotPlayed": {
			reason: "What the preview does not play of function-environment-configs is named.",
			objs: []xpsim.Object{comp("env", v2, "Cluster", nil, map[string]any{"input": map[string]any{"apiVersion": xpsim.EnvStepAPIVersion, "kind": "Input", "spec": map[string]any{
				"environmentConfigs": []any{map[string]any{"type": "Selector", "toFieldPath": "x"}},
			}}}, fnStep("cluster", ""))},
			err: "the Composition env: spec.pipeline[0].input: spec.environmentConfigs[0].toFieldPath is not played by a preview",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs, err := ParseCompositions(tc.objs)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Fatalf("%s\nParseCompositions(...): -want error, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			got := cs.byName[cs.names[0]].step
			if (got.env != nil) != tc.withEnv {
				t.Errorf("%s\nstep.env set %t, want %t", tc.reason, got.env != nil, tc.withEnv)
			}
			got.env = nil
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(step{}), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nParseCompositions(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
