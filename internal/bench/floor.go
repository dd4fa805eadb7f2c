// Package bench holds what the performance measurements share: the floor
// handler every figure is compared with, and the captured requests.
package bench

import (
	"context"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

// Floor is the trivial function every measurement is compared with: it
// decodes the request the way a function written with function-sdk-go does
// (observed XR, observed and desired composed resources), and returns a
// desired state as large as the function's own, built through the SDK. No
// function can do less and still read its inputs with the SDK.
type Floor struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	// desired is the desired state to return, kept as the SDK's
	// unstructured objects.
	desired map[resource.Name]*resource.DesiredComposed
	status  map[string]any
}

// NewFloor returns a floor that answers with the desired state of rsp, a
// response of the real function to the same request.
func NewFloor(rsp *fnv1.RunFunctionResponse) *Floor {
	f := &Floor{desired: map[resource.Name]*resource.DesiredComposed{}}
	for name, r := range rsp.GetDesired().GetResources() {
		cd := composed.New()
		cd.SetUnstructuredContent(r.GetResource().AsMap())
		f.desired[resource.Name(name)] = &resource.DesiredComposed{Resource: cd, Ready: resource.Ready(r.GetReady())}
	}
	if st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; st != nil {
		f.status = st.GetStructValue().AsMap()
	}
	return f
}

// RunFunction decodes the request with the SDK and returns the desired state.
func (f *Floor) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	if _, err := request.GetObservedCompositeResource(req); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if _, err := request.GetObservedComposedResources(req); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if _, err := request.GetDesiredComposedResources(req); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if err := response.SetDesiredComposedResources(rsp, f.desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if f.status != nil {
		_ = dxr.Resource.SetValue("status", f.status)
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp, nil
}

// RawFloor is the floor beneath the SDK's: it answers every request with a
// response built once, as large as the function's own, so that a call
// costs what the protocol costs and nothing else: decoding the request and
// encoding a response of the same size (gRPC does both around the
// handler). Nothing of the request is read.
type RawFloor struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	rsp *fnv1.RunFunctionResponse
}

// NewRawFloor returns a raw floor that answers with rsp, a response of the
// real function to the same request.
func NewRawFloor(rsp *fnv1.RunFunctionResponse) *RawFloor {
	return &RawFloor{rsp: rsp}
}

// RunFunction returns the response, tagged as the request asks.
func (f *RawFloor) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := &fnv1.RunFunctionResponse{
		Meta:         &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: f.rsp.GetMeta().GetTtl()},
		Desired:      f.rsp.GetDesired(),
		Results:      f.rsp.GetResults(),
		Context:      f.rsp.GetContext(),
		Conditions:   f.rsp.GetConditions(),
		Requirements: f.rsp.GetRequirements(),
	}
	return rsp, nil
}
