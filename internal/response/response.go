package response

import (
	"fmt"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The function builds its responses from the protobuf types directly rather
// than through function-sdk-go's request and response helpers: those import
// crossplane-runtime's resource package, which links controller-runtime
// into the binary and costs every start of the function package
// initialisation for code it never runs.

// New starts the response to a request: its tag, a TTL, and the
// desired state and context of the earlier pipeline steps, passed through.
func New(req *fnv1.RunFunctionRequest, ttl time.Duration) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(ttl)},
		Desired: req.GetDesired(),
		Context: req.GetContext(),
	}
}

// Fatal adds a Fatal result: Crossplane stops the pipeline and changes
// nothing. A Fatal result targets the XR only.
func Fatal(rsp *fnv1.RunFunctionResponse, err error) {
	addResult(rsp, fnv1.Severity_SEVERITY_FATAL, err.Error(), "", fnv1.Target_TARGET_COMPOSITE)
}

// Warning adds a Warning result, an event on the XR and its claim.
func Warning(rsp *fnv1.RunFunctionResponse, message string) {
	addResult(rsp, fnv1.Severity_SEVERITY_WARNING, message, "", fnv1.Target_TARGET_COMPOSITE_AND_CLAIM)
}

// Normal adds a Normal result, an event on the XR and its claim.
func Normal(rsp *fnv1.RunFunctionResponse, reason, format string, a ...any) {
	addResult(rsp, fnv1.Severity_SEVERITY_NORMAL, fmt.Sprintf(format, a...), reason, fnv1.Target_TARGET_COMPOSITE_AND_CLAIM)
}

func addResult(rsp *fnv1.RunFunctionResponse, s fnv1.Severity, message, reason string, target fnv1.Target) {
	r := &fnv1.Result{Severity: s, Message: message, Target: target.Enum()}
	if reason != "" {
		r.Reason = &reason
	}
	rsp.Results = append(rsp.Results, r)
}

// statuses maps condition statuses to the protocol's.
var statuses = map[string]fnv1.Status{
	StatusTrue:    fnv1.Status_STATUS_CONDITION_TRUE,
	StatusFalse:   fnv1.Status_STATUS_CONDITION_FALSE,
	StatusUnknown: fnv1.Status_STATUS_CONDITION_UNKNOWN,
}

// setCondition sets a condition on the XR and its claim.
func setCondition(rsp *fnv1.RunFunctionResponse, c Condition) {
	msg := c.Message
	rsp.Conditions = append(rsp.Conditions, &fnv1.Condition{
		Type:    c.Type,
		Status:  statuses[c.Status],
		Reason:  c.Reason,
		Message: &msg,
		Target:  fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
	})
}

// FatalMessage is the message of the response's first Fatal result, ""
// when it has none: a render Crossplane will not apply.
func FatalMessage(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}
