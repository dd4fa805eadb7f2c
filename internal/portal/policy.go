package portal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The AppEnvironment XR the portal creates.
const (
	envGroup    = "platform.example.org"
	envVersion  = "v1alpha1"
	envKind     = "AppEnvironment"
	envResource = "appenvironments"
)

// PolicyKey is the key of a policy ConfigMap's data that holds the policy.
const PolicyKey = "policy.yaml"

// AnnotationRequestedBy records on an AppEnvironment the user who asked
// the portal for it.
const AnnotationRequestedBy = "portal.platform.example.org/requested-by"

// A Policy is what the platform team decides for a namespace's
// self-service environments; a request only chooses among it. It is kept
// in a ConfigMap in the portal's own namespace, which tenants cannot edit.
type Policy struct {
	// Cloud, PlaneID and PlaneType are the XR's labels.
	Cloud     string `json:"cloud"`
	PlaneID   string `json:"planeId"`
	PlaneType string `json:"planeType,omitempty"`
	// Cluster is the Cluster, in the namespace, the environments run on.
	Cluster string `json:"cluster"`
	// DefaultImage is the backend's image when a request names none.
	DefaultImage string `json:"defaultImage"`
	// ImagePrefixes are where a requested image may come from, each a
	// registry and, optionally, leading path components, such as
	// ghcr.io/acme/; a prefix matches whole components only. Empty: a
	// request may not choose its image.
	ImagePrefixes []string `json:"imagePrefixes,omitempty"`
	// Domain, the Cluster's domain or under it, gives each environment an
	// Ingress at api-<name>.<domain> and offers front ends at
	// <name>.<domain>; empty: neither.
	Domain string `json:"domain,omitempty"`
	// DeletionPolicy of the environments' data: Delete (default) or Orphan.
	DeletionPolicy string `json:"deletionPolicy,omitempty"`
	// Sizes a request may ask for, by name.
	Sizes map[string]Size `json:"sizes"`
	// MaxEnvironments is how many AppEnvironments the namespace may have
	// when the portal creates one; 0: no bound.
	MaxEnvironments int `json:"maxEnvironments,omitempty"`
}

// A Size is what one size of environment gets.
type Size struct {
	// Replicas, CPU and Memory are the backend's: its replica count and
	// each replica's requests.
	Replicas int64  `json:"replicas"`
	CPU      string `json:"cpu,omitempty"`
	Memory   string `json:"memory,omitempty"`
	// Database is the size class of the environment's database when a
	// request asks for one; empty: this size has no database.
	Database string `json:"database,omitempty"`
}

// ParsePolicy reads a policy ConfigMap's policy.yaml, refusing unknown
// fields.
func ParsePolicy(data string) (*Policy, error) {
	p := &Policy{}
	if err := yaml.UnmarshalStrict([]byte(data), p); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", PolicyKey, err)
	}
	var errs []string
	if p.Cloud == "" {
		errs = append(errs, "cloud is required")
	}
	if p.PlaneID == "" {
		errs = append(errs, "planeId is required")
	}
	if p.Cluster == "" {
		errs = append(errs, "cluster is required")
	}
	if p.DefaultImage == "" {
		errs = append(errs, "defaultImage is required")
	}
	if len(p.Sizes) == 0 {
		errs = append(errs, "sizes needs at least one size")
	}
	if p.DefaultImage != "" {
		if _, err := reference.ParseNormalizedNamed(p.DefaultImage); err != nil {
			errs = append(errs, fmt.Sprintf("defaultImage %q is not an image reference: %v", p.DefaultImage, err))
		}
	}
	for i, pre := range p.ImagePrefixes {
		if _, err := parsePrefix(pre); err != nil {
			errs = append(errs, fmt.Sprintf("imagePrefixes[%d]: %v", i, err))
		}
	}
	if p.MaxEnvironments < 0 {
		errs = append(errs, fmt.Sprintf("maxEnvironments %d: must be 0 (no bound) or more", p.MaxEnvironments))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid %s: %s", PolicyKey, strings.Join(errs, "; "))
	}
	return p, nil
}

// SizeNames are the policy's sizes, sorted.
func (p *Policy) SizeNames() []string {
	names := make([]string, 0, len(p.Sizes))
	for n := range p.Sizes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Request is what a developer sends to create an environment.
type Request struct {
	Name     string `json:"name"`
	Size     string `json:"size"`
	Image    string `json:"image,omitempty"`
	Database bool   `json:"database,omitempty"`
	Frontend bool   `json:"frontend,omitempty"`
}

// FieldError is a request's field and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// DecodeRequest reads a request body, refusing unknown fields, trailing
// data and wrong types, each naming the field.
func DecodeRequest(body []byte) (*Request, []FieldError) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	r := &Request{}
	if err := d.Decode(r); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, []FieldError{{Field: f, Message: "unknown field; known: " + strings.Join(requestFields, ", ")}}
		case errors.As(err, &te) && te.Field != "":
			return nil, []FieldError{{Field: te.Field, Message: fmt.Sprintf("must be a %s, not a %s", te.Type, te.Value)}}
		case errors.As(err, &te):
			return nil, []FieldError{{Field: "body", Message: "must be a JSON object, not a " + te.Value}}
		default:
			return nil, []FieldError{{Field: "body", Message: "not a JSON object: " + err.Error()}}
		}
	}
	// Nothing but white space may follow the object.
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, []FieldError{{Field: "body", Message: "one JSON object expected, found more after it"}}
	}
	return r, nil
}

var requestFields = []string{"name", "size", "image", "database", "frontend"}

// Build checks a request against the policy and the rules the function
// itself applies (internal/xr), and returns the AppEnvironment it asks
// for in namespace ns, or every field error, at most one per field. The
// name is checked by the function's rules alone.
func (p *Policy) Build(ns string, r *Request, requestedBy string, clouds []string) (*unstructured.Unstructured, []FieldError) {
	var errs []FieldError
	if r.Name == "" {
		errs = append(errs, FieldError{"name", "required: the environment's name"})
	}
	size, ok := p.Sizes[r.Size]
	switch {
	case r.Size == "":
		errs = append(errs, FieldError{"size", "required; this namespace offers: " + strings.Join(p.SizeNames(), ", ")})
	case !ok:
		errs = append(errs, FieldError{"size", fmt.Sprintf("%q is not offered here; this namespace offers: %s", r.Size, strings.Join(p.SizeNames(), ", "))})
	}
	image := p.DefaultImage
	if r.Image != "" {
		if msg := p.imageAllowed(r.Image); msg != "" {
			errs = append(errs, FieldError{"image", msg})
		} else {
			image = r.Image
		}
	}
	if r.Database && ok && size.Database == "" {
		errs = append(errs, FieldError{"database", fmt.Sprintf("size %q comes without a database here", r.Size)})
	}
	if r.Frontend && p.Domain == "" {
		errs = append(errs, FieldError{"frontend", "this namespace's policy offers no front ends (it has no domain)"})
	}

	// The XR is built even from a request with errors, from what of it is
	// good, so that the function's own rules (the name's) are reported
	// with the rest.
	params := map[string]any{
		"clusterRef": map[string]any{"name": p.Cluster},
		"backend":    backend(image, size),
	}
	if p.DeletionPolicy != "" {
		params["deletionPolicy"] = p.DeletionPolicy
	}
	if r.Database && size.Database != "" {
		params["database"] = map[string]any{"size": size.Database}
	}
	if p.Domain != "" {
		params["ingress"] = map[string]any{"host": "api-" + r.Name + "." + p.Domain, "tls": true}
	}
	if r.Frontend && p.Domain != "" {
		params["frontend"] = map[string]any{"host": r.Name + "." + p.Domain, "apiPath": "/api"}
	}
	labels := map[string]any{xr.LabelCloud: p.Cloud, xr.LabelPlaneID: p.PlaneID}
	if p.PlaneType != "" {
		labels[xr.LabelPlaneType] = p.PlaneType
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": envGroup + "/" + envVersion,
		"kind":       envKind,
		"metadata": map[string]any{
			"name": r.Name, "namespace": ns, "labels": labels,
			"annotations": map[string]any{AnnotationRequestedBy: requestedBy},
		},
		"spec": map[string]any{"parameters": params},
	}}
	errs = merge(errs, validate(u, clouds))
	if len(errs) > 0 {
		return nil, errs
	}
	return u, nil
}

// merge adds the function's errors to the portal's own, keeping one per
// field: a field the portal already refused is not refused again for
// what the portal put in its place, and the messages of one field are
// joined. The name's errors come first, as the form shows them.
func merge(own, fn []FieldError) []FieldError {
	var order []string
	msgs := map[string][]string{}
	add := func(e FieldError) {
		if _, ok := msgs[e.Field]; !ok {
			order = append(order, e.Field)
		}
		if !slices.Contains(msgs[e.Field], e.Message) {
			msgs[e.Field] = append(msgs[e.Field], e.Message)
		}
	}
	for _, e := range own {
		add(e)
	}
	refused := func(f string) bool { return slices.ContainsFunc(own, func(e FieldError) bool { return e.Field == f }) }
	for _, e := range fn {
		if !refused(e.Field) {
			add(e)
		}
	}
	out := make([]FieldError, 0, len(order))
	for _, f := range order {
		out = append(out, FieldError{Field: f, Message: strings.Join(msgs[f], "; ")})
	}
	slices.SortStableFunc(out, func(a, b FieldError) int {
		switch {
		case a.Field == b.Field:
			return 0
		case a.Field == "name":
			return -1
		case b.Field == "name":
			return 1
		}
		return 0
	})
	return out
}

// imageAllowed says why a requested image is refused, "" when it is not:
// it must be an image reference, under one of the policy's prefixes by
// registry and whole path components.
func (p *Policy) imageAllowed(image string) string {
	if len(p.ImagePrefixes) == 0 {
		return "this namespace's policy does not let a request choose its image"
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return fmt.Sprintf("not an image reference: %v", err)
	}
	for _, pre := range p.ImagePrefixes {
		// A prefix ParsePolicy would refuse admits nothing.
		if ip, err := parsePrefix(pre); err == nil && ip.matches(named) {
			return ""
		}
	}
	return "must be under one of: " + strings.Join(p.ImagePrefixes, ", ") + " (a registry, then whole path components)"
}

// imagePrefix is an image prefix: a registry and leading path
// components; under: only names below them, not the repository they name.
type imagePrefix struct {
	domain string
	path   []string
	under  bool
}

// matches says whether a parsed image name is within the prefix.
func (ip imagePrefix) matches(named reference.Named) bool {
	path := strings.Split(reference.Path(named), "/")
	n := len(ip.path)
	if ip.under {
		n++
	}
	return reference.Domain(named) == ip.domain && len(path) >= n && slices.Equal(path[:len(ip.path)], ip.path)
}

// parsePrefix reads an image prefix, such as ghcr.io/acme/ or
// registry.acme.com: a registry, then whole path components; with a
// trailing '/', only the names below them. It is read by the image
// reference parser, so that a prefix means to the policy what it means to
// a container runtime.
func parsePrefix(pre string) (imagePrefix, error) {
	refuse := fmt.Errorf("%q is not a registry and whole path components, such as ghcr.io/acme/", pre)
	trimmed, under := strings.CutSuffix(pre, "/")
	parts := strings.Split(trimmed, "/")
	if trimmed == "" {
		return imagePrefix{}, refuse
	}
	// A name below the prefix must parse with the prefix's first
	// component as its registry (not Docker Hub's by default) and the
	// rest, unchanged, as its leading path components.
	named, err := reference.ParseNormalizedNamed(trimmed + "/x")
	if err != nil || reference.Domain(named) != parts[0] {
		return imagePrefix{}, refuse
	}
	want := strings.Join(append(slices.Clone(parts[1:]), "x"), "/")
	if path := reference.Path(named); path != want && (parts[0] != "docker.io" || path != "library/"+want) {
		return imagePrefix{}, refuse
	}
	return imagePrefix{domain: parts[0], path: parts[1:], under: under}, nil
}

func backend(image string, s Size) map[string]any {
	b := map[string]any{"image": image, "replicas": s.Replicas}
	req := map[string]any{}
	if s.CPU != "" {
		req["cpu"] = s.CPU
	}
	if s.Memory != "" {
		req["memory"] = s.Memory
	}
	if len(req) > 0 {
		b["resources"] = map[string]any{"requests": req}
	}
	return b
}

// validate applies the function's own decoding and validation of an
// AppEnvironment, naming the request's field where one gave the value and
// the policy's otherwise.
func validate(u *unstructured.Unstructured, clouds []string) []FieldError {
	s, err := structpb.NewStruct(u.Object)
	if err != nil {
		return []FieldError{{Field: "body", Message: "cannot encode the environment: " + err.Error()}}
	}
	x, errs := xr.DecodeAppEnvironment(s)
	if len(errs) == 0 {
		errs = xr.ValidateAppEnvironment(x, clouds)
	}
	named := slices.ContainsFunc(errs, func(e *field.Error) bool { return e.Field == "metadata.name" })
	var out []FieldError
	for _, e := range errs {
		if named && derivedFromName[e.Field] {
			continue // the name's own error says it
		}
		out = append(out, FieldError{Field: requestField(e), Message: e.ErrorBody()})
	}
	return out
}

// derivedFromName are the paths whose values the portal derives from the
// name: when the name is refused, so are they, for the same reason.
var derivedFromName = map[string]bool{
	"spec.parameters.ingress.host":  true,
	"spec.parameters.frontend.host": true,
}

// fromRequest maps the AppEnvironment paths a request's fields set to
// those fields; any other path came from the policy.
var fromRequest = map[string]string{
	"metadata.name":                     "name",
	"spec.parameters.backend.image":     "image",
	"spec.parameters.database.size":     "size",
	"spec.parameters.ingress.host":      "name",
	"spec.parameters.frontend.host":     "name",
	"spec.parameters.backend.replicas":  "size",
	"spec.parameters.backend.resources": "size",
}

func requestField(e *field.Error) string {
	for path := e.Field; path != ""; path = path[:max(strings.LastIndexAny(path, ".["), 0)] {
		if f, ok := fromRequest[path]; ok {
			return f
		}
		if !strings.ContainsAny(path, ".[") {
			break
		}
	}
	return "policy: " + e.Field
}
