package bench

import (
	"context"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	fnwire "github.com/seed-6471616d/function-cluster-platform/internal/wire"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

const examples Examples = "../../examples"

// roundTrip is what a gRPC call costs the server beyond the handler:
// unmarshal the request (with decode, as the server's codec does), run the
// handler, marshal the response.
func roundTrip(b *testing.B, wire []byte, decode func([]byte, *fnv1.RunFunctionRequest) error, handle func(*fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse) {
	b.Helper()
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	req := &fnv1.RunFunctionRequest{}
	if err := decode(wire, req); err != nil {
		b.Fatal(err)
	}
	// What the call puts on the wire back to Crossplane, and how large a
	// request it read.
	respBytes := proto.Size(handle(req))
	for b.Loop() {
		req := &fnv1.RunFunctionRequest{}
		if err := decode(wire, req); err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(handle(req)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(respBytes), "resp-bytes")
	b.ReportMetric(float64(len(wire)), "req-bytes")
}

// BenchmarkRunFunction measures a whole call (decode, run, encode) of the
// cluster module per cloud, first render and converged, decoding the
// request as the server does (package wire), next to the floors for the
// same request: the raw floor (proto.Unmarshal of the request, proto.Marshal
// of an equally large response, nothing else) and the SDK floor (the SDK's
// decoding and an equally large desired state built through it).
func BenchmarkRunFunction(b *testing.B) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		for _, stage := range []string{"first", "converged"} {
			req, err := map[string]func(string) (*fnv1.RunFunctionRequest, error){"first": examples.First, "converged": examples.Converged}[stage](cloud)
			if err != nil {
				b.Fatal(err)
			}
			wire, err := proto.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			if msg := xpsim.Fatal(Run(proto.CloneOf(req))); msg != "" {
				b.Fatalf("%s %s: the function returns a Fatal, nothing to measure: %s", cloud, stage, msg)
			}
			b.Run(cloud+"/"+stage, func(b *testing.B) { roundTrip(b, wire, fnwire.Request, Run) })
			// The response to a fresh copy of the request: Run leaves its
			// desired state in the request it is given.
			rsp := Run(proto.CloneOf(req))
			floor := NewFloor(rsp)
			raw := NewRawFloor(rsp)
			b.Run(cloud+"/"+stage+"/raw-floor", func(b *testing.B) {
				roundTrip(b, wire, unmarshal, func(r *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
					rsp, _ := raw.RunFunction(context.Background(), r)
					return rsp
				})
			})
			b.Run(cloud+"/"+stage+"/floor", func(b *testing.B) {
				roundTrip(b, wire, unmarshal, func(r *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
					rsp, _ := floor.RunFunction(context.Background(), r)
					return rsp
				})
			})
		}
	}
}

// unmarshal is how the floors' requests are decoded: protobuf's own.
func unmarshal(b []byte, req *fnv1.RunFunctionRequest) error { return proto.Unmarshal(b, req) }
