package portal

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestAPI(t *testing.T) {
	type want struct {
		code    int
		body    string
		created bool
	}
	base := "/api/v1/namespaces/"
	cases := map[string]struct {
		reason string
		method string
		path   string
		token  string
		header string
		body   string
		want   want
	}{
		"NoToken": {
			reason: "A request without a bearer token is refused before anything else.",
			method: http.MethodPost, path: base + "team-a/environments", body: `{"name":"x","size":"tiny"}`,
			want: want{code: 401, body: `{"error":"a bearer token is required (Authorization: Bearer <token>)"}`},
		},
		"TokenAfterTwoSpaces": {
			reason: "Bearer, two spaces and a token is malformed: the API server would review \" x\" as the anonymous user.",
			method: http.MethodGet, path: base + "team-a/environments", header: "Bearer  " + tokenAlice,
			want: want{code: 401, body: malformed},
		},
		"LowerCaseScheme": {
			reason: "The header is exactly Bearer <token>.",
			method: http.MethodGet, path: base + "team-a/environments", header: "bearer " + tokenAlice,
			want: want{code: 401, body: malformed},
		},
		"EmptyToken": {
			reason: "A bearer token is not empty.",
			method: http.MethodGet, path: base + "team-a/environments", header: "Bearer ",
			want: want{code: 401, body: malformed},
		},
		"SpaceInToken": {
			reason: "A token has no spaces.",
			method: http.MethodGet, path: base + "team-a/environments", header: "Bearer " + tokenAlice + " x",
			want: want{code: 401, body: malformed},
		},
		"ControlInToken": {
			reason: "A token has no control characters.",
			method: http.MethodGet, path: base + "team-a/environments", header: "Bearer a\tb",
			want: want{code: 401, body: malformed},
		},
		"BasicAuth": {
			reason: "Another scheme is not a bearer token.",
			method: http.MethodGet, path: base + "team-a/environments", header: "Basic YWxpY2U6cHc=",
			want: want{code: 401, body: malformed},
		},
		"TrailingData": {
			reason: "Data after the request's object is refused, and nothing is created.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenAlice, body: `{"name":"x","size":"tiny"}}`,
			want: want{code: 400, body: `{"error":"invalid request","fields":[{"field":"body","message":"one JSON object expected, found more after it"}]}`},
		},
		"NamespaceNotALabel": {
			reason: "A namespace is a DNS label: a dotted one is refused before anything else.",
			method: http.MethodGet, path: base + "team.a/environments/x/events", token: tokenAlice,
			want: want{code: 400, body: `{"error":"namespace \"team.a\": must not contain dots"}`},
		},
		"StreamInNoNamespace": {
			reason: "A stream opens only in a namespace that exists.",
			method: http.MethodGet, path: base + "team-c/environments/x/events", token: tokenCarol,
			want: want{code: 404, body: `{"error":"no such namespace: team-c"}`},
		},
		"BadToken": {
			reason: "A token the API server does not know is refused.",
			method: http.MethodGet, path: base + "team-a/environments", token: "nope",
			want: want{code: 401, body: `{"error":"the bearer token is not valid"}`},
		},
		"Create": {
			reason: "A good request creates the environment as the caller and answers 202 with its URLs.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenAlice, body: `{"name":"feature-x","size":"small","database":true}`,
			want: want{code: 202, created: true, body: `{"name":"feature-x","namespace":"team-a","url":"/api/v1/namespaces/team-a/environments/feature-x","events":"/api/v1/namespaces/team-a/environments/feature-x/events"}`},
		},
		"BadRequest": {
			reason: "A bad request is a 400 naming each field, and nothing is created.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenAlice, body: `{"name":"x","size":"huge","image":"docker.io/x"}`,
			want: want{code: 400, body: `{"error":"invalid request","fields":[{"field":"size","message":"\"huge\" is not offered here; this namespace offers: small, tiny"},{"field":"image","message":"must be under one of: ghcr.io/acme/ (a registry, then whole path components)"}]}`},
		},
		"UnknownField": {
			reason: "An unknown field is a 400 naming it.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenAlice, body: `{"name":"x","size":"tiny","namespace":"team-b"}`,
			want: want{code: 400, body: `{"error":"invalid request","fields":[{"field":"namespace","message":"unknown field; known: name, size, image, database, frontend"}]}`},
		},
		"TooLarge": {
			reason: "A body over the limit is refused.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenAlice, body: `{"name":"` + strings.Repeat("a", DefaultMaxBody) + `"}`,
			want: want{code: 413, body: `{"error":"the body is larger than 65536 bytes"}`},
		},
		"OtherTenantCreates": {
			reason: "A tenant cannot create in another's namespace.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenBob, body: `{"name":"x","size":"tiny"}`,
			want: want{code: 403, body: `{"error":"bob may not create appenvironments in namespace team-a"}`},
		},
		"OtherTenantLearnsNoPolicy": {
			reason: "A bad request in another's namespace is refused before the policy is read, so that it tells nothing of it.",
			method: http.MethodPost, path: base + "team-a/environments", token: tokenBob, body: `{"name":"x","size":"huge"}`,
			want: want{code: 403, body: `{"error":"bob may not create appenvironments in namespace team-a"}`},
		},
		"PortalMayNotImpersonate": {
			reason: "When the portal's own RBAC lacks impersonation, the user gets a 500, not the portal's RBAC error.",
			method: http.MethodGet, path: base + "team-a/environments", token: tokenCarol,
			want: want{code: 500, body: `{"error":"cannot act for the user"}`},
		},
		"OtherTenantLists": {
			reason: "A tenant cannot list another's namespace.",
			method: http.MethodGet, path: base + "team-a/environments", token: tokenBob,
			want: want{code: 403, body: `{"error":"appenvironments.platform.example.org is forbidden: RBAC: access denied"}`},
		},
		"OtherTenantGets": {
			reason: "A tenant cannot read another's environment.",
			method: http.MethodGet, path: base + "team-a/environments/existing", token: tokenBob,
			want: want{code: 403, body: `{"error":"appenvironments.platform.example.org is forbidden: RBAC: access denied"}`},
		},
		"OtherTenantDeletes": {
			reason: "A tenant cannot delete another's environment.",
			method: http.MethodDelete, path: base + "team-a/environments/existing", token: tokenBob,
			want: want{code: 403, body: `{"error":"appenvironments.platform.example.org is forbidden: RBAC: access denied"}`},
		},
		"OtherTenantWatches": {
			reason: "A tenant cannot watch another's environment: the stream is checked with an access review.",
			method: http.MethodGet, path: base + "team-a/environments/existing/events", token: tokenBob,
			want: want{code: 403, body: `{"error":"bob may not watch appenvironments in namespace team-a"}`},
		},
		"OtherTenantPolicy": {
			reason: "A tenant cannot read another's policy.",
			method: http.MethodGet, path: base + "team-a/policy", token: tokenBob,
			want: want{code: 403, body: `{"error":"bob may not create appenvironments in namespace team-a"}`},
		},
		"Policy": {
			reason: "The requester sees the choices its namespace's policy gives.",
			method: http.MethodGet, path: base + "team-a/policy", token: tokenAlice,
			want: want{code: 200, body: `{"namespace":"team-a","cloud":"gcp","cluster":"shared","sizes":["small","tiny"],"defaultImage":"ghcr.io/acme/app:1.0","chooseImage":true,"database":true,"frontend":true,"domain":"apps.example.com"}`},
		},
		"NoPolicy": {
			reason: "A namespace without a policy is not open to self-service.",
			method: http.MethodPost, path: base + "team-b/environments", token: tokenBob, body: `{"name":"x","size":"tiny"}`,
			want: want{code: 404, body: `{"error":"namespace team-b is not open to self-service: the platform team has given it no portal policy"}`},
		},
		"Get": {
			reason: "An environment reads as a summary.",
			method: http.MethodGet, path: base + "team-a/environments/existing", token: tokenAlice,
			want: want{code: 200, body: `{"name":"existing","namespace":"team-a","ready":"False","synced":"True","message":"Creating","deleting":false}`},
		},
		"List": {
			reason: "A namespace's environments list as summaries.",
			method: http.MethodGet, path: base + "team-a/environments", token: tokenAlice,
			want: want{code: 200, body: `{"items":[{"name":"existing","namespace":"team-a","ready":"False","synced":"True","message":"Creating","deleting":false}]}`},
		},
		"Delete": {
			reason: "An environment is deleted as the caller.",
			method: http.MethodDelete, path: base + "team-a/environments/existing", token: tokenAlice,
			want: want{code: 202, body: `{"name":"existing","namespace":"team-a"}`},
		},
		"BadName": {
			reason: "A name in the path that Kubernetes would refuse is refused first.",
			method: http.MethodGet, path: base + "team-a/environments/Bad_Name", token: tokenAlice,
			want: want{code: 400, body: `{"error":"name \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, env("existing"))
			var hdr []string
			if tc.header != "" {
				hdr = []string{"Authorization", tc.header}
			}
			rec := w.do(t, tc.method, tc.path, tc.token, tc.body, hdr...)
			l, err := w.dyn.Resource(envGVR).Namespace("team-a").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created := len(l.Items) == 2
			got := want{code: rec.Code, body: strings.TrimSpace(rec.Body.String()), created: created}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n%s %s: -want, +got:\n%s", tc.reason, tc.method, tc.path, diff)
			}
			for _, tok := range []string{tokenAlice, tokenBob, tokenCarol} {
				if strings.Contains(w.log.String(), tok) {
					t.Errorf("%s\nthe log holds a bearer token:\n%s", tc.reason, w.log.String())
				}
			}
		})
	}
}

// malformed is the answer to a malformed Authorization header.
const malformed = `{"error":"a malformed Authorization header: want one, exactly Bearer <token>, the token without spaces or control characters"}`

func TestCreated(t *testing.T) {
	w := newWorld(t)
	rec := w.do(t, http.MethodPost, "/api/v1/namespaces/team-a/environments", tokenAlice, `{"name":"feature-x","size":"small","frontend":true}`)
	if rec.Code != http.StatusAccepted || rec.Header().Get("Location") != "/api/v1/namespaces/team-a/environments/feature-x" {
		t.Fatalf("POST: %d %s, Location %q", rec.Code, rec.Body.String(), rec.Header().Get("Location"))
	}
	u, err := w.dyn.Resource(envGVR).Namespace("team-a").Get(context.Background(), "feature-x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"labels": u.GetLabels(), "annotations": u.GetAnnotations(), "namespace": u.GetNamespace()}
	want := map[string]any{
		"labels":      map[string]string{"cloud": "gcp", "planeId": "acme-prod", "planeType": "production"},
		"annotations": map[string]string{AnnotationRequestedBy: "alice"},
		"namespace":   "team-a",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the created AppEnvironment carries the policy's labels and its requester: -want, +got:\n%s", diff)
	}
}

func TestHeaders(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/", "/static/app.js", "/healthz", "/api/v1/namespaces/team-a/environments"} {
		rec := w.do(t, http.MethodGet, path, tokenAlice, "")
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", path, rec.Code)
		}
		if got := rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
	}
}

// eventSeq is the sequence number of an event ID.
func eventSeq(t *testing.T, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	if err != nil {
		t.Fatalf("event ID %q: %v", id, err)
	}
	return n
}

func TestStream(t *testing.T) {
	w := newWorld(t,
		env("app", bucketGVK, objectGVK),
		composed(bucketGVK, "app-bucket-a", "app", "bucket", "False"),
		composed(objectGVK, "app-object-b", "app", "backend", "False"),
	)
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	url := srv.URL + "/api/v1/namespaces/team-a/environments/app/events"

	rsp, stop := openStream(t, url, "")
	ev := newSSEReader(rsp.Body)
	if rsp.StatusCode != http.StatusOK || rsp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET events: %d %s", rsp.StatusCode, rsp.Header.Get("Content-Type"))
	}
	first := ev.next(1)
	if len(first) != 1 || first[0].typ != EventSnapshot {
		t.Fatalf("the first event is a snapshot, got %+v", first)
	}
	snap := Snapshot{}
	if err := json.Unmarshal([]byte(first[0].data), &snap); err != nil {
		t.Fatal(err)
	}
	// The informers may not have listed the composed kinds yet: apply
	// events until both rows are known, then flip one.
	rows := map[string]Resource{}
	for _, r := range snap.Resources {
		rows[r.Name] = r
	}
	var last sseEvent
	until := func(what string, done func() bool) {
		t.Helper()
		for !done() {
			got := ev.next(1)
			if len(got) == 0 {
				t.Fatalf("no event came while waiting for %s; rows %+v", what, rows)
			}
			last = got[0]
			if last.typ == EventResource {
				r := Resource{}
				if err := json.Unmarshal([]byte(last.data), &r); err != nil {
					t.Fatal(err)
				}
				rows[r.Name] = r
			}
		}
	}
	until("both rows", func() bool { return rows["app-bucket-a"].Ready == "False" && rows["app-object-b"].Ready == "False" })
	w.setReady(t, bucketGVR, "app-bucket-a", "True")
	until("the bucket Ready", func() bool { return rows["app-bucket-a"].Ready == "True" })
	stop()
	if last.typ != EventResource || !strings.Contains(last.data, `"resource":"bucket"`) {
		t.Fatalf("a row turning ready is one resource event, got %+v", last)
	}

	// While nobody watches, two more changes happen: a viewer that
	// resumes gets exactly those, in order, with the next IDs.
	w.setReady(t, objectGVR, "app-object-b", "True")
	w.setReady(t, envGVR, "app", "True")
	time.Sleep(200 * time.Millisecond) // the informers deliver asynchronously
	rsp, stop = openStream(t, url, last.id)
	ev = newSSEReader(rsp.Body)
	resumed := ev.next(2)
	stop()
	if len(resumed) != 2 {
		t.Fatalf("a resumed stream replays the 2 events it missed, got %+v", resumed)
	}
	for i, ev := range resumed {
		if want := eventSeq(t, last.id) + 1 + i; eventSeq(t, ev.id) != want {
			t.Errorf("resumed event %d has ID %s, want sequence %d: no gap, no repeat", i, ev.id, want)
		}
	}
	// The two informers deliver independently, so either may come first.
	types := map[string]string{}
	for _, e := range resumed {
		types[e.typ] = e.data
	}
	if !strings.Contains(types[EventResource], `"name":"app-object-b","ready":"True"`) || !strings.Contains(types[EventEnvironment], `"ready":"True"`) {
		t.Errorf("resumed events: want the row and the environment turning Ready, got %+v", resumed)
	}

	// An ID from another process, or too old to replay, gets a snapshot.
	rsp, stop = openStream(t, url, "other.1-3")
	ev = newSSEReader(rsp.Body)
	again := ev.next(1)
	stop()
	if len(again) != 1 || again[0].typ != EventSnapshot || eventSeq(t, again[0].id) != eventSeq(t, resumed[1].id) {
		t.Errorf("an unknown ID gets a snapshot at the current ID %s, got %+v", resumed[1].id, again)
	}

	// Deleting the environment ends it with a deleted event.
	rsp, stop = openStream(t, url, resumed[1].id)
	ev = newSSEReader(rsp.Body)
	defer stop()
	if err := w.dyn.Resource(envGVR).Namespace("team-a").Delete(context.Background(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := ev.next(1)
	if len(gone) != 1 || gone[0].typ != EventDeleted {
		t.Errorf("a deleted environment sends deleted, got %+v", gone)
	}
}

func TestOneWatchPerKind(t *testing.T) {
	w := newWorld(t,
		env("app", bucketGVK),
		env("other", bucketGVK),
		composed(bucketGVK, "app-bucket-a", "app", "bucket", "False"),
	)
	var subs []*Subscription
	for i := range 50 {
		name := []string{"app", "other"}[i%2]
		sub, err := w.srv.Hub.Subscribe(context.Background(), "team-a", name)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	defer func() {
		for _, s := range subs {
			s.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	watches := map[string]int{}
	for _, a := range w.dyn.Actions() {
		if a.GetVerb() == "watch" {
			watches[a.GetResource().Resource]++
		}
	}
	if diff := cmp.Diff(map[string]int{"appenvironments": 1, "buckets": 1}, watches); diff != "" {
		t.Errorf("50 viewers of two environments share one watch per kind: -want, +got:\n%s", diff)
	}
}

func TestSlim(t *testing.T) {
	in := composed(bucketGVK, "b", "app", "bucket", "True")
	in.Object["spec"] = map[string]any{"forProvider": map[string]any{"location": "EU"}}
	in.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "crossplane"}})
	in.SetLabels(map[string]string{labelComposite: "app", "other": "x"})
	got, err := slim(in)
	if err != nil {
		t.Fatal(err)
	}
	want := composed(bucketGVK, "b", "app", "bucket", "True")
	if diff := cmp.Diff(want.Object, got.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("the cache keeps what a stream shows and nothing else: -want, +got:\n%s", diff)
	}
}
