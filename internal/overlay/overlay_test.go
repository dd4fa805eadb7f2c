package overlay

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMerge(t *testing.T) {
	type args struct {
		dst map[string]any
		src map[string]any
	}
	type want struct {
		out map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"MapsMerge": {
			reason: "Objects merge key by key, recursively.",
			args: args{
				dst: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"a": "1", "b": "2"}}},
				src: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"b": "3", "c": "4"}}},
			},
			want: want{out: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"a": "1", "b": "3", "c": "4"}}}},
		},
		"ListsReplace": {
			reason: "Lists replace rather than append or merge by index.",
			args: args{
				dst: map[string]any{"l": []any{"a", "b", "c"}},
				src: map[string]any{"l": []any{"z"}},
			},
			want: want{out: map[string]any{"l": []any{"z"}}},
		},
		"ScalarsReplace": {
			reason: "Scalars replace, whatever their type.",
			args: args{
				dst: map[string]any{"n": 1.0, "s": "x", "b": true},
				src: map[string]any{"n": 2.0, "s": "y", "b": false},
			},
			want: want{out: map[string]any{"n": 2.0, "s": "y", "b": false}},
		},
		"NullDeletes": {
			reason: "An explicit null removes the key.",
			args: args{
				dst: map[string]any{"keep": "1", "drop": map[string]any{"x": "y"}},
				src: map[string]any{"drop": nil, "absent": nil},
			},
			want: want{out: map[string]any{"keep": "1"}},
		},
		"ObjectReplacesScalar": {
			reason: "An object replaces a scalar in dst.",
			args: args{
				dst: map[string]any{"v": "scalar"},
				src: map[string]any{"v": map[string]any{"k": "v"}},
			},
			want: want{out: map[string]any{"v": map[string]any{"k": "v"}}},
		},
		"NilDestination": {
			reason: "Merging into nil returns a copy of src.",
			args:   args{src: map[string]any{"a": map[string]any{"b": "c"}}},
			want:   want{out: map[string]any{"a": map[string]any{"b": "c"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Merge(tc.args.dst, tc.args.src)
			if diff := cmp.Diff(tc.want.out, got); diff != "" {
				t.Errorf("%s\nMerge(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMergeDoesNotAlias(t *testing.T) {
	src := map[string]any{"l": []any{"a"}, "m": map[string]any{"k": "v"}}
	dst := Merge(nil, src)
	dst["l"].([]any)[0] = "changed"
	dst["m"].(map[string]any)["k"] = "changed"
	want := map[string]any{"l": []any{"a"}, "m": map[string]any{"k": "v"}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("Merge aliased src into dst; src after changing dst: -want, +got:\n%s", diff)
	}
}

func TestDeepCopyValue(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     any
		want   any
	}{
		"StringSlice": {reason: "[]string becomes []any, which protobuf Structs accept.", in: []string{"a"}, want: []any{"a"}},
		"StringMap":   {reason: "map[string]string becomes map[string]any.", in: map[string]string{"a": "b"}, want: map[string]any{"a": "b"}},
		"Scalar":      {reason: "Scalars are returned as they are.", in: 1.5, want: 1.5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DeepCopyValue(tc.in)); diff != "" {
				t.Errorf("%s\nDeepCopyValue(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
