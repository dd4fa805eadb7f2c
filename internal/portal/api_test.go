package portal

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// TestStylesheets: both pages link style.css and then fleet.css, the
// order of the one stylesheet they were split from (the fleet view's rules
// after the shared ones), and both are served as CSS.
func TestStylesheets(t *testing.T) {
	w := newWorld(t)
	const links = `<link rel="stylesheet" href="/static/style.css">` + "\n  " + `<link rel="stylesheet" href="/static/fleet.css">`
	for _, path := range []string{"/", "/fleet"} {
		rec := w.do(t, http.MethodGet, path, "", "")
		if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Count(body, `rel="stylesheet"`) != 2 || !strings.Contains(body, links) {
			t.Errorf("GET %s: %d; want it to link /static/style.css, then /static/fleet.css, and no other stylesheet:\n%s", path, rec.Code, body)
		}
	}
	for _, path := range []string{"/static/style.css", "/static/fleet.css"} {
		rec := w.do(t, http.MethodGet, path, "", "")
		if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, "text/css") || rec.Body.Len() == 0 {
			t.Errorf("GET %s: %d, Content-Type %q, %d bytes; want a stylesheet", path, rec.Code, ct, rec.Body.Len())
		}
	}
}
