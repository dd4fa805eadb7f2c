package response

import (
	"math"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// FuzzBound: whatever a response holds, Bound is at least its size.
func FuzzBound(f *testing.F) {
	f.Add("name", "a string", 1.5, true, uint8(3), uint8(2))
	f.Add("", "", math.Inf(-1), false, uint8(0), uint8(0))
	f.Add(strings.Repeat("k", 200), strings.Repeat("v", 70000), -1e300, true, uint8(40), uint8(5))
	f.Fuzz(func(t *testing.T, key, str string, num float64, b bool, n, depth uint8) {
		v := map[string]any{key: str, "n": num, "b": b, "z": nil}
		for range depth % 8 {
			l := make([]any, 0, n%50)
			for range n % 50 {
				l = append(l, str, num, map[string]any{key: b})
			}
			v = map[string]any{key: v, "list": l}
		}
		s, err := structpb.NewStruct(v)
		if err != nil {
			t.Skip(err)
		}
		msg := "m"
		rsp := &fnv1.RunFunctionResponse{
			Meta:    &fnv1.ResponseMeta{Tag: key, Ttl: durationpb.New(1e9)},
			Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: s}, Resources: map[string]*fnv1.Resource{key: {Resource: s, Ready: fnv1.Ready_READY_TRUE, ConnectionDetails: map[string][]byte{key: []byte(str)}}}},
			Context: s, Output: s,
			Results:      []*fnv1.Result{{Message: str}},
			Conditions:   []*fnv1.Condition{{Type: key, Message: &msg}},
			Requirements: &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{key: {Kind: str}}},
		}
		if got, want := Bound(rsp), proto.Size(rsp); got < want {
			t.Fatalf("Bound(...) = %d, below proto.Size(...) = %d", got, want)
		}
		if Bound(&fnv1.RunFunctionResponse{}) < 0 {
			t.Fatal("negative bound")
		}
	})
}
