package wire_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench"
	"github.com/seed-6471616d/function-cluster-platform/internal/wire"
)

const examples bench.Examples = "../../examples"

// withoutManagedFields is what Request decodes: the request, less each
// observed object's metadata.managedFields.
func withoutManagedFields(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	req = proto.CloneOf(req)
	strip := func(r *fnv1.Resource) {
		if m := r.GetResource().GetFields()["metadata"].GetStructValue(); m != nil {
			delete(m.Fields, "managedFields")
		}
	}
	strip(req.GetObserved().GetComposite())
	for _, r := range req.GetObserved().GetResources() {
		strip(r)
	}
	return req
}

func decode(t *testing.T, b []byte) *fnv1.RunFunctionRequest {
	t.Helper()
	got := &fnv1.RunFunctionRequest{}
	if err := wire.Request(b, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRequest decodes each example's captured requests, first render and
// converged, with the desired state of a response in them (as a later
// step gets it): the same as proto.Unmarshal but for managedFields.
func TestRequest(t *testing.T) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		for stage, capture := range map[string]func(string) (*fnv1.RunFunctionRequest, error){"first": examples.First, "converged": examples.Converged} {
			t.Run(cloud+"/"+stage, func(t *testing.T) {
				req, err := capture(cloud)
				if err != nil {
					t.Fatal(err)
				}
				bench.Run(req)
				req.GetObserved().GetResources()["with-details"] = &fnv1.Resource{
					ConnectionDetails: map[string][]byte{"kubeconfig": []byte("abc"), "empty": {}},
					Ready:             fnv1.Ready_READY_TRUE,
				}
				b, err := proto.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(withoutManagedFields(req), decode(t, b), protocmp.Transform()); diff != "" {
					t.Errorf("wire.Request(...): -want, +got:\n%s", diff)
				}
			})
		}
	}
}

// TestFallback: what the decoder does not expect in the observed state is
// decoded by proto.Unmarshal, managedFields and all, and what protobuf
// refuses is refused.
func TestFallback(t *testing.T) {
	obj, _ := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": "a", "managedFields": []any{"x"}}})
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {Resource: obj}}}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	// An unknown field in the observed resource (field 15, varint 1).
	unknown := append([]byte{}, b...)
	unknown = protoAppendUnknown(t, unknown)
	want := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(unknown, want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, decode(t, unknown), protocmp.Transform()); diff != "" {
		t.Errorf("unknown field: -want, +got:\n%s", diff)
	}
	// Invalid UTF-8 in a string of the observed state.
	bad := []byte(string(b))
	for i := range len(bad) - 1 {
		if bad[i] == 'a' && bad[i+1] == 0x12 { // "a", then the Resource
			bad[i] = 0xff
		}
	}
	if err := proto.Unmarshal(bad, &fnv1.RunFunctionRequest{}); err == nil {
		t.Fatal("proto.Unmarshal takes invalid UTF-8")
	}
	if err := wire.Request(bad, &fnv1.RunFunctionRequest{}); err == nil {
		t.Error("wire.Request takes invalid UTF-8")
	}
	// Truncated.
	if err := wire.Request(b[:len(b)-3], &fnv1.RunFunctionRequest{}); err == nil {
		t.Error("wire.Request takes a truncated request")
	}
}

// protoAppendUnknown re-encodes b's request with an unknown field in its
// observed state's message.
func protoAppendUnknown(t *testing.T, b []byte) []byte {
	t.Helper()
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(b, req); err != nil {
		t.Fatal(err)
	}
	req.GetObserved().ProtoReflect().SetUnknown(protoreflect.RawFields{0x78, 0x01})
	out, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFieldNumbers holds the decoder's field numbers to the descriptors.
func TestFieldNumbers(t *testing.T) {
	for msg, fields := range map[protoreflect.MessageDescriptor]map[protoreflect.Name]protoreflect.FieldNumber{
		(&fnv1.RunFunctionRequest{}).ProtoReflect().Descriptor(): {"observed": 2},
		(&fnv1.State{}).ProtoReflect().Descriptor():              {"composite": 1, "resources": 2},
		(&fnv1.Resource{}).ProtoReflect().Descriptor():           {"resource": 1, "connection_details": 2, "ready": 3},
		(&structpb.Struct{}).ProtoReflect().Descriptor():         {"fields": 1},
		(&structpb.Value{}).ProtoReflect().Descriptor(): {
			"null_value": 1, "number_value": 2, "string_value": 3, "bool_value": 4, "struct_value": 5, "list_value": 6,
		},
		(&structpb.ListValue{}).ProtoReflect().Descriptor(): {"values": 1},
	} {
		if got := msg.Fields().Len(); got != len(fields) && msg.Name() != "RunFunctionRequest" {
			t.Errorf("%s has %d fields, the decoder knows %d", msg.FullName(), got, len(fields))
		}
		for name, num := range fields {
			if f := msg.Fields().ByName(name); f == nil || f.Number() != num {
				t.Errorf("%s.%s is not field %d", msg.FullName(), name, num)
			}
		}
	}
}

// FuzzRequest: whatever the bytes, Request accepts what proto.Unmarshal
// accepts and decodes the same request, but for managedFields.
func FuzzRequest(f *testing.F) {
	// Small requests: the fuzzer mutates them quickly.
	obj, err := structpb.NewStruct(map[string]any{
		"apiVersion": "v1", "kind": "K",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}, "managedFields": []any{map[string]any{"f:spec": map[string]any{}}}},
		"spec":     map[string]any{"n": 1.5, "b": true, "z": nil, "l": []any{"s", 2.0, []any{}, map[string]any{}}},
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, req := range []*fnv1.RunFunctionRequest{
		{},
		{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: obj}}},
		{
			Meta:     &fnv1.RequestMeta{Tag: "t"},
			Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {Resource: obj, Ready: fnv1.Ready_READY_TRUE, ConnectionDetails: map[string][]byte{"k": []byte("v")}}}},
			Desired:  &fnv1.State{Resources: map[string]*fnv1.Resource{"a": {Resource: obj}}},
			Input:    obj,
		},
	} {
		b, err := proto.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := &fnv1.RunFunctionRequest{}
		werr := proto.Unmarshal(b, want)
		got := &fnv1.RunFunctionRequest{}
		gerr := wire.Request(b, got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("proto.Unmarshal: %v, wire.Request: %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if !proto.Equal(withoutManagedFields(want), got) && !proto.Equal(want, got) {
			t.Fatal("wire.Request decodes another request")
		}
	})
}
