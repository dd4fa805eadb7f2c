// Package object reads and builds the Kubernetes objects a composition
// function exchanges with Crossplane.
//
// Observed state arrives as protobuf Structs. Converting a whole observed
// object to a map costs as much as decoding it twice, so readers here walk the
// Struct directly and touch only the fields they need.
package object

import (
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// Object is a Kubernetes object as unstructured JSON-compatible data.
type Object = map[string]any

// Get returns the value at the supplied path of field names, or nil if any
// element of the path is missing or is not an object.
func Get(s *structpb.Struct, path ...string) *structpb.Value {
	var v *structpb.Value
	for i, p := range path {
		if s == nil {
			return nil
		}
		v = s.GetFields()[p]
		if i < len(path)-1 {
			s = v.GetStructValue()
		}
	}
	return v
}

// String returns the string at the supplied path, or "".
func String(s *structpb.Struct, path ...string) string {
	return Get(s, path...).GetStringValue()
}

// Strings returns the list of strings at the supplied path. Items that are not
// strings are skipped.
func Strings(s *structpb.Struct, path ...string) []string {
	l := Get(s, path...).GetListValue().GetValues()
	if len(l) == 0 {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		if sv, ok := v.GetKind().(*structpb.Value_StringValue); ok {
			out = append(out, sv.StringValue)
		}
	}
	return out
}

// Condition is the part of a Kubernetes status condition this function reads.
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

// Conditions returns the status conditions of the supplied object.
func Conditions(s *structpb.Struct) []Condition {
	l := Get(s, "status", "conditions").GetListValue().GetValues()
	if len(l) == 0 {
		return nil
	}
	out := make([]Condition, 0, len(l))
	for _, v := range l {
		c := v.GetStructValue()
		out = append(out, Condition{
			Type:    String(c, "type"),
			Status:  String(c, "status"),
			Reason:  String(c, "reason"),
			Message: String(c, "message"),
		})
	}
	return out
}

// FindCondition returns the condition of the supplied type and whether it
// exists.
func FindCondition(s *structpb.Struct, typ string) (Condition, bool) {
	for _, v := range Get(s, "status", "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		if String(c, "type") == typ {
			return Condition{
				Type:    typ,
				Status:  String(c, "status"),
				Reason:  String(c, "reason"),
				Message: String(c, "message"),
			}, true
		}
	}
	return Condition{}, false
}

// IsConditionTrue reports whether the object has the condition with status
// True.
func IsConditionTrue(s *structpb.Struct, typ string) bool {
	c, ok := FindCondition(s, typ)
	return ok && c.Status == "True"
}

// Annotation returns the value of the supplied annotation.
func Annotation(s *structpb.Struct, key string) string {
	return String(s, "metadata", "annotations", key)
}

// Label returns the value of the supplied label.
func Label(s *structpb.Struct, key string) string {
	return String(s, "metadata", "labels", key)
}

// StringMap returns the object at the supplied path as a map of strings.
// Values that are not strings are skipped.
func StringMap(s *structpb.Struct, path ...string) map[string]string {
	f := Get(s, path...).GetStructValue().GetFields()
	if len(f) == 0 {
		return nil
	}
	out := make(map[string]string, len(f))
	for k, v := range f {
		if sv, ok := v.GetKind().(*structpb.Value_StringValue); ok {
			out[k] = sv.StringValue
		}
	}
	return out
}

// Lookup returns the value at the supplied dotted path of the object.
func Lookup(o Object, path string) (any, bool) {
	var cur any = o
	for p := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// AnnotationOf returns the value of an annotation of an unstructured object.
func AnnotationOf(o Object, key string) string {
	meta, _ := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, _ := ann[key].(string)
	return v
}

// FromStringMap converts a map of strings into the map type protobuf Structs
// accept. It returns an empty map for nil.
func FromStringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// FromStrings converts a list of strings into the list type protobuf Structs
// accept.
func FromStrings(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// First returns the first item of the list at the supplied path when it is
// an object, as upjet renders Terraform blocks (certificateAuthority[0]).
func First(s *structpb.Struct, path ...string) *structpb.Struct {
	l := Get(s, path...).GetListValue().GetValues()
	if len(l) == 0 {
		return nil
	}
	return l[0].GetStructValue()
}

// IsReference reports whether a field name is a Crossplane cross-resource
// reference or selector: vpcIdRef, subnetIdRefs, networkSelector (and a bare
// ref or selector). A provider resolves it into another field and never
// reports it in status.atProvider.
func IsReference(name string) bool {
	for _, suffix := range []string{"Refs", "Ref", "Selectors", "Selector"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && base != "" {
			c := base[len(base)-1]
			return 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		}
	}
	switch name {
	case "ref", "refs", "selector", "selectors":
		return true
	}
	return false
}
