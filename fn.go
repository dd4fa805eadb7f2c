package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-6471616d/function-cluster-platform/input/v1beta1"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"

	// The cloud layers register themselves.
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
)

// byName are the function's modules by the Input's module name.
var byName = func() map[string]response.Func {
	m := make(map[string]response.Func, len(modules.All))
	for _, mod := range modules.All {
		m[mod.Name] = mod.Run
	}
	return m
}()

// Function renders cluster platforms.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log     logging.Logger
	opts    response.Options
	modules map[string]response.Func
}

// NewFunction returns a Function that serves every module.
func NewFunction(log logging.Logger, opts response.Options) *Function {
	return &Function{log: log, opts: opts, modules: byName}
}

// RunFunction decodes the step's Input, dispatches on its module and returns
// the response. Every error, and any panic, becomes a Fatal result: Crossplane
// then changes nothing.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (rsp *fnv1.RunFunctionResponse, _ error) {
	rsp = response.New(req, f.opts.TTLConverging)
	defer func() {
		if r := recover(); r != nil {
			f.log.Info("Recovered from a panic", "panic", r, "stack", string(debug.Stack()))
			rsp = response.New(req, f.opts.TTLConverging)
			response.Fatal(rsp, fmt.Errorf("internal error: %v", r))
		}
	}()

	in, err := input(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	opts := f.opts
	if t := in.TTL; t != nil {
		opts.TTLConverging = durationOr(t.Converging, opts.TTLConverging)
		opts.TTLReady = durationOr(t.Ready, opts.TTLReady)
	}

	name := in.Module
	if name == "" {
		name = v1beta1.ModuleCluster
	}
	run, ok := f.modules[name]
	if !ok {
		response.Fatal(rsp, fmt.Errorf("input module %q is not supported; supported modules: %s", in.Module, strings.Join(slices.Sorted(maps.Keys(f.modules)), ", ")))
		return rsp, nil
	}
	if err := run(req, rsp, opts); err != nil {
		f.log.Debug("Cannot render", "xr", object.String(req.GetObserved().GetComposite().GetResource(), "metadata", "name"), "error", err)
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if in.Release != "" && response.FatalMessage(rsp) == "" {
		response.Release(rsp, object.Conditions(req.GetObserved().GetComposite().GetResource()), in.Release)
	}
	if err := response.CheckSize(rsp); err != nil {
		rsp = response.New(req, f.opts.TTLConverging)
		response.Fatal(rsp, err)
	}
	return rsp, nil
}

// input decodes the step's Input. A field it does not know is an error: a
// misspelt TTL must not go unnoticed.
func input(req *fnv1.RunFunctionRequest) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if req.GetInput() == nil {
		return in, nil
	}
	b, err := protojson.Marshal(req.GetInput())
	if err != nil {
		return nil, fmt.Errorf("cannot read the step's input: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(in); err != nil {
		return nil, fmt.Errorf("cannot read the step's input: %w", err)
	}
	return in, nil
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return def
	}
	return d.Duration
}
