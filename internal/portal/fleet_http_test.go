package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

func TestFleetAccessCached(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))...)
	counting := &countingAuthz{Authorizer: w.srv.Authz}
	w.srv.Authz = counting
	for range 3 {
		if rec := w.do(t, http.MethodGet, "/api/v1/fleet", tokenAlice, ""); rec.Code != http.StatusOK {
			t.Fatalf("GET /api/v1/fleet: %d %s", rec.Code, rec.Body)
		}
	}
	// Three namespaces hold Clusters, and an XCluster has none: one
	// review each, remembered.
	if counting.n != 4 {
		t.Errorf("three views of three namespaces' Clusters and a cluster-scoped XCluster: want 4 access reviews (one per namespace, remembered), got %d", counting.n)
	}
}

// countingAuthz counts the access reviews it is asked for.
type countingAuthz struct {
	Authorizer
	n int
}

func (c *countingAuthz) Allowed(ctx context.Context, u *User, a Access) (bool, error) {
	c.n++
	want := Access{Namespace: a.Namespace, Verb: "list", Group: clusterGVR.Group, Resource: clusterGVR.Resource}
	if a.Namespace == "" {
		// An XCluster of no claim: whoever may list XClusters sees it.
		want.Group, want.Resource = xclusterGVR.Group, xclusterGVR.Resource
	}
	if a != want {
		return false, fmt.Errorf("the fleet view asked for %+v, want %+v", a, want)
	}
	return c.Authorizer.Allowed(ctx, u, a)
}

// TestFleetAttacks is the fleet view as a hostile tenant tries it: it
// must learn no other tenant's Cluster through the endpoint or the
// stream, and a label on its own Cluster cannot move it into a wave the
// environment keeps for another namespace.
func TestFleetAttacks(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))...)
	others := []string{"team-b", "stg-aks", "prod-aks", "sneaky", "canary-gke", "platform/", "ops-p4m8z"}

	t.Run("Endpoint", func(t *testing.T) {
		rec := w.do(t, http.MethodGet, "/api/v1/fleet", tokenAlice, "")
		for _, s := range others {
			if strings.Contains(rec.Body.String(), s) {
				t.Errorf("alice's fleet view names %q:\n%s", s, rec.Body)
			}
		}
	})
	t.Run("QueryIgnored", func(t *testing.T) {
		// No parameter widens the view: the namespaces are the access
		// reviews' decision alone.
		for _, q := range []string{"?namespace=team-b", "?namespace=*", "?all=true", "?user=pat"} {
			rec := w.do(t, http.MethodGet, "/api/v1/fleet"+q, tokenAlice, "")
			if strings.Contains(rec.Body.String(), "team-b") {
				t.Errorf("GET /api/v1/fleet%s as alice names team-b:\n%s", q, rec.Body)
			}
		}
	})
	t.Run("BogusPaths", func(t *testing.T) {
		for _, p := range []string{"/api/v1/fleet/team-b", "/api/v1/namespaces/team-b/fleet", "/api/v1/fleet/events/x", "/api/v1/fleet/../fleet?x"} {
			rec := w.do(t, http.MethodGet, p, tokenAlice, "")
			if strings.Contains(rec.Body.String(), "stg-aks") {
				t.Errorf("GET %s as alice names team-b's Cluster: %d %s", p, rec.Code, rec.Body)
			}
		}
	})
	t.Run("LabelCannotMoveWaves", func(t *testing.T) {
		rec := w.do(t, http.MethodGet, "/api/v1/fleet", tokenBob, "")
		var v FleetView
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		for _, wave := range v.Waves {
			for _, cl := range wave.Clouds {
				for _, c := range cl.Clusters {
					if c.Name == "sneaky" && (wave.Name != "production" || c.Label != "canary") {
						t.Errorf("team-b's Cluster labelled canary: want it in production (the environment admits only platform to canary), labelled canary; got wave %s, label %q", wave.Name, c.Label)
					}
				}
			}
		}
		if len(v.Waves) != 3 || len(v.Waves[0].Clouds) != 0 {
			t.Errorf("the canary wave as team-b sees it: want no Cluster, got %+v", v.Waves)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		srv := httptest.NewServer(w.srv.Handler())
		defer srv.Close()
		rsp, stop := openStream(t, srv.URL+"/api/v1/fleet/events", "")
		defer stop()
		if rsp.StatusCode != http.StatusOK || rsp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("the fleet stream: %d %s", rsp.StatusCode, rsp.Header.Get("Content-Type"))
		}
		events := newSSEReader(rsp.Body)
		first := events.next(1)
		// team-b's staging Cluster reaches the target: alice's production
		// gate counts one Cluster less, and still names none of team-b's.
		reachTarget(t, w, "team-b", "stg-aks")
		second := events.next(1)
		// team-a's own staging Cluster gets there too, and is Ready.
		reachTarget(t, w, "team-a", "stg-eks")
		third := events.next(1)
		got := append(append(first, second...), third...)
		if len(got) != 3 {
			t.Fatalf("want 3 events (the view, then two changes), got %d: %+v", len(got), got)
		}
		hidden := []int{}
		for _, ev := range got {
			if ev.typ != eventFleet {
				t.Errorf("event type %q, want %q", ev.typ, eventFleet)
			}
			for _, s := range others {
				if strings.Contains(ev.data, s) {
					t.Errorf("alice's fleet stream names %q: %s", s, ev.data)
				}
			}
			var v FleetView
			if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
				t.Fatal(err)
			}
			hidden = append(hidden, v.Waves[2].Gate.Hidden)
		}
		if diff := cmp.Diff([]int{1, 0, 0}, hidden); diff != "" {
			t.Errorf("production's hidden count along the stream: -want, +got:\n%s", diff)
		}
	})
}

// reachTarget makes a Cluster run and ask for the target, 1.34, Ready.
func reachTarget(t *testing.T, w *world, ns, name string) {
	t.Helper()
	c := w.dyn.Resource(clusterGVR).Namespace(ns)
	o, err := c.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh := fleetCluster(ns, name, o.GetLabels()["cloud"], o.GetLabels()[rollout.Label], "1.34", "1.34", true)
	o.Object["status"] = fresh.Object["status"]
	if _, err := c.Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// raiseChart sets the baseline EnvironmentConfig's catalog version of
// chart.
func raiseChart(t *testing.T, w *world, chart, version string) {
	t.Helper()
	c := w.dyn.Resource(envConfigGVR)
	o, err := c.Get(context.Background(), "cluster-platform-baseline", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(o.Object, version, "data", "charts", chart, "version")
	if _, err := c.Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestFleetStreamRevoked: once the user may list Clusters in no namespace
// (its access reviews expired and refused), its fleet stream ends at the
// next change, and what it sees next is the 403.
func TestFleetStreamRevoked(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))...)
	revocable := &revocableAuthz{Authorizer: w.srv.Authz}
	w.srv.Authz = revocable
	now := time.Now()
	var clock atomic.Int64
	w.srv.Fleet.now = func() time.Time { return now.Add(time.Duration(clock.Load())) }
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	rsp, stop := openStream(t, srv.URL+"/api/v1/fleet/events", "")
	defer stop()
	events := newSSEReader(rsp.Body)
	if got := events.next(1); len(got) != 1 {
		t.Fatalf("the fleet stream's first event: got %+v", got)
	}
	revocable.revoked.Store(true)
	clock.Store(int64(FleetAccessTTL + time.Second))
	reachTarget(t, w, "team-a", "stg-eks")
	if got := events.next(1); len(got) != 0 {
		t.Errorf("after the user lost access: want the stream to end without an event, got %+v", got)
	}
	if rec := w.do(t, http.MethodGet, "/api/v1/fleet", tokenAlice, ""); rec.Code != http.StatusForbidden {
		t.Errorf("GET /api/v1/fleet after the user lost access: want 403, got %d %s", rec.Code, rec.Body)
	}
}

// revocableAuthz refuses every access once revoked.
type revocableAuthz struct {
	Authorizer
	revoked atomic.Bool
}

func (r *revocableAuthz) Allowed(ctx context.Context, u *User, a Access) (bool, error) {
	if r.revoked.Load() {
		return false, nil
	}
	return r.Authorizer.Allowed(ctx, u, a)
}

// TestFleetStreamSoakEnds: a soak ends with nothing of the fleet
// changing, and the stream sends the view then: staging's gate opens
// when the canary's hour has passed by the portal's clock.
func TestFleetStreamSoakEnds(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", soakWaves))...)
	// The canary turned Ready at 10:00; the portal's clock starts just
	// before 11:00 and runs.
	start, ends := time.Now(), time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	w.srv.Fleet.now = func() time.Time { return ends.Add(-1500*time.Millisecond + time.Since(start)) }
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	rsp, stop := openStream(t, srv.URL+"/api/v1/fleet/events", "")
	defer stop()
	events := newSSEReader(rsp.Body)
	var gates []string
	for _, ev := range append(events.next(1), events.next(1)...) {
		var v FleetView
		if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
			t.Fatal(err)
		}
		gates = append(gates, v.Waves[1].Gate.Verdict+" "+v.Waves[1].Gate.Until)
	}
	if diff := cmp.Diff([]string{"Hold 2026-11-30T11:00:00Z", "Adopt "}, gates); diff != "" {
		t.Errorf("staging's gate along the stream, the fleet unchanged: -want, +got:\n%s", diff)
	}
}
