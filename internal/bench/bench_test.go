package bench

import (
	"context"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

const examples Examples = "../../examples"

// roundTrip is what a gRPC call costs the server beyond the handler:
// unmarshal the request, run the handler, marshal the response.
func roundTrip(b *testing.B, wire []byte, handle func(*fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse) {
	b.Helper()
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(wire, req); err != nil {
		b.Fatal(err)
	}
	// What the call puts on the wire back to Crossplane, and how large a
	// request it read.
	respBytes := proto.Size(handle(req))
	for b.Loop() {
		req := &fnv1.RunFunctionRequest{}
		if err := proto.Unmarshal(wire, req); err != nil {
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
// cluster module per cloud, first render and converged, next to the floor
// (SDK decode and an equally large desired state) for the same request.
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
			if msg := xpsim.Fatal(Run(req)); msg != "" {
				b.Fatalf("%s %s: the function returns a Fatal, nothing to measure: %s", cloud, stage, msg)
			}
			b.Run(cloud+"/"+stage, func(b *testing.B) { roundTrip(b, wire, Run) })
			floor := NewFloor(Run(req))
			b.Run(cloud+"/"+stage+"/floor", func(b *testing.B) {
				roundTrip(b, wire, func(r *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
					rsp, _ := floor.RunFunction(context.Background(), r)
					return rsp
				})
			})
		}
	}
}
