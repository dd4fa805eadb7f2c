package portal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/fake"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
)

// The composed kinds of the fake world.
var (
	bucketGVK = schema.GroupVersionKind{Group: "storage.gcp.m.upbound.io", Version: "v1beta1", Kind: "Bucket"}
	objectGVK = schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "Object"}
	bucketGVR = schema.GroupVersionResource{Group: "storage.gcp.m.upbound.io", Version: "v1beta1", Resource: "buckets"}
	objectGVR = schema.GroupVersionResource{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Resource: "objects"}
)

// Tokens of the fake world's users, and the namespaces each may use.
const (
	tokenAlice = "alice-secret-token-1234"
	tokenBob   = "bob-secret-token-5678"
	// tokenCarol is a user of team-a the portal may not impersonate.
	tokenCarol = "carol-secret-token-9012"
	// tokenPat is the platform team's: it may list every team's Clusters.
	tokenPat = "pat-secret-token-3456"
	// tokenEve may list Clusters in a namespace that holds none.
	tokenEve = "eve-secret-token-7890"
)

var tenants = map[string][]string{
	"alice": {"team-a"}, "bob": {"team-b"}, "carol": {"team-a", "team-c"},
	// pat may list Clusters everywhere, and the cluster-scoped XClusters
	// ("", the namespace of an XCluster of no claim).
	"pat": {"platform", "team-a", "team-b", "team-c", ""}, "eve": {"team-z"},
}

// world is an API server in memory: a fake dynamic client, users by
// token, RBAC by namespace, and a policy for team-a.
type world struct {
	dyn *fake.FakeDynamicClient
	srv *Server
	log *bytes.Buffer
}

func newWorld(t testing.TB, objs ...runtime.Object) *world {
	t.Helper()
	objs = append(objs, namespace("team-a"), namespace("team-b"))
	kinds := map[schema.GroupVersionResource]string{
		envGVR: "AppEnvironmentList", bucketGVR: "BucketList", objectGVR: "ObjectList", namespaces: "NamespaceList",
		clusterGVR: "ClusterList", xclusterGVR: "XClusterList", envConfigGVR: "EnvironmentConfigList",
		fleet.CompositionRevisionResource: "CompositionRevisionList",
	}
	// The XRs of every kind a platform release moves, and the legacy XRs'
	// claims.
	for _, k := range slices.Concat(fleet.ReleaseKinds, fleet.ClaimKinds) {
		kinds[k.Resource] = k.Kind + "List"
	}
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
	w := &world{dyn: dyn, log: &bytes.Buffer{}}
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: w.log}, nil))
	resolve := func(_ context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
		switch gvk {
		case bucketGVK:
			return bucketGVR, true, nil
		case objectGVK:
			return objectGVR, true, nil
		}
		return schema.GroupVersionResource{}, false, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, "")
	}
	w.srv = &Server{
		Authn: fakeAuthn{}, Authz: fakeAuthz{},
		As:       func(u *User) (dynamic.Interface, error) { return tenantClient{Interface: dyn, user: u.Name}, nil },
		Policies: fakePolicies{"team-a": testPolicy()},
		Hub:      NewHub(dyn, resolve, HubOptions{Ring: 8, Epoch: "test", Grace: time.Minute, Log: log}),
		Fleet:    NewFleet(dyn, "test", log),
		Own:      dyn,
		Clouds:   []string{"aws", "azure", "gcp"}, MaxBody: DefaultMaxBody, Ping: time.Hour, Log: log,
	}
	t.Cleanup(w.srv.Hub.Close)
	t.Cleanup(w.srv.Fleet.Close)
	return w
}

func testPolicy() *Policy {
	return &Policy{
		Cloud: "gcp", PlaneID: "acme-prod", PlaneType: "production", Cluster: "shared",
		DefaultImage: "ghcr.io/acme/app:1.0", ImagePrefixes: []string{"ghcr.io/acme/"}, Domain: "apps.example.com",
		Sizes: map[string]Size{"small": {Replicas: 1, CPU: "250m", Memory: "256Mi", Database: "small"}, "tiny": {Replicas: 1}},
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type fakeAuthn struct{}

// Known: the fake asks no API server, so every answer is as good as cached.
func (fakeAuthn) Known(string) bool { return true }

func (fakeAuthn) Authenticate(_ context.Context, token string) (*User, error) {
	switch token {
	case tokenAlice:
		return &User{Name: "alice", Groups: []string{"team-a"}}, nil
	case tokenBob:
		return &User{Name: "bob", Groups: []string{"team-b"}}, nil
	case tokenCarol:
		return &User{Name: "carol", Groups: []string{"team-a"}}, nil
	case tokenPat:
		return &User{Name: "pat", Groups: []string{"platform"}}, nil
	case tokenEve:
		return &User{Name: "eve", Groups: []string{"team-z"}}, nil
	}
	return nil, errUnauthenticated
}

type fakeAuthz struct{}

func (fakeAuthz) Allowed(_ context.Context, u *User, a Access) (bool, error) {
	return slices.Contains(tenants[u.Name], a.Namespace), nil
}

type fakePolicies map[string]*Policy

func (f fakePolicies) Policy(_ context.Context, ns string) (*Policy, error) {
	if p, ok := f[ns]; ok {
		return p, nil
	}
	return nil, ErrNoPolicy
}

// tenantClient is the fake API server's RBAC: a user reaches only its
// namespaces.
type tenantClient struct {
	dynamic.Interface
	user string
}

func (c tenantClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return tenantResource{NamespaceableResourceInterface: c.Interface.Resource(gvr), user: c.user, gvr: gvr}
}

type tenantResource struct {
	dynamic.NamespaceableResourceInterface
	user string
	gvr  schema.GroupVersionResource
}

func (r tenantResource) Namespace(ns string) dynamic.ResourceInterface {
	if r.user == "carol" {
		return refused{err: apierrors.NewForbidden(schema.GroupResource{Resource: "users"}, "carol", errors.New(`User "portal" cannot impersonate resource "users"`))}
	}
	if slices.Contains(tenants[r.user], ns) {
		return r.NamespaceableResourceInterface.Namespace(ns)
	}
	return refused{err: apierrors.NewForbidden(r.gvr.GroupResource(), "", errors.New("RBAC: access denied"))}
}

// refused answers every verb with err.
type refused struct {
	dynamic.ResourceInterface
	err error
}

func (r refused) Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.err
}

func (r refused) Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, r.err
}

func (r refused) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, r.err
}

func (r refused) Delete(context.Context, string, metav1.DeleteOptions, ...string) error { return r.err }

func (r refused) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, r.err
}

// namespace is a Namespace of the fake API server.
func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

// do sends a request to the world's portal.
func (w *world) do(t testing.TB, method, path, token, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	w.srv.Handler().ServeHTTP(rec, req)
	return rec
}

// env is an AppEnvironment of team-a, not Ready, with resource references and conditions.
func env(name string, refs ...schema.GroupVersionKind) *unstructured.Unstructured {
	rr := make([]any, 0, len(refs))
	for i, g := range refs {
		rr = append(rr, map[string]any{"apiVersion": g.GroupVersion().String(), "kind": g.Kind, "name": name + "-" + strings.ToLower(g.Kind) + "-" + string(rune('a'+i))})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": envGroup + "/" + envVersion, "kind": envKind,
		"metadata": map[string]any{"name": name, "namespace": "team-a"},
		"spec":     map[string]any{"crossplane": map[string]any{"resourceRefs": rr}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "Creating"},
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
		}},
	}}
}

// composed is a composed resource of an environment in team-a.
func composed(g schema.GroupVersionKind, name, xr, component, ready string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": g.GroupVersion().String(), "kind": g.Kind,
		"metadata": map[string]any{
			"name": name, "namespace": "team-a",
			"labels":      map[string]any{labelComposite: xr},
			"annotations": map[string]any{annotationComponent: component},
		},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready}, map[string]any{"type": "Synced", "status": "True"}}},
	}}
}

// setReady sets the Ready condition of a composed resource or environment in team-a.
func (w *world) setReady(t testing.TB, gvr schema.GroupVersionResource, name, status string) {
	t.Helper()
	c := w.dyn.Resource(gvr).Namespace("team-a")
	o, err := c.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cannot get %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, cd := range conds {
		if m := cd.(map[string]any); m["type"] == "Ready" {
			m["status"] = status
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, conds, "status", "conditions")
	if _, err := c.Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cannot update %s: %v", name, err)
	}
}

// sseReader reads Server-Sent Events from a streaming response.
type sseEvent struct{ id, typ, data string }

// sseReader reads one response's events as they arrive.
type sseReader chan sseEvent

func newSSEReader(body io.Reader) sseReader {
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		var ev sseEvent
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 4096)
		for {
			k, err := body.Read(tmp)
			buf = append(buf, tmp[:k]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				line := string(buf[:i])
				buf = buf[i+1:]
				switch {
				case line == "":
					if ev.typ != "" {
						ch <- ev
					}
					ev = sseEvent{}
				case strings.HasPrefix(line, "id: "):
					ev.id = line[4:]
				case strings.HasPrefix(line, "event: "):
					ev.typ = line[7:]
				case strings.HasPrefix(line, "data: "):
					ev.data = line[6:]
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// next waits for n events, returning fewer when 5 s pass first.
func (ch sseReader) next(n int) []sseEvent {
	var out []sseEvent
	deadline := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-deadline:
			return out
		}
	}
	return out
}

// openStream opens, as alice, an environment's event stream on a real HTTP server.
func openStream(t testing.TB, url, lastID string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+tokenAlice)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("cannot open the stream: %v", err)
	}
	return rsp, func() { cancel(); _ = rsp.Body.Close() }
}
