package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// obj is an object schema with the supplied properties.
func obj(props map[string]schema) schema { return schema{Type: "object", Properties: props} }

// list is a list schema of the supplied items.
func list(items schema) schema { return schema{Type: "array", Items: &items} }

var str = schema{Type: "string"}

func TestReferences(t *testing.T) {
	type want struct {
		paths []string
		err   bool
	}
	cases := map[string]struct {
		reason string
		args   schema
		want   want
	}{
		"RefAndSelector": {
			reason: "X beside XRef and XSelector is resolved; other fields are not.",
			args:   obj(map[string]schema{"vpcId": str, "vpcIdRef": obj(nil), "vpcIdSelector": obj(nil), "cidrBlock": str}),
			want:   want{paths: []string{"vpcId"}},
		},
		"List": {
			reason: "A list Xs beside XRefs and XSelector is resolved.",
			args:   obj(map[string]schema{"subnetIds": list(str), "subnetIdRefs": list(obj(nil)), "subnetIdSelector": obj(nil)}),
			want:   want{paths: []string{"subnetIds"}},
		},
		"FromAnother": {
			reason: "upjet names some references after where the value comes from: principalArnFromRoleRef fills principalArn.",
			args:   obj(map[string]schema{"principalArn": str, "principalArnFromRoleRef": obj(nil), "principalArnFromRoleSelector": obj(nil)}),
			want:   want{paths: []string{"principalArn"}},
		},
		"InListItems": {
			reason: "A field of a list's items is named under the list, without an index.",
			args: obj(map[string]schema{"vpcConfig": list(obj(map[string]schema{
				"subnetIds": list(str), "subnetIdRefs": list(obj(nil)), "endpointPublicAccess": {Type: "boolean"},
			}))}),
			want: want{paths: []string{"vpcConfig.subnetIds"}},
		},
		"SecretRef": {
			reason: "A sensitive value read from a Secret is not a reference to another resource.",
			args:   obj(map[string]schema{"passwordSecretRef": obj(nil), "username": str}),
			want:   want{},
		},
		"Unpaired": {
			reason: "A reference refgen cannot pair with the field it fills is an error, not a field left for tenants.",
			args:   obj(map[string]schema{"roleRef": obj(nil), "name": str}),
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := references(tc.args, "")
			if diff := cmp.Diff(tc.want, want{paths: got, err: err != nil}, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nreferences(...): -want, +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
		})
	}
}

func TestRenderSorted(t *testing.T) {
	a, err := render(map[string][]string{"b/v1, Kind=B": {"x"}, "a/v1, Kind=A": {"y", "z"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := render(map[string][]string{"a/v1, Kind=A": {"y", "z"}, "b/v1, Kind=B": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("render depends on the map's order: -first, +second:\n%s", diff)
	}
	if _, err := render(nil); err == nil {
		t.Error("render(nil) = nil error, want one: no kind is registered")
	}
}
