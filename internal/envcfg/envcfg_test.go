package envcfg

import (
	"maps"
	"slices"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"
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

// unlabelled is a config without the platform label: the original
// platform's.
func unlabelled(r *fnv1.Resource) *fnv1.Resource {
	s := proto.Clone(r.GetResource()).(*structpb.Struct)
	delete(s.GetFields()["metadata"].GetStructValue().GetFields()["labels"].GetStructValue().GetFields(), SelectorLabel)
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
		err      string
		original []string
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
		"NoPlatformConfigAsksOriginal": {
			reason: "The step delivered no platform config: the function asks for the original platform's, by their layer labels alone, and waits.",
			args: args{
				req:   &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{RequirementName: {}}},
				cloud: "gcp", planeType: "production",
			},
			want: want{original: []string{OriginalRequirementPrefix + "baseline", OriginalRequirementPrefix + "cloud", OriginalRequirementPrefix + "planetype"}},
		},
		"OriginalConfigs": {
			reason: "The original platform's configs, delivered for those requirements, are layered like platform ones; the requirements stay, so that they are stable.",
			args: args{
				req: &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{
					RequirementName:                         {},
					OriginalRequirementPrefix + "baseline":  {Items: []*fnv1.Resource{unlabelled(baseline)}},
					OriginalRequirementPrefix + "cloud":     {Items: []*fnv1.Resource{unlabelled(gcp)}},
					OriginalRequirementPrefix + "planetype": {},
				}},
				cloud: "gcp", planeType: "production",
			},
			want: want{
				data:     map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 2.0, "internal": true}, "zones": []any{"c"}},
				sources:  []string{"a-baseline", "b-gcp"},
				layers:   map[string][]string{LabelBaseline: {"a-baseline"}, LabelCloud: {"b-gcp"}},
				missing:  []Layer{{Label: LabelPlaneType, Value: "production"}},
				warnings: []string{"no EnvironmentConfig labelled planeType=production; that layer is skipped"},
				original: []string{OriginalRequirementPrefix + "baseline", OriginalRequirementPrefix + "cloud", OriginalRequirementPrefix + "planetype"},
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
				req: &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{
					FallbackRequirementName: {}, OriginalRequirementPrefix + "baseline": {}, OriginalRequirementPrefix + "cloud": {},
				}},
				cloud: "gcp",
			},
			want: want{
				require: true,
				err: `no EnvironmentConfig found: expected configs labelled platform.example.org/environment=cluster-platform with baseline=default, cloud=gcp or planeType= (or, as the original platform's, with those labels alone), or an environment in the pipeline context key "apiextensions.crossplane.io/environment". ` +
					"Crossplane v2 serves EnvironmentConfigs only as apiextensions.crossplane.io/v1beta1, so configs written as apiextensions.crossplane.io/v1alpha1 are not found (crossplane render --required-resources and --extra-resources skip them too): set their apiVersion to apiextensions.crossplane.io/v1beta1, data and labels unchanged",
				original: []string{OriginalRequirementPrefix + "baseline", OriginalRequirementPrefix + "cloud"},
			},
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
			reason: "An empty environment in the context (an earlier step selected nothing) is an error, never a render from built-in defaults, and never silently replaced by configs the function would fetch itself; it says why configs are often not found.",
			args:   args{req: &fnv1.RunFunctionRequest{Context: emptyCtx}, cloud: "gcp", planeType: "production"},
			want: want{err: `the pipeline context holds an empty environment (key "apiextensions.crossplane.io/environment"): an earlier step, such as function-environment-configs, selected no EnvironmentConfig for this XR; nothing is rendered from built-in defaults, so Crossplane changes nothing until it selects one (labelled platform.example.org/environment=cluster-platform with baseline=default, cloud=gcp or planeType=production). ` +
				"Crossplane v2 serves EnvironmentConfigs only as apiextensions.crossplane.io/v1beta1, so configs written as apiextensions.crossplane.io/v1alpha1 are not found (crossplane render --required-resources and --extra-resources skip them too): set their apiVersion to apiextensions.crossplane.io/v1beta1, data and labels unchanged"},
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
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, got); diff != "" {
				t.Fatalf("%s\nResolve(...): error: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.original, slices.Sorted(maps.Keys(res.Original)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nResolve(...).Original: -want, +got:\n%s", tc.reason, diff)
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

func TestSection(t *testing.T) {
	type settings struct {
		S       string            `json:"s"`
		N       string            `json:"n"`
		Missing string            `json:"missing"`
		Int     int64             `json:"i"`
		IntStr  *int64            `json:"is"`
		Absent  *int64            `json:"absent"`
		B       bool              `json:"b"`
		L       []string          `json:"l"`
		M       map[string]string `json:"m"`
	}
	cases := map[string]struct {
		reason string
		data   map[string]any
		path   []string
		want   settings
		errs   []string
	}{
		"LooseScalars": {
			reason: "Numbers and booleans read as strings where a string is wanted, numeric strings as numbers; keys with dots (machine types) are plain map keys.",
			data: map[string]any{"s": "x", "n": 3.0, "i": 3.0, "is": "4", "b": true, "l": []any{"a", 1.0, "b"},
				"m": map[string]any{"k": "v", "n": 1.5, "dotted.key": "d"}},
			want: settings{S: "x", N: "3", Int: 3, IntStr: ptr[int64](4), B: true, L: []string{"a", "1", "b"},
				M: map[string]string{"k": "v", "n": "1.5", "dotted.key": "d"}},
		},
		"UnderAPath": {
			reason: "A section under a path reads only that object.",
			data:   map[string]any{"gcp": map[string]any{"s": "y"}, "s": "x"},
			path:   []string{"gcp"},
			want:   settings{S: "y"},
		},
		"AbsentSection": {
			reason: "An absent section decodes to the zero value, without errors: every key is optional.",
			data:   map[string]any{"s": "x"},
			path:   []string{"aws"},
		},
		"SectionNotAnObject": {
			reason: "A section that is a scalar is wrongly typed, never read as absent.",
			data:   map[string]any{"azure": "on"},
			path:   []string{"azure"},
			errs:   []string{`environment.azure: Invalid value: "on": must be an object`},
		},
		"WrongTypes": {
			reason: "Every wrongly typed value is named with its path and the type wanted; its field keeps the zero value, so that the caller's default is never rendered in its place unnoticed.",
			data:   map[string]any{"i": "three", "b": "maybe", "l": "a,b", "m": []any{0.1}, "s": map[string]any{"minor": 33.0}, "is": 1.5},
			errs: []string{
				`environment.b: Invalid value: "maybe": must be a boolean`,
				`environment.i: Invalid value: "three": must be an integer`,
				`environment.is: Invalid value: 1.5: must be an integer`,
				`environment.l: Invalid value: "a,b": must be a list`,
				`environment.m: Invalid value: "(a list)": must be an object`,
				`environment.s: Invalid value: "(an object)": must be a string`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := New(tc.data)
			got := Section[settings](e, tc.path...)
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("%s\nSection(...): -want, +got:\n%s", tc.reason, diff)
			}
			if again := Section[settings](e, tc.path...); again != got {
				t.Errorf("%s\nSection(...) decoded twice: a call decodes each section once", tc.reason)
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

func TestShared(t *testing.T) {
	cases := map[string]struct {
		reason string
		data   map[string]any
		hours  float64
		pc     ProviderConfig
	}{
		"Defaults": {
			reason: "Without prices.hoursPerMonth a month has 730 hours.",
			hours:  DefaultHoursPerMonth,
		},
		"Set": {
			reason: "hoursPerMonth may be fractional; provider configs are read by family.",
			data: map[string]any{"prices": map[string]any{"hoursPerMonth": 730.5},
				"providerConfigs": map[string]any{"aws": map[string]any{"name": "team-a", "kind": "ProviderConfig"}}},
			hours: 730.5,
			pc:    ProviderConfig{Name: "team-a", Kind: "ProviderConfig"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := New(tc.data).Shared()
			if diff := cmp.Diff(tc.hours, s.HoursPerMonth()); diff != "" {
				t.Errorf("%s\nHoursPerMonth(): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.pc, s.ProviderConfigs["aws"]); diff != "" {
				t.Errorf("%s\nProviderConfigs[aws]: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMissing(t *testing.T) {
	e := New(nil)
	e.Need("prices", "machineTypes", "x")
	e.Need("sizes")
	e.Need("sizes")
	if diff := cmp.Diff([]string{"prices.machineTypes.x", "sizes"}, e.Missing()); diff != "" {
		t.Errorf("Missing(): -want, +got:\n%s", diff)
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

func TestUnknown(t *testing.T) {
	type pool struct {
		Size string `json:"size"`
	}
	type cluster struct {
		Version string          `json:"version"`
		Pools   map[string]pool `json:"pools"`
		Zones   []pool          `json:"zones"`
		Prices  struct {
			PerHour *float64 `json:"perHour"`
		} `json:"prices"`
		Raw map[string]any `json:"raw"`
	}
	type cloud struct {
		Tier string `json:"tier"`
	}
	known := []Known{{Type: cluster{}}, {Type: Shared{}}, {Path: []string{"gcp"}, Type: cloud{}}}
	cases := map[string]struct {
		reason string
		data   map[string]any
		want   []string
	}{
		"AllKnown": {
			reason: "Keys of every known struct, at the root and under a section, with map keys free and open objects not looked into, are known; structs at one path share it.",
			data: map[string]any{
				"version": "1.33", "pools": map[string]any{"a": map[string]any{"size": "small"}},
				"zones": []any{map[string]any{"size": "x"}}, "raw": map[string]any{"any": map[string]any{"thing": 1.0}},
				"prices":          map[string]any{"perHour": 0.1, "hoursPerMonth": 730.0},
				"providerConfigs": map[string]any{"gcp": map[string]any{"name": "default"}},
				"gcp":             map[string]any{"tier": "db"},
			},
		},
		"Typos": {
			reason: "A key no struct has is named with its path: at the root, in a struct, in a map's value, in a list's element and in a section.",
			data: map[string]any{
				"vers": "1.33", "pools": map[string]any{"a": map[string]any{"sise": "small"}},
				"zones": []any{map[string]any{"name": "x"}}, "prices": map[string]any{"perhour": 0.1},
				"gcp": map[string]any{"teir": "db"}, "aws": map[string]any{"zones": nil},
			},
			want: []string{
				"environment.aws",
				"environment.gcp.teir",
				"environment.pools.a.sise",
				"environment.prices.perhour",
				"environment.vers",
				"environment.zones[0].name",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Unknown(tc.data, known...)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nUnknown(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
