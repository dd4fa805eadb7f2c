// Command floor serves a floor of the performance measurements: the
// trivial functions of package bench, answering every request with a
// response of the real function, read from a file. By default the SDK
// floor (the request decoded and the desired state built through
// function-sdk-go); with --raw the raw floor (the request decoded by gRPC,
// the response encoded, nothing else).
//
//	floor --address=127.0.0.1:9444 --response=_output/bench/gcp-cluster.response.pb [--raw]
package main

import (
	"flag"
	"fmt"
	"os"

	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench"
)

func main() {
	address := flag.String("address", "127.0.0.1:9444", "address to serve gRPC on, without TLS")
	metrics := flag.String("metrics-address", ":8080", "address to serve Prometheus metrics on")
	path := flag.String("response", "", "a RunFunctionResponse of the real function, binary protobuf")
	raw := flag.Bool("raw", false, "serve the raw floor: decode the request, answer the response, nothing else")
	flag.Parse()
	if err := run(*address, *metrics, *path, *raw); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(address, metrics, path string, raw bool) error {
	b, err := os.ReadFile(path) //nolint:gosec // a file the benchmark wrote
	if err != nil {
		return err
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, rsp); err != nil {
		return err
	}
	var fn fnv1.FunctionRunnerServiceServer = bench.NewFloor(rsp)
	if raw {
		fn = bench.NewRawFloor(rsp)
	}
	return function.Serve(fn,
		function.Listen("tcp", address),
		function.Insecure(true),
		function.WithMetricsServer(metrics))
}
