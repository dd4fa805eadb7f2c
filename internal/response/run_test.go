package response

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// sized returns a response with one desired resource per size, each holding
// a string of about that many bytes.
func sized(sizes ...int) *fnv1.RunFunctionResponse {
	rsp := &fnv1.RunFunctionResponse{Desired: &fnv1.State{Resources: map[string]*fnv1.Resource{}}}
	for i, n := range sizes {
		s, err := structpb.NewStruct(map[string]any{"data": strings.Repeat("x", n)})
		if err != nil {
			panic(err)
		}
		rsp.Desired.Resources[fmt.Sprintf("r%d", i)] = &fnv1.Resource{Resource: s}
	}
	return rsp
}

func TestCheckSize(t *testing.T) {
	cases := map[string]struct {
		reason string
		rsp    *fnv1.RunFunctionResponse
		want   string
	}{
		"Small": {
			reason: "An ordinary response passes after one measurement.",
			rsp:    sized(1000, 2000),
		},
		"LargeButFine": {
			reason: "A response over one resource's limit is measured resource by resource, and passes when each fits.",
			rsp:    sized(900<<10, 900<<10),
		},
		"ResourceTooLarge": {
			reason: "A composed resource the API server could not store is named with its size.",
			rsp:    sized(10, 2<<20),
			want:   `composed resources over the 1048576-byte limit of one resource`,
		},
		"ResponseTooLarge": {
			reason: "A response Crossplane could not receive names the limit.",
			rsp:    sized(1000<<10, 1000<<10, 1000<<10, 1000<<10, 1000<<10),
			want:   "over the 4194304 bytes Crossplane accepts from a function",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := CheckSize(tc.rsp); err != nil {
				got = err.Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("%s\nCheckSize(...) = %q, want an error containing %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	p := field.NewPath("spec", "parameters")
	many := field.ErrorList{}
	for i := range MaxInvalid + 5 {
		many = append(many, field.Required(p.Child(fmt.Sprintf("f%d", i)), "x"))
	}
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		want   string
	}{
		"Deduplicated": {
			reason: "The same error found twice is named once.",
			errs:   field.ErrorList{field.Required(p.Child("a"), "x"), field.Required(p.Child("a"), "x"), field.Required(p.Child("b"), "y")},
			want:   "invalid Cluster ns/x: spec.parameters.a: Required value: x; spec.parameters.b: Required value: y",
		},
		"Capped": {
			reason: "At most MaxInvalid errors are named; the rest are counted.",
			errs:   many,
			want:   "; and 5 more",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Invalid("Cluster", "ns", "x", tc.errs).Error()
			if name == "Capped" {
				if !strings.HasSuffix(got, tc.want) || strings.Count(got, "Required value") != MaxInvalid {
					t.Errorf("%s\nInvalid(...) = %q", tc.reason, got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nInvalid(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRelease(t *testing.T) {
	cases := map[string]struct {
		reason   string
		observed []object.Condition
		want     []string
	}{
		"First": {
			reason:   "The first render by a release says so, as any new condition does.",
			observed: nil,
			want:     []string{"PlatformRelease is True (Rendered): rendered by platform release r2"},
		},
		"Same": {
			reason:   "The same release again says nothing.",
			observed: []object.Condition{{Type: ConditionPlatformRelease, Status: StatusTrue, Reason: "Rendered", Message: "rendered by platform release r2"}},
		},
		"Moved": {
			reason:   "Another release says so once, naming both: only the message changes.",
			observed: []object.Condition{{Type: ConditionPlatformRelease, Status: StatusTrue, Reason: "Rendered", Message: "rendered by platform release r1"}},
			want:     []string{"rendered by platform release r2 (was: rendered by platform release r1)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{}
			Release(rsp, tc.observed, "r2")
			var got []string
			for _, r := range rsp.GetResults() {
				got = append(got, r.GetMessage())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRelease events: -want, +got:\n%s", tc.reason, diff)
			}
			if st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["platformRelease"]; st != "r2" {
				t.Errorf("status.platformRelease = %v, want r2", st)
			}
		})
	}
}
