// Command floor serves the floor of the performance measurements: the
// trivial function of package bench, answering every request with the
// desired state of a response of the real function, read from a file.
//
//	floor --address=127.0.0.1:9444 --response=_output/bench/gcp.response.pb
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
	flag.Parse()
	if err := run(*address, *metrics, *path); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(address, metrics, path string) error {
	b, err := os.ReadFile(path) //nolint:gosec // a file the benchmark wrote
	if err != nil {
		return err
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, rsp); err != nil {
		return err
	}
	return function.Serve(bench.NewFloor(rsp),
		function.Listen("tcp", address),
		function.Insecure(true),
		function.WithMetricsServer(metrics))
}
