package xpsim

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
)

func TestEnvStepContext(t *testing.T) {
	config := func(name string, labels map[string]any, data map[string]any) Object {
		return Object{"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig", "metadata": map[string]any{"name": name, "labels": labels}, "data": data}
	}
	configs := []Object{
		config("b-base", map[string]any{"env": "prod", "layer": "base"}, map[string]any{"size": "small", "zone": "a"}),
		config("a-base", map[string]any{"env": "prod", "layer": "base"}, map[string]any{"size": "tiny", "owner": "ops"}),
		config("gcp", map[string]any{"env": "prod", "cloud": "gcp"}, map[string]any{"zone": "b"}),
		config("extra", nil, map[string]any{"extra": true}),
	}
	xr := Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "c", "labels": map[string]any{"cloud": "gcp"}}}
	ctx := func(data map[string]any) Object {
		env := map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}
		for k, v := range data {
			env[k] = v
		}
		return Object{envcfg.ContextKey: env}
	}
	multiple := func(labels ...any) map[string]any {
		return map[string]any{"type": "Selector", "selector": map[string]any{"mode": "Multiple", "matchLabels": labels}}
	}
	value := func(k, v string) map[string]any { return map[string]any{"key": k, "type": "Value", "value": v} }
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   Object
		err    string
	}{
		"LayersInOrder": {
			reason: "Sources merge in order, a Multiple selector's configs by name: later wins, objects merge.",
			spec: map[string]any{"environmentConfigs": []any{
				multiple(value("layer", "base")),
				multiple(map[string]any{"key": "cloud", "valueFromFieldPath": "metadata.labels.cloud"}), // no type: FromCompositeFieldPath
			}},
			want: ctx(map[string]any{"size": "small", "owner": "ops", "zone": "b"}),
		},
		"ReferenceByDefault": {
			reason: "A source with no type is a Reference.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"ref": map[string]any{"name": "extra"}}}},
			want:   ctx(map[string]any{"extra": true}),
		},
		"ReferenceMissing": {
			reason: "A Reference to no config fails the step.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"ref": map[string]any{"name": "gone"}}}},
			err:    `spec.environmentConfigs[0]: EnvironmentConfig "gone" not found`,
		},
		"ReferenceMissingOptional": {
			reason: "With policy.resolution Optional a missing Reference is skipped.",
			spec:   map[string]any{"policy": map[string]any{"resolution": "Optional"}, "environmentConfigs": []any{map[string]any{"ref": map[string]any{"name": "gone"}}}},
			want:   ctx(map[string]any{}),
		},
		"SingleByDefault": {
			reason: "A selector with no mode is Single: two matches fail the step.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{value("layer", "base")}}}}},
			err:    "spec.environmentConfigs[0]: mode Single selects 2 EnvironmentConfigs, want exactly one",
		},
		"SingleOne": {
			reason: "Single with one match takes it.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{value("cloud", "gcp")}}}}},
			want:   ctx(map[string]any{"zone": "b"}),
		},
		"MinMatch": {
			reason: "Fewer matches than minMatch fail the step.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"type": "Selector", "selector": map[string]any{"mode": "Multiple", "minMatch": 3.0, "matchLabels": []any{value("layer", "base")}}}}},
			err:    "spec.environmentConfigs[0]: selects 2 EnvironmentConfigs, fewer than its minMatch 3",
		},
		"MaxMatch": {
			reason: "maxMatch keeps the first by name.",
			spec:   map[string]any{"environmentConfigs": []any{map[string]any{"type": "Selector", "selector": map[string]any{"mode": "Multiple", "maxMatch": 1.0, "matchLabels": []any{value("layer", "base")}}}}},
			want:   ctx(map[string]any{"size": "tiny", "owner": "ops"}),
		},
		"FieldPathRequired": {
			reason: "A label read from a field the XR lacks fails the step (fromFieldPathPolicy Required by default).",
			spec:   map[string]any{"environmentConfigs": []any{multiple(map[string]any{"key": "planeType", "valueFromFieldPath": "metadata.labels.planeType"})}},
			err:    "spec.environmentConfigs[0]: cannot read metadata.labels.planeType of the XR: metadata.labels.planeType: no such field",
		},
		"FieldPathOptional": {
			reason: "An Optional label the XR lacks is left out; a selector left with no label selects nothing.",
			spec:   map[string]any{"environmentConfigs": []any{multiple(map[string]any{"key": "planeType", "valueFromFieldPath": "metadata.labels.planeType", "fromFieldPathPolicy": "Optional"})}},
			want:   ctx(map[string]any{}),
		},
		"DefaultData": {
			reason: "defaultData is under what the configs merge.",
			spec:   map[string]any{"defaultData": map[string]any{"size": "large", "region": "eu"}, "environmentConfigs": []any{map[string]any{"ref": map[string]any{"name": "gcp"}}}},
			want:   ctx(map[string]any{"size": "large", "region": "eu", "zone": "b"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := ParseEnvStep(Object{"apiVersion": EnvStepAPIVersion, "kind": "Input", "spec": tc.spec})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Context(xr, configs)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Fatalf("%s\nContext(): -want error, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nContext(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseEnvStep(t *testing.T) {
	cases := map[string]struct {
		reason string
		source map[string]any
		err    string
	}{
		"ToFieldPath":    {reason: "toFieldPath is not played.", source: map[string]any{"ref": map[string]any{"name": "a"}, "toFieldPath": "x"}, err: "spec.environmentConfigs[0].toFieldPath is not played by a preview"},
		"NoRefName":      {reason: "A Reference needs a name.", source: map[string]any{"type": "Reference"}, err: "spec.environmentConfigs[0].ref.name is required"},
		"BadType":        {reason: "An unknown type is named.", source: map[string]any{"type": "FromCluster"}, err: `spec.environmentConfigs[0].type "FromCluster" is not Reference or Selector`},
		"BadMode":        {reason: "An unknown mode is named.", source: map[string]any{"type": "Selector", "selector": map[string]any{"mode": "Many"}}, err: `spec.environmentConfigs[0].selector.mode "Many" is not Single or Multiple`},
		"SortByOther":    {reason: "Only sorting by name is played.", source: map[string]any{"type": "Selector", "selector": map[string]any{"sortByFieldPath": "data.rank"}}, err: `spec.environmentConfigs[0].selector.sortByFieldPath "data.rank" is not played by a preview (metadata.name is)`},
		"ValueWithout":   {reason: "A Value label needs its value.", source: map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{map[string]any{"key": "a", "type": "Value"}}}}, err: "spec.environmentConfigs[0].selector.matchLabels[0].value is required"},
		"FieldWithout":   {reason: "A label read from the XR needs its field path.", source: map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{map[string]any{"key": "a"}}}}, err: "spec.environmentConfigs[0].selector.matchLabels[0].valueFromFieldPath is required"},
		"LabelWithout":   {reason: "A label needs its key.", source: map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{map[string]any{"value": "a", "type": "Value"}}}}, err: "spec.environmentConfigs[0].selector.matchLabels[0].key is required"},
		"LabelBadType":   {reason: "An unknown label type is named.", source: map[string]any{"type": "Selector", "selector": map[string]any{"matchLabels": []any{map[string]any{"key": "a", "type": "Regex"}}}}, err: `spec.environmentConfigs[0].selector.matchLabels[0].type "Regex" is not Value or FromCompositeFieldPath`},
		"SelectorPlayed": {reason: "A selector of what is played parses.", source: map[string]any{"type": "Selector", "selector": map[string]any{"mode": "Multiple", "sortByFieldPath": "metadata.name", "matchLabels": []any{map[string]any{"key": "a", "type": "Value", "value": "b"}}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseEnvStep(Object{"spec": map[string]any{"environmentConfigs": []any{tc.source}}})
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Errorf("%s\nParseEnvStep(): -want error, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEnvStepShipped plays the shipped two-step Composition's
// function-environment-configs step over the examples' EnvironmentConfigs
// and finds the environment MergeEnvironment gives, which the two-step
// Composition's tests hold against the one-step render; an XR without a
// planeType label fails the step (its selector's label is Required), and
// were that label Optional the step would merge every platform config,
// every cloud's included, which is why the Composition keeps it Required.
func TestEnvStepShipped(t *testing.T) {
	b, err := os.ReadFile("../../apis/cluster/composition-environment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var comp Object
	if err := yaml.Unmarshal(b, &comp); err != nil {
		t.Fatal(err)
	}
	step, err := ParseEnvStep(comp["spec"].(map[string]any)["pipeline"].([]any)[0].(map[string]any)["input"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	configs, err := Load("../../examples/envconfigs")
	if err != nil {
		t.Fatal(err)
	}
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		xr := Object{"metadata": map[string]any{"name": "c", "labels": map[string]any{"cloud": cloud, "planeType": "production"}}}
		got, err := step.Context(xr, configs)
		if err != nil {
			t.Fatalf("%s: %v", cloud, err)
		}
		if diff := cmp.Diff(MergeEnvironment(configs, cloud, "production", map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue}), got); diff != "" {
			t.Errorf("%s: the step's environment: -MergeEnvironment, +step:\n%s", cloud, diff)
		}
	}
	xr := Object{"metadata": map[string]any{"name": "c", "labels": map[string]any{"cloud": "gcp"}}}
	_, err = step.Context(xr, configs)
	if diff := cmp.Diff("spec.environmentConfigs[2]: cannot read metadata.labels.planeType of the XR: metadata.labels.planeType: no such field", errString(err)); diff != "" {
		t.Errorf("an XR without a planeType label: -want error, +got:\n%s", diff)
	}
	// Optional, the planeType selector keeps its fixed label: every
	// platform config, the other clouds' too, would be merged.
	labels := comp["spec"].(map[string]any)["pipeline"].([]any)[0].(map[string]any)["input"].(map[string]any)["spec"].(map[string]any)["environmentConfigs"].([]any)[2].(map[string]any)["selector"].(map[string]any)["matchLabels"].([]any)
	labels[1].(map[string]any)["fromFieldPathPolicy"] = "Optional"
	optional, err := ParseEnvStep(comp["spec"].(map[string]any)["pipeline"].([]any)[0].(map[string]any)["input"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	got, err := optional.Context(xr, configs)
	if err != nil {
		t.Fatal(err)
	}
	if gcpOnly := MergeEnvironment(configs, "gcp", "", map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue}); cmp.Equal(got, gcpOnly) {
		t.Errorf("an Optional planeType label merged only the GCP layers: want every platform config merged, which is why it stays Required")
	}

}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
