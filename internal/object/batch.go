package object

import (
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Batch allocates the protobuf values of one call in batches rather than
// one by one: a Value, its oneof wrapper, and the Structs and lists that
// nest are each an allocation, and a converged call builds or reads
// thousands. The zero Batch is ready to use. Whatever it returns lives as
// long as anything in its batch does, so a Batch serves one call and is
// dropped with it.
type Batch struct {
	values  []structpb.Value
	structs []structpb.Struct
	lists   []structpb.ListValue
	strs    []structpb.Value_StringValue
	nums    []structpb.Value_NumberValue
	bools   []structpb.Value_BoolValue
	nulls   []structpb.Value_NullValue
	svals   []structpb.Value_StructValue
	lvals   []structpb.Value_ListValue
}

// batchSize is how many values of a kind are allocated at once.
const batchSize = 128

// next returns a new zero element of s, allocating a batch when s is full.
func next[T any](s *[]T) *T {
	if len(*s) == cap(*s) {
		*s = make([]T, 0, batchSize)
	}
	*s = (*s)[:len(*s)+1]
	return &(*s)[len(*s)-1]
}

// Struct returns an empty Struct with room for n fields.
func (b *Batch) Struct(n int) *structpb.Struct {
	s := next(&b.structs)
	s.Fields = make(map[string]*structpb.Value, n)
	return s
}

// List returns an empty list with room for n values.
func (b *Batch) List(n int) *structpb.ListValue {
	l := next(&b.lists)
	l.Values = make([]*structpb.Value, 0, n)
	return l
}

// Empty returns a Value of no kind.
func (b *Batch) Empty() *structpb.Value { return next(&b.values) }

// String returns a string Value.
func (b *Batch) String(x string) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.strs, structpb.Value_StringValue{StringValue: x})
	return v
}

// Number returns a number Value.
func (b *Batch) Number(x float64) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.nums, structpb.Value_NumberValue{NumberValue: x})
	return v
}

// Bool returns a bool Value.
func (b *Batch) Bool(x bool) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.bools, structpb.Value_BoolValue{BoolValue: x})
	return v
}

// Null returns a null Value of the enum value x (0 is NULL_VALUE, the
// only one protobuf defines).
func (b *Batch) Null(x structpb.NullValue) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.nulls, structpb.Value_NullValue{NullValue: x})
	return v
}

// StructValue returns a Value holding the Struct x.
func (b *Batch) StructValue(x *structpb.Struct) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.svals, structpb.Value_StructValue{StructValue: x})
	return v
}

// ListValue returns a Value holding the list x.
func (b *Batch) ListValue(x *structpb.ListValue) *structpb.Value {
	v := next(&b.values)
	v.Kind = put(&b.lvals, structpb.Value_ListValue{ListValue: x})
	return v
}

// put puts x in the batch s and returns where.
func put[T any](s *[]T, x T) *T {
	p := next(s)
	*p = x
	return p
}

// NewStruct is structpb.NewStruct with its values allocated in the batch:
// the same Struct, or an error for a value NewValue refuses.
func (b *Batch) NewStruct(m map[string]any) (*structpb.Struct, error) {
	s := b.Struct(len(m))
	for k, v := range m {
		val, err := b.NewValue(v)
		if err != nil {
			return nil, err
		}
		s.Fields[k] = val
	}
	return s, nil
}

// NewValue is structpb.NewValue with its values allocated in the batch.
// The kinds a rendered object holds are built here; any other is left to
// structpb.NewValue, which also words its errors.
func (b *Batch) NewValue(v any) (*structpb.Value, error) {
	switch v := v.(type) {
	case nil:
		return b.Null(structpb.NullValue_NULL_VALUE), nil
	case bool:
		return b.Bool(v), nil
	case float64:
		return b.Number(v), nil
	case int:
		return b.Number(float64(v)), nil
	case string:
		if !utf8.ValidString(v) {
			return structpb.NewValue(v)
		}
		return b.String(v), nil
	case map[string]any:
		s, err := b.NewStruct(v)
		if err != nil {
			return nil, err
		}
		return b.StructValue(s), nil
	case []any:
		l := b.List(len(v))
		for _, e := range v {
			val, err := b.NewValue(e)
			if err != nil {
				return nil, err
			}
			l.Values = append(l.Values, val)
		}
		return b.ListValue(l), nil
	}
	return structpb.NewValue(v)
}
