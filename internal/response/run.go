// Package response is how a module speaks to Crossplane beyond the desired
// resources: the response it starts (New), its results (Fatal, Warning,
// Normal), conditions (with events only on transitions), warnings
// (reported once), requirements, the size limit and the TTL, and the
// Options that tune them for every module.
package response

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// Options tune every module.
type Options struct {
	// TTLConverging is the response TTL while the XR waits for what
	// Crossplane does not watch for it: another XR (the Cluster it runs
	// on, or one of its resources' reports), or a WorkloadBudget's spend.
	TTLConverging time.Duration
	// TTLReady is the response TTL otherwise: once everything is ready,
	// and while the XR waits only for its own composed resources, whose
	// every change re-runs it (Crossplane's realtime compositions).
	TTLReady time.Duration
	// TTLGated is the response TTL while a rollout holds the XR (a
	// Cluster waiting for the fleet controller's ruling): Crossplane v2.4
	// re-runs it when the ruling changes, so time alone changes nothing;
	// on v2.3, which does not watch it, it is how late the XR sees a new
	// ruling. 0 means TTLReady.
	TTLGated time.Duration
}

// Func renders one kind of XR into a response that already carries the
// desired state of earlier pipeline steps. An error means the desired state
// cannot be computed: the caller returns it as a Fatal result.
type Func func(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, opts Options) error

// Condition statuses.
const (
	StatusTrue    = "True"
	StatusFalse   = "False"
	StatusUnknown = "Unknown"
)

// Condition is an XR condition.
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

// SetConditions sets the conditions on the XR and its claim, and emits a
// Normal event only for a condition whose status or reason differs from the
// XR's observed one.
func SetConditions(rsp *fnv1.RunFunctionResponse, observed []object.Condition, conds []Condition) {
	prev := make(map[string]object.Condition, len(observed))
	for _, c := range observed {
		prev[c.Type] = c
	}
	for _, c := range conds {
		setCondition(rsp, c)
		if p, ok := prev[c.Type]; ok && p.Status == c.Status && p.Reason == c.Reason {
			continue
		}
		Normal(rsp, c.Type, "%s is %s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
	}
}

// Warn emits a Warning event for each warning the XR's status.warnings does
// not list yet. The caller lists every current warning in status.warnings, so
// a warning that persists is reported once, not on every reconcile.
func Warn(rsp *fnv1.RunFunctionResponse, listed []string, warnings []string) {
	known := make(map[string]bool, len(listed))
	for _, w := range listed {
		known[w] = true
	}
	for _, w := range warnings {
		if !known[w] {
			Warning(rsp, w)
		}
	}
}

// Require asks Crossplane for the resources the selector selects, under the
// supplied requirement name.
func Require(rsp *fnv1.RunFunctionResponse, name string, sel *fnv1.ResourceSelector) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[name] = sel
}

// TTL returns the TTL for a response: the converging one while the XR
// waits for what Crossplane does not watch for it, the ready one otherwise.
func (o Options) TTL(unwatched bool) time.Duration {
	if unwatched {
		return o.TTLConverging
	}
	return o.TTLReady
}

// Gated is the TTL while a rollout holds the XR: TTLGated, else TTLReady.
func (o Options) Gated() time.Duration { return cmp.Or(o.TTLGated, o.TTLReady) }

// Size limits of a response.
const (
	// MaxResponseBytes is the largest response Crossplane takes: it dials
	// functions without raising grpc-go's default 4 MiB receive limit.
	MaxResponseBytes = 4 << 20
	// MaxResourceBytes bounds one composed resource: the API server
	// refuses requests over 3 MiB and etcd values over 1.5 MiB, and a
	// resource is stored with its status and managed fields.
	MaxResourceBytes = 1 << 20
)

// CheckSize refuses a response Crossplane could not take, or whose composed
// resources the API server could not store, naming the limit and the
// largest resources. Only a response over MaxResourceBytes is measured
// resource by resource.
//
// Most responses are far below the limits; Bound says so without
// protobuf's reflection (proto.Size of a response of composed resources
// costs a tenth of a converged call), so only a response whose bound is
// over MaxResourceBytes is measured.
func CheckSize(rsp *fnv1.RunFunctionResponse) error {
	if Bound(rsp) <= MaxResourceBytes {
		return nil
	}
	total := proto.Size(rsp)
	if total <= MaxResourceBytes {
		return nil
	}
	var over []string
	for _, name := range slices.Sorted(maps.Keys(rsp.GetDesired().GetResources())) {
		if n := proto.Size(rsp.GetDesired().GetResources()[name]); n > MaxResourceBytes {
			over = append(over, fmt.Sprintf("%q (%d bytes)", name, n))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("composed resources over the %d-byte limit of one resource (the API server and etcd would refuse them): %s; check the overrides and chart values that fill them", MaxResourceBytes, strings.Join(over, ", "))
	}
	if total > MaxResponseBytes {
		return fmt.Errorf("the response would be %d bytes, over the %d bytes Crossplane accepts from a function; check the overrides and chart values, or split the XR", total, MaxResponseBytes)
	}
	return nil
}

// MaxInvalid is the most field errors a Fatal result names; the rest are
// counted. A condition message has to fit in the XR.
const MaxInvalid = 40

// Invalid reports bad input in an XR: every error with its field path, in
// one message, for a Fatal result. The same error found twice (say, by the
// XR's validation and again by the plan) is named once.
func Invalid(kind, namespace, name string, errs field.ErrorList) error {
	msgs := make([]string, 0, len(errs))
	seen := make(map[string]bool, len(errs))
	for _, e := range errs {
		m := e.Error()
		if seen[m] {
			continue
		}
		seen[m] = true
		msgs = append(msgs, m)
	}
	if len(msgs) > MaxInvalid {
		msgs = append(msgs[:MaxInvalid], fmt.Sprintf("and %d more", len(msgs)-MaxInvalid))
	}
	if namespace != "" {
		name = namespace + "/" + name
	}
	return fmt.Errorf("invalid %s %s: %s", kind, name, strings.Join(msgs, "; "))
}

// Bound is an upper bound of proto.Size(rsp): the Structs of the desired
// state, the context and the output are added up by hand, each field with
// the most its tag and length prefix can take; the small messages are
// measured by proto.Size.
func Bound(rsp *fnv1.RunFunctionResponse) int {
	n := len(rsp.ProtoReflect().GetUnknown())
	for _, m := range []proto.Message{rsp.GetMeta(), rsp.GetRequirements()} {
		n += fieldBound + proto.Size(m)
	}
	for _, r := range rsp.GetResults() {
		n += fieldBound + proto.Size(r)
	}
	for _, c := range rsp.GetConditions() {
		n += fieldBound + proto.Size(c)
	}
	n += fieldBound + structBound(rsp.GetContext())
	n += fieldBound + structBound(rsp.GetOutput())
	if d := rsp.GetDesired(); d != nil {
		n += fieldBound + len(d.ProtoReflect().GetUnknown())
		n += fieldBound + resourceBound(d.GetComposite())
		for name, r := range d.GetResources() {
			// The map entry, its key and its value.
			n += 3*fieldBound + len(name) + resourceBound(r)
		}
	}
	return n
}

// fieldBound is the most a field's tag and length prefix take: a tag of a
// field number below 16 is one byte, a length below 2^35 five.
const fieldBound = 1 + 5

func resourceBound(r *fnv1.Resource) int {
	if r == nil {
		return 0
	}
	n := len(r.ProtoReflect().GetUnknown()) + fieldBound + structBound(r.GetResource()) + 1 + 10 // ready
	for k, v := range r.GetConnectionDetails() {
		n += 3*fieldBound + len(k) + len(v)
	}
	return n
}

func structBound(s *structpb.Struct) int {
	if s == nil {
		return 0
	}
	n := len(s.ProtoReflect().GetUnknown())
	for k, v := range s.GetFields() {
		n += 3*fieldBound + len(k) + valueBound(v)
	}
	return n
}

func valueBound(v *structpb.Value) int {
	if v == nil {
		return 0
	}
	n := len(v.ProtoReflect().GetUnknown())
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		n += fieldBound + len(k.StringValue)
	case *structpb.Value_StructValue:
		n += fieldBound + structBound(k.StructValue)
	case *structpb.Value_ListValue:
		n += fieldBound + len(k.ListValue.ProtoReflect().GetUnknown())
		for _, e := range k.ListValue.GetValues() {
			n += fieldBound + valueBound(e)
		}
	default:
		// A number (8 bytes), a bool or a null (a varint of at most 10).
		n += 1 + 10
	}
	return n
}

// ConditionPlatformRelease is the condition that names the platform release
// whose Composition revision rendered the XR; it changes (and so its
// lastTransitionTime) when another release renders it, which is when a
// release's soak starts counting for it. The fleet controller reads it
// (package rollout).
const ConditionPlatformRelease = rollout.ConditionPlatformRelease

// Release says which platform release rendered the XR: status.platformRelease
// in the desired composite, beside what the module wrote there, and the
// PlatformRelease condition. The release is the step's Input's, part of the
// release's Composition revision. Called only once the module rendered.
func Release(rsp *fnv1.RunFunctionResponse, observed []object.Condition, release string) {
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	if rsp.Desired.Composite.Resource == nil {
		rsp.Desired.Composite.Resource = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	dxr := rsp.Desired.Composite.Resource
	status := dxr.Fields["status"].GetStructValue()
	if status == nil {
		status = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		dxr.Fields["status"] = structpb.NewStructValue(status)
	}
	status.Fields["platformRelease"] = structpb.NewStringValue(release)
	c := Condition{Type: ConditionPlatformRelease, Status: StatusTrue, Reason: "Rendered", Message: "rendered by platform release " + release}
	SetConditions(rsp, observed, []Condition{c})
	// SetConditions says a change of status or reason; a move from one
	// release to another changes only the message: say it once too.
	for _, o := range observed {
		if o.Type == c.Type && o.Status == c.Status && o.Reason == c.Reason && o.Message != c.Message {
			Normal(rsp, ConditionPlatformRelease, "%s (was: %s)", c.Message, o.Message)
		}
	}
}
