package fleet

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The resources the controller reads, and the one it writes (ConfigMaps,
// its Rulings).
var (
	ClusterResource           = resourceOf(xr.ClusterAPIVersion, "clusters")
	XClusterResource          = resourceOf(xr.LegacyClusterAPIVersion, "xclusters")
	EnvironmentConfigResource = resourceOf(envcfg.APIVersion, "environmentconfigs")
	ConfigMapResource         = resourceOf(rollout.RulingAPIVersion, "configmaps")
)

// Label selectors of the EnvironmentConfigs the controller reads (the
// platform's; BaselineOf keeps the baseline's) and of the ConfigMaps it
// owns.
const (
	EnvironmentSelector = envcfg.SelectorLabel + "=" + envcfg.SelectorValue
	RulingSelector      = rollout.LabelRuling + "=true"
)

// FieldManager is the field manager of the controller's writes.
const FieldManager = "function-cluster-platform-fleet"

// DefaultInterval is the least time between two passes over the fleet.
const DefaultInterval = time.Second

// retryAfter is when a pass runs again after a write failed, if nothing
// else runs it first.
const retryAfter = 10 * time.Second

// resourceOf is the resource of apiVersion named plural.
func resourceOf(apiVersion, plural string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(apiVersion) // constants that parse
	return gv.WithResource(plural)
}

// Options configure a Controller.
type Options struct {
	// Interval is the least time between two passes; 0 means
	// DefaultInterval.
	Interval time.Duration
	// XClusters says whether the API server serves legacy XClusters
	// (Served): without them the fleet is its Clusters alone.
	XClusters bool
	// Served says whether the API server serves the other XR kinds of a
	// platform release's rollout (ReleaseKinds), the claim kinds
	// (ClaimKinds) and Composition revisions (Served, asked once per
	// resource); nil: none of them. A kind it does not serve is not read
	// (an XR of a claim whose kind is not served holds: its claim is not
	// found), and without Composition revisions no release moves. The
	// version rollout reads only the Clusters.
	Served func(schema.GroupVersionResource) bool
	// Clock tells the time a soak is measured against, and times the
	// passes; nil means the real clock.
	Clock clock.Clock
	// Log is where the controller says what it writes; nil discards.
	Log *slog.Logger
}

// A Controller rules on the fleet: on every change of a Cluster, an
// XCluster, a baseline EnvironmentConfig or one of its ConfigMaps, and
// when a wave's soak ends, it decides every gated Cluster (BaselineOf,
// Rule) and writes each one's Ruling to its ConfigMap, only where the
// ConfigMap's data differs, since every write re-runs a Cluster. It reads
// through shared informers whose objects are slimmed to what a decision
// reads, and writes nothing but the ConfigMaps labelled RulingSelector in
// the baseline's rollout.namespace, and only while it leads (Lead).
type Controller struct {
	dyn      dynamic.Interface
	interval time.Duration
	clock    clock.Clock
	log      *slog.Logger

	// xrs are the informers of the XR kinds (kinds, in the same order),
	// clusters those of both kinds of Cluster among them, configs that of
	// the EnvironmentConfigs.
	xrs      []cache.SharedIndexInformer
	kinds    []Kind
	clusters []cache.SharedIndexInformer
	configs  cache.SharedIndexInformer
	// revisions is the informer of the Composition revisions of releases;
	// claims those of the claim kinds served (claimKinds, in the same
	// order, of ClaimKinds).
	revisions  cache.SharedIndexInformer
	claims     []cache.SharedIndexInformer
	claimKinds []Kind

	kick    chan struct{}
	leading atomic.Bool

	// Only the worker touches these: the informer of the ConfigMaps in
	// the ruling namespace ns, how to stop it, and the last error said.
	ns         string
	rulings    cache.SharedIndexInformer
	stopRuling context.CancelFunc
	lastErr    string
	// Of a release's rollout: the last error of its keys, the last set of
	// Compositions and releases no revision carries, and each XR's last
	// decision, so that each is logged when it changes.
	lastReleaseErr, lastMissing string
	// lastOutside is how many XRs the last pass left out of releases.
	lastOutside int
	decisions   map[string]string
}

// New returns a Controller that reads and writes through dyn. It does not
// lead until Lead(true).
func New(dyn dynamic.Interface, o Options) *Controller {
	c := &Controller{
		dyn: dyn, interval: cmp.Or(o.Interval, DefaultInterval), clock: o.Clock, log: o.Log,
		kick: make(chan struct{}, 1),
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// One informer per XR kind the API server serves; the Clusters' serve
	// the version rollout too.
	served := func(k Kind) bool {
		switch k.Resource {
		case ClusterResource:
			return true
		case XClusterResource:
			return o.XClusters
		}
		return o.Served != nil && o.Served(k.Resource)
	}
	for _, k := range ReleaseKinds {
		if !served(k) {
			continue
		}
		inf := c.informer(k.Resource, "", "", SlimXR(k))
		c.xrs, c.kinds = append(c.xrs, inf), append(c.kinds, k)
		if k.Kind == xr.ClusterKind || k.Kind == xr.LegacyClusterKind {
			c.clusters = append(c.clusters, inf)
		}
	}
	for _, k := range ClaimKinds {
		if served(k) {
			c.claims, c.claimKinds = append(c.claims, c.informer(k.Resource, "", "", SlimClaim(k))), append(c.claimKinds, k)
		}
	}
	c.configs = c.informer(EnvironmentConfigResource, "", EnvironmentSelector, SlimConfig)
	if o.Served != nil && o.Served(CompositionRevisionResource) {
		c.revisions = c.informer(CompositionRevisionResource, "", RevisionSelector, SlimRevision)
	}
	return c
}

// Lead starts or stops the controller's writes: only a leader writes.
func (c *Controller) Lead(leading bool) {
	c.leading.Store(leading)
	c.notify()
}

// notify asks the worker for a pass.
func (c *Controller) notify() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run rules on the fleet until ctx ends: it starts the informers, and
// passes over the whole fleet after every change, at most once per
// Interval, and when the earliest soak of its rulings ends.
func (c *Controller) Run(ctx context.Context) {
	c.start(ctx)
	c.loop(ctx)
}

// start runs the fleet's informers until ctx ends, and asks for a pass
// once they have all listed.
func (c *Controller) start(ctx context.Context) {
	infs := append(slices.Concat(c.xrs, c.claims), c.configs)
	if c.revisions != nil {
		infs = append(infs, c.revisions)
	}
	synced := make([]cache.InformerSynced, 0, len(infs))
	for _, inf := range infs {
		go inf.Run(ctx.Done())
		synced = append(synced, inf.HasSynced)
	}
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), synced...) {
			c.notify()
		}
	}()
}

// loop runs a pass for each notice, at most one per interval, and at the
// time the last pass asked to run again.
func (c *Controller) loop(ctx context.Context) {
	defer func() {
		if c.stopRuling != nil {
			c.stopRuling()
		}
	}()
	var last time.Time
	var timer clock.Timer
	for {
		var wake <-chan time.Time
		if timer != nil {
			wake = timer.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-wake:
		}
		if wait := last.Add(c.interval).Sub(c.clock.Now()); !last.IsZero() && wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-c.clock.After(wait):
			}
		}
		// This pass reads every change until now.
		select {
		case <-c.kick:
		default:
		}
		last = c.clock.Now()
		next := c.pass(ctx)
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		switch d := next.Sub(c.clock.Now()); {
		case next.IsZero():
		case d <= 0:
			c.notify()
		default:
			timer = c.clock.NewTimer(d)
		}
	}
}

// pass rules on the fleet once and writes what changed, if the controller
// leads and every informer has listed. It returns when to pass again
// though nothing changes (zero: never): the earliest end of a soak that
// holds a Cluster, or a retry when a write failed.
func (c *Controller) pass(ctx context.Context) time.Time {
	if !c.leading.Load() || !c.synced() {
		return time.Time{}
	}
	now := c.clock.Now()
	b := BaselineOf(objects(c.configs))
	var clusters []map[string]any
	for _, inf := range c.clusters {
		clusters = append(clusters, objects(inf)...)
	}
	rulings, err := Rule(b, clusters, now)
	if err != nil {
		// Fail closed: write and delete nothing, so that every gated
		// Cluster keeps the ruling it has, or holds without one.
		if msg := err.Error(); msg != c.lastErr {
			c.lastErr = msg
			c.log.Error("cannot rule on the fleet: writing nothing until the baseline is fixed", "error", msg)
		}
		return time.Time{}
	}
	c.lastErr = ""
	next := c.releases(ctx, b, now)
	ns := b.Settings.RulingNamespace()
	if !c.watchRulings(ctx, ns) {
		return next
	}
	for _, r := range rulings {
		if !r.Until.IsZero() && (next.IsZero() || r.Until.Before(next)) {
			next = r.Until
		}
	}
	if !c.write(ctx, ns, rulings) {
		if retry := now.Add(retryAfter); next.IsZero() || retry.Before(next) {
			next = retry
		}
	}
	return next
}

// synced reports whether the informers the version rollout reads (the
// Clusters', the EnvironmentConfigs') have listed.
func (c *Controller) synced() bool { return allSynced(append(slices.Clone(c.clusters), c.configs)) }

// releaseSynced reports whether the informers a release's rollout reads
// (every XR kind's, every claim kind's, the Composition revisions') have
// listed; false without Composition revisions. A kind the controller may
// not list never lists: the release's moves hold.
func (c *Controller) releaseSynced() bool {
	return c.revisions != nil && allSynced(append(slices.Concat(c.xrs, c.claims), c.configs, c.revisions))
}

// allSynced reports whether every informer of infs has listed.
func allSynced(infs []cache.SharedIndexInformer) bool {
	for _, inf := range infs {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// watchRulings makes sure the ConfigMaps of namespace ns are watched,
// and reports whether their informer has listed them. A new namespace
// (the baseline's rollout.namespace changed) stops the old informer; the
// ConfigMaps it leaves behind there are no longer the controller's.
func (c *Controller) watchRulings(ctx context.Context, ns string) bool {
	if c.rulings != nil && c.ns == ns {
		return c.rulings.HasSynced()
	}
	if c.stopRuling != nil {
		c.stopRuling()
	}
	rctx, cancel := context.WithCancel(ctx)
	c.ns, c.stopRuling = ns, cancel
	inf := c.informer(ConfigMapResource, ns, RulingSelector, slimConfigMap)
	c.rulings = inf
	go inf.Run(rctx.Done())
	go func() {
		if cache.WaitForCacheSync(rctx.Done(), inf.HasSynced) {
			c.notify()
		}
	}()
	return false
}

// write makes the ConfigMaps of namespace ns hold rulings: it creates or
// updates each one whose data differs, and deletes the controller's
// ConfigMaps that hold no ruling any more. It reports whether every write
// succeeded. An update carries the resource version read, and a delete
// the UID and resource version: what changed since is left to the next
// pass.
func (c *Controller) write(ctx context.Context, ns string, rulings []rollout.Ruling) bool {
	have := map[string]*unstructured.Unstructured{}
	for _, u := range objectsOf(c.rulings) {
		if u.GetNamespace() == ns && u.GetLabels()[rollout.LabelRuling] == "true" {
			have[u.GetName()] = u
		}
	}
	api := c.dyn.Resource(ConfigMapResource).Namespace(ns)
	ok := true
	want := map[string]bool{}
	for _, r := range rulings {
		u := &unstructured.Unstructured{Object: r.Object(ns)}
		name := u.GetName()
		want[name] = true
		old, found := have[name]
		if found && sameData(old, r.Data()) {
			continue
		}
		if !c.leading.Load() {
			return ok
		}
		var err error
		if found {
			u.SetResourceVersion(old.GetResourceVersion())
			_, err = api.Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
		} else {
			_, err = api.Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
		}
		attrs := []any{"cluster", r.Cluster.String(), "verdict", string(r.Verdict), "target", r.Target, "configMap", ns + "/" + name}
		if err != nil {
			ok = false
			c.log.Warn("cannot write a ruling", append(attrs, "error", err.Error())...)
			continue
		}
		if !r.Until.IsZero() {
			attrs = append(attrs, "until", r.Until.UTC().Format(time.RFC3339))
		}
		c.log.Info("ruled", append(attrs, "created", !found)...)
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		if want[name] {
			continue
		}
		if !c.leading.Load() {
			return ok
		}
		old := have[name]
		data, _ := old.Object["data"].(map[string]any)
		attrs := []any{"cluster", data["cluster"], "configMap", ns + "/" + name}
		if err := api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: preconditions(old)}); err != nil && !kerrors.IsNotFound(err) {
			ok = false
			c.log.Warn("cannot delete a ruling", append(attrs, "error", err.Error())...)
			continue
		}
		c.log.Info("deleted a ruling: its Cluster is gone or no longer gated", attrs...)
	}
	return ok
}

// preconditions are a delete's preconditions on what was read of u: its
// UID and resource version, those it has.
func preconditions(u *unstructured.Unstructured) *metav1.Preconditions {
	p := &metav1.Preconditions{}
	if uid := u.GetUID(); uid != "" {
		p.UID = &uid
	}
	if rv := u.GetResourceVersion(); rv != "" {
		p.ResourceVersion = &rv
	}
	return p
}

// sameData reports whether a ConfigMap's data is data.
func sameData(cm *unstructured.Unstructured, data map[string]string) bool {
	have, _ := cm.Object["data"].(map[string]any)
	if len(have) != len(data) {
		return false
	}
	for k, v := range data {
		if s, ok := have[k].(string); !ok || s != v {
			return false
		}
	}
	return true
}

// informer is a shared informer of resource gvr in namespace ns (empty:
// every namespace, or a cluster-scoped resource), of the objects the
// label selector selects, slimmed by transform, that asks for a pass on
// every change.
func (c *Controller) informer(gvr schema.GroupVersionResource, ns, selector string, transform cache.TransformFunc) cache.SharedIndexInformer {
	api := c.dyn.Resource(gvr).Namespace(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return api.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return api.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, c.dyn), &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(transform) // before the informer runs, so it cannot fail
	kick := func(any) { c.notify() }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: kick, UpdateFunc: func(_, n any) { kick(n) }, DeleteFunc: kick}) // before Run, so it cannot fail
	return inf
}

// objects are an informer's objects, as maps shared with its cache: read
// them, never write them.
func objects(inf cache.SharedIndexInformer) []map[string]any {
	us := objectsOf(inf)
	out := make([]map[string]any, 0, len(us))
	for _, u := range us {
		out = append(out, u.Object)
	}
	return out
}

// objectsOf are an informer's objects.
func objectsOf(inf cache.SharedIndexInformer) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range inf.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// slimCluster keeps of a Cluster of apiVersion and kind what a decision
// reads (rollout.MemberOf, WantsOf, RefOf): its name, namespace, labels,
// generation and deletion timestamp, the version its XR pins
// (spec.parameters.version), and its status; it drops the rest
// (managedFields, annotations, the spec), so that a fleet of thousands
// stays small in memory.
func slimCluster(apiVersion, kind string) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		out := Slimmed(u, []string{"spec", "parameters", "version"}, []string{"status"})
		out.SetAPIVersion(apiVersion)
		out.SetKind(kind)
		out.SetLabels(u.GetLabels())
		if g := u.GetGeneration(); g != 0 {
			out.SetGeneration(g)
		}
		out.SetDeletionTimestamp(u.GetDeletionTimestamp())
		return out, nil
	}
}

// SlimConfig keeps of an EnvironmentConfig its name, labels and data:
// BaselineOf reads its Cluster keys as the function does. It is an
// informer's transform (the controller's, and the portal's fleet view's).
func SlimConfig(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := Slimmed(u, []string{"data"})
	out.SetLabels(u.GetLabels())
	return out, nil
}

// slimConfigMap keeps of a ConfigMap its name, namespace, labels, UID,
// resource version and data: what a pass compares and writes over.
func slimConfigMap(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := Slimmed(u, []string{"data"})
	out.SetLabels(u.GetLabels())
	if uid := u.GetUID(); uid != "" {
		out.SetUID(uid)
	}
	return out, nil
}

// Slimmed is u's apiVersion, kind, name, namespace and resource version,
// and its fields at paths, shared with u: what an informer keeps of an
// object it needs only part of, so that a fleet of thousands stays small
// in memory.
func Slimmed(u *unstructured.Unstructured, paths ...[]string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetResourceVersion(u.GetResourceVersion())
	for _, path := range paths {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...); ok {
			_ = unstructured.SetNestedField(out.Object, v, path...) // out is a map of maps
		}
	}
	return out
}
