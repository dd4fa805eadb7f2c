package fleet

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	ktesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// t0 is when the test fleet's Clusters turned Ready.
var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// rulingNS is where the test baseline's rulings live.
const rulingNS = rollout.DefaultNamespace

// baseline is a baseline EnvironmentConfig asking for Kubernetes 1.34 in
// waves, the first (canary, of namespace team-a) soaking for soak.
func baseline(soak string, waves ...string) *unstructured.Unstructured {
	ws := []any{map[string]any{"name": "canary", "namespaces": []any{"team-a"}, "soak": soak}}
	for _, w := range waves {
		ws = append(ws, map[string]any{"name": w})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": envcfg.APIVersion, "kind": envcfg.Kind,
		"metadata": map[string]any{"name": "cluster-platform-baseline", "labels": map[string]any{
			envcfg.SelectorLabel: envcfg.SelectorValue, envcfg.LabelBaseline: envcfg.BaselineValue,
		}},
		"data": map[string]any{"version": "1.34", "rollout": map[string]any{"waves": ws}},
	}}
}

// member is a Cluster (kind Cluster, or XCluster of a claim in ns) of wave
// that runs and has adopted runs, Ready since t0, and reports target 1.34
// in status.rollout (none when gated is false).
func member(kind, ns, name, wave, runs string, gated bool) *unstructured.Unstructured {
	meta := map[string]any{
		"name": name, "generation": int64(1),
		"labels":        map[string]any{rollout.LabelCloud: "gcp"},
		"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1000)},
		"managedFields": []any{map[string]any{"manager": "crossplane", "fieldsV1": map[string]any{"f:status": map[string]any{}}}},
	}
	labels := meta["labels"].(map[string]any)
	if wave != "" {
		labels[rollout.Label] = wave
	}
	apiVersion := xr.ClusterAPIVersion
	if kind == xr.LegacyClusterKind {
		apiVersion = xr.LegacyClusterAPIVersion
		labels[rollout.LabelClaimNamespace] = ns
	} else {
		meta["namespace"] = ns
	}
	cond := func(typ string) any {
		return map[string]any{"type": typ, "status": "True", "reason": "Available", "observedGeneration": int64(1), "lastTransitionTime": t0.Format(time.RFC3339)}
	}
	status := map[string]any{
		"upgrade":    map[string]any{"controlPlane": runs, "target": runs},
		"conditions": []any{cond("Ready"), cond("Synced")},
	}
	if gated {
		status["rollout"] = map[string]any{"wave": wave, "target": "1.34", "verdict": "Hold"}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind, "metadata": meta,
		"spec":   map[string]any{"parameters": map[string]any{"location": "europe-west1"}, "crossplane": map[string]any{"resourceRefs": []any{}}},
		"status": status,
	}}
}

// configMap is a ConfigMap of the ruling namespace.
func configMap(name string, labels, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": rulingNS, "labels": labels},
		"data":     data,
	}}
}

// fleet is the test fleet: canary team-a/c1 and team-a/c2, production
// team-b/p1 and the XCluster x1 of a claim in team-c, all on 1.33 and
// gated on 1.34; team-b/old, which reports no rollout; and a ConfigMap of
// someone else's in the ruling namespace.
func fleet() []runtime.Object {
	return []runtime.Object{
		baseline("", "production"),
		member(xr.ClusterKind, "team-a", "c1", "canary", "1.33", true),
		member(xr.ClusterKind, "team-a", "c2", "canary", "1.33", true),
		member(xr.ClusterKind, "team-b", "p1", "production", "1.33", true),
		member(xr.LegacyClusterKind, "team-c", "x1", "", "1.33", true),
		member(xr.ClusterKind, "team-b", "old", "", "1.33", false),
		configMap("portal-policy-team-a", nil, map[string]any{"policy.yaml": "{}"}),
	}
}

// A fake is a fake API server whose watches miss nothing: client-go's
// fake sends a watch only the changes made once it started, and an
// informer starts its watch after its list, so a watch of the fake starts
// with every object the watch selects, as Added, and says it started.
type fake struct {
	*dynamicfake.FakeDynamicClient
	mu      sync.Mutex
	watched map[string]bool
}

// newFake is a fake API server holding objs, serving XClusters (and the
// other legacy XRs, and their claims) when xclusters is set.
func newFake(xclusters bool, objs ...runtime.Object) *fake {
	kinds := map[schema.GroupVersionResource]string{
		ClusterResource: "ClusterList", EnvironmentConfigResource: "EnvironmentConfigList", ConfigMapResource: "ConfigMapList",
		CompositionRevisionResource: "CompositionRevisionList",
	}
	for _, k := range slices.Concat(ReleaseKinds, ClaimKinds) {
		if (k.Namespaced && k.Claims == "") || xclusters {
			kinds[k.Resource] = k.Kind + "List"
		}
	}
	f := &fake{FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...), watched: map[string]bool{}}
	f.PrependWatchReactor("*", func(a ktesting.Action) (bool, watch.Interface, error) {
		gvr, ns := a.GetResource(), a.GetNamespace()
		w, err := f.Tracker().Watch(gvr, ns)
		if err != nil {
			return true, nil, err
		}
		l, err := f.Tracker().List(gvr, gvr.GroupVersion().WithKind(strings.TrimSuffix(kinds[gvr], "List")), ns)
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return true, nil, err
		}
		selector := a.(ktesting.WatchAction).GetWatchRestrictions().Labels
		for _, o := range items {
			if u, ok := o.(*unstructured.Unstructured); ok && (selector == nil || selector.Matches(labels.Set(u.GetLabels()))) {
				w.(*watch.RaceFreeFakeWatcher).Add(u)
			}
		}
		f.mu.Lock()
		f.watched[gvr.String()+"/"+ns] = true
		f.mu.Unlock()
		return true, w, nil
	})
	return f
}

// watching reports whether a watch of resource gvr in namespace ns has
// started.
func (f *fake) watching(gvr schema.GroupVersionResource, ns string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watched[gvr.String()+"/"+ns]
}

// A write is what a pass asked of the API server: the verb and the
// ConfigMap's name.
type write struct {
	Verb, Name string
}

// writes are the writes to ConfigMaps among actions.
func writes(actions []ktesting.Action) []write {
	var out []write
	for _, a := range actions {
		if a.GetResource() != ConfigMapResource {
			continue
		}
		switch a.GetVerb() {
		case "create", "update":
			out = append(out, write{a.GetVerb(), a.(ktesting.CreateAction).GetObject().(*unstructured.Unstructured).GetName()})
		case "delete":
			out = append(out, write{"delete", a.(ktesting.DeleteAction).GetName()})
		}
	}
	return out
}

// verdicts are the verdicts of the ruling ConfigMaps the fake holds, by
// name.
func verdicts(t *testing.T, dyn *fake) map[string]string {
	t.Helper()
	l, err := dyn.Resource(ConfigMapResource).Namespace(rulingNS).List(context.Background(), metav1.ListOptions{LabelSelector: RulingSelector})
	if err != nil {
		t.Fatalf("cannot list the ConfigMaps: %v", err)
	}
	out := map[string]string{}
	for _, cm := range l.Items {
		v, _, _ := unstructured.NestedString(cm.Object, "data", "verdict")
		out[cm.GetName()] = v
	}
	return out
}

// eventually polls ok for up to five seconds.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("cannot see %s within 5s", what)
		}
	}
}

// settled reports whether every informer of c has listed, watches, and
// holds what the fake holds.
func settled(c *Controller, dyn *fake) bool {
	check := func(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, ns, selector string, slim cache.TransformFunc) bool {
		if !inf.HasSynced() || !dyn.watching(gvr, ns) {
			return false
		}
		l, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false
		}
		want := map[string]any{}
		for i := range l.Items {
			o, _ := slim(&l.Items[i])
			want[l.Items[i].GetNamespace()+"/"+l.Items[i].GetName()] = o.(*unstructured.Unstructured).Object
		}
		got := map[string]any{}
		for _, u := range objectsOf(inf) {
			got[u.GetNamespace()+"/"+u.GetName()] = u.Object
		}
		return cmp.Equal(want, got)
	}
	ok := check(c.configs, EnvironmentConfigResource, "", EnvironmentSelector, SlimConfig)
	if c.revisions != nil {
		ok = ok && check(c.revisions, CompositionRevisionResource, "", RevisionSelector, SlimRevision)
	}
	for i, k := range c.kinds {
		ok = ok && check(c.xrs[i], k.Resource, "", "", SlimXR(k))
	}
	for i, k := range c.claimKinds {
		ok = ok && check(c.claims[i], k.Resource, "", "", SlimClaim(k))
	}
	return ok && c.rulings != nil && check(c.rulings, ConfigMapResource, rulingNS, RulingSelector, slimConfigMap)
}

// passOnce runs one pass once the informers hold what the fake holds (the
// first one also starts the ConfigMaps' informer), and returns the writes
// it made.
func passOnce(t *testing.T, ctx context.Context, c *Controller, dyn *fake) []write {
	t.Helper()
	if c.rulings == nil {
		eventually(t, "the fleet's informers synced", c.synced)
		c.pass(ctx)
	}
	eventually(t, "the informers hold what the API server holds", func() bool { return settled(c, dyn) })
	mark := len(dyn.Actions())
	c.pass(ctx)
	return writes(dyn.Actions()[mark:])
}

func TestControllerPass(t *testing.T) {
	c1, c2, p1, x1 := "cluster.team-a.c1", "cluster.team-a.c2", "cluster.team-b.p1", "xcluster.x1"
	all := map[string]string{c1: "Adopt", c2: "Adopt", p1: "Hold", x1: "Hold"}
	created := []write{{"create", c1}, {"create", c2}, {"create", p1}, {"create", x1}}
	update := func(obj *unstructured.Unstructured) func(*testing.T, *fake) {
		return func(t *testing.T, dyn *fake) {
			t.Helper()
			gvr := map[string]schema.GroupVersionResource{
				xr.ClusterKind: ClusterResource, xr.LegacyClusterKind: XClusterResource, envcfg.Kind: EnvironmentConfigResource, "ConfigMap": ConfigMapResource,
			}[obj.GetKind()]
			if _, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("cannot update %s: %v", obj.GetName(), err)
			}
		}
	}
	deleteP1 := func(t *testing.T, dyn *fake) {
		t.Helper()
		if err := dyn.Resource(ClusterResource).Namespace("team-b").Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("cannot delete p1: %v", err)
		}
	}
	type args struct {
		notLeader  bool
		noXCluster bool
		listFails  bool
		// then changes the fleet after the first pass.
		then []func(*testing.T, *fake)
	}
	type want struct {
		// first are the first pass's writes, then the second's.
		first, then []write
		// verdicts are the ruling ConfigMaps' verdicts at the end.
		verdicts map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"GatedClustersGetTheirConfigMaps": {
			reason: "Every Cluster that reports a target it is gated on gets a ConfigMap with its verdict; a Cluster without status.rollout gets none, and a second pass with nothing changed writes nothing.",
			want:   want{first: created, verdicts: all},
		},
		"OneVerdictChanges": {
			reason: "A canary Cluster that runs the target now keeps it (Keep): only its ConfigMap is rewritten, since production still waits for c1.",
			args:   args{then: []func(*testing.T, *fake){update(member(xr.ClusterKind, "team-a", "c2", "canary", "1.34", true))}},
			want:   want{first: created, then: []write{{"update", c2}}, verdicts: map[string]string{c1: "Adopt", c2: "Keep", p1: "Hold", x1: "Hold"}},
		},
		"EarlierWaveDone": {
			reason: "Once every canary runs the target Ready, both later Clusters adopt it: their ConfigMaps are rewritten with the canaries'.",
			args: args{then: []func(*testing.T, *fake){
				update(member(xr.ClusterKind, "team-a", "c1", "canary", "1.34", true)),
				update(member(xr.ClusterKind, "team-a", "c2", "canary", "1.34", true)),
			}},
			want: want{first: created, then: []write{{"update", c1}, {"update", c2}, {"update", p1}, {"update", x1}}, verdicts: map[string]string{c1: "Keep", c2: "Keep", p1: "Adopt", x1: "Adopt"}},
		},
		"ClusterDeleted": {
			reason: "The ConfigMap of a Cluster that is gone is deleted; no other is touched, someone else's ConfigMap least of all.",
			args:   args{then: []func(*testing.T, *fake){deleteP1}},
			want:   want{first: created, then: []write{{"delete", p1}}, verdicts: map[string]string{c1: "Adopt", c2: "Adopt", x1: "Hold"}},
		},
		"ConfigMapEditedByHand": {
			reason: "A ruling edited by hand is written back: the controller, not an editor, rules.",
			args: args{then: []func(*testing.T, *fake){update(configMap(p1, map[string]any{rollout.LabelRuling: "true"}, map[string]any{
				"cluster": "Cluster team-b/p1", "wave": "production", "target": "1.34", "verdict": "Adopt", "message": "forged",
			}))}},
			want: want{first: created, then: []write{{"update", p1}}, verdicts: all},
		},
		"BadRolloutKey": {
			reason: "A baseline whose rollout keys are wrong rules on nothing: nothing is written or deleted, though a Cluster is gone, so every gated Cluster keeps holding.",
			args: args{then: []func(*testing.T, *fake){
				update(baseline("", "canary")), // a duplicate wave name
				deleteP1,
			}},
			want: want{first: created, verdicts: all},
		},
		"NotSynced": {
			reason: "Until every informer has listed, nothing is written: the Clusters cannot be listed here.",
			args:   args{listFails: true},
			want:   want{verdicts: map[string]string{}},
		},
		"NotLeader": {
			reason: "A controller that does not lead writes nothing.",
			args:   args{notLeader: true, then: []func(*testing.T, *fake){deleteP1}},
			want:   want{verdicts: map[string]string{}},
		},
		"XClustersNotServed": {
			reason: "Without the XCluster resource the fleet is its Clusters: they are ruled on all the same.",
			args:   args{noXCluster: true},
			want:   want{first: created[:3], verdicts: map[string]string{c1: "Adopt", c2: "Adopt", p1: "Hold"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			objs := fleet()
			if tc.args.noXCluster {
				objs = slices.DeleteFunc(objs, func(o runtime.Object) bool { return o.(*unstructured.Unstructured).GetKind() == xr.LegacyClusterKind })
			}
			dyn := newFake(!tc.args.noXCluster, objs...)
			if tc.args.listFails {
				dyn.PrependReactor("list", "clusters", func(ktesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("forbidden")
				})
			}
			c := New(dyn, Options{XClusters: !tc.args.noXCluster, Clock: clocktesting.NewFakeClock(t0.Add(time.Hour))})
			c.Lead(!tc.args.notLeader)
			c.start(ctx)

			var first, then []write
			if tc.args.listFails || tc.args.notLeader {
				// Nothing becomes of the passes: run a few, as events would.
				time.Sleep(100 * time.Millisecond)
				mark := len(dyn.Actions())
				for range 3 {
					c.pass(ctx)
				}
				first = writes(dyn.Actions()[mark:])
				for _, f := range tc.args.then {
					f(t, dyn)
				}
				time.Sleep(100 * time.Millisecond)
				mark = len(dyn.Actions())
				c.pass(ctx)
				then = writes(dyn.Actions()[mark:])
			} else {
				first = passOnce(t, ctx, c, dyn)
				for _, f := range tc.args.then {
					f(t, dyn)
				}
				then = passOnce(t, ctx, c, dyn)
			}
			got := want{first: first, then: then, verdicts: verdicts(t, dyn)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\npasses: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestControllerSoak runs the controller's own loop on a fake clock: a
// production Cluster holds while the canary wave soaks, and the pass the
// controller runs at the soak's end, with nothing else changed, moves it.
func TestControllerSoak(t *testing.T) {
	type want struct {
		before, after map[string]string
		until         string
	}
	cases := map[string]struct {
		reason string
		soak   string
		want   want
	}{
		"SoakEnds": {
			reason: "The canaries turned Ready at t0 and soak an hour: production holds until t0+1h, and adopts at t0+1h.",
			soak:   "1h",
			want: want{
				before: map[string]string{"cluster.team-a.c1": "Keep", "cluster.team-b.p1": "Hold"},
				after:  map[string]string{"cluster.team-a.c1": "Keep", "cluster.team-b.p1": "Adopt"},
				until:  t0.Add(time.Hour).Format(time.RFC3339),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dyn := newFake(false,
				baseline(tc.soak, "production"),
				member(xr.ClusterKind, "team-a", "c1", "canary", "1.34", true),
				member(xr.ClusterKind, "team-b", "p1", "production", "1.33", true),
			)
			clk := clocktesting.NewFakeClock(t0.Add(10 * time.Minute))
			c := New(dyn, Options{Clock: clk, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
			c.Lead(true)
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.Run(ctx)
			}()
			// Drive the loop past its interval waits until production's
			// ruling is written and read back, and nothing is pending but
			// the soak's timer: no notice, one waiter on the clock, for a
			// while.
			var until string
			quiet := 0
			eventually(t, "production's ruling, and the loop idle", func() bool {
				if _, ok := verdicts(t, dyn)["cluster.team-b.p1"]; !ok || clk.Waiters() != 1 || len(c.kick) > 0 || !settled(c, dyn) {
					quiet = 0
					if clk.HasWaiters() {
						clk.Step(time.Second)
					}
					return false
				}
				quiet++
				return quiet > 5
			})
			cm, err := dyn.Resource(ConfigMapResource).Namespace(rulingNS).Get(ctx, "cluster.team-b.p1", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("cannot get production's ruling: %v", err)
			}
			until, _, _ = unstructured.NestedString(cm.Object, "data", "until")
			before := verdicts(t, dyn)
			// Only the soak's timer can run the next pass.
			clk.SetTime(t0.Add(time.Hour))
			eventually(t, "production adopting", func() bool { return verdicts(t, dyn)["cluster.team-b.p1"] == "Adopt" })
			got := want{before: before, after: verdicts(t, dyn), until: until}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nrulings: -want, +got:\n%s", tc.reason, diff)
			}
			cancel()
			<-done
		})
	}
}

// testWriter writes a log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// TestSlimCluster checks that a slimmed Cluster is decided as the whole
// one is: the informers keep what the decision reads.
func TestSlimCluster(t *testing.T) {
	deleting := member(xr.ClusterKind, "team-b", "gone", "production", "1.34", true)
	deleting.SetDeletionTimestamp(&metav1.Time{Time: t0})
	pinned := member(xr.ClusterKind, "team-b", "pinned", "production", "1.33", true)
	_ = unstructured.SetNestedField(pinned.Object, "1.33", "spec", "parameters", "version")
	cases := map[string]struct {
		reason string
		fleet  []*unstructured.Unstructured
	}{
		"Fleet": {
			reason: "Canaries, production, an XCluster of a claim, a Cluster without a rollout, one being deleted and one pinned are ruled on alike.",
			fleet: []*unstructured.Unstructured{
				member(xr.ClusterKind, "team-a", "c1", "canary", "1.34", true),
				member(xr.ClusterKind, "team-a", "c2", "canary", "1.33", true),
				member(xr.ClusterKind, "team-b", "p1", "production", "1.33", true),
				member(xr.LegacyClusterKind, "team-c", "x1", "", "1.33", true),
				member(xr.ClusterKind, "team-b", "old", "", "1.33", false),
				deleting, pinned,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var whole, slim []map[string]any
			for _, u := range tc.fleet {
				whole = append(whole, u.Object)
				s, _ := slimCluster(u.GetAPIVersion(), u.GetKind())(u)
				su := s.(*unstructured.Unstructured)
				if su.GetManagedFields() != nil || su.GetAnnotations() != nil {
					t.Errorf("%s\nslimCluster(%s) kept managedFields or annotations", tc.reason, u.GetName())
				}
				slim = append(slim, su.Object)
			}
			b := BaselineOf([]map[string]any{baseline("1h", "production").Object})
			want, err := Rule(b, whole, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Rule(b, slim, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nRule(slimmed): -whole, +slimmed:\n%s", tc.reason, diff)
			}
			if len(want) != 4 {
				t.Errorf("%s\nRule ruled on %d Clusters, want the 4 gated ones", tc.reason, len(want))
			}
		})
	}
}

// TestConfigMaps checks what fleet rule prints: the ConfigMaps in name
// order, objects that are no Cluster ignored.
func TestConfigMaps(t *testing.T) {
	type want struct {
		names []string
		ns    string
		err   bool
	}
	cases := map[string]struct {
		reason  string
		configs []map[string]any
		objects []map[string]any
		want    want
	}{
		"Fleet": {
			reason:  "Each gated Cluster of either kind gets its ConfigMap, in name order; the claim and the ConfigMap among the objects are ignored.",
			configs: []map[string]any{baseline("", "production").Object},
			objects: []map[string]any{
				member(xr.ClusterKind, "team-b", "p1", "production", "1.33", true).Object,
				member(xr.LegacyClusterKind, "team-c", "x1", "", "1.33", true).Object,
				member(xr.ClusterKind, "team-a", "c1", "canary", "1.33", true).Object,
				{"apiVersion": xr.LegacyClusterAPIVersion, "kind": "Cluster", "metadata": map[string]any{"name": "claim", "namespace": "team-c"}},
				configMap("other", nil, nil).Object,
			},
			want: want{names: []string{"cluster.team-a.c1", "cluster.team-b.p1", "xcluster.x1"}, ns: rulingNS},
		},
		"OwnNamespace": {
			reason: "The ConfigMaps go to the baseline's rollout.namespace.",
			configs: func() []map[string]any {
				b := baseline("", "production")
				_ = unstructured.SetNestedField(b.Object, "platform-rollout", "data", "rollout", "namespace")
				return []map[string]any{b.Object}
			}(),
			objects: []map[string]any{member(xr.ClusterKind, "team-a", "c1", "canary", "1.33", true).Object},
			want:    want{names: []string{"cluster.team-a.c1"}, ns: "platform-rollout"},
		},
		"BadRolloutKey": {
			reason:  "A baseline whose rollout keys are wrong is refused.",
			configs: []map[string]any{baseline("soon", "production").Object},
			objects: []map[string]any{member(xr.ClusterKind, "team-a", "c1", "canary", "1.33", true).Object},
			want:    want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cms, err := ConfigMaps(tc.configs, tc.objects, t0)
			got := want{err: err != nil}
			for _, cm := range cms {
				u := unstructured.Unstructured{Object: cm}
				got.names = append(got.names, u.GetName())
				got.ns = u.GetNamespace()
				if _, rerr := rollout.ReadRuling(cm); rerr != nil {
					t.Errorf("%s\ncannot read the ruling %s back: %v", tc.reason, u.GetName(), rerr)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nConfigMaps(...): -want, +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
		})
	}
}
