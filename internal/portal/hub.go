package portal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
)

// Labels and annotations Crossplane puts on composed resources.
const (
	labelComposite      = "crossplane.io/composite"
	annotationComponent = "crossplane.io/composition-resource-name"
)

var envGVR = schema.GroupVersionResource{Group: envGroup, Version: envVersion, Resource: envResource}

// Hub turns the API server's watches into per-environment event streams:
// one informer per kind and namespace, shared by every viewer of that
// namespace, so a thousand open pages cost the API server one watch per
// kind. A namespace's informers start with its first viewer, only if the
// namespace exists, and stop a grace period after its last one left.
type Hub struct {
	dyn     dynamic.Interface
	resolve Resolver
	ring    int
	epoch   string
	grace   time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	spaces  map[string]*space
	streams uint64
	warned  bool
}

// A Resolver finds the resource of a kind, and whether it is namespaced.
type Resolver func(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error)

// HubOptions configure a Hub.
type HubOptions struct {
	// Ring is how many events of each watched environment are kept for
	// viewers that reconnect.
	Ring int
	// Epoch tells this process's event IDs from another's.
	Epoch string
	// Grace is how long a namespace's informers outlive its last viewer,
	// so that a page that reconnects finds them running.
	Grace time.Duration
	Log   *slog.Logger
}

// DefaultGrace is how long a namespace's informers outlive its last viewer.
const DefaultGrace = 30 * time.Second

// ErrNoNamespace is a stream asked for in a namespace that does not exist.
var ErrNoNamespace = errors.New("no such namespace")

// NewHub returns a Hub watching through dyn with the portal's own
// identity, finding composed kinds' resources with resolve.
func NewHub(dyn dynamic.Interface, resolve Resolver, o HubOptions) *Hub {
	return &Hub{dyn: dyn, resolve: resolve, ring: o.Ring, epoch: o.Epoch, grace: o.Grace, log: o.Log, spaces: map[string]*space{}}
}

// Watched is how many namespaces the Hub has informers in, and how many
// informers (each a list and a watch on the API server) in all.
func (h *Hub) Watched() (spaces, informers int) {
	h.mu.Lock()
	all := slices.Collect(maps.Values(h.spaces))
	h.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		informers += 1 + len(s.kinds)
		s.mu.Unlock()
	}
	return len(all), informers
}

// space is a namespace's informers and its environments' streams.
type space struct {
	h      *Hub
	ns     string
	stop   chan struct{}
	envs   cache.SharedIndexInformer
	synced chan struct{}

	// viewers and idle are the Hub's: under its lock, how many
	// subscriptions hold the space, and the timer that stops it once
	// none has for the grace period.
	viewers int
	idle    *time.Timer

	mu      sync.Mutex
	kinds   map[schema.GroupVersionKind]cache.SharedIndexInformer
	failed  map[schema.GroupVersionKind]failure
	streams map[string]*stream
}

// failure is a kind that could not be watched, and when to try again.
type failure struct {
	why   string
	retry time.Time
}

// Bounds of finding a composed kind's resource.
const (
	resolveTimeout = 10 * time.Second
	resolveRetry   = 30 * time.Second
)

// space returns namespace ns's informers, holding them for one more
// viewer until release; they start when ns has none, if ns exists.
func (h *Hub) space(ctx context.Context, ns, name string) (*space, error) {
	h.mu.Lock()
	s, ok := h.hold(ns)
	h.mu.Unlock()
	if !ok {
		// Outside the lock: it asks the API server.
		if err := h.exists(ctx, ns, name); err != nil {
			return nil, err
		}
		h.mu.Lock()
		if s, ok = h.hold(ns); !ok {
			var err error
			if s, err = h.start(ns); err != nil {
				h.mu.Unlock()
				return nil, err
			}
		}
		h.mu.Unlock()
	}
	select {
	case <-s.synced:
		return s, nil
	case <-ctx.Done():
		h.release(s)
		return nil, fmt.Errorf("cannot list the environments of namespace %s: %w", ns, ctx.Err())
	}
}

// hold takes one more viewer of namespace ns's space, if there is one.
// The Hub's lock is held.
func (h *Hub) hold(ns string) (*space, bool) {
	s, ok := h.spaces[ns]
	if !ok {
		return nil, false
	}
	s.viewers++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	return s, true
}

// start starts namespace ns's environment informer, with one viewer. The
// Hub's lock is held.
func (h *Hub) start(ns string) (*space, error) {
	s := &space{
		h: h, ns: ns, stop: make(chan struct{}), synced: make(chan struct{}), viewers: 1,
		kinds:   map[schema.GroupVersionKind]cache.SharedIndexInformer{},
		failed:  map[schema.GroupVersionKind]failure{},
		streams: map[string]*stream{},
	}
	s.envs = h.informer(envGVR, ns)
	if _, err := s.envs.AddEventHandler(handler(func(o *unstructured.Unstructured) { s.refresh(o.GetName()) })); err != nil {
		return nil, fmt.Errorf("cannot watch environments in %s: %w", ns, err)
	}
	go s.envs.Run(s.stop)
	go func() {
		if cache.WaitForCacheSync(s.stop, s.envs.HasSynced) {
			close(s.synced)
		}
	}()
	h.spaces[ns] = s
	return s, nil
}

// release lets go of one viewer of s. When it was the last, s's informers
// stop after the grace period, unless a viewer came back.
func (h *Hub) release(s *space) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.viewers--
	if s.viewers > 0 {
		return
	}
	if h.grace <= 0 {
		h.stop(s)
		return
	}
	s.idle = time.AfterFunc(h.grace, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if s.viewers == 0 {
			h.stop(s)
		}
	})
}

// stop stops a space's informers, once. The Hub's lock is held.
func (h *Hub) stop(s *space) {
	if h.spaces[s.ns] != s {
		return
	}
	delete(h.spaces, s.ns)
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	close(s.stop)
}

// exists checks that namespace ns exists before anything watches it: a
// watch in a namespace that does not exist would otherwise stay open for
// nothing. A portal whose ClusterRole does not let it read namespaces
// checks that the environment exists instead, and says so once in the log.
func (h *Hub) exists(ctx context.Context, ns, name string) error {
	_, err := h.dyn.Resource(namespaces).Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: %s", ErrNoNamespace, ns)
	case !apierrors.IsForbidden(err):
		return fmt.Errorf("cannot check that namespace %s exists: %w", ns, err)
	}
	h.mu.Lock()
	if !h.warned {
		h.warned = true
		h.log.Warn("the portal may not get namespaces: a stream opens only for an environment that exists; grant get on namespaces in its ClusterRole", "error", err)
	}
	h.mu.Unlock()
	_, err = h.dyn.Resource(envGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w, or no environment %s in it: %s", ErrNoNamespace, name, ns)
	}
	return fmt.Errorf("cannot check that environment %s/%s exists: %w", ns, name, err)
}

// Close stops every watch.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.spaces {
		h.stop(s)
	}
}

// handler calls fn with each added, changed or deleted object.
func handler(fn func(*unstructured.Unstructured)) cache.ResourceEventHandler {
	one := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			fn(u)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: one, UpdateFunc: func(_, n any) { one(n) }, DeleteFunc: one}
}

// onComposed refreshes the environment a composed resource belongs to.
func (s *space) onComposed(o *unstructured.Unstructured) {
	if xr := o.GetLabels()[labelComposite]; xr != "" {
		s.refresh(xr)
		return
	}
	s.mu.Lock()
	names := slices.Collect(maps.Keys(s.streams))
	s.mu.Unlock()
	for _, n := range names {
		s.refresh(n)
	}
}

// refresh recomputes a watched environment and emits what changed.
func (s *space) refresh(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[name]
	if !ok {
		return
	}
	env, rows := s.compute(name)
	if env == nil {
		if st.env != nil {
			st.emit(s.h.ring, EventDeleted, map[string]string{"name": name})
			st.env, st.rows = nil, map[string]Resource{}
		}
		if st.subs == 0 {
			delete(s.streams, name)
		}
		return
	}
	if st.env == nil || !st.env.equal(env) {
		st.emit(s.h.ring, EventEnvironment, env)
	}
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		if old, ok := st.rows[id]; !ok || old != rows[id] {
			st.emit(s.h.ring, EventResource, rows[id])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.rows)) {
		if _, ok := rows[id]; !ok {
			st.emit(s.h.ring, EventRemoved, map[string]string{"id": id})
		}
	}
	st.env, st.rows = env, rows
}

// compute reads an environment and its composed resources from the
// informers' caches; a nil Env: no such environment.
func (s *space) compute(name string) (*Env, map[string]Resource) {
	obj, ok, err := s.envs.GetStore().GetByKey(s.ns + "/" + name)
	if err != nil || !ok {
		return nil, nil
	}
	u := obj.(*unstructured.Unstructured) //nolint:forcetypeassert // a dynamic informer's store holds only these.
	env := envOf(u)
	rows := map[string]Resource{}
	for _, ref := range resourceRefs(u) {
		r := s.row(ref)
		rows[r.ID] = r
	}
	return &env, rows
}

// row is a composed resource's readiness, from its kind's informer. A
// reference to a kind the platform does not compose starts no informer.
func (s *space) row(r ref) Resource {
	row := Resource{
		ID: r.gvk.Group + "/" + r.gvk.Kind + "/" + r.name, Kind: r.gvk.Kind, APIVersion: r.gvk.GroupVersion().String(),
		Name: r.name, Ready: "Unknown", Synced: "Unknown",
	}
	if !Composed(r.gvk.GroupKind()) {
		row.Message = NotWatched
		return row
	}
	inf, why := s.informer(r.gvk)
	if inf == nil {
		row.Message = why
		return row
	}
	obj, ok, err := inf.GetStore().GetByKey(s.ns + "/" + r.name)
	switch {
	case err != nil:
		row.Message = err.Error()
		return row
	case !ok && !inf.HasSynced():
		row.Message = "waiting for the watch"
		return row
	case !ok:
		row.Message = "not created yet"
		return row
	}
	u := obj.(*unstructured.Unstructured) //nolint:forcetypeassert // a dynamic informer's store holds only these.
	row.Resource = u.GetAnnotations()[annotationComponent]
	conds := conditions(u)
	ready, synced := find(conds, "Ready"), find(conds, "Synced")
	row.Ready, row.Synced = ready.Status, synced.Status
	switch {
	case ready.Status != "True":
		row.Message = joinReason(ready)
	case synced.Status == "False":
		row.Message = joinReason(synced)
	}
	return row
}

// NotWatched is the message of a row whose kind the platform does not
// compose: a reference written by hand, which the portal does not follow.
const NotWatched = "not watched: the platform composes no such kind"

// informer is the shared informer of a composed kind in the namespace,
// started on first use; nil and why when the kind cannot be watched.
func (s *space) informer(gvk schema.GroupVersionKind) (cache.SharedIndexInformer, string) {
	if inf, ok := s.kinds[gvk]; ok {
		return inf, ""
	}
	if f, ok := s.failed[gvk]; ok && time.Now().Before(f.retry) {
		return nil, f.why
	}
	// fail remembers why the kind cannot be watched, until resolveRetry.
	fail := func(why string) string {
		s.failed[gvk] = failure{why: why, retry: time.Now().Add(resolveRetry)}
		return why
	}
	// Bounded, because the namespace's streams wait on this lock; a
	// failure is tried again after a while (a CRD installed later).
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	gvr, namespaced, err := s.h.resolve(ctx, gvk)
	switch {
	case err != nil:
		s.h.log.Warn("cannot find a composed kind's resource", "kind", gvk.String(), "error", err)
		return nil, fail("cannot watch " + gvk.Kind + ": " + err.Error())
	case !namespaced:
		return nil, fail(gvk.Kind + " is cluster-scoped; the portal watches a namespace's resources")
	}
	inf := s.h.informer(gvr, s.ns)
	if _, err := inf.AddEventHandler(handler(s.onComposed)); err != nil {
		return nil, fail("cannot watch " + gvk.Kind + ": " + err.Error())
	}
	delete(s.failed, gvk)
	go inf.Run(s.stop)
	s.kinds[gvk] = inf
	return inf, ""
}

// informer lists and watches one resource in one namespace.
func (h *Hub) informer(gvr schema.GroupVersionResource, ns string) cache.SharedIndexInformer {
	return newInformer(h.dyn, gvr, ns, "", slim)
}

// newInformer lists and watches one resource through dyn: in namespace
// ns ("" for every namespace, or a cluster-scoped resource), only the
// objects of a label selector ("" for all), each cut down by transform.
func newInformer(dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, selector string, transform cache.TransformFunc) cache.SharedIndexInformer {
	c := dyn.Resource(gvr).Namespace(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return c.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, dyn), &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(transform) // set before the informer runs, so it cannot fail
	return inf
}

// slim keeps of an object only what a stream shows, so that the caches
// of a namespace with many large managed resources stay small.
func slim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := fleet.Slimmed(u, []string{"spec", "crossplane", "resourceRefs"}, []string{"spec", "resourceRefs"}, []string{"status", "conditions"}, []string{"status", "url"}, []string{"status", "frontendUrl"})
	out.SetCreationTimestamp(u.GetCreationTimestamp())
	out.SetDeletionTimestamp(u.GetDeletionTimestamp())
	if v := u.GetLabels()[labelComposite]; v != "" {
		out.SetLabels(map[string]string{labelComposite: v})
	}
	if v := u.GetAnnotations()[annotationComponent]; v != "" {
		out.SetAnnotations(map[string]string{annotationComponent: v})
	}
	return out, nil
}
