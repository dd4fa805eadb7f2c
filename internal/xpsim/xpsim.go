// Package xpsim stands in for Crossplane's side of the function protocol:
// it reads XRs and resources from YAML files, builds RunFunctionRequests as
// Crossplane does (observed state, required resources delivered the way
// the shipped Compositions ask for them, a claim's composite, the
// environment function-environment-configs merges), feeds a response's
// desired resources back as observed once the providers report them ready
// (through package simulate, which stands in for the providers), and
// repeats until the function converges.
//
// The preview subcommand ships it; the function's tests drive the function
// through it too, by way of package fntest.
package xpsim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/budget"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Object is an unstructured Kubernetes object.
type Object = map[string]any

// Runner runs one function call.
type Runner func(*fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse

// Load reads every YAML document of the supplied files or directories (not
// recursive), in name order.
func Load(paths ...string) ([]Object, error) {
	files, err := Files(paths...)
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // a file the caller names (the test, or the user of preview)
		if err != nil {
			return nil, err
		}
		objs, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Files are the files Load reads for the supplied paths: a file as it is,
// a directory's *.yaml files (not recursive) in name order.
func Files(paths ...string) ([]string, error) {
	var out []string
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			files, err = filepath.Glob(filepath.Join(p, "*.yaml"))
			if err != nil {
				return nil, err
			}
			sort.Strings(files)
		}
		out = append(out, files...)
	}
	return out, nil
}

// Parse reads every YAML document of b. A list (kind List, as kubectl get
// -o yaml prints one) stands for its items.
func Parse(b []byte) ([]Object, error) {
	var out []Object
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		o := Object{}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, err
		}
		if items, ok := o["items"].([]any); ok && o["apiVersion"] == "v1" && o["kind"] == "List" {
			for i, it := range items {
				item, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("cannot read item %d of a List: it is not an object", i)
				}
				out = append(out, item)
			}
			continue
		}
		if len(o) > 0 {
			out = append(out, o)
		}
	}
}

// Request is the input of one function call.
type Request struct {
	// XR is the observed composite resource.
	XR Object
	// Observed are the observed composed resources by
	// composition-resource name.
	Observed map[string]Object
	// Connections are the observed resources' connection details.
	Connections map[string]map[string][]byte
	// EnvironmentConfigs are delivered like the shipped Composition's
	// step-level requirement does: those carrying the platform label, under
	// its requirement name. Nil delivers nothing.
	EnvironmentConfigs []Object
	// Fetched delivers EnvironmentConfigs as the answer to the function's
	// own requirement instead.
	Fetched bool
	// Spend are delivered like the shipped Composition's step-level
	// requirement for spend ConfigMaps does: those labelled as spend.
	Spend []Object
	// Context is the pipeline context.
	Context Object
	// Desired are composed resources desired by earlier steps.
	Desired map[string]Object
	// Input is the step's input; nil sends none.
	Input Object
	// Extra are further required resources by requirement name.
	Extra map[string][]Object
}

// Proto returns the request as Crossplane would send it.
func (r Request) Proto() (*fnv1.RunFunctionRequest, error) {
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{Resources: map[string]*fnv1.Resource{}},
	}
	var err error
	if req.Observed.Composite, err = resource(r.XR); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(r.Observed)) {
		if req.Observed.Resources[name], err = resource(r.Observed[name]); err != nil {
			return nil, err
		}
		req.Observed.Resources[name].ConnectionDetails = r.Connections[name]
	}
	for _, name := range slices.Sorted(maps.Keys(r.Desired)) {
		if req.Desired.Resources[name], err = resource(r.Desired[name]); err != nil {
			return nil, err
		}
	}
	if r.Input != nil {
		if req.Input, err = structpb.NewStruct(r.Input); err != nil {
			return nil, err
		}
	}
	if r.Context != nil {
		if req.Context, err = structpb.NewStruct(r.Context); err != nil {
			return nil, err
		}
	}
	req.RequiredResources = map[string]*fnv1.Resources{}
	if r.EnvironmentConfigs != nil {
		key := envcfg.RequirementName
		if r.Fetched {
			key = envcfg.FallbackRequirementName
		}
		items := &fnv1.Resources{}
		for _, o := range r.EnvironmentConfigs {
			labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
			if labels[envcfg.SelectorLabel] != envcfg.SelectorValue {
				continue
			}
			res, err := resource(o)
			if err != nil {
				return nil, err
			}
			items.Items = append(items.Items, res)
		}
		req.RequiredResources[key] = items
		if r.Fetched {
			// Crossplane answers every requirement: the original
			// platform's configs too (by their layer label alone).
			labels, _ := r.XR["metadata"].(map[string]any)["labels"].(map[string]any)
			for _, l := range []string{envcfg.LabelBaseline, envcfg.LabelCloud, envcfg.LabelPlaneType} {
				value, _ := labels[l].(string)
				if l == envcfg.LabelBaseline {
					value = envcfg.BaselineValue
				}
				if value == "" {
					continue
				}
				items := &fnv1.Resources{}
				for _, o := range r.EnvironmentConfigs {
					if ol, _ := o["metadata"].(map[string]any)["labels"].(map[string]any); ol[l] == value {
						res, err := resource(o)
						if err != nil {
							return nil, err
						}
						items.Items = append(items.Items, res)
					}
				}
				req.RequiredResources[envcfg.OriginalRequirementPrefix+strings.ToLower(l)] = items
			}
		}
	}
	if r.Spend != nil {
		items := &fnv1.Resources{}
		for _, o := range r.Spend {
			labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
			if o["kind"] != "ConfigMap" || labels[budget.LabelSpend] != "true" {
				continue
			}
			res, err := resource(o)
			if err != nil {
				return nil, err
			}
			items.Items = append(items.Items, res)
		}
		req.RequiredResources[budget.StepRequirementName] = items
	}
	for k, objs := range r.Extra {
		items := &fnv1.Resources{}
		for _, o := range objs {
			res, err := resource(o)
			if err != nil {
				return nil, err
			}
			items.Items = append(items.Items, res)
		}
		req.RequiredResources[k] = items
	}
	return req, nil
}

func resource(o Object) (*fnv1.Resource, error) {
	if o == nil {
		return nil, nil
	}
	s, err := structpb.NewStruct(o)
	if err != nil {
		return nil, err
	}
	return &fnv1.Resource{Resource: s}, nil
}

// CompositionResourceName is the composition-resource name Crossplane
// records on a composed resource, or "".
func CompositionResourceName(o Object) string {
	meta, _ := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, _ := ann[xr.AnnotationCompositionResourceName].(string)
	return s
}

// Desired returns the desired composed resources of a response.
func Desired(rsp *fnv1.RunFunctionResponse) map[string]Object {
	out := map[string]Object{}
	for name, r := range rsp.GetDesired().GetResources() {
		out[name] = r.GetResource().AsMap()
	}
	return out
}

// Fatal returns the message of the response's first Fatal result, or "".
func Fatal(rsp *fnv1.RunFunctionResponse) string { return response.FatalMessage(rsp) }

// ObserveAll turns every desired resource of a response into an observed,
// ready one, as providers would once they have created it. Resources already
// observed keep their name.
func ObserveAll(rsp *fnv1.RunFunctionResponse, prev map[string]Object) map[string]Object {
	out := map[string]Object{}
	for name, d := range Desired(rsp) {
		if p, ok := prev[name]; ok {
			meta, _ := d["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
				d["metadata"] = meta
			}
			meta["name"] = p["metadata"].(map[string]any)["name"]
		}
		out[name] = simulate.Observe(d, name)
	}
	return out
}

// Connections returns the connection details providers would publish for
// the desired resources of a response once they are ready.
func Connections(rsp *fnv1.RunFunctionResponse) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for name, d := range Desired(rsp) {
		if c := simulate.ConnectionDetails(d); c != nil {
			out[name] = c
		}
	}
	return out
}

// Converge calls the function, feeds its desired resources back as observed
// and ready, and repeats until the desired set stops growing and everything
// is ready, or max rounds pass. It returns the last response, the observed
// state it was computed from and the number of rounds.
func Converge(run Runner, req Request, max int) (*fnv1.RunFunctionResponse, map[string]Object, int, error) {
	var rsp *fnv1.RunFunctionResponse
	prev := -1
	for round := 1; round <= max; round++ {
		pr, err := req.Proto()
		if err != nil {
			return nil, nil, round, err
		}
		rsp = run(pr)
		if msg := Fatal(rsp); msg != "" {
			return rsp, req.Observed, round, fmt.Errorf("round %d: fatal: %s", round, msg)
		}
		n := len(rsp.GetDesired().GetResources())
		if n == prev && AllReady(rsp) {
			return rsp, req.Observed, round, nil
		}
		prev = n
		req.Observed = ObserveAll(rsp, req.Observed)
		req.Connections = Connections(rsp)
	}
	return rsp, req.Observed, max, fmt.Errorf("did not converge in %d rounds", max)
}

// AllReady reports whether no desired composed resource is marked not
// ready. Resources whose readiness is unspecified belong to earlier
// pipeline steps.
func AllReady(rsp *fnv1.RunFunctionResponse) bool {
	for _, r := range rsp.GetDesired().GetResources() {
		if r.GetReady() == fnv1.Ready_READY_FALSE {
			return false
		}
	}
	return rsp.GetDesired().GetComposite().GetReady() != fnv1.Ready_READY_FALSE
}

// YAML renders objects as a stable multi-document YAML stream, sorted by
// composition-resource name.
func YAML(objs map[string]Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(objs)) {
		b, err := yaml.Marshal(objs[name])
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&buf, "---\n# %s\n%s", name, b)
	}
	return buf.Bytes(), nil
}

// YAMLList renders objects as a YAML stream, in order.
func YAMLList(objs []Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&buf, "---\n%s", b)
	}
	return buf.Bytes(), nil
}
