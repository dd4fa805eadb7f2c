package lifecycle

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// A Rule is how a provider replaces a resource on a condition rather than
// on every change of a field: a call in its custom diff, or a Framework
// plan modifier. cmd/replacegen reads them from the provider's source.
type Rule string

// Rules.
const (
	// ForceNewIfChange is customdiff.ForceNewIfChange(attribute,
	// func(old, new) bool).
	ForceNewIfChange Rule = "ForceNewIfChange"
	// ForceNewIf is customdiff.ForceNewIf(attribute, func(diff) bool).
	ForceNewIf Rule = "ForceNewIf"
	// DiffForceNew is diff.ForceNew(attribute), called inside a condition
	// of a CustomizeDiff function.
	DiffForceNew Rule = "ForceNew"
	// RequiresReplaceIf is a Framework attribute's
	// RequiresReplaceIf(condition) plan modifier.
	RequiresReplaceIf Rule = "RequiresReplaceIf"
)

// A Condition is when a provider replaces a resource for a change of a
// field its Rule replaces on a condition, as the function evaluates it.
// Each cloud writes its own (internal/clouds/<cloud>/conditions.go), by
// Terraform attribute, from the provider's source.
type Condition struct {
	// Replaces reports whether the provider replaces the resource for the
	// change, read the way its condition reads it. Nil when the condition
	// is not evaluated: every change counts as a replacement then, and Why
	// says why.
	Replaces func(d Diff) bool
	// Summary says in words when the provider replaces the resource, for
	// messages: "when the timeout is unset".
	Summary string
	// Source is where the provider states the condition:
	// file:lines@version.
	Source string
	// Why says why a condition is not evaluated (Replaces is nil): it
	// depends on what the function cannot see, or a hand-written entry
	// decides (a Raise, a Walk).
	Why string
}

// Evaluated reports whether the condition decides whether a change
// replaces the resource.
func (c *Condition) Evaluated() bool { return c != nil && c.Replaces != nil }

// A Diff is a change of one field as a provider's custom diff sees it: the
// value it has, the value it gets, and the rest of the resource on either
// side, for conditions that read another attribute.
type Diff struct {
	// Old is what the observed resource has: its spec, or where its spec
	// asks for nothing its provider's report; nil when it has neither.
	Old any
	// New is the rendered value; nil when the render sets null.
	New any

	observed *structpb.Struct
	desired  map[string]any
}

// NewDiff is the change of a field from old to new, on the observed
// resource, to the desired object (a rendered composed resource; nil reads
// what the observed resource asks for).
func NewDiff(old, new any, observed *structpb.Struct, desired map[string]any) Diff {
	return Diff{Old: old, New: new, observed: observed, desired: desired}
}

// OldAt is what the observed resource has at another path under
// spec.forProvider (dotted, camelCase as in its CRD): its spec's value,
// else its provider's report, else nil. A list on the way stands for a
// Terraform block: its first item is read, as ".0." reads it.
func (d Diff) OldAt(path string) any {
	segs := strings.Split(path, ".")
	if v := at(d.observed.AsMap(), append([]string{"spec", "forProvider"}, segs...)); v != nil {
		return v
	}
	return at(d.observed.AsMap(), append([]string{"status", "atProvider"}, segs...))
}

// NewAt is what the resource gets at another path under spec.forProvider:
// the rendered value, else (not rendered, so the resource keeps it) OldAt,
// as Terraform's plan keeps an Optional and Computed value the
// configuration leaves out.
func (d Diff) NewAt(path string) any {
	if v := at(d.desired, append([]string{"spec", "forProvider"}, strings.Split(path, ".")...)); v != nil {
		return v
	}
	return d.OldAt(path)
}

// at is the value at a path of a decoded object, through objects and the
// first item of lists; nil when there is none.
func at(v any, path []string) any {
	for _, seg := range path {
		if l, ok := v.([]any); ok {
			if len(l) == 0 {
				return nil
			}
			v = l[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	return v
}

// Str is a value as a Terraform string: "" when unset.
func Str(v any) string {
	s, _ := v.(string)
	return s
}

// Num is a value as a Terraform number: 0 when unset; a numeric string
// ("16") is read as its number.
func Num(v any) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f
	}
	return 0
}

// Bool is a value as a Terraform bool: false when unset.
func Bool(v any) bool {
	b, _ := v.(bool)
	return b
}

// Len is the length of a value as a Terraform list or block: a list's
// items, 1 for an object (a block of one, as upjet renders it), 0 when
// unset.
func Len(v any) int {
	switch t := v.(type) {
	case []any:
		return len(t)
	case map[string]any:
		return 1
	}
	return 0
}

// replaces reports whether a change of the field from old to rendered
// replaces the resource: always, unless the field carries a condition the
// function evaluates and it says the provider makes the change in place.
func (f Field) replaces(old, rendered *structpb.Value, desired map[string]any, observed *structpb.Struct) bool {
	if !f.Condition.Evaluated() {
		return true
	}
	return f.Condition.Replaces(NewDiff(decoded(old), decoded(rendered), observed, desired))
}

// decoded is a value as Go's JSON decoding gives it; nil for none.
func decoded(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	return v.AsInterface()
}

// Conditional returns the entry with the rule by which its provider
// replaces the resource only on a condition (see Condition).
func (f Field) Conditional(r Rule) Field {
	f.Rule = r
	return f
}

// When returns the entry with the condition on which its provider
// replaces the resource, its summary and source added to the attribute
// for messages.
func (f Field) When(c Condition) Field {
	f.Condition = &c
	if c.Evaluated() {
		f.Attribute += "; replaced only " + c.Summary + " (" + c.Source + ")"
	}
	return f
}

// IsSet reports whether a value is set as Terraform has it: a string that
// is not empty, a number that is not 0, true, a list with items, an object
// (a block).
func IsSet(v any) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case float64, int, int64:
		return Num(t) != 0
	case bool:
		return t
	}
	return Len(v) > 0
}

// Unsets is the commonest condition: the provider replaces the resource
// when the field goes from set to unset (a number to 0, a string to "",
// true to false, a block removed), and changes it in place otherwise.
func Unsets(d Diff) bool { return IsSet(d.Old) && !IsSet(d.New) }
