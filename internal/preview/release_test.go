package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFieldDiff(t *testing.T) {
	cases := map[string]struct {
		reason   string
		old, new any
		want     []FieldChange
	}{
		"Same": {
			reason: "Equal renders differ nowhere, lists included.",
			old:    map[string]any{"spec": map[string]any{"a": 1.0, "l": []any{"x"}}},
			new:    map[string]any{"spec": map[string]any{"a": 1.0, "l": []any{"x"}}},
		},
		"Both ways": {
			reason: "A field only the old render has is a change to nothing, one only the new has a change from nothing, in path order; lists compare as a whole.",
			old:    map[string]any{"spec": map[string]any{"gone": "v", "l": []any{"x"}, "n": 1.0}},
			new:    map[string]any{"spec": map[string]any{"added": true, "l": []any{"x", "y"}, "n": 2.0}},
			want: []FieldChange{
				{Path: "spec.added", New: true},
				{Path: "spec.gone", Old: "v"},
				{Path: "spec.l", Old: []any{"x"}, New: []any{"x", "y"}},
				{Path: "spec.n", Old: 1.0, New: 2.0},
			},
		},
		"Type changed": {
			reason: "An object that becomes a scalar is one change at its path.",
			old:    map[string]any{"a": map[string]any{"b": 1.0}},
			new:    map[string]any{"a": "b"},
			want:   []FieldChange{{Path: "a", Old: map[string]any{"b": 1.0}, New: "b"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldDiff("", tc.old, tc.new), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nfieldDiff(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrintRelease(t *testing.T) {
	var r ReleaseReport
	r.Add(ReleaseImpact{File: "gcp.yaml", XR: "Cluster team/gcp"})
	r.Add(ReleaseImpact{File: "aws.yaml", XR: "Cluster team/aws", Differs: true, Added: []string{"usage-x"},
		Changed: []ResourceChange{{Resource: "cluster", Fields: []FieldChange{{Path: "spec.forProvider.location", Old: "a", New: "b"}}, Replaces: []string{"spec.forProvider.location \"a\" -> \"b\" (refuse)"}}},
		Dropped: []string{"dns", "old"}, Held: []string{"dns"}})
	r.Add(ReleaseImpact{File: "azure.yaml", XR: "XCluster azure", Differs: true, Fatal: "this release does not serve Azure"})
	r.Add(ReleaseImpact{File: "db.yaml", XR: "Database team/db", Refused: "no Cluster", Fatal: "no Cluster"})
	var b strings.Builder
	if err := PrintRelease(&b, &r, false); err != nil {
		t.Fatal(err)
	}
	want := `XR                       FILE        RENDER   ADDED  CHANGED  HELD  REMOVED  REPLACES  FATAL
Cluster team/gcp         gcp.yaml    same     0      0        0     0        0         -
Cluster team/aws         aws.yaml    differs  1      1        1     0        1         -
XCluster azure           azure.yaml  differs  0      0        0     0        0         "this release does not serve Azure"
Database team/db         db.yaml     refused  0      0        0     0        0         (both refuse it the same) "no Cluster"
TOTAL (4 XRs, 2 differ)                       1      1        1     0        1         1 (and 1 the current release refuses)

Cluster team/aws (aws.yaml):
  + usage-x
  ~ cluster
      spec.forProvider.location: "a" -> "b"
      ! only by replacement: spec.forProvider.location "a" -> "b" (refuse)
  = dns: no longer rendered, held (the trust rules keep it)
  - old: no longer rendered

XCluster azure (azure.yaml):
  ! the new release refuses it: this release does not serve Azure
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("PrintRelease: -want, +got:\n%s", diff)
	}
}
