package xr

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// decoder reads typed values out of a protobuf Struct and records every type
// error with its field path, so that one bad XR yields one complete report.
type decoder struct {
	errs field.ErrorList
}

// as reads v as the structpb kind K, or records a type error saying
// what it must be. A nil or null v is absent: no value, no error.
func as[K any](d *decoder, v *structpb.Value, p *field.Path, must string) (K, bool) {
	var zero K
	if v == nil || isNull(v) {
		return zero, false
	}
	k, ok := v.GetKind().(K)
	if !ok {
		d.errs = append(d.errs, field.TypeInvalid(p, kindOf(v), "must be "+must))
		return zero, false
	}
	return k, true
}

// fields returns the fields of v when it is an object. Unknown keys (those not
// in known) are reported, naming the keys that are allowed.
func (d *decoder) fields(v *structpb.Value, p *field.Path, known ...string) map[string]*structpb.Value {
	s, ok := as[*structpb.Value_StructValue](d, v, p, "an object")
	if !ok {
		return nil
	}
	f := s.StructValue.GetFields()
	if len(known) > 0 {
		for _, k := range slices.Sorted(maps.Keys(f)) {
			if !slices.Contains(known, k) {
				d.errs = append(d.errs, field.Forbidden(p.Child(k), "unknown field; known fields are: "+join(known)))
			}
		}
	}
	return f
}

// object returns the fields of v when it is an object, accepting any key.
func (d *decoder) object(v *structpb.Value, p *field.Path) map[string]*structpb.Value {
	return d.fields(v, p)
}

func (d *decoder) str(v *structpb.Value, p *field.Path) string {
	s, ok := as[*structpb.Value_StringValue](d, v, p, "a string")
	if !ok {
		return ""
	}
	return s.StringValue
}

func (d *decoder) boolean(v *structpb.Value, p *field.Path) *bool {
	b, ok := as[*structpb.Value_BoolValue](d, v, p, "a boolean")
	if !ok {
		return nil
	}
	return &b.BoolValue
}

func (d *decoder) integer(v *structpb.Value, p *field.Path) *int64 {
	n, ok := as[*structpb.Value_NumberValue](d, v, p, "an integer")
	if !ok {
		return nil
	}
	f := n.NumberValue
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		d.errs = append(d.errs, field.Invalid(p, f, "must be an integer"))
		return nil
	}
	i := int64(f)
	return &i
}

func (d *decoder) number(v *structpb.Value, p *field.Path) *float64 {
	n, ok := as[*structpb.Value_NumberValue](d, v, p, "a number")
	if !ok {
		return nil
	}
	if math.IsNaN(n.NumberValue) || math.IsInf(n.NumberValue, 0) {
		d.errs = append(d.errs, field.Invalid(p, n.NumberValue, "must be a finite number"))
		return nil
	}
	return &n.NumberValue
}

func (d *decoder) list(v *structpb.Value, p *field.Path) []*structpb.Value {
	l, ok := as[*structpb.Value_ListValue](d, v, p, "a list")
	if !ok {
		return nil
	}
	return l.ListValue.GetValues()
}

func (d *decoder) strings(v *structpb.Value, p *field.Path) []string {
	l := d.list(v, p)
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for i, item := range l {
		out = append(out, d.str(item, p.Index(i)))
	}
	return out
}

func (d *decoder) stringMap(v *structpb.Value, p *field.Path) map[string]string {
	f := d.object(v, p)
	if f == nil {
		return nil
	}
	out := make(map[string]string, len(f))
	for k, item := range f {
		out[k] = d.str(item, p.Key(k))
	}
	return out
}

// anyMap returns an object as plain Go data, for fields that are passed
// through to rendered resources.
func (d *decoder) anyMap(v *structpb.Value, p *field.Path) map[string]any {
	s, ok := as[*structpb.Value_StructValue](d, v, p, "an object")
	if !ok {
		return nil
	}
	return s.StructValue.AsMap()
}

func isNull(v *structpb.Value) bool {
	_, ok := v.GetKind().(*structpb.Value_NullValue)
	return ok
}

func kindOf(v *structpb.Value) string {
	switch t := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return fmt.Sprintf("%q", t.StringValue)
	case *structpb.Value_NumberValue:
		return fmt.Sprintf("%v", t.NumberValue)
	case *structpb.Value_BoolValue:
		return fmt.Sprintf("%t", t.BoolValue)
	case *structpb.Value_ListValue:
		return "a list"
	case *structpb.Value_StructValue:
		return "an object"
	default:
		return "null"
	}
}

// join lists allowed values for messages.
func join(l []string) string {
	return strings.Join(l, ", ")
}
