package overlay

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzMerge merges arbitrary JSON objects. Merge may not panic, must be
// idempotent, and every non-null leaf of the overlay must end up in the
// result. The seed corpus lives in testdata/fuzz/FuzzMerge.
func FuzzMerge(f *testing.F) {
	f.Add([]byte(`{"spec":{"forProvider":{"a":1,"l":[1,2]}}}`), []byte(`{"spec":{"forProvider":{"a":null,"l":[3],"m":{"x":"y"}}}}`))
	f.Add([]byte(`{"a":"scalar"}`), []byte(`{"a":{"b":{"c":[{"d":null}]}}}`))
	f.Add([]byte(`{}`), []byte(`{"metadata":{"labels":{"k":"v"}},"x":true}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var dst, src map[string]any
		if json.Unmarshal(a, &dst) != nil || json.Unmarshal(b, &src) != nil || src == nil {
			return
		}
		once := Merge(DeepCopy(dst), src)
		twice := Merge(DeepCopy(once), src)
		if !reflect.DeepEqual(once, twice) {
			t.Errorf("Merge is not idempotent:\nonce:  %v\ntwice: %v", once, twice)
		}
		checkLeaves(t, once, src, "")
	})
}

// checkLeaves asserts that every non-null value of src is in got at the same
// path: objects recursively, everything else as is.
func checkLeaves(t *testing.T, got, src map[string]any, path string) {
	t.Helper()
	for k, sv := range src {
		p := path + "." + k
		gv, ok := got[k]
		switch {
		case sv == nil:
			if ok {
				t.Errorf("%s: null in the overlay should remove the key, got %v", p, gv)
			}
		case !ok:
			t.Errorf("%s: missing from the result", p)
		default:
			if sm, isMap := sv.(map[string]any); isMap {
				gm, _ := gv.(map[string]any)
				checkLeaves(t, gm, sm, p)
				continue
			}
			if !reflect.DeepEqual(gv, sv) {
				t.Errorf("%s: got %v, want the overlay's %v", p, gv, sv)
			}
		}
	}
}
