package xpsim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	type want struct {
		objs []Object
		err  bool
	}
	cases := map[string]struct {
		reason string
		in     string
		want   want
	}{
		"Documents": {
			reason: "Every YAML document is an object; empty ones are skipped.",
			in:     "kind: A\n---\n---\nkind: B\n",
			want:   want{objs: []Object{{"kind": "A"}, {"kind": "B"}}},
		},
		"List": {
			reason: "A List, as kubectl get -o yaml prints one, stands for its items.",
			in:     "apiVersion: v1\nkind: List\nitems:\n- kind: A\n- kind: B\n---\nkind: C\n",
			want:   want{objs: []Object{{"kind": "A"}, {"kind": "B"}, {"kind": "C"}}},
		},
		"EmptyList": {
			reason: "An empty List is no object.",
			in:     "apiVersion: v1\nkind: List\nitems: []\n",
			want:   want{},
		},
		"ListOfScalars": {
			reason: "A List item that is not an object is an error, not dropped.",
			in:     "apiVersion: v1\nkind: List\nitems:\n- 3\n",
			want:   want{err: true},
		},
		"OtherKindWithItems": {
			reason: "Only a v1 List is unpacked: another kind with items is itself an object.",
			in:     "apiVersion: example.org/v1\nkind: Catalog\nitems:\n- kind: A\n",
			want:   want{objs: []Object{{"apiVersion": "example.org/v1", "kind": "Catalog", "items": []any{map[string]any{"kind": "A"}}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nParse(...): error %v, want error %t", tc.reason, err, tc.want.err)
			}
			if diff := cmp.Diff(tc.want.objs, got); diff != "" {
				t.Errorf("%s\nParse(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
