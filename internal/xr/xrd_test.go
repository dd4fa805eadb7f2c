package xr

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestXRDs compares every XRD's schema with what the decoder of its kind
// knows, object by object: a field the XRD accepts but the decoder refuses
// (or the reverse) fails here, not on a user's XR.
func TestXRDs(t *testing.T) {
	cases := map[string]struct {
		kind string
		dirs []string
	}{
		"Cluster":        {kind: ClusterKind, dirs: []string{"cluster", "cluster-legacy"}},
		"Database":       {kind: DatabaseKind, dirs: []string{"database", "database-legacy"}},
		"AppEnvironment": {kind: AppEnvironmentKind, dirs: []string{"appenvironment", "appenvironment-legacy"}},
	}
	for name, tc := range cases {
		for _, dir := range tc.dirs {
			t.Run(name+"/"+dir, func(t *testing.T) {
				schema := readSchema(t, filepath.Join("..", "..", "apis", dir, "definition.yaml"))
				for path, want := range Fields[tc.kind] {
					node := at(schema, path)
					if node == nil {
						t.Errorf("%s: the XRD has no object at %s", dir, path)
						continue
					}
					props, _ := node["properties"].(map[string]any)
					got := slices.Sorted(maps.Keys(props))
					if diff := cmp.Diff(slices.Sorted(slices.Values(want)), got); diff != "" {
						t.Errorf("%s: the fields of %s: -decoder, +XRD:\n%s", dir, path, diff)
					}
				}
			})
		}
	}
}

func readSchema(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a path of the test
	if err != nil {
		t.Fatal(err)
	}
	var xrd map[string]any
	if err := yaml.Unmarshal(b, &xrd); err != nil {
		t.Fatal(err)
	}
	v := xrd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	return v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
}

// at follows a dotted field path through an OpenAPI schema: "*" is any key
// of a map (additionalProperties), a trailing "[]" the items of a list.
func at(schema map[string]any, path string) map[string]any {
	node := schema
	for _, seg := range strings.Split(path, ".") {
		list := strings.HasSuffix(seg, "[]")
		seg = strings.TrimSuffix(seg, "[]")
		if seg == "*" {
			node, _ = node["additionalProperties"].(map[string]any)
		} else {
			props, _ := node["properties"].(map[string]any)
			node, _ = props[seg].(map[string]any)
		}
		if node == nil {
			return nil
		}
		if list {
			node, _ = node["items"].(map[string]any)
		}
	}
	return node
}
