package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	ktesting "k8s.io/client-go/testing"
)

func TestServed(t *testing.T) {
	type want struct {
		served bool
		err    bool
	}
	cases := map[string]struct {
		reason    string
		status    int
		resources []string
		want      want
	}{
		"Served": {
			reason:    "The legacy group version lists xclusters.",
			status:    http.StatusOK,
			resources: []string{"xclusters", "xclusters/status", "clusters"},
			want:      want{served: true},
		},
		"NoGroupVersion": {
			reason: "A control plane without the legacy CRDs serves no such group version: no XClusters, no error.",
			status: http.StatusNotFound,
			want:   want{},
		},
		"NoResource": {
			reason:    "The group version serves other kinds only.",
			status:    http.StatusOK,
			resources: []string{"xdatabases"},
			want:      want{},
		},
		"Error": {
			reason: "An API server that fails is an error, not an answer: the caller asks again.",
			status: http.StatusInternalServerError,
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/apis/legacy.platform.example.org/v1alpha1" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				l := metav1.APIResourceList{GroupVersion: "legacy.platform.example.org/v1alpha1"}
				for _, res := range tc.resources {
					l.APIResources = append(l.APIResources, metav1.APIResource{Name: res})
				}
				_ = json.NewEncoder(w).Encode(l)
			}))
			defer srv.Close()
			served, err := Served(context.Background(), &rest.Config{Host: srv.URL}, XClusterResource)
			got := want{served: served, err: err != nil}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nServed(...): -want, +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
		})
	}
}

// leaseNS is the namespace of the tests' Lease.
const leaseNS = "crossplane-system"

// leases is an API server's Leases: client-go's dynamic fake, which keeps
// no resourceVersion, made to keep and check them as the API server does,
// so that a write made from an old read conflicts.
type leases struct {
	*dynamicfake.FakeDynamicClient
	// fail makes every write fail, as an API server out of reach.
	fail atomic.Bool
}

// newLeases returns the fake holding objs, whose resourceVersion is "1".
func newLeases(objs ...runtime.Object) *leases {
	l := &leases{FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{LeaseResource: "LeaseList"}, objs...)}
	rv := 1 // the fake runs one reactor at a time
	write := func(a ktesting.Action) (bool, runtime.Object, error) {
		if l.fail.Load() {
			return true, nil, kerrors.NewInternalError(errors.New("the API server is out of reach"))
		}
		u := a.(interface{ GetObject() runtime.Object }).GetObject().(*unstructured.Unstructured).DeepCopy()
		if a.GetVerb() == "update" {
			cur, err := l.Tracker().Get(LeaseResource, a.GetNamespace(), u.GetName())
			if err != nil {
				return true, nil, err
			}
			if cur.(*unstructured.Unstructured).GetResourceVersion() != u.GetResourceVersion() {
				return true, nil, kerrors.NewConflict(LeaseResource.GroupResource(), u.GetName(), errors.New("the object has been modified"))
			}
		}
		rv++
		u.SetResourceVersion(strconv.Itoa(rv))
		var err error
		if a.GetVerb() == "create" {
			err = l.Tracker().Create(LeaseResource, u, a.GetNamespace())
		} else {
			err = l.Tracker().Update(LeaseResource, u, a.GetNamespace())
		}
		if err != nil {
			return true, nil, err
		}
		return true, u, nil
	}
	l.PrependReactor("create", "leases", write)
	l.PrependReactor("update", "leases", write)
	return l
}

// lease is the tests' Lease, its holder and leaseTransitions as given, last
// renewed at renewed for seconds.
func lease(holder string, renewed time.Time, seconds, transitions int64) *unstructured.Unstructured {
	at := renewed.UTC().Format(metav1.RFC3339Micro)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"namespace": leaseNS, "name": DefaultLeaseName, "resourceVersion": "1"},
		"spec": map[string]any{
			"holderIdentity": holder, "leaseDurationSeconds": seconds, "leaseTransitions": transitions,
			"acquireTime": at, "renewTime": at,
		},
	}}
}

// leaseState is what the tests read of the Lease: its holder and its
// transitions, or absent.
type leaseState struct {
	Holder      string
	Transitions int64
	Absent      bool
}

// stateOf reads the Lease of l.
func stateOf(t *testing.T, l *leases) leaseState {
	t.Helper()
	u, err := l.Resource(LeaseResource).Namespace(leaseNS).Get(context.Background(), DefaultLeaseName, metav1.GetOptions{})
	if kerrors.IsNotFound(err) {
		return leaseState{Absent: true}
	}
	if err != nil {
		t.Fatalf("cannot read the lease: %v", err)
	}
	holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	transitions, _ := number(u, "leaseTransitions")
	return leaseState{Holder: holder, Transitions: transitions}
}

// steal gives the Lease of l to other, as another controller that takes
// it would: from a read, again if the write conflicts.
func steal(t *testing.T, l *leases, other string) {
	t.Helper()
	for {
		u, err := l.Resource(LeaseResource).Namespace(leaseNS).Get(context.Background(), DefaultLeaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("cannot read the lease: %v", err)
		}
		_ = unstructured.SetNestedField(u.Object, other, "spec", "holderIdentity")
		_ = unstructured.SetNestedField(u.Object, time.Now().UTC().Format(metav1.RFC3339Micro), "spec", "renewTime")
		_ = unstructured.SetNestedField(u.Object, int64(3600), "spec", "leaseDurationSeconds")
		_, err = l.Resource(LeaseResource).Namespace(leaseNS).Update(context.Background(), u, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !kerrors.IsConflict(err) {
			t.Fatalf("cannot steal the lease: %v", err)
		}
	}
}

// TestRunElected runs the controller under leader election against a fake
// API server's Lease: only the holder of the Lease writes.
func TestRunElected(t *testing.T) {
	type want struct {
		// wrote is whether it wrote the fleet's rulings; lost whether
		// RunElected said it lost the lease; lease the Lease once
		// RunElected returned.
		wrote, lost bool
		lease       leaseState
	}
	cases := map[string]struct {
		reason string
		leases []runtime.Object
		// then happens once the controller wrote, or after a second:
		// "cancel" ends its context, "steal" gives the Lease to
		// another controller, "fail" makes every write of the Lease
		// fail.
		then string
		want want
	}{
		"FreeLease": {
			reason: "With no Lease, the controller creates it and writes; it gives the Lease up when its context ends, clearing its holder.",
			then:   "cancel",
			want:   want{wrote: true, lease: leaseState{}},
		},
		"Released": {
			reason: "A Lease its holder gave up is taken at once, one more transition.",
			leases: []runtime.Object{lease("", time.Now(), 1, 3)},
			then:   "cancel",
			want:   want{wrote: true, lease: leaseState{Transitions: 4}},
		},
		"HeldByAnother": {
			reason: "While another controller holds the Lease, this one writes nothing, and leaves the Lease alone when its context ends.",
			leases: []runtime.Object{lease("other", time.Now(), 3600, 0)},
			then:   "cancel",
			want:   want{lease: leaseState{Holder: "other"}},
		},
		"Expired": {
			reason: "A Lease its holder did not renew for leaseDurationSeconds is taken over.",
			leases: []runtime.Object{lease("other", time.Now().Add(-time.Hour), 15, 2)},
			then:   "cancel",
			want:   want{wrote: true, lease: leaseState{Transitions: 3}},
		},
		"Lost": {
			reason: "A controller whose Lease another takes stops, and says so, leaving the Lease to the other.",
			then:   "steal",
			want:   want{wrote: true, lost: true, lease: leaseState{Holder: "other", Transitions: 0}},
		},
		"RenewFails": {
			reason: "A controller that cannot renew its Lease within the renew deadline stops, and says so; the Lease expires.",
			then:   "fail",
			want:   want{wrote: true, lost: true, lease: leaseState{Holder: "me"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l := newLeases(tc.leases...)
			dyn := newFake(false, fleet()...)
			c := New(dyn, Options{Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
			errc := make(chan error, 1)
			go func() {
				errc <- c.RunElected(ctx, Election{
					Leases: l, Namespace: leaseNS, Identity: "me",
					LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
				})
			}()
			got := want{}
			wrote := func() bool { return len(verdicts(t, dyn)) == 3 }
			if tc.want.wrote {
				eventually(t, "the rulings written", wrote)
			} else {
				time.Sleep(time.Second)
			}
			got.wrote = wrote()
			switch tc.then {
			case "cancel":
				cancel()
			case "steal":
				steal(t, l, "other")
			case "fail":
				l.fail.Store(true)
			}
			select {
			case err := <-errc:
				got.lost = err != nil
				if err != nil && !strings.HasPrefix(err.Error(), "cannot keep the lease") {
					t.Errorf("%s\nRunElected(...): error %q, want one that says it cannot keep the lease", tc.reason, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s\nRunElected did not return within 5s", tc.reason)
			}
			l.fail.Store(false)
			got.lease = stateOf(t, l)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRunElected(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestElectionOneLeader runs candidates for one Lease, as RunElected
// does: one leads at a time, and another takes over at once when the
// leader gives the Lease up.
func TestElectionOneLeader(t *testing.T) {
	l := newLeases()
	var mu sync.Mutex
	leading, most := map[int]bool{}, 0
	leaders := func() []int {
		mu.Lock()
		defer mu.Unlock()
		var out []int
		for i, ok := range leading {
			if ok {
				out = append(out, i)
			}
		}
		return out
	}
	const n = 3
	cancels := make([]context.CancelFunc, n)
	var wg sync.WaitGroup
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		c := New(newFake(false), Options{Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
		el, err := c.elector(Election{
			Leases: l, Namespace: leaseNS, Identity: "candidate-" + strconv.Itoa(i),
			LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		lead := func(ok bool) {
			mu.Lock()
			defer mu.Unlock()
			leading[i] = ok
			now := 0
			for _, ok := range leading {
				if ok {
					now++
				}
			}
			most = max(most, now)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			led, err := el.run(ctx, lead)
			lead(false)
			if err != nil {
				t.Errorf("candidate %d: %v", i, err)
			}
			if led {
				if err := el.release(context.Background()); err != nil {
					t.Errorf("candidate %d: %v", i, err)
				}
			}
		}()
	}
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
		wg.Wait()
	}()
	for round := range n {
		eventually(t, "a leader", func() bool { return len(leaders()) > 0 })
		time.Sleep(300 * time.Millisecond) // several renewals and attempts of the others
		got := leaders()
		if len(got) != 1 {
			t.Fatalf("round %d: leaders %v, want one", round, got)
		}
		cancels[got[0]]()
		eventually(t, "the leader stopped", func() bool { return !slices.Contains(leaders(), got[0]) })
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("at most %d candidates led at once, want 1", most)
	}
}

// TestElectionInvalid checks that an Election that cannot work is refused.
func TestElectionInvalid(t *testing.T) {
	cases := map[string]struct {
		reason string
		e      Election
		want   string
	}{
		"Defaults": {
			reason: "An Election that names its identity and namespace times itself with the defaults.",
			e:      Election{Namespace: leaseNS, Identity: "me"},
		},
		"NoIdentity": {
			reason: "Candidates without identities cannot tell whose the Lease is.",
			e:      Election{Namespace: leaseNS},
			want:   "cannot elect a leader: no identity",
		},
		"NoNamespace": {
			reason: "A Lease lives in a namespace.",
			e:      Election{Identity: "me"},
			want:   "cannot elect a leader: no namespace for the lease",
		},
		"DeadlinePastLease": {
			reason: "A leader that renews until after its Lease expired may lead along with the next.",
			e:      Election{Namespace: leaseNS, Identity: "me", LeaseDuration: 10 * time.Second},
			want:   "cannot elect a leader: the lease duration 10s is not longer than the renew deadline 10s",
		},
		"RetryPastDeadline": {
			reason: "A leader that retries less often than its deadline never renews twice.",
			e:      Election{Namespace: leaseNS, Identity: "me", RetryPeriod: 10 * time.Second},
			want:   "cannot elect a leader: the renew deadline 10s is not longer than the retry period 10s",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(newFake(false), Options{}).elector(tc.e)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nelector(...): -want error, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
