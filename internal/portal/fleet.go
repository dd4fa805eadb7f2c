package portal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
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
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The Cluster XRs the fleet view shows, of both kinds (the namespaced
// Crossplane v2 Cluster, and the legacy cluster-scoped XCluster, which
// counts in its claim's namespace), and the EnvironmentConfigs its waves
// and target come from.
var (
	clusterGVR   = schema.GroupVersionResource{Group: envGroup, Version: envVersion, Resource: "clusters"}
	xclusterGVR  = schema.GroupVersionResource{Group: xr.LegacyGroup, Version: envVersion, Resource: "xclusters"}
	envConfigGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1beta1", Resource: "environmentconfigs"}
)

// BaselineSelector selects the platform's baseline EnvironmentConfigs,
// which hold the fleet's Kubernetes target (version) and its rollout
// waves (rollout.waves).
const BaselineSelector = "platform.example.org/environment=cluster-platform,baseline=default"

// FleetAccessTTL is how long the fleet view remembers a user's access
// review of a namespace, as the token cache remembers a token.
const FleetAccessTTL = 30 * time.Second

// Fleet is what the fleet view reads: every namespace's Cluster XRs, the
// legacy XClusters, the baseline EnvironmentConfigs and, for a platform
// release, the XRs of the other kinds it moves (fleet.ReleaseKinds), the
// legacy XRs' claims (fleet.ClaimKinds) and the Composition revisions of
// releases, each from one shared informer that starts with the first
// viewer and runs until Close, so that a thousand viewers cost the API
// server twelve watches. Nothing is polled.
// It reads them as the fleet controller does (package fleet), so that
// each Cluster's verdict is the controller's ruling on it, and each XR's
// the controller's release move.
type Fleet struct {
	dyn   dynamic.Interface
	epoch string
	log   *slog.Logger
	// now is the portal's clock: the access cache's, and the time the
	// rulings measure the waves' soaks against.
	now func() time.Time

	once      sync.Once
	stop      chan struct{}
	clusters  cache.SharedIndexInformer
	xclusters cache.SharedIndexInformer
	configs   cache.SharedIndexInformer
	// xrs are the informers of the release's other XR kinds (releaseKinds,
	// in the same order); claims those of the claim kinds
	// (fleet.ClaimKinds, in the same order); revisions that of the
	// Composition revisions of releases.
	xrs       []cache.SharedIndexInformer
	claims    []cache.SharedIndexInformer
	revisions cache.SharedIndexInformer

	mu      sync.Mutex
	version uint64
	changed chan struct{}
	closed  bool
	access  map[[sha256.Size]byte]accessAnswer
	// unread says, by resource, why it could not be listed when the API
	// server refuses the portal (RBAC); none when it was, or when the API
	// server does not serve it (then there are none). Of the optional
	// resources alone: the XClusters, the release's other XR kinds, the
	// claim kinds and the Composition revisions.
	unread map[schema.GroupResource]string
}

// accessAnswer is an access review's answer and when it expires.
type accessAnswer struct {
	allowed bool
	expires time.Time
}

// NewFleet returns the fleet view's source, reading through dyn with the
// portal's own identity; epoch tells its event IDs from another process's.
func NewFleet(dyn dynamic.Interface, epoch string, log *slog.Logger) *Fleet {
	return &Fleet{dyn: dyn, epoch: epoch, log: log, now: time.Now, stop: make(chan struct{}), changed: make(chan struct{}), unread: map[schema.GroupResource]string{}}
}

// start starts the informers, once.
func (f *Fleet) start() {
	f.once.Do(func() {
		f.clusters = newInformer(f.dyn, clusterGVR, "", "", slimCluster)
		f.xclusters = f.optionalInformer(xclusterGVR, "", slimCluster)
		f.configs = newInformer(f.dyn, envConfigGVR, "", BaselineSelector, fleet.SlimConfig)
		for _, k := range releaseKinds() {
			f.xrs = append(f.xrs, f.optionalInformer(k.Resource, "", fleet.SlimXR(k)))
		}
		for _, k := range fleet.ClaimKinds {
			f.claims = append(f.claims, f.optionalInformer(k.Resource, "", fleet.SlimClaim(k)))
		}
		f.revisions = f.optionalInformer(fleet.CompositionRevisionResource, fleet.RevisionSelector, fleet.SlimRevision)
		for _, inf := range slices.Concat([]cache.SharedIndexInformer{f.clusters, f.xclusters, f.configs, f.revisions}, f.xrs, f.claims) {
			_, _ = inf.AddEventHandler(handler(func(*unstructured.Unstructured) { f.touch() })) // before Run, so it cannot fail
			go inf.Run(f.stop)
		}
	})
}

// releaseKinds are the XR kinds a platform release moves
// (fleet.ReleaseKinds) but the Clusters and XClusters, which the fleet
// view reads already.
func releaseKinds() []fleet.Kind {
	var out []fleet.Kind
	for _, k := range fleet.ReleaseKinds {
		if k.Resource != clusterGVR && k.Resource != xclusterGVR {
			out = append(out, k)
		}
	}
	return out
}

// fleetResources are the resources the fleet view reads (Fleet.start), of
// every namespace, with the portal's own identity: what its ClusterRole
// must let it get, list and watch.
func fleetResources() []schema.GroupVersionResource {
	out := []schema.GroupVersionResource{clusterGVR, xclusterGVR, envConfigGVR, fleet.CompositionRevisionResource}
	for _, k := range slices.Concat(releaseKinds(), fleet.ClaimKinds) {
		out = append(out, k.Resource)
	}
	return out
}

// optionalInformer is an informer of gvr, of every namespace, of the
// objects the label selector selects, slimmed by transform, that the API
// server may not serve: a Crossplane without the legacy XRDs serves no
// XClusters, and then there are none. A list refused as not found (the
// resource is not served) or forbidden (the portal's RBAC does not grant
// it, which unread says) is an empty list; a watch refused so is one that
// sends nothing and ends when the API server would have ended it (the
// reflector's timeout), so that the informer syncs, and finds the
// resource once it is served or granted.
func (f *Fleet) optionalInformer(gvr schema.GroupVersionResource, selector string, transform cache.TransformFunc) cache.SharedIndexInformer {
	c := f.dyn.Resource(gvr)
	refused := func(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) }
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			l, err := c.List(ctx, o)
			f.mu.Lock()
			delete(f.unread, gvr.GroupResource())
			if apierrors.IsForbidden(err) {
				f.unread[gvr.GroupResource()] = err.Error()
			}
			f.mu.Unlock()
			if refused(err) {
				return &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": "List"}}, nil
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			w, err := c.Watch(ctx, o)
			if !refused(err) || (o.SendInitialEvents != nil && *o.SendInitialEvents) {
				// A watch list refused falls back to a list.
				return w, err
			}
			return silentWatch(ctx, o.TimeoutSeconds), nil
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, f.dyn), &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(transform) // set before the informer runs, so it cannot fail
	return inf
}

// silentWatch is a watch that sends no event and ends after timeout
// seconds (a minute when nil), or with ctx.
func silentWatch(ctx context.Context, timeout *int64) watch.Interface {
	d := time.Minute
	if timeout != nil && *timeout > 0 {
		d = time.Duration(*timeout) * time.Second
	}
	ch := make(chan watch.Event)
	w := watch.NewProxyWatcher(ch)
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-w.StopChan():
		case <-t.C:
		}
		close(ch)
	}()
	return w
}

// touch wakes every viewer: something of the fleet changed.
func (f *Fleet) touch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	close(f.changed)
	f.changed = make(chan struct{})
}

// Changed returns the fleet's version and a channel closed at its next
// change.
func (f *Fleet) Changed() (uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version, f.changed
}

// Close stops the informers.
func (f *Fleet) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.stop)
	}
}

// synced starts the informers and waits until all have listed.
func (f *Fleet) synced(ctx context.Context) error {
	f.start()
	synced := []cache.InformerSynced{f.clusters.HasSynced, f.xclusters.HasSynced, f.configs.HasSynced, f.revisions.HasSynced}
	for _, inf := range slices.Concat(f.xrs, f.claims) {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("cannot list the Clusters, the XClusters, the baseline EnvironmentConfigs, the other XRs of a release, their claims and the Composition revisions: %w", context.Cause(ctx))
	}
	return nil
}

// allowed is an access review of u, remembered for FleetAccessTTL under
// the hash of the user and the access; at most maxCached are kept.
func (f *Fleet) allowed(ctx context.Context, authz Authorizer, u *User, a Access) (bool, error) {
	b, _ := json.Marshal(struct {
		U *User
		A Access
	}{u, a})
	key := sha256.Sum256(b)
	now := f.now()
	f.mu.Lock()
	c, ok := f.access[key]
	f.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.allowed, nil
	}
	allowed, err := authz.Allowed(ctx, u, a)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.access == nil || len(f.access) >= maxCached {
		f.access = map[[sha256.Size]byte]accessAnswer{}
	}
	f.access[key] = accessAnswer{allowed: allowed, expires: now.Add(FleetAccessTTL)}
	return allowed, nil
}

// kindOf is the release kind of an XR (fleet.ReleaseKinds), by its
// apiVersion and kind; false for another object.
func kindOf(u *unstructured.Unstructured) (fleet.Kind, bool) {
	for _, k := range fleet.ReleaseKinds {
		if k.APIVersion == u.GetAPIVersion() && k.Kind == u.GetKind() {
			return k, true
		}
	}
	return fleet.Kind{}, false
}

// listAccess is the access review a user must pass to see XR u, which
// counts in its namespace (rollout.MemberOf: a legacy XR of a claim
// counts in its claim's): list XRs of its kind there, or, for a legacy
// cluster-scoped XR of a claim, of its namespaced kind (an XCluster's
// claim namespace's Clusters), as the claim's owner may; a legacy XR of
// no claim, list its kind, cluster-scoped.
func listAccess(u *unstructured.Unstructured) Access {
	ns := rollout.MemberOf(u.Object).Namespace
	gvr := clusterGVR
	if k, ok := kindOf(u); ok {
		gvr = k.Resource
		for _, n := range fleet.ReleaseKinds {
			if !k.Namespaced && ns != "" && n.Namespaced && "X"+n.Kind == k.Kind {
				gvr = n.Resource
			}
		}
	}
	return Access{Namespace: ns, Verb: "list", Group: gvr.Group, Resource: gvr.Resource}
}

// reviews are, for each access a user needs to see one of objs
// (listAccess), whether u may: one access review each, remembered for
// FleetAccessTTL.
func (f *Fleet) reviews(ctx context.Context, authz Authorizer, u *User, objs []*unstructured.Unstructured) (map[Access]bool, error) {
	out := map[Access]bool{}
	for _, o := range objs {
		a := listAccess(o)
		if _, ok := out[a]; ok {
			continue
		}
		ok, err := f.allowed(ctx, authz, u, a)
		if err != nil {
			return nil, err
		}
		out[a] = ok
	}
	return out, nil
}

// visible reviews, per namespace that holds Clusters (a legacy XCluster
// counts in its claim's, rollout.MemberOf), whether u may list Clusters
// there. An XCluster of no claim has no namespace: u sees it when it may
// list XClusters, which are cluster-scoped.
func (f *Fleet) visible(ctx context.Context, authz Authorizer, u *User, clusters []*unstructured.Unstructured) (map[string]bool, error) {
	acc, err := f.reviews(ctx, authz, u, clusters)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, c := range clusters {
		out[rollout.MemberOf(c.Object).Namespace] = acc[listAccess(c)]
	}
	return out, nil
}

// state is what the informers hold: the Clusters, then the XClusters,
// each in namespace/name order; the baseline EnvironmentConfigs, in name
// order; and why the XClusters could not be read, if they could not.
func (f *Fleet) state() (clusters, configs []*unstructured.Unstructured, unread string) {
	clusters = append(sortedObjects(f.clusters), sortedObjects(f.xclusters)...)
	f.mu.Lock()
	defer f.mu.Unlock()
	return clusters, sortedObjects(f.configs), f.unread[xclusterGVR.GroupResource()]
}

// releaseState is what the informers hold of a platform release beyond
// the Clusters and XClusters: the XRs of the other kinds (releaseKinds,
// each kind in namespace/name order), the legacy XRs' claims, the
// Composition revisions of releases, and why each resource the portal may
// not list (the XClusters among them) could not be read, in resource
// order.
func (f *Fleet) releaseState() (xrs, claims, revisions []*unstructured.Unstructured, unread []string) {
	for _, inf := range f.xrs {
		xrs = append(xrs, sortedObjects(inf)...)
	}
	for _, inf := range f.claims {
		claims = append(claims, sortedObjects(inf)...)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, gr := range slices.SortedFunc(maps.Keys(f.unread), func(a, b schema.GroupResource) int { return cmp.Compare(a.String(), b.String()) }) {
		unread = append(unread, f.unread[gr])
	}
	return xrs, claims, sortedObjects(f.revisions), unread
}

// sortedObjects are an informer's objects, in namespace/name order.
func sortedObjects(inf cache.SharedIndexInformer) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range inf.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}

// slimCluster keeps of a Cluster or XCluster what the fleet view shows
// and what the fleet controller's ruling reads of it (rollout.MemberOf,
// rollout.WantsOf, rollout.RefOf): its kind, name, namespace, generation
// and deletion timestamp; its cloud and wave labels and, for an XCluster,
// its claim's namespace; the version its XR pins (spec.parameters.version:
// a pinned Cluster is out of the rollout); status.upgrade; status.charts
// (the chart versions its releases run); status.rollout (the target it
// reports it is asked for); its pools' names, versions and readiness; its
// conditions; and what a platform release's decision reads of it
// (fleet.KeepRelease, as the controller's informers keep it).
func slimCluster(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := fleet.Slimmed(u, []string{"spec", "parameters", "version"}, []string{"status", "upgrade"}, []string{"status", "charts"},
		[]string{"status", "rollout"}, []string{"status", "conditions"})
	out.SetGeneration(u.GetGeneration())
	out.SetDeletionTimestamp(u.GetDeletionTimestamp())
	labels := map[string]string{}
	for _, k := range []string{rollout.Label, rollout.LabelCloud, rollout.LabelClaimNamespace} {
		if v, ok := u.GetLabels()[k]; ok {
			labels[k] = v
		}
	}
	out.SetLabels(labels)
	pools, _, _ := unstructured.NestedSlice(u.Object, "status", "nodePools")
	slim := make([]any, 0, len(pools))
	for _, p := range pools {
		if m, ok := p.(map[string]any); ok {
			slim = append(slim, map[string]any{"name": m["name"], "version": m["version"], "ready": m["ready"]})
		}
	}
	if len(slim) > 0 {
		_ = unstructured.SetNestedSlice(out.Object, slim, "status", "nodePools")
	}
	fleet.KeepRelease(out, u)
	return out, nil
}

// eventFleet is the fleet stream's one event type: the user's whole view.
const eventFleet = "fleet"

// frameOf is the fleet view as one event of version v.
func (f *Fleet) frameOf(v uint64, view FleetView) []byte {
	b, err := json.Marshal(view)
	if err != nil {
		b = []byte(`{}`)
	}
	return frame(f.epoch+".fleet", v, eventFleet, b)
}

// clouds are the view's clouds in order, for a wave's members.
func clouds(members []ClusterView) []CloudView {
	by := map[string][]ClusterView{}
	for _, m := range members {
		by[m.Cloud] = append(by[m.Cloud], m)
	}
	out := make([]CloudView, 0, len(by))
	for _, c := range slices.Sorted(maps.Keys(by)) {
		out = append(out, CloudView{Cloud: c, Clusters: by[c]})
	}
	return out
}
