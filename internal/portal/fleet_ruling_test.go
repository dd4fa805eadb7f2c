package portal

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/watchlist"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// soakWaves are testWaves with a soak of an hour after canary.
var soakWaves = []any{
	map[string]any{"name": "canary", "namespaces": []any{"platform"}, "soak": "1h"},
	testWaves[1], testWaves[2],
}

// pinnedTo is c with its XR pinning version, as the function reports it.
func pinnedTo(c *unstructured.Unstructured, version string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(c.Object, version, "spec", "parameters", "version")
	_ = unstructured.SetNestedField(c.Object, map[string]any{"target": "1.34", "verdict": "Pinned", "message": "spec.parameters.version pins " + version}, "status", "rollout")
	return c
}

// unreported is c without status.rollout: the function has not reported
// a target for it.
func unreported(c *unstructured.Unstructured) *unstructured.Unstructured {
	unstructured.RemoveNestedField(c.Object, "status", "rollout")
	return c
}

// atGeneration is c at generation g, its conditions still observed at 3.
func atGeneration(c *unstructured.Unstructured, g int64) *unstructured.Unstructured {
	c.SetGeneration(g)
	return c
}

// refusing is a dynamic client whose resource gvr answers every list and
// watch with err: an API server that does not serve it (NotFound), or
// does not let the portal read it (Forbidden).
type refusing struct {
	dynamic.Interface
	gvr schema.GroupVersionResource
	err error
}

func (r refusing) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	if gvr == r.gvr {
		return refusedResource{NamespaceableResourceInterface: r.Interface.Resource(gvr), err: r.err}
	}
	return r.Interface.Resource(gvr)
}

// IsWatchListSemanticsUnSupported is the fake client's answer.
func (r refusing) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(r.Interface)
}

// refusedResource answers every list and watch with err.
type refusedResource struct {
	dynamic.NamespaceableResourceInterface
	err error
}

func (r refusedResource) Namespace(string) dynamic.ResourceInterface { return refused{err: r.err} }

func (r refusedResource) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, r.err
}

func (r refusedResource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, r.err
}

// TestFleetViewRulings holds each Cluster's verdict in the fleet view
// against the fleet controller's ruling on the same fleet: fleet.Rule on
// the Clusters and XClusters as the API server holds them (not as the
// portal's informers slim them) and the baseline EnvironmentConfigs, at
// the portal's clock. Each Cluster's verdict is the ruling's, for both
// kinds; a pinned Cluster says Pinned; one that reports no target says
// nothing; the viewer sees only its namespaces' Clusters; and a wave's
// gate is rollout.GateOf's on the same fleet and clock.
func TestFleetViewRulings(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)
	type args struct {
		objs  []runtime.Object
		token string
		now   time.Time
		// refuse, when not nil, is how the API server answers the
		// portal's lists and watches of XClusters.
		refuse error
	}
	type want struct {
		// verdicts are each Cluster's the user sees, by kind and
		// namespace/name, with the soak's end when one holds it.
		verdicts map[string]string
		// gates are the waves' gates' verdicts, in order.
		gates   []string
		message string
	}
	withWaves := func(waves []any, objs ...runtime.Object) []runtime.Object {
		return append(objs, baselineConfig("cluster-platform-baseline", waves))
	}
	all := map[string]string{
		"Cluster platform/canary-gke": "Keep", "Cluster team-a/stg-eks": "Keep", "Cluster team-b/stg-aks": "Adopt",
		"Cluster team-a/prod-eks": "Hold", "Cluster team-b/prod-aks": "Hold", "Cluster team-b/sneaky": "Hold",
		"XCluster team-a/search-x7k2q": "Hold", "XCluster /ops-p4m8z": "Hold",
	}
	// but is all with the verdicts of some Clusters changed (key, verdict,
	// ...), "-" removing one.
	but := func(changes ...string) map[string]string {
		out := maps.Clone(all)
		for i := 0; i+1 < len(changes); i += 2 {
			out[changes[i]] = changes[i+1]
			if changes[i+1] == "-" {
				delete(out, changes[i])
			}
		}
		return out
	}
	noXClusters := []string{"XCluster team-a/search-x7k2q", "-", "XCluster /ops-p4m8z", "-"}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"PlatformSeesAll": {
			reason: "The platform team sees every Cluster of both kinds with the controller's ruling on it: the canary and the staging Cluster under way keep the target, the other staging Cluster adopts it, production holds, the XClusters too.",
			args:   args{objs: withWaves(testWaves, testFleet()...), token: tokenPat, now: base},
			want:   want{verdicts: all, gates: []string{"Adopt", "Adopt", "Hold"}},
		},
		"TenantSeesItsOwn": {
			reason: "A tenant sees the rulings on its own namespace's Clusters and its claim's XCluster alone.",
			args:   args{objs: withWaves(testWaves, testFleet()...), token: tokenAlice, now: base},
			want: want{verdicts: map[string]string{"Cluster team-a/stg-eks": "Keep", "Cluster team-a/prod-eks": "Hold", "XCluster team-a/search-x7k2q": "Hold"},
				gates: []string{"Adopt", "Adopt", "Hold"}},
		},
		"PinnedAndUnreported": {
			reason: "A Cluster that pins its version is out of the rollout and says Pinned; one that reports no target (its function has not run under the waves yet) is ruled on by no one.",
			args: args{objs: fleetWith(
				pinnedTo(fleetCluster("team-a", "prod-eks", "aws", "production", "1.33", "1.33", true), "1.33"),
				unreported(fleetCluster("team-b", "prod-aks", "azure", "production", "1.33", "1.33", true))), token: tokenPat, now: base},
			want: want{verdicts: but("Cluster team-a/prod-eks", "Pinned", "Cluster team-b/prod-aks", ""), gates: []string{"Adopt", "Adopt", "Hold"}},
		},
		"StaleCanary": {
			reason: "A canary whose spec changed since its conditions were observed proves nothing yet: staging holds for it. The portal keeps each Cluster's generation, or every Cluster would look stale.",
			args:   args{objs: fleetWith(atGeneration(fleetCluster("platform", "canary-gke", "gcp", "canary", "1.34", "1.34", true), 4)), token: tokenPat, now: base},
			want:   want{verdicts: but("Cluster team-b/stg-aks", "Hold"), gates: []string{"Adopt", "Hold", "Hold"}},
		},
		"Soaking": {
			reason: "The canary soaks for an hour after it turned Ready at 10:00: at 10:30 by the portal's clock staging holds until 11:00; production holds for staging, which is not there yet.",
			args:   args{objs: withWaves(soakWaves, testFleet()...), token: tokenPat, now: base},
			want:   want{verdicts: but("Cluster team-b/stg-aks", "Hold until 2026-11-30T11:00:00Z"), gates: []string{"Adopt", "Hold", "Hold"}},
		},
		"Soaked": {
			reason: "At noon the canary's soak has passed: staging adopts; production waits for staging.",
			args:   args{objs: withWaves(soakWaves, testFleet()...), token: tokenPat, now: base.Add(90 * time.Minute)},
			want:   want{verdicts: all, gates: []string{"Adopt", "Adopt", "Hold"}},
		},
		"XClustersNotServed": {
			reason: "A Crossplane without the legacy XRD serves no XClusters: there are none, and the view says nothing of them.",
			args: args{objs: withWaves(testWaves, testFleet()...), token: tokenPat, now: base,
				refuse: apierrors.NewNotFound(xclusterGVR.GroupResource(), "")},
			want: want{verdicts: but(noXClusters...), gates: []string{"Adopt", "Adopt", "Hold"}},
		},
		"XClustersForbidden": {
			reason: "When the portal may not list XClusters, the view shows the Clusters and says that the XClusters are left out.",
			args: args{objs: withWaves(testWaves, testFleet()...), token: tokenPat, now: base,
				refuse: apierrors.NewForbidden(xclusterGVR.GroupResource(), "", errors.New("RBAC: access denied"))},
			want: want{verdicts: but(noXClusters...), gates: []string{"Adopt", "Adopt", "Hold"}, message: "The portal cannot list the legacy XClusters, so they are not shown and the gates and verdicts here leave them out (the fleet controller's own rulings do not): " +
				"xclusters.legacy.platform.example.org is forbidden: RBAC: access denied"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.args.objs...)
			if tc.args.refuse != nil {
				w.srv.Fleet = NewFleet(refusing{Interface: w.dyn, gvr: xclusterGVR, err: tc.args.refuse}, "test", slog.New(slog.DiscardHandler))
				t.Cleanup(w.srv.Fleet.Close)
			}
			w.srv.Fleet.now = func() time.Time { return tc.args.now }
			rec := w.do(t, http.MethodGet, "/api/v1/fleet", tc.args.token, "")
			var v FleetView
			if err := json.Unmarshal(rec.Body.Bytes(), &v); rec.Code != http.StatusOK || err != nil {
				t.Fatalf("GET /api/v1/fleet: %d %s (%v)", rec.Code, rec.Body, err)
			}
			got := want{verdicts: map[string]string{}, message: v.Message}
			for _, wv := range v.Waves {
				got.gates = append(got.gates, wv.Gate.Verdict)
				for _, c := range wv.Clouds {
					for _, cl := range c.Clusters {
						got.verdicts[cl.Kind+" "+cl.Namespace+"/"+cl.Name] = strings.TrimSuffix(cl.Verdict+" until "+cl.Until, " until ")
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nGET /api/v1/fleet: -want, +got:\n%s\n%s", tc.reason, diff, rec.Body.String())
			}

			// The fleet controller's rulings on the same objects, whole,
			// at the same time: every Cluster the view shows says its
			// ruling's verdict (those it rules on).
			var configs, clusters []map[string]any
			for _, o := range tc.args.objs {
				u, _ := o.(*unstructured.Unstructured)
				switch u.GetKind() {
				case "EnvironmentConfig":
					configs = append(configs, u.Object)
				case "XCluster":
					if tc.args.refuse == nil {
						clusters = append(clusters, u.Object)
					}
				case "Cluster":
					clusters = append(clusters, u.Object)
				}
			}
			for key, ruled := range controllerVerdicts(t, configs, clusters, tc.args.now) {
				if v, shown := got.verdicts[key]; shown && v != ruled {
					t.Errorf("%s: the portal says %q, the fleet controller rules %q", key, v, ruled)
				}
			}
		})
	}
}

// controllerVerdicts are the fleet controller's rulings (fleet.Rule) on
// clusters under the baseline among configs at now, by kind and
// namespace/name (an XCluster's claim's namespace), each its verdict and,
// when a soak holds it, "until" its end.
func controllerVerdicts(t *testing.T, configs, clusters []map[string]any, now time.Time) map[string]string {
	t.Helper()
	rulings, err := fleet.Rule(fleet.BaselineOf(configs), clusters, now)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rulings {
		for _, c := range clusters {
			if rollout.RefOf(c) == r.Cluster {
				key := r.Cluster.Kind + " " + rollout.MemberOf(c).Key()
				out[key] = strings.TrimSuffix(string(r.Verdict)+" until "+timeString(r.Until), " until ")
			}
		}
	}
	return out
}

// TestFleetViewSlimKeepsRuling checks that what the informers keep of a
// Cluster (slimCluster) rules as the whole object does.
func TestFleetViewSlimKeepsRuling(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)
	var configs, whole, slim []map[string]any
	for _, o := range append(testFleet(), baselineConfig("cluster-platform-baseline", soakWaves)) {
		u, _ := o.(*unstructured.Unstructured)
		switch u.GetKind() {
		case "EnvironmentConfig":
			configs = append(configs, u.Object)
		case "Cluster", "XCluster":
			s, err := slimCluster(u)
			if err != nil {
				t.Fatal(err)
			}
			whole, slim = append(whole, u.Object), append(slim, s.(*unstructured.Unstructured).Object) //nolint:forcetypeassert // slimCluster slims what it is given.
		}
	}
	b := fleet.BaselineOf(configs)
	want, err := fleet.Rule(b, whole, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fleet.Rule(b, slim, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 8 {
		t.Errorf("the controller rules on %d Clusters, want 8", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the rulings on the slimmed Clusters: -whole, +slim:\n%s", diff)
	}
}
