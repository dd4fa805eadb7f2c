package portal

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

func TestBearer(t *testing.T) {
	type want struct {
		token string
		ok    bool
	}
	cases := map[string]struct {
		reason string
		header string
		want   want
	}{
		"Token":          {reason: "Bearer, one space and a token.", header: "Bearer abc.def-_~+/=", want: want{token: "abc.def-_~+/=", ok: true}}, //nolint:gosec // a made-up token of the header's syntax
		"Empty":          {reason: "No header is no token.", header: ""},
		"NoToken":        {reason: "Bearer alone is no token.", header: "Bearer "},
		"LeadingSpace":   {reason: "A token after two spaces would be reviewed as \" x\": the anonymous user.", header: "Bearer  x"},
		"TrailingSpace":  {reason: "A token ends at the header's end.", header: "Bearer x "},
		"InnerSpace":     {reason: "A token has no spaces.", header: "Bearer x y"},
		"Tab":            {reason: "A token has no control characters.", header: "Bearer x\ty"},
		"NUL":            {reason: "A token has no control characters.", header: "Bearer x\x00"},
		"NotASCII":       {reason: "A token is ASCII.", header: "Bearer x\u00e9"},
		"LowerCase":      {reason: "The scheme is exactly Bearer.", header: "bearer x"},
		"OtherScheme":    {reason: "Basic is not Bearer.", header: "Basic eDp5"},
		"NoSpace":        {reason: "The scheme and the token are one space apart.", header: "Bearerx"},
		"TooLong":        {reason: "A token over MaxTokenLength is refused without a review.", header: "Bearer " + strings.Repeat("x", MaxTokenLength+1)},
		"LongestAllowed": {reason: "MaxTokenLength is allowed.", header: "Bearer " + strings.Repeat("x", MaxTokenLength), want: want{token: strings.Repeat("x", MaxTokenLength), ok: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			token, ok := Bearer(tc.header)
			if diff := cmp.Diff(tc.want, want{token: token, ok: ok}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nBearer(%.40q): -want, +got:\n%s", tc.reason, tc.header, diff)
			}
		})
	}
}

// reviewServer is a fake API server's TokenReviews: each token's status,
// and how many reviews were asked.
type reviewServer struct {
	statuses map[string]map[string]any
	reviews  atomic.Int64
	block    chan struct{}
}

func (rs *reviewServer) client() dynamic.Interface { return reviewClient{rs: rs} }

// reviewClient is a dynamic client that answers TokenReviews from a
// reviewServer, each at once (the fake client's reactors run one at a
// time), and nothing else.
type reviewClient struct {
	dynamic.Interface
	rs *reviewServer
}

func (c reviewClient) Resource(schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return reviewResource{rs: c.rs}
}

type reviewResource struct {
	dynamic.NamespaceableResourceInterface
	rs *reviewServer
}

func (reviewResource) Namespace(string) dynamic.ResourceInterface { return nil }

func (r reviewResource) Create(_ context.Context, u *unstructured.Unstructured, _ metav1.CreateOptions, _ ...string) (*unstructured.Unstructured, error) {
	r.rs.reviews.Add(1)
	if r.rs.block != nil {
		<-r.rs.block
	}
	token, _, _ := unstructured.NestedString(u.Object, "spec", "token")
	st, ok := r.rs.statuses[token]
	if !ok {
		st = map[string]any{"authenticated": false}
	}
	out := u.DeepCopy()
	out.Object["status"] = st
	return out, nil
}

func TestTokenReviewer(t *testing.T) {
	// The token of "Bearer  x": a space, then x.
	spaceX := " x"
	statuses := map[string]map[string]any{
		"alice": {"authenticated": true, "user": map[string]any{"username": "alice", "uid": "1", "groups": []any{"team-a", "system:authenticated"}}},
		// What the API server answers for "Bearer  x": the anonymous
		// authenticator's user.
		spaceX:     {"authenticated": true, "user": map[string]any{"username": "system:anonymous", "groups": []any{"system:unauthenticated"}}},
		"anon-grp": {"authenticated": true, "user": map[string]any{"username": "someone", "groups": []any{"system:unauthenticated"}}},
		"nameless": {"authenticated": true, "user": map[string]any{}},
	}
	type want struct {
		user    string
		err     error
		reviews int64
	}
	cases := map[string]struct {
		reason string
		tokens []string
		want   want
	}{
		"User": {
			reason: "A token the API server authenticates is its user, reviewed once while cached.",
			tokens: []string{"alice", "alice", "alice"},
			want:   want{user: "alice", reviews: 1},
		},
		"Anonymous": {
			reason: "The anonymous user is nobody: refused, and the refusal cached.",
			tokens: []string{spaceX, spaceX},
			want:   want{err: errUnauthenticated, reviews: 1},
		},
		"Unauthenticated": {
			reason: "A user in group system:unauthenticated is refused.",
			tokens: []string{"anon-grp"},
			want:   want{err: errUnauthenticated, reviews: 1},
		},
		"Nameless": {
			reason: "A user without a name is refused.",
			tokens: []string{"nameless"},
			want:   want{err: errUnauthenticated, reviews: 1},
		},
		"Unknown": {
			reason: "A token the API server does not know is refused, and the refusal cached: the same bad token costs one review.",
			tokens: []string{"nope", "nope", "nope", "nope"},
			want:   want{err: errUnauthenticated, reviews: 1},
		},
		"UnknownThenExpired": {
			reason: "A refusal is remembered for NegativeTTL only.",
			tokens: []string{"nope", "+10s", "nope"},
			want:   want{err: errUnauthenticated, reviews: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := &reviewServer{statuses: statuses}
			now := time.Unix(1000, 0)
			tr := &TokenReviewer{Client: rs.client(), TTL: 30 * time.Second, NegativeTTL: 5 * time.Second, Now: func() time.Time { return now }}
			got := want{}
			for _, tok := range tc.tokens {
				if d, err := time.ParseDuration(strings.TrimPrefix(tok, "+")); strings.HasPrefix(tok, "+") && err == nil {
					now = now.Add(d)
					continue
				}
				u, err := tr.Authenticate(context.Background(), tok)
				got.user, got.err = "", err
				if u != nil {
					got.user = u.Name
				}
			}
			got.reviews = rs.reviews.Load()
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmp.Comparer(errors.Is)); diff != "" {
				t.Errorf("%s\nAuthenticate(%q): -want, +got:\n%s", tc.reason, tc.tokens, diff)
			}
		})
	}
}

func TestTokenReviewerInFlight(t *testing.T) {
	rs := &reviewServer{block: make(chan struct{})}
	tr := &TokenReviewer{Client: rs.client(), TTL: time.Minute, NegativeTTL: time.Second, InFlight: 2, Now: time.Now}
	var wg sync.WaitGroup
	for _, tok := range []string{"a", "b"} {
		wg.Go(func() { _, _ = tr.Authenticate(context.Background(), tok) })
	}
	for rs.reviews.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	if _, err := tr.Authenticate(context.Background(), "c"); !errors.Is(err, errBusy) {
		t.Errorf("a third review while two are in flight (InFlight 2): want errBusy, got %v", err)
	}
	close(rs.block)
	wg.Wait()
	if _, err := tr.Authenticate(context.Background(), "c"); !errors.Is(err, errUnauthenticated) {
		t.Errorf("a review once the others are done: want errUnauthenticated, got %v", err)
	}
}

func TestAddressLimiter(t *testing.T) {
	type take struct {
		addr string
		// after is how long after the previous take this one comes.
		after time.Duration
	}
	type want struct {
		allowed   []bool
		addresses int
	}
	cases := map[string]struct {
		reason string
		max    int
		takes  []take
		want   want
	}{
		"Burst": {
			reason: "An address may take Burst at once, then none.",
			max:    10, takes: []take{{addr: "192.0.2.1:1"}, {addr: "192.0.2.1:2"}, {addr: "192.0.2.1:3"}},
			want: want{allowed: []bool{true, true, false}, addresses: 1},
		},
		"Refill": {
			reason: "A token comes back after 1/Rate.",
			max:    10, takes: []take{{addr: "192.0.2.1:1"}, {addr: "192.0.2.1:1"}, {addr: "192.0.2.1:1"}, {addr: "192.0.2.1:1", after: time.Second}},
			want: want{allowed: []bool{true, true, false, true}, addresses: 1},
		},
		"PerAddress": {
			reason: "Each address has its own bucket, the port aside.",
			max:    10, takes: []take{{addr: "192.0.2.1:1"}, {addr: "192.0.2.1:2"}, {addr: "192.0.2.2:1"}, {addr: "192.0.2.2:1"}},
			want: want{allowed: []bool{true, true, true, true}, addresses: 2},
		},
		"IPv6By64": {
			reason: "IPv6 addresses count by their /64, which one client holds whole.",
			max:    10, takes: []take{{addr: "[2001:db8::1]:1"}, {addr: "[2001:db8::2]:1"}, {addr: "[2001:db8::3]:1"}, {addr: "[2001:db8:0:1::1]:1"}},
			want: want{allowed: []bool{true, true, false, true}, addresses: 2},
		},
		"Bounded": {
			reason: "Past Max addresses, the new ones share one bucket, and the map does not grow.",
			max:    2, takes: []take{{addr: "192.0.2.1:1"}, {addr: "192.0.2.2:1"}, {addr: "192.0.2.3:1"}, {addr: "192.0.2.4:1"}, {addr: "192.0.2.5:1"}},
			want: want{allowed: []bool{true, true, true, true, false}, addresses: 2},
		},
		"IdleForgotten": {
			reason: "A full bucket is forgotten when the map is full: it is as good as a new one.",
			max:    2, takes: []take{{addr: "192.0.2.1:1"}, {addr: "192.0.2.2:1"}, {addr: "192.0.2.3:1", after: time.Minute}, {addr: "192.0.2.3:1"}, {addr: "192.0.2.3:1"}},
			want: want{allowed: []bool{true, true, true, true, false}, addresses: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			l := &AddressLimiter{Rate: 1, Burst: 2, Max: tc.max, Now: func() time.Time { return now }}
			got := want{}
			for _, tk := range tc.takes {
				now = now.Add(tk.after)
				ok, wait := l.Take(tk.addr)
				if !ok && wait <= 0 {
					t.Errorf("%s\na refusal without a wait", tc.reason)
				}
				got.allowed = append(got.allowed, ok)
			}
			got.addresses = l.Addresses()
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nTake: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReviewLimit(t *testing.T) {
	rs := &reviewServer{statuses: map[string]map[string]any{
		tokenAlice: {"authenticated": true, "user": map[string]any{"username": "alice", "groups": []any{"team-a"}}},
	}}
	w := newWorld(t, env("existing"))
	w.srv.Authn = &TokenReviewer{Client: rs.client(), TTL: time.Minute, NegativeTTL: time.Minute, Now: time.Now}
	w.srv.Limits = Limits{ReviewsPerAddress: 0.001, ReviewBurstPerAddress: 3}
	type answer struct {
		code       int
		retryAfter bool
	}
	var got []answer
	for _, tok := range []string{tokenAlice, "bad-1", "bad-1", "bad-2", "bad-3", tokenAlice, "bad-1"} {
		rec := w.do(t, http.MethodGet, "/api/v1/namespaces/team-a/environments", tok, "")
		got = append(got, answer{code: rec.Code, retryAfter: rec.Header().Get("Retry-After") != ""})
	}
	want := []answer{
		{code: 200},                   // alice: one review
		{code: 401},                   // bad-1: one review
		{code: 401},                   // bad-1 again: cached, no review
		{code: 401},                   // bad-2: the burst's last review
		{code: 429, retryAfter: true}, // bad-3: none left
		{code: 200},                   // alice: cached, not limited
		{code: 401},                   // bad-1: cached refusal, not limited
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(answer{})); diff != "" {
		t.Errorf("an address gets ReviewBurstPerAddress reviews; cached answers cost none: -want, +got:\n%s", diff)
	}
	if n := rs.reviews.Load(); n != 3 {
		t.Errorf("TokenReviews: want 3, got %d", n)
	}
}

func TestComposed(t *testing.T) {
	cases := map[string]struct {
		reason string
		gk     schema.GroupKind
		want   bool
	}{
		"GCPNamespaced":        {reason: "An Upjet GCP managed resource.", gk: schema.GroupKind{Group: "storage.gcp.m.upbound.io", Kind: "Bucket"}, want: true},
		"AWSLegacy":            {reason: "An Upjet AWS managed resource at its legacy group.", gk: schema.GroupKind{Group: "s3.aws.upbound.io", Kind: "Bucket"}, want: true},
		"AzureResourceGroup":   {reason: "Azure's own group (ResourceGroup).", gk: schema.GroupKind{Group: "azure.m.upbound.io", Kind: "ResourceGroup"}, want: true},
		"Helm":                 {reason: "provider-helm.", gk: schema.GroupKind{Group: "helm.m.crossplane.io", Kind: "Release"}, want: true},
		"Kubernetes":           {reason: "provider-kubernetes.", gk: schema.GroupKind{Group: "kubernetes.m.crossplane.io", Kind: "Object"}, want: true},
		"Usage":                {reason: "Crossplane's Usage.", gk: schema.GroupKind{Group: "protection.crossplane.io", Kind: "Usage"}, want: true},
		"LegacyUsage":          {reason: "Crossplane's legacy Usage.", gk: schema.GroupKind{Group: "apiextensions.crossplane.io", Kind: "Usage"}, want: true},
		"Database":             {reason: "The platform's nested XRs.", gk: schema.GroupKind{Group: "platform.example.org", Kind: "Database"}, want: true},
		"SQL":                  {reason: "provider-sql's PostgreSQL kinds.", gk: schema.GroupKind{Group: "postgresql.sql.m.crossplane.io", Kind: "Role"}, want: true},
		"Secret":               {reason: "A Secret is never watched.", gk: schema.GroupKind{Kind: "Secret"}},
		"ConfigMap":            {reason: "Nor a ConfigMap.", gk: schema.GroupKind{Kind: "ConfigMap"}},
		"Composition":          {reason: "Another kind of a group the platform uses one kind of.", gk: schema.GroupKind{Group: "apiextensions.crossplane.io", Kind: "Composition"}},
		"OtherProvider":        {reason: "Another cloud's provider.", gk: schema.GroupKind{Group: "compute.oci.m.upbound.io", Kind: "Instance"}},
		"LookAlikeSuffix":      {reason: "A group that only ends like one.", gk: schema.GroupKind{Group: "evilgcp.m.upbound.io", Kind: "X"}},
		"TwoLabelsBefore":      {reason: "A service is one DNS label.", gk: schema.GroupKind{Group: "a.b.gcp.m.upbound.io", Kind: "X"}},
		"UpboundItself":        {reason: "upbound.io is not a provider's group.", gk: schema.GroupKind{Group: "m.upbound.io", Kind: "X"}},
		"OtherPlatformGroup":   {reason: "A group under the platform's is not the platform's.", gk: schema.GroupKind{Group: "evil.platform.example.org", Kind: "X"}},
		"CoreGroupLookingKind": {reason: "An apps Deployment is not composed directly (an Object wraps it).", gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Composed(tc.gk); got != tc.want {
				t.Errorf("%s\nComposed(%s): want %t, got %t", tc.reason, tc.gk, tc.want, got)
			}
		})
	}
}

// watchActions counts the fake API server's lists and watches by resource.
func watchActions(w *world) map[string]int {
	out := map[string]int{}
	for _, a := range w.dyn.Actions() {
		if v := a.GetVerb(); v == "watch" || v == "list" {
			out[v+" "+a.GetResource().Resource]++
		}
	}
	return out
}

func TestNotWatched(t *testing.T) {
	secretGVK := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	otherGVK := schema.GroupVersionKind{Group: "evil.example.com", Version: "v1", Kind: "Anything"}
	w := newWorld(t, env("app", bucketGVK, secretGVK, otherGVK), composed(bucketGVK, "app-bucket-a", "app", "bucket", "True"))
	resolved := map[schema.GroupVersionKind]bool{}
	resolve := w.srv.Hub.resolve
	w.srv.Hub.resolve = func(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
		resolved[gvk] = true
		return resolve(ctx, gvk)
	}
	sub, err := w.srv.Hub.Subscribe(context.Background(), "team-a", "app")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	frames, _ := sub.Start("")
	got := map[string]string{}
	for _, r := range snapshotOf(t, frames[0]).Resources {
		got[r.Kind] = r.Message
	}
	want := map[string]string{"Bucket": "waiting for the watch", "Secret": NotWatched, "Anything": NotWatched}
	if got["Bucket"] == "" {
		want["Bucket"] = ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a reference to a kind the platform does not compose is a row not watched: -want, +got:\n%s", diff)
	}
	if resolved[secretGVK] || resolved[otherGVK] {
		t.Errorf("a kind the platform does not compose was looked up: %v", resolved)
	}
	if _, informers := w.srv.Hub.Watched(); informers != 2 {
		t.Errorf("informers: want 2 (environments, buckets), got %d", informers)
	}
	for k := range watchActions(w) {
		if strings.Contains(k, "secrets") || strings.Contains(k, "anythings") {
			t.Errorf("the fake API server saw %s", k)
		}
	}
}

func snapshotOf(t *testing.T, frame []byte) Snapshot {
	t.Helper()
	_, data, ok := strings.Cut(string(frame), "data: ")
	if !ok {
		t.Fatalf("not an event: %q", frame)
	}
	snap := Snapshot{}
	if err := jsonUnmarshal(strings.TrimSpace(data), &snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestGrace(t *testing.T) {
	w := newWorld(t, env("app", bucketGVK), composed(bucketGVK, "app-bucket-a", "app", "bucket", "True"))
	w.srv.Hub.grace = 50 * time.Millisecond
	watched := func() int {
		spaces, _ := w.srv.Hub.Watched()
		return spaces
	}
	sub, err := w.srv.Hub.Subscribe(context.Background(), "team-a", "app")
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	sub.Close() // twice is once
	if n := watched(); n != 1 {
		t.Fatalf("right after the last viewer left, within the grace period: want 1 namespace watched, got %d", n)
	}
	// A viewer that comes back within the grace period finds the watches.
	sub, err = w.srv.Hub.Subscribe(context.Background(), "team-a", "app")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := watched(); n != 1 {
		t.Fatalf("a viewer came back: want 1 namespace watched, got %d", n)
	}
	sub.Close()
	deadline := time.Now().Add(5 * time.Second)
	for watched() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := watched(); n != 0 {
		t.Errorf("after the grace period without viewers: want no namespace watched, got %d", n)
	}
}

func TestStreamsPerUser(t *testing.T) {
	w := newWorld(t, env("app"), env("other"))
	w.srv.Limits.StreamsPerUser = 2
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	url := srv.URL + "/api/v1/namespaces/team-a/environments/"
	var codes []int
	var closers []func()
	for _, name := range []string{"app", "other", "app"} {
		rsp, stop := openStream(t, url+name+"/events", "")
		codes = append(codes, rsp.StatusCode)
		closers = append(closers, stop)
		if rsp.StatusCode == http.StatusTooManyRequests && rsp.Header.Get("Retry-After") == "" {
			t.Error("a 429 without Retry-After")
		}
	}
	closers[0]()
	// The first stream's end is seen by the server once its handler returns.
	var again int
	for range 100 {
		rsp, stop := openStream(t, url+"app/events", "")
		again = rsp.StatusCode
		stop()
		if again == http.StatusOK {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range closers[1:] {
		c()
	}
	if diff := cmp.Diff([]int{200, 200, 429, 200}, append(codes, again)); diff != "" {
		t.Errorf("a user may have StreamsPerUser streams open, and another once one closed: -want, +got:\n%s", diff)
	}
}

func TestQuota(t *testing.T) {
	cases := map[string]struct {
		reason string
		quota  int
		envs   int
		want   int
	}{
		"Under":   {reason: "Under the quota, an environment is created.", quota: 2, envs: 1, want: http.StatusAccepted},
		"Reached": {reason: "At the quota, a create is refused with 403.", quota: 2, envs: 2, want: http.StatusForbidden},
		"None":    {reason: "Without a quota, any number.", quota: 0, envs: 5, want: http.StatusAccepted},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var objs []runtime.Object
			for i := range tc.envs {
				objs = append(objs, env("env-"+string(rune('a'+i))))
			}
			w := newWorld(t, objs...)
			p := testPolicy()
			p.MaxEnvironments = tc.quota
			w.srv.Policies = fakePolicies{"team-a": p}
			rec := w.do(t, http.MethodPost, "/api/v1/namespaces/team-a/environments", tokenAlice, `{"name":"new","size":"tiny"}`)
			if rec.Code != tc.want {
				t.Errorf("%s\nPOST: want %d, got %d %s", tc.reason, tc.want, rec.Code, rec.Body.String())
			}
			if tc.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "maxEnvironments 2") {
				t.Errorf("%s\nthe refusal names the policy's maxEnvironments: %s", tc.reason, rec.Body.String())
			}
			l, err := w.dyn.Resource(envGVR).Namespace("team-a").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.envs + map[bool]int{true: 1}[tc.want == http.StatusAccepted]; len(l.Items) != want {
				t.Errorf("%s\nenvironments: want %d, got %d", tc.reason, want, len(l.Items))
			}
		})
	}
}

func TestQuotaConcurrent(t *testing.T) {
	w := newWorld(t)
	p := testPolicy()
	p.MaxEnvironments = 3
	w.srv.Policies = fakePolicies{"team-a": p}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			w.do(t, http.MethodPost, "/api/v1/namespaces/team-a/environments", tokenAlice, `{"name":"env-`+"abcdefghij"[i:i+1]+`","size":"tiny"}`)
		})
	}
	wg.Wait()
	l, err := w.dyn.Resource(envGVR).Namespace("team-a").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 3 {
		t.Errorf("10 creates at once under maxEnvironments 3: want 3 environments, got %d", len(l.Items))
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
