package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// errNotFound is a 404 from the API server. The kube's errors wrap it (and
// the API server's error with it) when the API server answered 404.
var errNotFound = errors.New("not found")

// errConflict is a 409 from the API server: the object changed since it
// was read.
var errConflict = errors.New("conflict")

// requestTimeout bounds every request but a watch, which its
// timeoutSeconds and its context bound.
const requestTimeout = 30 * time.Second

// kube is the little of a Kubernetes client the end-to-end driver needs,
// over client-go's dynamic client: discovery, get, list, server-side
// apply, merge patches, delete and watches.
type kube struct {
	// server, token and ca (PEM) are the API server's URL, the bearer
	// token and the CA certificate of the kubeconfig, which the
	// kubeconfigs the simulator writes for the workload clusters carry.
	server, token string
	ca            []byte

	dyn     dynamic.Interface // every request but watches
	watcher dynamic.Interface // watches, without the request timeout
	disc    discovery.DiscoveryInterface

	mu        sync.Mutex
	resources map[string]resourceInfo // by apiVersion + "/" + kind
}

// resourceInfo is where a kind is served.
type resourceInfo struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// newKube connects with a kubeconfig (as the end-to-end scripts write it:
// one cluster with a certificate-authority file, one token user).
func newKube(path string) (*kube, error) {
	if path == "" {
		return nil, errors.New("cannot connect to the API server: no kubeconfig (-kubeconfig or KUBECONFIG)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("cannot load the kubeconfig %s: %w", path, err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, fmt.Errorf("cannot load the TLS files of the kubeconfig %s: %w", path, err)
	}
	if len(cfg.CAData) == 0 {
		return nil, fmt.Errorf("cannot use the kubeconfig %s: it names no certificate authority", path)
	}
	// No client-side rate limit: the fleet (make fleet) applies hundreds
	// of objects at once, which client-go's default (5 QPS, burst 10)
	// would hold back for minutes. The API server's max-requests-inflight
	// is the limit, as it was for the hand-written client this replaces.
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	// The driver prints what it checks, not the API server's warnings.
	cfg.WarningHandler = rest.NoWarnings{}
	// A client's timeout would end every watch at it: watches have a
	// client without one. The clients share one transport (client-go
	// caches it by TLS config), and with it their HTTP/2 connection.
	wcfg := rest.CopyConfig(cfg)
	wcfg.Timeout, cfg.Timeout = 0, requestTimeout
	k := &kube{server: cfg.Host, token: cfg.BearerToken, ca: cfg.CAData, resources: map[string]resourceInfo{}}
	if k.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cannot build the dynamic client: %w", err)
	}
	if k.watcher, err = dynamic.NewForConfig(wcfg); err != nil {
		return nil, fmt.Errorf("cannot build the watching client: %w", err)
	}
	if k.disc, err = discovery.NewDiscoveryClientForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cannot build the discovery client: %w", err)
	}
	return k, nil
}

// apiError is err wrapped as "cannot what", and as errNotFound or
// errConflict when the API server answered 404 or 409. Its text keeps the
// API server's message (a webhook's refusal, say).
func apiError(err error, format string, a ...any) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		switch st.Status().Code {
		case http.StatusNotFound:
			err = sentinel{errNotFound, err}
		case http.StatusConflict:
			err = sentinel{errConflict, err}
		}
	}
	return fmt.Errorf("cannot "+format+": %w", append(a, err)...)
}

// sentinel is an error that also matches a sentinel error (errors.Is).
type sentinel struct{ is, err error }

func (s sentinel) Error() string   { return s.err.Error() }
func (s sentinel) Unwrap() []error { return []error{s.is, s.err} }

// resource discovers where a kind is served, one group version at a time.
// Kinds defined after the last discovery (a new CRD) are found by
// discovering again.
func (k *kube) resource(apiVersion, kind string) (resourceInfo, error) {
	key := apiVersion + "/" + kind
	k.mu.Lock()
	ri, ok := k.resources[key]
	k.mu.Unlock()
	if ok {
		return ri, nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return resourceInfo{}, fmt.Errorf("cannot discover %s: %w", apiVersion, err)
	}
	list, err := k.disc.ServerResourcesForGroupVersion(apiVersion)
	if err != nil {
		return resourceInfo{}, apiError(err, "discover %s", apiVersion)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			k.resources[apiVersion+"/"+r.Kind] = resourceInfo{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced}
		}
	}
	if ri, ok = k.resources[key]; !ok {
		return resourceInfo{}, fmt.Errorf("%s %s is not served", apiVersion, kind)
	}
	return ri, nil
}

// client is a kind's client of d: in namespace when the kind is namespaced
// and namespace is given, across namespaces (or cluster-scoped) otherwise.
func (k *kube) client(d dynamic.Interface, apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	ri, err := k.resource(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	if ri.namespaced && namespace != "" {
		return d.Resource(ri.gvr).Namespace(namespace), nil
	}
	return d.Resource(ri.gvr), nil
}

// plain is an object the API server returned as the driver reads objects:
// encoding/json's, with every number a float64. client-go decodes integers
// as int64; the driver compares numbers it reads with float64 ones (==,
// reflect.DeepEqual) and asserts them (.(float64)).
func plain(u *unstructured.Unstructured) object {
	floats(u.Object)
	return u.Object
}

// floats makes every int64 in v a float64, in place; it returns v, or the
// float64 of an int64.
func floats(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for key, e := range t {
			t[key] = floats(e)
		}
	case []any:
		for i, e := range t {
			t[i] = floats(e)
		}
	case int64:
		return float64(t)
	}
	return v
}

// objRef names an object in errors: its kind and namespace/name (or name).
func objRef(kind, namespace, name string) string {
	if namespace != "" {
		return kind + " " + namespace + "/" + name
	}
	return kind + " " + name
}

// transient reports whether a read failed on the way rather than in the
// API server's answer: an HTTP/2 stream reset (seen in CI: "stream error:
// stream ID 18581; PROTOCOL_ERROR; received from peer" while the API
// server was busy), a dropped connection, or the server asking to come
// back later. A read is worth trying again after one.
func transient(err error) bool {
	msg := err.Error()
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) || utilnet.IsConnectionReset(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsTimeout(err) ||
		strings.Contains(msg, "stream error") || strings.Contains(msg, "http2: client connection lost")
}

// read tries a read up to readTries times while it fails transiently,
// a second apart, then longer.
func read[T any](f func() (T, error)) (T, error) {
	var v T
	var err error
	for i := range readTries {
		if v, err = f(); err == nil || !transient(err) {
			return v, err
		}
		time.Sleep(time.Duration(i+1) * time.Second)
	}
	return v, err
}

// readTries is how often read tries.
const readTries = 4

func (k *kube) get(apiVersion, kind, namespace, name string) (object, error) {
	c, err := k.client(k.dyn, apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	u, err := read(func() (*unstructured.Unstructured, error) {
		return c.Get(context.Background(), name, metav1.GetOptions{})
	})
	if err != nil {
		return nil, apiError(err, "get %s", objRef(kind, namespace, name))
	}
	return plain(u), nil
}

// list lists a kind across namespaces (or in one), with a label selector.
func (k *kube) list(apiVersion, kind, namespace, selector string) ([]object, error) {
	c, err := k.client(k.dyn, apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	return read(func() ([]object, error) {
		var out []object
		if _, err := listEach(context.Background(), c, metav1.ListOptions{LabelSelector: selector}, func(o object) { out = append(out, o) }); err != nil {
			return nil, apiError(err, "list %s", kind)
		}
		return out, nil
	})
}

// apply server-side applies an object as the e2e field manager.
func (k *kube) apply(o object) error { return k.applyAs("e2e", o) }

// applyAs server-side applies an object as a field manager, forcing
// conflicts: a partial object applied as the manager that applied the
// whole one would remove every field it leaves out.
func (k *kube) applyAs(manager string, o object) error {
	kind, ns, name := str(o, "kind"), str(o, "metadata", "namespace"), str(o, "metadata", "name")
	c, err := k.client(k.dyn, str(o, "apiVersion"), kind, ns)
	if err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", objRef(kind, ns, name), err)
	}
	// A patch of the apply type, not the dynamic client's Apply: that
	// refuses an object with managed fields, which the API server takes.
	force := true
	_, err = c.Patch(context.Background(), name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: manager, Force: &force})
	return apiError(err, "apply %s", objRef(kind, ns, name))
}

// patchStatus merge-patches the status subresource.
func (k *kube) patchStatus(apiVersion, kind, namespace, name string, status map[string]any) error {
	return k.mergePatch(apiVersion, kind, namespace, name, object{"status": status}, "status")
}

// patch merge-patches an object (its metadata, say). A
// metadata.resourceVersion in the patch makes it conditional: the API
// server refuses it with a conflict (errConflict) when the object changed.
func (k *kube) patch(apiVersion, kind, namespace, name string, body object) error {
	return k.mergePatch(apiVersion, kind, namespace, name, body)
}

// mergePatch merge-patches an object or a subresource of it.
func (k *kube) mergePatch(apiVersion, kind, namespace, name string, body object, sub ...string) error {
	c, err := k.client(k.dyn, apiVersion, kind, namespace)
	if err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("cannot encode the patch of %s: %w", objRef(kind, namespace, name), err)
	}
	_, err = c.Patch(context.Background(), name, types.MergePatchType, b, metav1.PatchOptions{}, sub...)
	return apiError(err, "patch %s", strings.Join(append([]string{objRef(kind, namespace, name)}, sub...), " "))
}

// post creates an object, or a subresource of one (a pod's binding, a
// service account's token), and returns what the API server answered.
func (k *kube) post(apiVersion, kind, namespace, name, sub string, o object) (object, error) {
	c, err := k.client(k.dyn, apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	var subs []string
	if sub != "" {
		// The dynamic client takes the name of what a subresource is of
		// from the body; the API server wants it the URL's when given.
		o = maps.Clone(o)
		meta, _ := o["metadata"].(map[string]any)
		meta = maps.Clone(meta)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["name"] = name
		o["metadata"], subs = meta, []string{sub}
	}
	u, err := c.Create(context.Background(), &unstructured.Unstructured{Object: o}, metav1.CreateOptions{}, subs...)
	if err != nil {
		return nil, apiError(err, "create %s", strings.TrimSpace(objRef(kind, namespace, name)+" "+sub))
	}
	return plain(u), nil
}

func (k *kube) delete(apiVersion, kind, namespace, name string) error {
	return k.deleteWith(apiVersion, kind, namespace, name, metav1.DeleteOptions{})
}

// deleteWith deletes with delete options (a grace period, a propagation
// policy). An object already gone is no error.
func (k *kube) deleteWith(apiVersion, kind, namespace, name string, opts metav1.DeleteOptions) error {
	c, err := k.client(k.dyn, apiVersion, kind, namespace)
	if err != nil {
		return err
	}
	err = apiError(c.Delete(context.Background(), name, opts), "delete %s", objRef(kind, namespace, name))
	if errors.Is(err, errNotFound) {
		return nil
	}
	return err
}

// metrics reads the API server's metrics (Prometheus' text format).
func (k *kube) metrics() ([]byte, error) {
	b, err := k.disc.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	return b, apiError(err, "read the API server's metrics")
}

// resync is how long a watch runs before the kind is listed again: what a
// handler failed on is retried then at the latest.
const resync = time.Minute

// watch calls fn with every object of a kind (across namespaces, with a
// label selector) that is listed, added or modified, until ctx ends, as an
// informer would: a list, then a watch from the list's resource version,
// then a list again whenever the watch ends (after resync, when the API
// server ends it, or on an error event such as 410 Gone). It returns ctx's
// error.
func (k *kube) watch(ctx context.Context, apiVersion, kind, selector string, fn func(object)) error {
	return k.watchEvents(ctx, apiVersion, kind, selector, func(typ string, o object) {
		if typ != "DELETED" {
			fn(o)
		}
	})
}

// watchEvents is watch, with every event's type: LISTED for what a list
// brings, ADDED, MODIFIED and DELETED for what the watch brings.
func (k *kube) watchEvents(ctx context.Context, apiVersion, kind, selector string, fn func(typ string, o object)) error {
	ri, err := k.resource(apiVersion, kind)
	if err != nil {
		return err
	}
	lister, watcher := k.dyn.Resource(ri.gvr), k.watcher.Resource(ri.gvr)
	for ctx.Err() == nil {
		// The list is served from the API server's watch cache, as an
		// informer's: what changed since, the watch brings.
		rv, err := listEach(ctx, lister, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"}, func(o object) { fn("LISTED", o) })
		if err == nil {
			err = follow(ctx, watcher, selector, rv, fn)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Printf("watch %s: %v\n", kind, err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return ctx.Err()
}

// listEach lists and calls fn with each item; it returns the list's
// resource version.
func listEach(ctx context.Context, c dynamic.ResourceInterface, opts metav1.ListOptions, fn func(object)) (string, error) {
	l, err := c.List(ctx, opts)
	if err != nil {
		return "", err
	}
	for i := range l.Items {
		fn(plain(&l.Items[i]))
	}
	return l.GetResourceVersion(), nil
}

// follow watches from a resource version for at most resync and calls fn
// with each event's type and object.
func follow(ctx context.Context, c dynamic.ResourceInterface, selector, rv string, fn func(string, object)) error {
	timeout := int64(resync.Seconds())
	w, err := c.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				fn(string(ev.Type), plain(u))
			}
		case watch.Error:
			// Most often 410 Gone: the resource version is too old. List again.
			return nil
		}
	}
	return nil
}
