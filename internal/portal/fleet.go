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

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// The Cluster XRs the fleet view shows (the namespaced Crossplane v2
// kind), and the EnvironmentConfigs its waves and target come from.
var (
	clusterGVR   = schema.GroupVersionResource{Group: envGroup, Version: envVersion, Resource: "clusters"}
	envConfigGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1beta1", Resource: "environmentconfigs"}
)

// BaselineSelector selects the platform's baseline EnvironmentConfigs,
// which hold the fleet's Kubernetes target (version) and its rollout
// waves (rollout.waves).
const BaselineSelector = "platform.example.org/environment=cluster-platform,baseline=default"

// FleetAccessTTL is how long the fleet view remembers a user's access
// review of a namespace, as the token cache remembers a token.
const FleetAccessTTL = 30 * time.Second

// Fleet is what the fleet view reads: every namespace's Cluster XRs and
// the baseline EnvironmentConfigs, each from one shared informer that
// starts with the first viewer and runs until Close, so that a thousand
// viewers cost the API server two watches. Nothing is polled.
type Fleet struct {
	dyn   dynamic.Interface
	epoch string
	log   *slog.Logger
	// now tells the access cache the time.
	now func() time.Time

	once     sync.Once
	stop     chan struct{}
	clusters cache.SharedIndexInformer
	configs  cache.SharedIndexInformer

	mu      sync.Mutex
	version uint64
	changed chan struct{}
	closed  bool
	access  map[[sha256.Size]byte]accessAnswer
}

// accessAnswer is an access review's answer and when it expires.
type accessAnswer struct {
	allowed bool
	expires time.Time
}

// NewFleet returns the fleet view's source, reading through dyn with the
// portal's own identity; epoch tells its event IDs from another process's.
func NewFleet(dyn dynamic.Interface, epoch string, log *slog.Logger) *Fleet {
	return &Fleet{dyn: dyn, epoch: epoch, log: log, now: time.Now, stop: make(chan struct{}), changed: make(chan struct{})}
}

// start starts the informers, once.
func (f *Fleet) start() {
	f.once.Do(func() {
		f.clusters = newInformer(f.dyn, clusterGVR, "", "", slimCluster)
		f.configs = newInformer(f.dyn, envConfigGVR, "", BaselineSelector, slimConfig)
		for _, inf := range []cache.SharedIndexInformer{f.clusters, f.configs} {
			_, _ = inf.AddEventHandler(handler(func(*unstructured.Unstructured) { f.touch() })) // before Run, so it cannot fail
			go inf.Run(f.stop)
		}
	})
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

// synced starts the informers and waits until both have listed.
func (f *Fleet) synced(ctx context.Context) error {
	f.start()
	if !cache.WaitForCacheSync(ctx.Done(), f.clusters.HasSynced, f.configs.HasSynced) {
		return fmt.Errorf("cannot list the Clusters and the baseline EnvironmentConfigs: %w", context.Cause(ctx))
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

// visible reviews, per namespace that holds Clusters, whether u may list
// Clusters there.
func (f *Fleet) visible(ctx context.Context, authz Authorizer, u *User, clusters []*unstructured.Unstructured) (map[string]bool, error) {
	out := map[string]bool{}
	for _, c := range clusters {
		ns := c.GetNamespace()
		if _, ok := out[ns]; ok {
			continue
		}
		ok, err := f.allowed(ctx, authz, u, Access{Namespace: ns, Verb: "list", Group: clusterGVR.Group, Resource: clusterGVR.Resource})
		if err != nil {
			return nil, err
		}
		out[ns] = ok
	}
	return out, nil
}

// state is what the informers hold: the Clusters, in namespace/name
// order, and the baseline EnvironmentConfigs, in name order.
func (f *Fleet) state() ([]*unstructured.Unstructured, []*unstructured.Unstructured) {
	return sortedObjects(f.clusters), sortedObjects(f.configs)
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

// slimCluster keeps of a Cluster what the fleet view shows: its name,
// namespace, cloud and wave labels, the version its XR pins
// (spec.parameters.version: a pinned Cluster is out of the rollout),
// status.upgrade, status.charts (the chart versions its releases run),
// its pools' names, versions and readiness, and its conditions.
func slimCluster(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := slimmed(u, []string{"spec", "parameters", "version"}, []string{"status", "upgrade"}, []string{"status", "charts"}, []string{"status", "conditions"})
	labels := map[string]string{}
	for _, k := range []string{rollout.Label, rollout.LabelCloud} {
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
	return out, nil
}

// slimConfig keeps of an EnvironmentConfig its name, labels and data:
// the fleet view reads its Cluster keys as the function does
// (cluster.BaselineOf), the version, the chart catalog and the rollout
// keys among them.
func slimConfig(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := slimmed(u, []string{"data"})
	out.SetLabels(u.GetLabels())
	return out, nil
}

// baseline is what the fleet view reads of the environment.
type baseline struct {
	// Target is what the environment asks every Cluster that pins
	// nothing to run (cluster.Settings.RolloutTarget): the Kubernetes
	// minor and the chart catalog's versions.
	Target rollout.Target
	// Settings are its rollout keys.
	Settings rollout.Settings
	// Sources are the EnvironmentConfigs read, in order.
	Sources []string
	// Problems are what is wrong with the rollout keys: a view with
	// problems shows no waves.
	Problems []string
}

// baselineOf reads the baseline EnvironmentConfigs as preview --fleet
// does: merged in name order as the function merges its baseline layer
// (xpsim.MergeEnvironment), the platform's configs alone
// (envcfg.Selector), their Cluster keys decoded by cluster.BaselineOf.
func baselineOf(configs []*unstructured.Unstructured) baseline {
	var b baseline
	objs := make([]xpsim.Object, 0, len(configs))
	for _, c := range configs {
		if c.GetLabels()[envcfg.SelectorLabel] != envcfg.SelectorValue || c.GetLabels()[envcfg.LabelBaseline] != envcfg.BaselineValue {
			continue
		}
		b.Sources = append(b.Sources, c.GetName())
		objs = append(objs, c.Object)
	}
	if len(objs) == 0 {
		return b
	}
	env, _ := xpsim.MergeEnvironment(objs, "", "", map[string]string{envcfg.SelectorLabel: envcfg.SelectorValue})[envcfg.ContextKey].(map[string]any)
	// The function reads the environment as Crossplane hands it over, a
	// protobuf Struct, whose numbers are float64; the API server's are
	// int64 here.
	pb, err := structpb.NewStruct(env)
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("cannot read the baseline EnvironmentConfigs: %v", err))
		return b
	}
	s, errs := cluster.BaselineOf(pb.AsMap())
	b.Target = s.RolloutTarget()
	for _, e := range errs {
		b.Problems = append(b.Problems, e.Error())
	}
	if len(b.Problems) == 0 {
		b.Settings = s.Rollout
	}
	return b
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
