package envcfg

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"
)

func config(name string, labels map[string]any, data map[string]any) *fnv1.Resource {
	labels[SelectorLabel] = SelectorValue
	s, err := structpb.NewStruct(map[string]any{
		"apiVersion": APIVersion, "kind": Kind,
		"metadata": map[string]any{"name": name, "labels": labels},
		"data":     data,
	})
	if err != nil {
		panic(err)
	}
	return &fnv1.Resource{Resource: s}
}

func TestResolve(t *testing.T) {
	baseline := config("a-baseline", map[string]any{LabelBaseline: BaselineValue}, map[string]any{
		"version": "1.32", "ingress": map[string]any{"replicas": 2.0, "internal": true}, "zones": []any{"a", "b"},
	})
	gcp := config("b-gcp", map[string]any{LabelCloud: "gcp"}, map[string]any{"version": "1.33", "zones": []any{"c"}})
	aws := config("b-aws", map[string]any{LabelCloud: "aws"}, map[string]any{"version": "1.31"})
	prod := config("c-prod", map[string]any{LabelPlaneType: "production"}, map[string]any{"ingress": map[string]any{"replicas": 3.0}})
	ctx, err := structpb.NewStruct(map[string]any{ContextKey: map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment", "version": "1.30"}})
	if err != nil {
		t.Fatal(err)
	}
	emptyCtx, err := structpb.NewStruct(map[string]any{ContextKey: map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}})
	if err != nil {
		t.Fatal(err)
	}

	type args struct {
		req       *fnv1.RunFunctionRequest
		cloud     string
		planeType string
	}
	type want struct {
		data     map[string]any
		sources  []string
		require  bool
		warnings []string
		layers   map[string][]string
		missing  []Layer
		err      bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Layered": {
			reason: "baseline < cloud < planeType: maps merge, lists and scalars of later layers win; other clouds are ignored.",
			args: args{
				req:   &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{RequirementName: {Items: []*fnv1.Resource{prod, aws, gcp, baseline}}}},
				cloud: "gcp", planeType: "production",
			},
			want: want{
				data:    map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 3.0, "internal": true}, "zones": []any{"c"}},
				sources: []string{"a-baseline", "b-gcp", "c-prod"},
				layers:  map[string][]string{LabelBaseline: {"a-baseline"}, LabelCloud: {"b-gcp"}, LabelPlaneType: {"c-prod"}},
			},
		},
		"MissingLayerWarns": {
			reason: "A plane type without a config is named in a warning; the other layers still apply.",
			args: args{
				req:   &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{RequirementName: {Items: []*fnv1.Resource{baseline, gcp}}}},
				cloud: "gcp", planeType: "staging",
			},
			want: want{
				data:     map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 2.0, "internal": true}, "zones": []any{"c"}},
				sources:  []string{"a-baseline", "b-gcp"},
				warnings: []string{"no EnvironmentConfig labelled planeType=staging; that layer is skipped"},
				layers:   map[string][]string{LabelBaseline: {"a-baseline"}, LabelCloud: {"b-gcp"}},
				missing:  []Layer{{Label: LabelPlaneType, Value: "staging"}},
			},
		},
		"NothingYet": {
			reason: "Without context or step-level configs, the function asks for them.",
			args:   args{req: &fnv1.RunFunctionRequest{}, cloud: "gcp"},
			want:   want{require: true},
		},
		"Fetched": {
			reason: "Configs fetched for the function's own requirement are used, and the requirement is repeated so that it is stable.",
			args: args{
				req:   &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{FallbackRequirementName: {Items: []*fnv1.Resource{baseline}}}},
				cloud: "gcp",
			},
			want: want{
				data:    map[string]any{"version": "1.32", "ingress": map[string]any{"replicas": 2.0, "internal": true}, "zones": []any{"a", "b"}},
				sources: []string{"a-baseline"},
				require: true,
				warnings: []string{
					"no EnvironmentConfig labelled cloud=gcp; that layer is skipped",
				},
				layers:  map[string][]string{LabelBaseline: {"a-baseline"}},
				missing: []Layer{{Label: LabelCloud, Value: "gcp"}},
			},
		},
		"FetchedNone": {
			reason: "Fetched, but no config matches: the desired state cannot be computed.",
			args: args{
				req:   &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{FallbackRequirementName: {}}},
				cloud: "gcp",
			},
			want: want{require: true, err: true},
		},
		"Context": {
			reason: "An environment in the context is used without a requirement; its apiVersion and kind are not data.",
			args:   args{req: &fnv1.RunFunctionRequest{Context: ctx}, cloud: "gcp"},
			want: want{
				data:    map[string]any{"version": "1.30"},
				sources: []string{"context:" + ContextKey},
			},
		},
		"ContextThenConfigs": {
			reason: "Step-level configs layer over the context's environment.",
			args: args{
				req:   &fnv1.RunFunctionRequest{Context: ctx, RequiredResources: map[string]*fnv1.Resources{RequirementName: {Items: []*fnv1.Resource{gcp}}}},
				cloud: "gcp",
			},
			want: want{
				data:     map[string]any{"version": "1.33", "zones": []any{"c"}},
				sources:  []string{"context:" + ContextKey, "b-gcp"},
				warnings: []string{"no EnvironmentConfig labelled baseline=default; that layer is skipped"},
				layers:   map[string][]string{LabelCloud: {"b-gcp"}},
			},
		},
		"EmptyContext": {
			reason: "An empty environment in the context (an earlier step selected nothing) is an error, never a render from built-in defaults, and never silently replaced by configs the function would fetch itself.",
			args:   args{req: &fnv1.RunFunctionRequest{Context: emptyCtx}, cloud: "gcp"},
			want:   want{err: true},
		},
		"EmptyContextThenConfigs": {
			reason: "With step-level configs, an empty context environment does not matter: the configs are the environment.",
			args: args{
				req:   &fnv1.RunFunctionRequest{Context: emptyCtx, RequiredResources: map[string]*fnv1.Resources{RequirementName: {Items: []*fnv1.Resource{baseline, gcp}}}},
				cloud: "gcp",
			},
			want: want{
				data:    map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 2.0, "internal": true}, "zones": []any{"c"}},
				sources: []string{"a-baseline", "b-gcp"},
				layers:  map[string][]string{LabelBaseline: {"a-baseline"}, LabelCloud: {"b-gcp"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Resolve(tc.args.req, tc.args.cloud, tc.args.planeType)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nResolve(...): error %v, want error %t", tc.reason, err, tc.want.err)
			}
			if res.Require != tc.want.require {
				t.Errorf("%s\nResolve(...).Require = %t, want %t", tc.reason, res.Require, tc.want.require)
			}
			if diff := cmp.Diff(tc.want.warnings, res.Warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nResolve(...).Warnings: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.layers, res.Layers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nResolve(...).Layers: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.missing, res.Missing, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nResolve(...).Missing: -want, +got:\n%s", tc.reason, diff)
			}
			if res.Env == nil {
				if tc.want.data != nil {
					t.Fatalf("%s\nResolve(...).Env = nil, want data %v", tc.reason, tc.want.data)
				}
				return
			}
			if diff := cmp.Diff(tc.want.data, res.Env.Data()); diff != "" {
				t.Errorf("%s\nResolve(...).Env.Data(): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.sources, res.Env.Sources); diff != "" {
				t.Errorf("%s\nResolve(...).Env.Sources: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRequireLayers(t *testing.T) {
	res := Resolution{Missing: []Layer{{Label: LabelCloud, Value: "gcp"}, {Label: LabelPlaneType, Value: "staging"}}}
	cases := map[string]struct {
		reason string
		labels []string
		want   string
	}{
		"NotNeeded": {reason: "A missing layer that is not required is fine.", labels: []string{LabelBaseline}},
		"Needed": {
			reason: "A required layer that is missing is named with its selector.",
			labels: []string{LabelBaseline, LabelCloud},
			want:   "no EnvironmentConfig labelled platform.example.org/environment=cluster-platform and cloud=gcp, but why; restore the config (or correct the XR's labels): Crossplane changes nothing meanwhile",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := res.RequireLayers("why", tc.labels...); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRequireLayers(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	e := New(map[string]any{
		"s": "x", "n": 3.0, "ns": "4", "b": true, "l": []any{"a", 1.0, "b"},
		"m": map[string]any{"k": "v", "n": 1.5, "dotted.key": "d"},
	})
	got := map[string]any{
		"String":        e.String("def", "s"),
		"StringNumber":  e.String("def", "n"),
		"StringMissing": e.String("def", "missing"),
		"Int":           e.Int(0, "n"),
		"IntString":     e.Int(0, "ns"),
		"IntMissing":    e.Int(7, "m", "missing"),
		"Bool":          e.Bool(false, "b"),
		"Strings":       e.Strings(nil, "l"),
		"StringMap":     e.StringMap("m"),
		"DottedKey":     e.String("", "m", "dotted.key"),
		"ThroughScalar": e.String("def", "s", "deeper"),
	}
	want := map[string]any{
		"String": "x", "StringNumber": "3", "StringMissing": "def",
		"Int": int64(3), "IntString": int64(4), "IntMissing": int64(7),
		"Bool": true, "Strings": []string{"a", "1", "b"},
		"StringMap": map[string]string{"k": "v", "n": "1.5", "dotted.key": "d"},
		"DottedKey": "d", "ThroughScalar": "def",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accessors: -want, +got:\n%s", diff)
	}
	e.Need("prices", "machineTypes", "x")
	e.Need("sizes")
	if diff := cmp.Diff([]string{"prices.machineTypes.x", "sizes"}, e.Missing()); diff != "" {
		t.Errorf("Missing(): -want, +got:\n%s", diff)
	}
}

func TestWrongTypes(t *testing.T) {
	e := New(map[string]any{
		"ingress":    map[string]any{"replicas": "three", "internal": "maybe"},
		"monitoring": "on",
		"version":    map[string]any{"minor": 33.0},
		"zones":      "a,b",
		"prices":     map[string]any{"controlPlanePerHour": []any{0.1}},
	})
	got := map[string]any{
		"Int":    e.Int(2, "ingress", "replicas"),
		"Bool":   e.Bool(true, "ingress", "internal"),
		"Map":    e.Map("monitoring"),
		"String": e.String("1.33", "version"),
		"List":   e.Strings([]string{"x"}, "zones"),
	}
	_, priced := e.Float("prices", "controlPlanePerHour")
	want := map[string]any{"Int": int64(2), "Bool": true, "Map": map[string]any(nil), "String": "1.33", "List": []string{"x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accessors of wrongly typed values return the default: -want, +got:\n%s", diff)
	}
	if priced {
		t.Errorf("Float of a list reports a number")
	}
	wantErrs := []string{
		`environment.ingress.internal: Invalid value: "maybe": must be a boolean`,
		`environment.ingress.replicas: Invalid value: "three": must be an integer`,
		`environment.monitoring: Invalid value: "on": must be an object`,
		`environment.prices.controlPlanePerHour: Invalid value: "(a list)": must be a number`,
		`environment.version: Invalid value: "(an object)": must be a string`,
		`environment.zones: Invalid value: "a,b": must be a list`,
	}
	var gotErrs []string
	for _, err := range e.Errors() {
		gotErrs = append(gotErrs, err.Error())
	}
	if diff := cmp.Diff(wantErrs, gotErrs); diff != "" {
		t.Errorf("Errors(): -want, +got:\n%s", diff)
	}
}

func TestDecode(t *testing.T) {
	type tier struct {
		Tier    string  `json:"tier"`
		PerHour float64 `json:"perHour"`
	}
	type settings struct {
		Version   string            `json:"version"`
		Storage   int64             `json:"storageGb"`
		HA        *bool             `json:"highAvailability"`
		Retention *int64            `json:"backupRetentionDays"`
		Sizes     map[string]tier   `json:"sizes"`
		Flags     []string          `json:"flags"`
		Labels    map[string]string `json:"labels"`
		Raw       map[string]any    `json:"raw"`
	}
	cases := map[string]struct {
		reason string
		data   map[string]any
		want   settings
		errs   []string
	}{
		"Typed": {
			reason: "Every field decodes into its type; loose YAML scalars read as a platform engineer means them; unknown keys are ignored.",
			data: map[string]any{"database": map[string]any{
				"version": 15.0, "storageGb": "20", "highAvailability": true, "backupRetentionDays": 7.0,
				"sizes": map[string]any{"small": map[string]any{"tier": "db-f1", "perHour": 0.05}},
				"flags": []any{"a"}, "labels": map[string]any{"team": "a"}, "raw": map[string]any{"x": 1.0}, "unknown": 1.0,
			}},
			want: settings{Version: "15", Storage: 20, HA: ptr(true), Retention: ptr[int64](7),
				Sizes: map[string]tier{"small": {Tier: "db-f1", PerHour: 0.05}}, Flags: []string{"a"}, Labels: map[string]string{"team": "a"}, Raw: map[string]any{"x": 1.0}},
		},
		"WrongTypes": {
			reason: "Every wrongly typed value is named at once, with its path; the field keeps its zero value.",
			data: map[string]any{"database": map[string]any{
				"storageGb": 20.5, "highAvailability": "yes", "sizes": map[string]any{"small": "db-f1"}, "flags": "a",
			}},
			errs: []string{
				`environment.database.flags: Invalid value: "a": must be a list`,
				`environment.database.highAvailability: Invalid value: "yes": must be a boolean`,
				`environment.database.sizes[small]: Invalid value: "db-f1": must be an object`,
				`environment.database.storageGb: Invalid value: 20.5: must be an integer`,
			},
			want: settings{Sizes: map[string]tier{"small": {}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := New(tc.data)
			var got settings
			e.Decode(&got, "database")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDecode(...): -want, +got:\n%s", tc.reason, diff)
			}
			var errs []string
			for _, err := range e.Errors() {
				errs = append(errs, err.Error())
			}
			if diff := cmp.Diff(tc.errs, errs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nErrors(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
