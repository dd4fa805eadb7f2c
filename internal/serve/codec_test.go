package serve

import (
	"context"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// echo answers each request with its observed state as its desired state,
// so that the caller sees what the handler was given.
type echo struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (echo) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag()}, Desired: req.GetObserved(), Context: req.GetContext()}, nil
}

// TestCodec: a served RunFunction gets the request as package wire decodes
// it, the observed objects without managedFields and everything else as
// sent, from callers at once.
func TestCodec(t *testing.T) {
	obj := func(managed bool) *structpb.Struct {
		meta := map[string]any{"name": "a", "labels": map[string]any{"cloud": "gcp"}}
		if managed {
			meta["managedFields"] = []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
		}
		s, err := structpb.NewStruct(map[string]any{"apiVersion": "v1", "kind": "K", "metadata": meta, "spec": map[string]any{"n": 2.0}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	addr := serveLoopback(t, echo{}, Options{Insecure: true, MaxConcurrentCalls: 2})
	client := fnv1.NewFunctionRunnerServiceClient(dial(t, addr, insecure.NewCredentials()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "t"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: obj(true)}, Resources: map[string]*fnv1.Resource{"a": {Resource: obj(true), Ready: fnv1.Ready_READY_TRUE}}},
		Context:  obj(true),
	}
	want := &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: "t"},
		Desired: &fnv1.State{Composite: &fnv1.Resource{Resource: obj(false)}, Resources: map[string]*fnv1.Resource{"a": {Resource: obj(false), Ready: fnv1.Ready_READY_TRUE}}},
		// Only the observed state is read without managedFields.
		Context: obj(true),
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rsp, err := client.RunFunction(ctx, proto.CloneOf(req))
			if err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("RunFunction(...): -want, +got:\n%s", diff)
			}
		})
	}
	wg.Wait()
}
