package object

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestBatchNewStruct: Batch.NewStruct builds what structpb.NewStruct
// builds, and refuses what it refuses.
func TestBatchNewStruct(t *testing.T) {
	cases := map[string]map[string]any{
		"Empty": {},
		"Scalars": {
			"s": "a", "f": 1.5, "i": 3, "i64": int64(-4), "u8": uint8(5), "f32": float32(0.25),
			"t": true, "n": nil, "b": []byte("xyz"), "j": json.Number("12.5"),
		},
		"Nested": {
			"m": map[string]any{"l": []any{"a", 1.0, map[string]any{"x": []any{}}, []any{nil, false}}, "e": map[string]any{}},
		},
		"InvalidUTF8":   {"s": "\xff"},
		"InvalidType":   {"c": make(chan int)},
		"InvalidNested": {"m": map[string]any{"l": []any{struct{}{}}}},
		"InvalidNumber": {"j": json.Number("x")},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			want, werr := structpb.NewStruct(m)
			var b Batch
			got, gerr := b.NewStruct(m)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("Batch.NewStruct(...): error %v, structpb.NewStruct: %v", gerr, werr)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("Batch.NewStruct(...): -want, +got:\n%s", diff)
			}
		})
	}
}
