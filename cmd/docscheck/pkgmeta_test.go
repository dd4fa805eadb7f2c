package main

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// truePackage is a repository whose package metadata is true: TestCheck's
// cases start from it.
var truePackage = map[string]string{
	"go.mod":                             "module github.com/acme/fn\n\ngo 1.26\n",
	"LICENSE":                            "                                 Apache License\n                           Version 2.0, January 2004\n",
	"apis/widget/definition.yaml":        "spec:\n  names:\n    kind: Widget\n",
	"apis/widget-legacy/definition.yaml": "spec:\n  names:\n    kind: XWidget\n",
	"internal/clouds/gcp/gcp.go":         "package gcp\n",
	"internal/clouds/kube/kube.go":       "package kube\n",
	packageMeta: `apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: fn
  annotations:
    meta.crossplane.io/source: github.com/acme/fn
    meta.crossplane.io/license: Apache-2.0
    meta.crossplane.io/readme: |
      fn composes a Widget on gcp.
`,
}

func TestCheckPackage(t *testing.T) {
	cases := map[string]struct {
		reason string
		edit   map[string]string
		want   []string
	}{
		"True": {
			reason: "Metadata that says what the repository is has no problem.",
		},
		"NoLicenseText": {
			reason: "An Apache-2.0 annotation without the license's text in LICENSE is a problem.",
			edit:   map[string]string{"LICENSE": "All rights reserved.\n"},
			want:   []string{"package/crossplane.yaml:7: says Apache-2.0, but LICENSE does not hold the Apache License, Version 2.0"},
		},
		"OtherSource": {
			reason: "A source that is not go.mod's module is a problem.",
			edit:   map[string]string{"go.mod": "module github.com/acme/other\n"},
			want:   []string{`package/crossplane.yaml:6: says "github.com/acme/fn", but go.mod's module is "github.com/acme/other"`},
		},
		"KindNotNamed": {
			reason: "A readme that does not name an XR kind the function composes is a problem; a legacy XRD's kind need not be named.",
			edit:   map[string]string{"apis/gadget/definition.yaml": "spec:\n  names:\n    kind: Gadget\n"},
			want:   []string{"package/crossplane.yaml:8: does not name Gadget, an XR kind the function composes (apis/)"},
		},
		"CloudNotNamed": {
			reason: "A readme that does not name a cloud the function renders on is a problem; kube is no cloud.",
			edit:   map[string]string{"internal/clouds/aws/aws.go": "package aws\n"},
			want:   []string{"package/crossplane.yaml:8: does not name cloud aws (internal/clouds)"},
		},
		"Missing": {
			reason: "A repository without package metadata is a problem.",
			edit:   map[string]string{packageMeta: ""},
			want:   []string{"package/crossplane.yaml:1: there is no package/crossplane.yaml"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for p, s := range truePackage {
				fsys[p] = &fstest.MapFile{Data: []byte(s)}
			}
			for p, s := range tc.edit {
				if s == "" {
					delete(fsys, p)
					continue
				}
				fsys[p] = &fstest.MapFile{Data: []byte(s)}
			}
			problems, err := (&Checker{FS: fsys}).checkPackage()
			if err != nil {
				t.Fatalf("%s\ncheckPackage(): %v", tc.reason, err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncheckPackage(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
