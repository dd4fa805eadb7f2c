package lifecycle

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestEqual: equal is proto.Equal.
func TestEqual(t *testing.T) {
	list, _ := structpb.NewList([]any{"a", 1.0})
	obj, _ := structpb.NewStruct(map[string]any{"a": "b"})
	values := []*structpb.Value{
		nil, {},
		structpb.NewStringValue(""), structpb.NewStringValue("a"), structpb.NewStringValue("1"),
		structpb.NewNumberValue(0), structpb.NewNumberValue(math.Copysign(0, -1)), structpb.NewNumberValue(1),
		structpb.NewNumberValue(math.NaN()), structpb.NewNumberValue(math.Inf(1)),
		structpb.NewBoolValue(true), structpb.NewBoolValue(false), structpb.NewNullValue(),
		structpb.NewListValue(list), structpb.NewStructValue(obj),
	}
	for i, a := range values {
		for j, b := range values {
			if got, want := equal(a, b), proto.Equal(a, b); got != want {
				t.Errorf("equal(%v, %v) = %t, proto.Equal says %t (values %d and %d)", a, b, got, want, i, j)
			}
		}
	}
}
