package bench

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/response"
)

// TestBound: on each example's converged response, response.Bound is at
// least the response's size, and close enough to it that CheckSize
// measures only responses near the limits.
func TestBound(t *testing.T) {
	for _, cloud := range []string{"gcp", "aws", "azure"} {
		req, err := examples.Converged(cloud)
		if err != nil {
			t.Fatal(err)
		}
		rsp := Run(req)
		size, bound := proto.Size(rsp), response.Bound(rsp)
		if bound < size || bound > 3*size {
			t.Errorf("%s: Bound(...) = %d for a response of %d bytes: want at least it, at most 3 times", cloud, bound, size)
		}
	}
}
