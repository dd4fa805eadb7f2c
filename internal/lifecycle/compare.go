package lifecycle

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// Action is what the function does when a field that a provider can change
// only by replacing the cloud resource would change.
type Action string

// Actions, weakest first.
const (
	// Walk marks a version: it changes in place, but only in the steps
	// Next decides, so a changed value is not compared here.
	Walk Action = "Walk"
	// Cycle: the provider replaces a part of the resource itself, in place
	// (AKS's default node pool, through temporaryNameForRotation). The
	// change is made, with a warning that its pods are not drained.
	Cycle Action = "Cycle"
	// Rotate: the resource is a node pool; a new pool is created beside it
	// under a new name, and the old one is removed once the new one is
	// ready.
	Rotate Action = "Rotate"
	// Refuse: the change is a Fatal naming the field, its old and its new
	// value; nothing is changed.
	Refuse Action = "Refuse"
	// Raise: a number (or a version such as "16") that may only grow in
	// place; a lower value is refused like Refuse.
	Raise Action = "Raise"
)

// rank orders the actions: a change needs the strongest of its fields'.
func (a Action) rank() int {
	switch a {
	case Cycle:
		return 1
	case Rotate:
		return 2
	case Refuse, Raise:
		return 3
	}
	return 0
}

// A Field is one entry of a kind's table of fields its provider can change
// only by replacing the cloud resource (or, for Walk, only in steps): where
// it is in the rendered object, the Terraform attribute behind it and where
// the fact comes from, and what the function does about a change.
type Field struct {
	// Path is the dotted path in the rendered object, such as
	// spec.forProvider.instanceTypes. A change anywhere under it counts.
	Path string
	// Attribute is the wrapped Terraform provider's attribute, with its
	// source: resource.attribute (file, version).
	Attribute string
	Action    Action
	// Generated is set on an entry of a generated table (a cloud's
	// zz_replacements.go, written by cmd/replacegen from the
	// provider's schema), not a hand-written one.
	Generated bool
	// Default is the value the provider gives the field when the render
	// leaves it out (the Terraform schema's Default), or nil. A field with
	// a default is compared even when it is not rendered: leaving out
	// azurerm's priority asks for "Regular", which a Spot pool changes
	// only by replacement, not for nothing.
	Default any
	// Rule is set on a generated entry whose provider replaces the
	// resource only on a condition (its custom diff's ForceNewIfChange,
	// say), not on every change.
	Rule Rule
	// Condition is that condition as the function evaluates it (its
	// cloud's conditions.go): a change it says the provider makes in
	// place is no change here. Without one, every change counts.
	Condition *Condition
}

// Defaults returns the entry with the provider's default value v.
func (f Field) Defaults(v any) Field {
	f.Default = v
	return f
}

// A Change is a field whose rendered value differs from the observed one.
type Change struct {
	Field
	Old, New *structpb.Value
	// Stuck is set when the resource's own spec already asks for the new
	// value but the provider refuses to replace the cloud resource, which
	// still has the old one.
	Stuck bool
}

// String says which field changes, from what to what.
func (c Change) String() string {
	return fmt.Sprintf("%s %s -> %s", c.Path, Show(c.Old), Show(c.New))
}

// Verdict is what a render would change of a resource's replacement-only
// fields.
type Verdict struct {
	Changes []Change
}

// Action is the strongest action of the changes; "" when nothing changes
// that needs more than an in-place update.
func (v Verdict) Action() Action {
	var out Action
	for _, c := range v.Changes {
		if c.Action.rank() > out.rank() {
			out = c.Action
		}
	}
	return out
}

// Of returns the changes whose action is a.
func (v Verdict) Of(a Action) []Change {
	var out []Change
	for _, c := range v.Changes {
		if c.Action == a {
			out = append(out, c)
		}
	}
	return out
}

// Refusal is the message with which upjet providers refuse an update that
// would replace the cloud resource; they report it in the resource's
// Synced condition and keep it Ready.
const Refusal = "requires replacing it"

// Refusing reports whether the provider refuses to update the observed
// resource because the update would replace the cloud resource, and its
// message.
func Refusing(observed *structpb.Struct) (string, bool) {
	c, ok := object.FindCondition(observed, "Synced")
	if !ok || c.Status != "False" || !strings.Contains(c.Message, Refusal) {
		return "", false
	}
	return c.Message, true
}

// InProgress reports whether the observed resource is not ready, or its
// provider is in the middle of an operation on it (upjet's AsyncOperation
// condition says Ongoing): what it reports may not be what runs yet.
func InProgress(observed *structpb.Struct) bool {
	if observed == nil {
		return false
	}
	if !object.IsConditionTrue(observed, "Ready") {
		return true
	}
	c, ok := object.FindCondition(observed, "AsyncOperation")
	return ok && c.Reason == "Ongoing"
}

// Compare compares the fields of the table in the desired object with the
// observed resource. A change of a field with a Condition counts only when
// the condition says its provider replaces the resource for it. A field changes when the desired value differs from
// what the observed resource asks for (its spec), or, where its spec asks
// for nothing, from what the provider reports (status.atProvider). A field
// whose spec already asks for the desired value changes too when the
// provider reports another value and refuses the update: an earlier render
// asked for a replacement that never happened. A field neither the spec
// nor the provider's report holds, where the provider reports the object
// that would hold it, changes from nothing: the cloud resource does not
// have it. Walk fields
// are not compared. Only what is rendered counts, and what the render
// leaves out of a field with a provider's default (Field.Default), which
// asks for that default: providers fill in fields the function does not
// render.
func Compare(fields []Field, desired map[string]any, observed *structpb.Struct) Verdict {
	return CompareOverlaid(fields, desired, observed, nil)
}

// CompareOverlaid is Compare, where overlaid tells the fields an overlay
// set (an XR's or its environment's overrides): one of those that neither
// the spec nor the provider's report holds changes from nothing also when
// the block holding it is not reported either, as long as an object above
// it is (an override that adds a block the cloud resource does not have).
// The cloud layer's own renders keep Compare's rule, which a block the
// provider leaves out of its report does not trip.
func CompareOverlaid(fields []Field, desired map[string]any, observed *structpb.Struct, overlaid func(path string) bool) Verdict {
	var v Verdict
	if observed == nil || desired == nil {
		return v
	}
	refusal, _ := Refusing(observed)
	for _, f := range fields {
		if f.Action == Walk {
			continue
		}
		d, ok := object.Lookup(desired, f.Path)
		if !ok && f.Default == nil {
			continue
		}
		if !ok {
			d = f.Default
		}
		nv, err := structpb.NewValue(overlay.DeepCopyValue(d))
		if err != nil {
			continue
		}
		segs := strings.Split(f.Path, ".")
		asked := object.Get(observed, segs...)
		var reported *structpb.Value
		var at []string
		if len(segs) > 2 && segs[0] == "spec" && segs[1] == "forProvider" {
			at = append([]string{"status", "atProvider"}, segs[2:]...)
			reported = object.Get(observed, at...)
		}
		if !ok {
			// Left out, the field asks for its default: a change only
			// from another value the resource asks for or reports.
			if old := cmp.Or(asked, reported); old != nil && changes(old, nv) && f.replaces(old, nv, desired, observed) {
				v.Changes = append(v.Changes, Change{Field: f, Old: old, New: nv})
			}
			continue
		}
		if f.Action == Raise {
			if old := cmp.Or(asked, reported); old != nil && lower(nv, old) {
				v.Changes = append(v.Changes, Change{Field: f, Old: old, New: nv})
			}
			continue
		}
		if asked == nil && reported == nil && f.Default != nil {
			// Neither asked for nor reported: the resource has the
			// provider's default.
			if dv, err := structpb.NewValue(overlay.DeepCopyValue(f.Default)); err == nil {
				reported = dv
			}
		}
		switch {
		case asked != nil && changes(asked, nv):
			if f.replaces(asked, nv, desired, observed) {
				v.Changes = append(v.Changes, Change{Field: f, Old: asked, New: nv})
			}
		case asked == nil && reported != nil && changes(reported, nv):
			if f.replaces(reported, nv, desired, observed) {
				v.Changes = append(v.Changes, Change{Field: f, Old: reported, New: nv})
			}
		case asked == nil && reported == nil && at != nil && reports(observed, at, overlaid != nil && overlaid(f.Path)) && !object.IsReference(segs[len(segs)-1]) && !empty(nv) && f.replaces(nil, nv, desired, observed):
			// Neither the spec (which the provider late-initializes from
			// the cloud) nor the provider's report has the field: the
			// cloud resource has none, and setting one replaces it.
			v.Changes = append(v.Changes, Change{Field: f, New: nv})
		case asked != nil && names(refusal, f.Attribute) && (reported == nil && !object.IsReference(segs[len(segs)-1]) || reported != nil && changes(reported, nv)):
			v.Changes = append(v.Changes, Change{Field: f, Old: reported, New: nv, Stuck: true})
		}
	}
	return v
}

// reports is whether the provider reports the object that holds the field
// at a status.atProvider path (status.atProvider itself, for a top-level
// field): only then is a field missing from both the spec, which the
// provider late-initializes from the cloud, and its report one the cloud
// resource does not have. With above, where that object is missing too (a
// block the cloud resource does not have, such as a node config's
// advancedMachineFeatures), the nearest object above it that the provider
// reports decides.
func reports(observed *structpb.Struct, at []string, above bool) bool {
	for n := len(at) - 1; n >= 2; n-- {
		v := object.Get(observed, at[:n]...)
		if v == nil && above {
			continue
		}
		return len(v.GetStructValue().GetFields()) > 0
	}
	return false
}

// empty reports whether a rendered value is an empty list or object, which
// upjet leaves out of a report.
func empty(v *structpb.Value) bool {
	switch t := v.GetKind().(type) {
	case *structpb.Value_ListValue:
		return len(t.ListValue.GetValues()) == 0
	case *structpb.Value_StructValue:
		return len(t.StructValue.GetFields()) == 0
	}
	return false
}

// names reports whether a provider's refusal names the Terraform attribute
// of a table entry ("resource.attribute …"): upjet's message quotes the
// argument it cannot change, such as "instance_types" or
// "node_config.0.spot". A refusal of another attribute says nothing of
// this one.
func names(refusal, attribute string) bool {
	if refusal == "" {
		return false
	}
	attr, _, _ := strings.Cut(attribute, " ")
	attr = strings.TrimSuffix(attr, ":")
	if i := strings.Index(attr, "."); i >= 0 {
		attr = attr[i+1:]
	}
	parts := strings.Split(attr, ".")
	last := strings.Split(parts[len(parts)-1], "/")[0]
	return last != "" && (strings.Contains(refusal, `"`+attr+`"`) || strings.Contains(refusal, "."+last+`"`) || strings.Contains(refusal, `"`+last+`"`))
}

// Describe lists changes for messages and status.
func Describe(changes []Change) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		out = append(out, c.String())
	}
	return out
}

// Carried reports whether the provider carried out what the observed
// resource asks for on the table's fields: none of them reports a value
// other than its spec's. A resource an earlier render edited in place,
// whose update the provider refuses, has not; one whose field's Condition
// says the provider makes that update in place has (it is under way).
func Carried(fields []Field, observed *structpb.Struct) bool {
	for _, f := range fields {
		if f.Action == Walk || f.Action == Cycle {
			continue
		}
		segs := strings.Split(f.Path, ".")
		if len(segs) < 3 || segs[0] != "spec" || segs[1] != "forProvider" {
			continue
		}
		asked := object.Get(observed, segs...)
		reported := object.Get(observed, append([]string{"status", "atProvider"}, segs[2:]...)...)
		if asked != nil && reported != nil && changes(reported, asked) && f.replaces(reported, asked, nil, observed) {
			return false
		}
	}
	return true
}

// lower reports whether a rendered number, or numeric string, is below the
// observed one. Values that are not numbers are never lower.
func lower(rendered, observed *structpb.Value) bool {
	r, ok1 := number(rendered)
	o, ok2 := number(observed)
	return ok1 && ok2 && r < o
}

// number reads a number, or a string that holds one ("16", "16.4").
func number(v *structpb.Value) (float64, bool) {
	switch t := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return t.NumberValue, true
	case *structpb.Value_StringValue:
		f, err := strconv.ParseFloat(strings.TrimSpace(t.StringValue), 64)
		return f, err == nil
	}
	return 0, false
}

// changes reports whether a rendered value changes an observed one.
// Providers late-initialize fields the function does not render, so only
// what is rendered counts: an object changes if one of its rendered keys
// does, a list if its length or one of its items does, a scalar if it
// differs.
func changes(observed, rendered *structpb.Value) bool {
	switch r := rendered.GetKind().(type) {
	case *structpb.Value_StructValue:
		o := observed.GetStructValue()
		if o == nil {
			return true
		}
		for k, rv := range r.StructValue.GetFields() {
			if ov, ok := o.GetFields()[k]; ok && changes(ov, rv) {
				return true
			}
		}
		return false
	case *structpb.Value_ListValue:
		o := observed.GetListValue()
		if o == nil || len(o.GetValues()) != len(r.ListValue.GetValues()) {
			return true
		}
		for i, rv := range r.ListValue.GetValues() {
			if changes(o.GetValues()[i], rv) {
				return true
			}
		}
		return false
	default:
		return !equal(observed, rendered)
	}
}

// equal is proto.Equal of two values, without protobuf's reflection for
// the scalars they hold; a number equals itself as proto.Equal has it
// (a NaN equals a NaN, 0 equals -0).
func equal(a, b *structpb.Value) bool {
	if a == nil || b == nil || len(a.ProtoReflect().GetUnknown()) > 0 || len(b.ProtoReflect().GetUnknown()) > 0 {
		return proto.Equal(a, b)
	}
	switch x := a.GetKind().(type) {
	case *structpb.Value_StringValue:
		y, ok := b.GetKind().(*structpb.Value_StringValue)
		return ok && x.StringValue == y.StringValue
	case *structpb.Value_NumberValue:
		y, ok := b.GetKind().(*structpb.Value_NumberValue)
		return ok && (x.NumberValue == y.NumberValue || math.IsNaN(x.NumberValue) && math.IsNaN(y.NumberValue))
	case *structpb.Value_BoolValue:
		y, ok := b.GetKind().(*structpb.Value_BoolValue)
		return ok && x.BoolValue == y.BoolValue
	case *structpb.Value_NullValue:
		y, ok := b.GetKind().(*structpb.Value_NullValue)
		return ok && x.NullValue == y.NullValue
	}
	return proto.Equal(a, b)
}

// Show formats a value for a message: strings quoted, the rest as JSON.
func Show(v *structpb.Value) string {
	if v == nil {
		return "(none)"
	}
	if s, ok := v.GetKind().(*structpb.Value_StringValue); ok {
		return fmt.Sprintf("%q", s.StringValue)
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return v.String()
	}
	return string(b)
}

// Source is the Terraform provider a cloud's tables come from, as the upjet
// provider wraps it, such as "terraform-provider-aws v6.34.0, wrapped by
// provider-upjet-aws v2.6.0".
type Source string

// entry is the table entry for a spec.forProvider path: attribute is the
// Terraform resource's attribute, where the file and lines of its schema.
func (s Source) entry(a Action, path, attribute, where string) Field {
	return Field{Path: "spec.forProvider." + path, Attribute: fmt.Sprintf("%s: %s, %s", attribute, where, s), Action: a}
}

// Refuse is an entry whose change is refused.
func (s Source) Refuse(path, attribute, where string) Field {
	return s.entry(Refuse, path, attribute, where)
}

// Rotate is an entry whose change rotates a node pool.
func (s Source) Rotate(path, attribute, where string) Field {
	return s.entry(Rotate, path, attribute, where)
}

// Cycle is an entry the provider changes by cycling part of the resource.
func (s Source) Cycle(path, attribute, where string) Field {
	return s.entry(Cycle, path, attribute, where)
}

// Raise is an entry that may only grow in place.
func (s Source) Raise(path, attribute, where string) Field {
	return s.entry(Raise, path, attribute, where)
}

// Walk is a version entry, moved only in the steps Next decides.
func (s Source) Walk(path, attribute, where string) Field {
	return s.entry(Walk, path, attribute, where)
}
