package serve

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	"github.com/seed-6471616d/function-cluster-platform/internal/wire"
)

// codec is gRPC's protobuf codec but for the RunFunctionRequest of the v1
// service, which package wire decodes: the observed objects without their
// managedFields, their values allocated in batches.
type codec struct {
	proto encoding.CodecV2
}

func newCodec() codec { return codec{proto: encoding.GetCodecV2(protocodec.Name)} }

func (c codec) Name() string { return protocodec.Name }

func (c codec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*fnv1.RunFunctionRequest)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return wire.Request(buf.ReadOnlyData(), req)
}
