package portal

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecodeRequest(t *testing.T) {
	type want struct {
		req  *Request
		errs []FieldError
	}
	cases := map[string]struct {
		reason string
		body   string
		want   want
	}{
		"Fields": {
			reason: "The fields a request may carry are read.",
			body:   `{"name":"x","size":"small","image":"i","database":true,"frontend":true}`,
			want:   want{req: &Request{Name: "x", Size: "small", Image: "i", Database: true, Frontend: true}},
		},
		"UnknownField": {
			reason: "A field the API does not know is refused by name, so that a typo is not silently ignored.",
			body:   `{"name":"x","cloud":"aws"}`,
			want:   want{errs: []FieldError{{Field: "cloud", Message: "unknown field; known: name, size, image, database, frontend"}}},
		},
		"WrongType": {
			reason: "A field of the wrong type is named.",
			body:   `{"name":"x","database":"yes"}`,
			want:   want{errs: []FieldError{{Field: "database", Message: "must be a bool, not a string"}}},
		},
		"TwoObjects": {
			reason: "Trailing data is refused.",
			body:   `{"name":"x"} {"name":"y"}`,
			want:   want{errs: []FieldError{{Field: "body", Message: "one JSON object expected, found more after it"}}},
		},
		"TrailingBrace": {
			reason: "A closing brace after the object is trailing data too.",
			body:   `{"name":"x","size":"tiny"}}`,
			want:   want{errs: []FieldError{{Field: "body", Message: "one JSON object expected, found more after it"}}},
		},
		"TrailingBracket": {
			reason: "So is a closing bracket.",
			body:   `{"name":"x","size":"tiny"}]`,
			want:   want{errs: []FieldError{{Field: "body", Message: "one JSON object expected, found more after it"}}},
		},
		"TrailingGarbage": {
			reason: "So is anything else.",
			body:   `{"name":"x","size":"tiny"}x`,
			want:   want{errs: []FieldError{{Field: "body", Message: "one JSON object expected, found more after it"}}},
		},
		"TrailingWhiteSpace": {
			reason: "White space after the object is not data.",
			body:   "{\"name\":\"x\"} \n\t",
			want:   want{req: &Request{Name: "x"}},
		},
		"NotAnObject": {
			reason: "A body that is not an object is named as the body.",
			body:   `["x"]`,
			want:   want{errs: []FieldError{{Field: "body", Message: "must be a JSON object, not a array"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, errs := DecodeRequest([]byte(tc.body))
			if diff := cmp.Diff(tc.want, want{req: req, errs: errs}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nDecodeRequest(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	type want struct {
		params map[string]any
		errs   []FieldError
	}
	cases := map[string]struct {
		reason string
		policy func(*Policy)
		req    Request
		want   want
	}{
		"Small": {
			reason: "A size gives the backend its replicas and requests, the policy its Cluster, Ingress host and image.",
			req:    Request{Name: "feature-x", Size: "small"},
			want: want{params: map[string]any{
				"clusterRef": map[string]any{"name": "shared"},
				"backend": map[string]any{"image": "ghcr.io/acme/app:1.0", "replicas": int64(1),
					"resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "256Mi"}}},
				"ingress": map[string]any{"host": "api-feature-x.apps.example.com", "tls": true},
			}},
		},
		"DatabaseAndFrontend": {
			reason: "A database takes the size's database class; a front end the name under the policy's domain, with /api to the backend.",
			req:    Request{Name: "feature-x", Size: "small", Database: true, Frontend: true, Image: "ghcr.io/acme/other:2"},
			want: want{params: map[string]any{
				"clusterRef": map[string]any{"name": "shared"},
				"backend": map[string]any{"image": "ghcr.io/acme/other:2", "replicas": int64(1),
					"resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "256Mi"}}},
				"ingress":  map[string]any{"host": "api-feature-x.apps.example.com", "tls": true},
				"database": map[string]any{"size": "small"},
				"frontend": map[string]any{"host": "feature-x.apps.example.com", "apiPath": "/api"},
			}},
		},
		"EveryRequestField": {
			reason: "Each wrong field of a request is named at once.",
			req:    Request{Name: "Bad_Name", Size: "huge", Image: "docker.io/evil:1"},
			want: want{errs: []FieldError{
				{Field: "name", Message: byTheFunction},
				{Field: "size", Message: `"huge" is not offered here; this namespace offers: small, tiny`},
				{Field: "image", Message: "must be under one of: ghcr.io/acme/ (a registry, then whole path components)"},
			}},
		},
		"Required": {
			reason: "A request without name or size names both.",
			req:    Request{},
			want: want{errs: []FieldError{
				{Field: "name", Message: "required: the environment's name"},
				{Field: "size", Message: "required; this namespace offers: small, tiny"},
			}},
		},
		"NoDatabaseForSize": {
			reason: "A size without a database class refuses a database.",
			req:    Request{Name: "x", Size: "tiny", Database: true},
			want:   want{errs: []FieldError{{Field: "database", Message: `size "tiny" comes without a database here`}}},
		},
		"NoFrontendWithoutDomain": {
			reason: "Without a domain there is no host for a front end.",
			policy: func(p *Policy) { p.Domain = "" },
			req:    Request{Name: "x", Size: "tiny", Frontend: true},
			want:   want{errs: []FieldError{{Field: "frontend", Message: "this namespace's policy offers no front ends (it has no domain)"}}},
		},
		"NoImageChoice": {
			reason: "A policy without image prefixes lets no request choose its image.",
			policy: func(p *Policy) { p.ImagePrefixes = nil },
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme/app:2"},
			want:   want{errs: []FieldError{{Field: "image", Message: "this namespace's policy does not let a request choose its image"}}},
		},
		"ImageCheckedByTheFunctionsRules": {
			reason: "The function's own validation (internal/xr) applies, and names the request's field.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme/app:Latest1"},
			want: want{errs: []FieldError{{Field: "image", Message: `Invalid value: "ghcr.io/acme/app:Latest1": ` +
				`must be a container image reference such as ghcr.io/acme/api:1.4.2, without spaces or upper-case letters in its name`}}},
		},
		"ImageNotAReference": {
			reason: "A requested image is read by an image reference parser: a name it refuses is refused.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme/App Name"},
			want:   want{errs: []FieldError{{Field: "image", Message: "not an image reference: invalid reference format: repository name (acme/App Name) must be lowercase"}}},
		},
		"ImageDotDot": {
			reason: "A path that climbs out of the prefix is no image reference, not an image under the prefix.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme/../evil/x:1"},
			want:   want{errs: []FieldError{{Field: "image", Message: "not an image reference: invalid reference format"}}},
		},
		"ImageAtAnotherHost": {
			reason: "What follows an '@' is a digest, not another registry.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme/x@evil.example.com/y:1"},
			want:   want{errs: []FieldError{{Field: "image", Message: "not an image reference: invalid reference format"}}},
		},
		"ImageInALookAlikeComponent": {
			reason: "A prefix matches whole path components: ghcr.io/acme/ does not admit ghcr.io/acme-evil/.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme-evil/x:1"},
			want:   want{errs: []FieldError{{Field: "image", Message: "must be under one of: ghcr.io/acme/ (a registry, then whole path components)"}}},
		},
		"ImageTheRepositoryAbove": {
			reason: "A prefix with a trailing '/' admits only what is below it.",
			req:    Request{Name: "x", Size: "tiny", Image: "ghcr.io/acme:1"},
			want:   want{errs: []FieldError{{Field: "image", Message: "must be under one of: ghcr.io/acme/ (a registry, then whole path components)"}}},
		},
		"ImageInALookAlikeRegistry": {
			reason: "A registry prefix is the whole registry: registry.acme.com does not admit registry.acme.com.evil.io.",
			policy: func(p *Policy) { p.ImagePrefixes = []string{"registry.acme.com"} },
			req:    Request{Name: "x", Size: "tiny", Image: "registry.acme.com.evil.io/x:1"},
			want:   want{errs: []FieldError{{Field: "image", Message: "must be under one of: registry.acme.com (a registry, then whole path components)"}}},
		},
		"ImageInTheRegistry": {
			reason: "A registry prefix admits what that registry holds.",
			policy: func(p *Policy) { p.ImagePrefixes = []string{"registry.acme.com"} },
			req:    Request{Name: "x", Size: "tiny", Image: "registry.acme.com/team/x@sha256:" + strings.Repeat("a", 64)},
			want: want{params: map[string]any{
				"clusterRef": map[string]any{"name": "shared"},
				"backend":    map[string]any{"image": "registry.acme.com/team/x@sha256:" + strings.Repeat("a", 64), "replicas": int64(1)},
				"ingress":    map[string]any{"host": "api-x.apps.example.com", "tls": true},
			}},
		},
		"ImageDockerHubShorthand": {
			reason: "An image is matched as a container runtime reads it: acme/app is docker.io/acme/app.",
			policy: func(p *Policy) { p.ImagePrefixes = []string{"docker.io/acme/"} },
			req:    Request{Name: "x", Size: "tiny", Image: "acme/app:2"},
			want: want{params: map[string]any{
				"clusterRef": map[string]any{"name": "shared"},
				"backend":    map[string]any{"image": "acme/app:2", "replicas": int64(1)},
				"ingress":    map[string]any{"host": "api-x.apps.example.com", "tls": true},
			}},
		},
		"BrokenPolicy": {
			reason: "A policy the function would refuse is named as the policy's fault, not the requester's.",
			policy: func(p *Policy) { p.Cloud = "oracle" },
			req:    Request{Name: "x", Size: "tiny"},
			want: want{errs: []FieldError{{Field: "policy: metadata.labels[cloud]",
				Message: `Unsupported value: "oracle": supported values: "aws", "azure", "gcp"`}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := testPolicy()
			if tc.policy != nil {
				tc.policy(p)
			}
			u, errs := p.Build("team-a", &tc.req, "alice", []string{"aws", "azure", "gcp"})
			got := want{errs: redactName(errs)}
			if len(errs) == 0 {
				got.params, _, _ = unstructured.NestedMap(u.Object, "spec", "parameters")
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nBuild(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// byTheFunction stands for the message of a name error, which is
// internal/xr's to word (TestNameRules checks that it is there).
const byTheFunction = "(the function's name rule)"

// redactName replaces the message of a name error, other than the
// portal's own "required", with byTheFunction.
func redactName(errs []FieldError) []FieldError {
	out := slices.Clone(errs)
	for i := range out {
		if out[i].Field == "name" && !strings.HasPrefix(out[i].Message, "required") && out[i].Message != "" {
			out[i].Message = byTheFunction
		}
	}
	return out
}

func TestNameRules(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   []string
	}{
		"LeadingDigit": {
			reason: "A cloud name starts with a letter (internal/xr's rule): 9t-x is a DNS label the function refuses.",
			name:   "9t-x", want: []string{"name"},
		},
		"DigitsOnly": {
			reason: "A name of digits only is refused by the function, so by the portal.",
			name:   "123", want: []string{"name"},
		},
		"Punycode": {
			reason: "An xn-- name would give a host that looks like another (xn--pple-43d is аpple with a Cyrillic а).",
			name:   "xn--pple-43d", want: []string{"name"},
		},
		"TooLong": {
			reason: "Cloud names derive from the name: 41 characters are too many.",
			name:   strings.Repeat("a", 41), want: []string{"name"},
		},
		"Longest": {
			reason: "40 characters are allowed.",
			name:   strings.Repeat("a", 40),
		},
		"Good": {
			reason: "A name the function accepts builds.",
			name:   "feature-x",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, errs := testPolicy().Build("team-a", &Request{Name: tc.name, Size: "tiny"}, "alice", []string{"gcp"})
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if e.Message == "" {
					t.Errorf("%s\nerror on %s without a message", tc.reason, e.Field)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nBuild(name %q): fields in error: -want, +got:\n%s\n%v", tc.reason, tc.name, diff, errs)
			}
			if (u == nil) != (len(tc.want) > 0) {
				t.Errorf("%s\nBuild(name %q): built %t with errors %v", tc.reason, tc.name, u != nil, errs)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	const good = "cloud: gcp\nplaneId: p\ncluster: c\ndefaultImage: ghcr.io/acme/app:1\nsizes: {s: {replicas: 1}}\n"
	cases := map[string]struct {
		reason string
		data   string
		want   string
	}{
		"UnknownField": {
			reason: "A misspelt policy field is refused, not ignored.",
			data:   "cloud: gcp\nplaneId: p\ncluster: c\ndefaultImage: i\nsizes: {s: {replicas: 1}}\nsizez: {}\n",
			want:   `cannot parse policy.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "sizez"`,
		},
		"Missing": {
			reason: "Every required field is named.",
			data:   "cloud: gcp\n",
			want:   "invalid policy.yaml: planeId is required; cluster is required; defaultImage is required; sizes needs at least one size",
		},
		"Good": {
			reason: "A complete policy parses.",
			data:   good + "imagePrefixes: [ghcr.io/acme/, registry.acme.com, docker.io/acme, localhost:5000/team/]\nmaxEnvironments: 3\n",
		},
		"PrefixNotAComponent": {
			reason: "A prefix that ends inside a path component is refused by name: prefixes match whole components.",
			data:   good + "imagePrefixes: [ghcr.io/acme/, ghcr.io/ac-]\n",
			want:   `invalid policy.yaml: imagePrefixes[1]: "ghcr.io/ac-" is not a registry and whole path components, such as ghcr.io/acme/`,
		},
		"PrefixWithoutRegistry": {
			reason: "A prefix names its registry: acme/ would silently mean Docker Hub.",
			data:   good + "imagePrefixes: [acme/]\n",
			want:   `invalid policy.yaml: imagePrefixes[0]: "acme/" is not a registry and whole path components, such as ghcr.io/acme/`,
		},
		"PrefixWithTag": {
			reason: "A prefix is a name, not an image with a tag.",
			data:   good + "imagePrefixes: [\"ghcr.io/acme/app:1\"]\n",
			want:   `invalid policy.yaml: imagePrefixes[0]: "ghcr.io/acme/app:1" is not a registry and whole path components, such as ghcr.io/acme/`,
		},
		"PrefixDotDot": {
			reason: "A prefix with .. is refused.",
			data:   good + "imagePrefixes: [ghcr.io/../]\n",
			want:   `invalid policy.yaml: imagePrefixes[0]: "ghcr.io/../" is not a registry and whole path components, such as ghcr.io/acme/`,
		},
		"PrefixHalfARegistry": {
			reason: "A registry prefix is a whole host: a trailing dot is not one.",
			data:   good + "imagePrefixes: [registry.acme.]\n",
			want:   `invalid policy.yaml: imagePrefixes[0]: "registry.acme." is not a registry and whole path components, such as ghcr.io/acme/`,
		},
		"DefaultImage": {
			reason: "The default image must be an image reference.",
			data:   "cloud: gcp\nplaneId: p\ncluster: c\ndefaultImage: ghcr.io/acme/../x\nsizes: {s: {replicas: 1}}\n",
			want:   `invalid policy.yaml: defaultImage "ghcr.io/acme/../x" is not an image reference: invalid reference format`,
		},
		"NegativeQuota": {
			reason: "A quota is 0 (none) or more.",
			data:   good + "maxEnvironments: -1\n",
			want:   "invalid policy.yaml: maxEnvironments -1: must be 0 (no bound) or more",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePolicy(tc.data)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParsePolicy(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
