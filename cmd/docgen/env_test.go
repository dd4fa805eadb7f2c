package main

import (
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixtureSettings are keys to document: this comment is its type doc.
type fixtureSettings struct {
	// Name is a plain key.
	Name string `json:"name"`
	// Count, when set, is a pointer.
	Count *int64 `json:"count"`
	// Pool is an inline struct.
	Pool struct {
		// Size is a key below it.
		Size string `json:"size"`
	} `json:"pool"`
	// Items are a map of a named struct.
	Items map[string]fixtureItem `json:"items"`
	// List is a list of inline structs.
	List []struct {
		// Key is a key of each item.
		Key float64 `json:"key"`
	} `json:"list"`
	// Free is decoded as it is.
	Free map[string]any `json:"free"`
	fixtureEmbedded
	Undocumented bool `json:"undocumented"`
	skipped      bool
	Ignored      string `json:"-"`
}

// fixtureItem is a named struct.
type fixtureItem struct {
	// Tags are strings.
	Tags []string `json:"tags"`
}

// fixtureEmbedded's keys are its outer struct's.
type fixtureEmbedded struct {
	// Old is an embedded key.
	Old string `json:"old"`
}

func TestKeys(t *testing.T) {
	_ = fixtureSettings{}.skipped
	typ := reflect.TypeFor[fixtureSettings]()
	src := &Source{types: map[string]map[string]typeDoc{}}
	src.fset = token.NewFileSet()
	if err := src.Add(typ.PkgPath(), "env_test.go"); err != nil {
		t.Fatal(err)
	}
	type args struct {
		sec Section
	}
	type want struct {
		keys []Key
		doc  string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"TopLevel": {
			reason: "Every json key is listed depth first in field order, with its type in YAML terms and its doc comment starting with the key; embedded structs' keys are the outer object's; fields without a json name are skipped.",
			args:   args{sec: Section{Type: typ}},
			want: want{
				doc: "fixtureSettings are keys to document: this comment is its type doc.",
				keys: []Key{
					{Path: "name", Type: "string", Doc: "`name` is a plain key."},
					{Path: "count", Type: "integer", Doc: "`count`, when set, is a pointer."},
					{Path: "pool", Type: "object", Doc: "`pool` is an inline struct."},
					{Path: "pool.size", Type: "string", Doc: "`size` is a key below it."},
					{Path: "items", Type: "map of object", Doc: "`items` are a map of a named struct."},
					{Path: "items.<key>.tags", Type: "list of string", Doc: "`tags` are strings."},
					{Path: "list", Type: "list of object", Doc: "`list` is a list of inline structs."},
					{Path: "list[].key", Type: "number", Doc: "`key` is a key of each item."},
					{Path: "free", Type: "object (any keys and values)", Doc: "`free` is decoded as it is."},
					{Path: "old", Type: "string", Doc: "`old` is an embedded key."},
					{Path: "undocumented", Type: "boolean"},
				},
			},
		},
		"UnderAPath": {
			reason: "A section under a key prefixes every path with it.",
			args:   args{sec: Section{Path: []string{"cloud"}, Type: reflect.TypeFor[fixtureItem]()}},
			want: want{
				doc:  "fixtureItem is a named struct.",
				keys: []Key{{Path: "cloud.tags", Type: "list of string", Doc: "`tags` are strings."}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			keys, err := src.Keys(tc.args.sec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.keys, keys); diff != "" {
				t.Errorf("%s\nKeys(...): -want, +got:\n%s", tc.reason, diff)
			}
			doc, err := src.TypeDoc(tc.args.sec.Type)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.doc, doc); diff != "" {
				t.Errorf("%s\nTypeDoc(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEnvironmentDocumented fails when an environment key the function
// reads has no doc comment: the reference would leave it unexplained.
func TestEnvironmentDocumented(t *testing.T) {
	src, err := NewSource(root)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := Sections()
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, sec := range sections {
		keys, err := src.Keys(sec)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.Doc == "" {
				missing = append(missing, k.Path+" ("+goName(sec.Type)+")")
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d environment keys have no doc comment on their Go field: document each where its struct is declared:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

func TestYAMLType(t *testing.T) {
	type args struct {
		t reflect.Type
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Pointer":       {reason: "An optional key is its value's type.", args: args{t: reflect.TypeFor[*bool]()}, want: "boolean"},
		"Integer":       {reason: "Go integers are YAML integers.", args: args{t: reflect.TypeFor[int64]()}, want: "integer"},
		"Float":         {reason: "Go floats are YAML numbers.", args: args{t: reflect.TypeFor[float64]()}, want: "number"},
		"MapOfLists":    {reason: "Maps and lists nest.", args: args{t: reflect.TypeFor[map[string][]string]()}, want: "map of list of string"},
		"FreeFormMap":   {reason: "A map of any is an object of any keys.", args: args{t: reflect.TypeFor[map[string]any]()}, want: "object (any keys and values)"},
		"AnyValue":      {reason: "An interface is any value.", args: args{t: reflect.TypeFor[any]()}, want: "any"},
		"StructPointer": {reason: "A struct is an object.", args: args{t: reflect.TypeFor[*fixtureItem]()}, want: "object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, yamlType(tc.args.t)); diff != "" {
				t.Errorf("%s\nyamlType(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
