package portal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// fleetCluster is a Cluster XR at generation 3, its conditions observed
// at it: its wave label ("" for none), cloud, the minor its control plane
// and pools run, the target it asks for, and whether it is Ready. Its
// releases run the built-in catalog's cert-manager and ingress-nginx
// (status.charts, which a Cluster writes while the environment has
// waves), and it reports what the function reports under baselineConfig
// (status.rollout): the target 1.34 with those charts' catalog versions.
func fleetCluster(ns, name, cloud, wave, runs, asks string, ready bool) *unstructured.Unstructured {
	labels := map[string]any{"cloud": cloud, "planeId": "p"}
	if wave != "" {
		labels[rollout.Label] = wave
	}
	status, reason := "True", "Available"
	if !ready {
		status, reason = "False", "Creating"
	}
	phase := "UpToDate"
	if runs != asks {
		phase = "ControlPlane"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": envGroup + "/" + envVersion, "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels, "generation": int64(3)},
		"spec":     map[string]any{"parameters": map[string]any{"location": "somewhere"}},
		"status": map[string]any{
			"upgrade":   map[string]any{"target": asks, "controlPlane": runs, "phase": phase},
			"charts":    map[string]any{"cert-manager": "v1.19.1", "ingress-nginx": "4.13.3"},
			"nodePools": []any{map[string]any{"name": "default", "version": runs + ".4", "ready": ready, "machineType": "m"}},
			"rollout":   map[string]any{"target": "1.34", "charts": map[string]any{"cert-manager": "v1.19.1", "ingress-nginx": "4.13.3"}, "verdict": "Hold", "message": "m"},
			"conditions": []any{
				map[string]any{"type": "Ready", "status": status, "reason": reason, "observedGeneration": int64(3), "lastTransitionTime": "2026-11-30T10:00:00Z"},
				map[string]any{"type": "Synced", "status": "True", "observedGeneration": int64(3)},
			},
		},
	}}
}

// legacy is c as a legacy XCluster of a claim in c's namespace (claim
// "" for one the platform team made, of no claim), named name.
func legacy(c *unstructured.Unstructured, claim, name string) *unstructured.Unstructured {
	c.SetAPIVersion(xclusterGVR.GroupVersion().String())
	c.SetKind("XCluster")
	c.SetNamespace("")
	c.SetName(name)
	labels := c.GetLabels()
	if claim != "" {
		labels[rollout.LabelClaimNamespace] = claim
	}
	c.SetLabels(labels)
	return c
}

// asked is c reporting, in status.rollout, that its environment asks it
// for the minor kube and the chart versions charts (name, version, ...).
func asked(c *unstructured.Unstructured, kube string, charts ...string) *unstructured.Unstructured {
	m := map[string]any{}
	for i := 0; i+1 < len(charts); i += 2 {
		m[charts[i]] = charts[i+1]
	}
	_ = unstructured.SetNestedField(c.Object, map[string]any{"target": kube, "charts": m, "verdict": "Hold", "message": "m"}, "status", "rollout")
	return c
}

// baselineConfig is a baseline EnvironmentConfig with the version 1.34
// and, unless nil, rollout waves.
func baselineConfig(name string, waves []any) *unstructured.Unstructured {
	data := map[string]any{"version": "1.34", "privateCluster": true}
	if waves != nil {
		data["rollout"] = map[string]any{"waves": waves}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"platform.example.org/environment": "cluster-platform", "baseline": "default"}},
		"data":     data,
	}}
}

// testWaves: canary counts only the platform team's Clusters; production
// needs approval.
var testWaves = []any{
	map[string]any{"name": "canary", "namespaces": []any{"platform"}},
	map[string]any{"name": "staging"},
	map[string]any{"name": "production", "requiresApproval": true, "maxUnavailable": int64(1)},
}

// testFleet is eight Clusters of both kinds on three clouds in three
// waves, the environment's target 1.34: the canary runs it; team-a's
// staging Cluster moves to it; team-b's still runs 1.33; team-b's
// "sneaky" labels itself canary, which the environment admits only from
// platform; team-a's claim has a legacy XCluster without a wave label;
// and the platform team's XCluster of no claim is labelled canary, which
// admits no cluster-scoped XR. The last three count in production.
func testFleet() []runtime.Object {
	return []runtime.Object{
		namespace("platform"),
		fleetCluster("platform", "canary-gke", "gcp", "canary", "1.34", "1.34", true),
		fleetCluster("team-a", "stg-eks", "aws", "staging", "1.33", "1.34", false),
		fleetCluster("team-b", "stg-aks", "azure", "staging", "1.33", "1.33", true),
		fleetCluster("team-a", "prod-eks", "aws", "production", "1.33", "1.33", true),
		fleetCluster("team-b", "prod-aks", "azure", "production", "1.33", "1.33", true),
		fleetCluster("team-b", "sneaky", "gcp", "canary", "1.33", "1.33", true),
		legacy(fleetCluster("team-a", "search", "aws", "", "1.33", "1.33", true), "team-a", "search-x7k2q"),
		legacy(fleetCluster("team-a", "ops", "gcp", "canary", "1.33", "1.33", true), "", "ops-p4m8z"),
	}
}

// unsynced is c with its Synced condition False: the function refused
// its change.
func unsynced(c *unstructured.Unstructured) *unstructured.Unstructured {
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	conds[1] = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "the upgrade was refused", "observedGeneration": int64(3)}
	_ = unstructured.SetNestedSlice(c.Object, conds, "status", "conditions")
	return c
}

// replaced is testFleet with some Clusters replaced, by namespace/name.
func replaced(replace ...*unstructured.Unstructured) []runtime.Object {
	out := testFleet()
	for i, o := range out {
		u, _ := o.(*unstructured.Unstructured)
		for _, r := range replace {
			if u.GetNamespace() == r.GetNamespace() && u.GetName() == r.GetName() {
				out[i] = r
			}
		}
	}
	return out
}

// fleetWith is replaced(replace...) under testWaves.
func fleetWith(replace ...*unstructured.Unstructured) []runtime.Object {
	return append(replaced(replace...), baselineConfig("cluster-platform-baseline", testWaves))
}

// waveSummary is what a test reads of a wave: its gate, and its Clusters
// as namespace/name(cloud).
type waveSummary struct {
	Name     string
	Verdict  string
	WaitsFor []string
	Hidden   int
	Failed   string
	Clusters []string
}

func summarize(v FleetView) []waveSummary {
	out := []waveSummary{}
	for _, w := range v.Waves {
		s := waveSummary{Name: w.Name, Verdict: w.Gate.Verdict, Hidden: w.Gate.Hidden}
		if f := w.Gate.Failed; f != nil {
			s.Failed = f.Namespace + "/" + f.Name
		}
		for _, c := range w.Gate.WaitsFor {
			s.WaitsFor = append(s.WaitsFor, c.Namespace+"/"+c.Name)
		}
		for _, cl := range w.Clouds {
			for _, c := range cl.Clusters {
				s.Clusters = append(s.Clusters, fmt.Sprintf("%s/%s(%s)", c.Namespace, c.Name, c.Cloud))
			}
		}
		out = append(out, s)
	}
	return out
}

func TestFleetView(t *testing.T) {
	withWaves := append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))
	type want struct {
		code    int
		waves   []waveSummary
		message string
	}
	cases := map[string]struct {
		reason string
		objs   []runtime.Object
		token  string
		want   want
	}{
		"PlatformSeesAll": {
			reason: "A user who may list Clusters everywhere sees every wave in order, each Cluster per cloud, and what production waits for by name.",
			objs:   withWaves, token: tokenPat,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt", Clusters: []string{"platform/canary-gke(gcp)"}},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-a/stg-eks(aws)", "team-b/stg-aks(azure)"}},
				{Name: "production", Verdict: "Hold", WaitsFor: []string{"team-a/stg-eks", "team-b/stg-aks"},
					Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)", "team-b/prod-aks(azure)", "/ops-p4m8z(gcp)", "team-b/sneaky(gcp)"}},
			}},
		},
		"TenantSeesItsOwn": {
			reason: "A tenant sees only its namespace's Clusters, and its claim's XCluster; what production waits for elsewhere is counted, not named.",
			objs:   withWaves, token: tokenAlice,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt"},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-a/stg-eks(aws)"}},
				{Name: "production", Verdict: "Hold", WaitsFor: []string{"team-a/stg-eks"}, Hidden: 1, Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)"}},
			}},
		},
		"OtherTenant": {
			reason: "The other tenant sees its own, and team-a's staging Cluster only as a count.",
			objs:   withWaves, token: tokenBob,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt"},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-b/stg-aks(azure)"}},
				{Name: "production", Verdict: "Hold", WaitsFor: []string{"team-b/stg-aks"}, Hidden: 1,
					Clusters: []string{"team-b/prod-aks(azure)", "team-b/sneaky(gcp)"}},
			}},
		},
		"NoWaves": {
			reason: "Without rollout.waves the view says so and shows one wave of everything.",
			objs:   append(testFleet(), baselineConfig("cluster-platform-baseline", nil)), token: tokenPat,
			want: want{code: http.StatusOK, message: noWaves, waves: []waveSummary{
				{Name: "", Verdict: "Adopt", Clusters: []string{
					"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)", "team-a/stg-eks(aws)", "team-b/prod-aks(azure)",
					"team-b/stg-aks(azure)", "/ops-p4m8z(gcp)", "platform/canary-gke(gcp)", "team-b/sneaky(gcp)",
				}},
			}},
		},
		"LaterConfigWins": {
			reason: "Of two baseline EnvironmentConfigs the later by name sets the waves, as the function merges them.",
			objs: append(testFleet(), baselineConfig("a-baseline", nil),
				baselineConfig("b-baseline", []any{map[string]any{"name": "only"}})), token: tokenAlice,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "only", Verdict: "Adopt", Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)", "team-a/stg-eks(aws)"}},
			}},
		},
		"Approval": {
			reason: "Once every earlier Cluster runs the target and is Ready, production waits for the environment's approval.",
			objs: fleetWith(fleetCluster("team-a", "stg-eks", "aws", "staging", "1.34", "1.34", true),
				fleetCluster("team-b", "stg-aks", "azure", "staging", "1.34", "1.34", true)), token: tokenAlice,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt"},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-a/stg-eks(aws)"}},
				{Name: "production", Verdict: "Approval", Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)"}},
			}},
		},
		"HaltNamed": {
			reason: "A staging Cluster whose change was refused halts production, and the halt names it to whoever may see it.",
			objs:   fleetWith(unsynced(fleetCluster("team-b", "stg-aks", "azure", "staging", "1.33", "1.34", true))), token: tokenPat,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt", Clusters: []string{"platform/canary-gke(gcp)"}},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-a/stg-eks(aws)", "team-b/stg-aks(azure)"}},
				{Name: "production", Verdict: "Halt", WaitsFor: []string{"team-a/stg-eks", "team-b/stg-aks"}, Failed: "team-b/stg-aks",
					Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)", "team-b/prod-aks(azure)", "/ops-p4m8z(gcp)", "team-b/sneaky(gcp)"}},
			}},
		},
		"HaltNotNamed": {
			reason: "The halt does not name a failed Cluster of a namespace the user may not see.",
			objs: fleetWith(fleetCluster("team-a", "stg-eks", "aws", "staging", "1.34", "1.34", true),
				unsynced(fleetCluster("team-b", "stg-aks", "azure", "staging", "1.33", "1.34", true))), token: tokenAlice,
			want: want{code: http.StatusOK, waves: []waveSummary{
				{Name: "canary", Verdict: "Adopt"},
				{Name: "staging", Verdict: "Adopt", Clusters: []string{"team-a/stg-eks(aws)"}},
				{Name: "production", Verdict: "Halt", Hidden: 1, Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)"}},
			}},
		},
		"InvalidWaves": {
			reason: "Waves the function would refuse are not shown: the view says what is wrong, with one wave of everything.",
			objs:   append(testFleet(), baselineConfig("cluster-platform-baseline", []any{map[string]any{"name": "x"}, map[string]any{"name": "x"}})),
			token:  tokenAlice,
			want: want{code: http.StatusOK, message: `The rollout keys are invalid, so no waves are shown: [environment.rollout.waves[1].name: Duplicate value: "x"]`,
				waves: []waveSummary{{Verdict: "Adopt", Clusters: []string{"team-a/prod-eks(aws)", "team-a/search-x7k2q(aws)", "team-a/stg-eks(aws)"}}}},
		},
		"NobodysFleet": {
			reason: "A user who may list Clusters in none of the namespaces that hold them is refused, and learns no count.",
			objs:   withWaves, token: tokenEve,
			want: want{code: http.StatusForbidden},
		},
		"NoToken": {
			reason: "The fleet is behind the same authentication as the rest.",
			objs:   withWaves,
			want:   want{code: http.StatusUnauthorized},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.objs...)
			rec := w.do(t, http.MethodGet, "/api/v1/fleet", tc.token, "")
			got := want{code: rec.Code}
			if rec.Code == http.StatusOK {
				var v FleetView
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				got.waves, got.message = summarize(v), v.Message
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nGET /api/v1/fleet: -want, +got:\n%s\n%s", tc.reason, diff, rec.Body.String())
			}
		})
	}
}

// withChart is c with its cert-manager release running version.
func withChart(c *unstructured.Unstructured, version string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(c.Object, version, "status", "charts", "cert-manager")
	return c
}

// chartBaseline is the baseline of a chart-only move: version 1.33 as the
// Clusters run, cert-manager raised to v1.19.2 in the catalog, testWaves
// with production's approvals.
func chartBaseline(approved ...any) *unstructured.Unstructured {
	waves := append([]any{}, testWaves...)
	prod := map[string]any{"name": "production", "requiresApproval": true, "maxUnavailable": int64(1)}
	if len(approved) > 0 {
		prod["approved"] = approved
	}
	waves[2] = prod
	b := baselineConfig("cluster-platform-baseline", waves)
	_ = unstructured.SetNestedField(b.Object, "1.33", "data", "version")
	_ = unstructured.SetNestedField(b.Object, "v1.19.2", "data", "charts", "cert-manager", "version")
	return b
}

// TestFleetViewCharts gates a move of the chart catalog as the function
// does: each wave's gate names the chart's move, waits for the earlier
// waves' Clusters to run the new version, and asks for its approval; each
// Cluster shows the chart versions it runs.
func TestFleetViewCharts(t *testing.T) {
	// chartFleet is testFleet at 1.33 everywhere, cert-manager v1.19.1,
	// but for the earlier waves' Clusters named in moved, which run
	// v1.19.2.
	chartFleet := func(b *unstructured.Unstructured, moved ...string) []runtime.Object {
		out := []runtime.Object{namespace("platform"), b}
		for _, c := range []*unstructured.Unstructured{
			fleetCluster("platform", "canary-gke", "gcp", "canary", "1.33", "1.33", true),
			fleetCluster("team-a", "stg-eks", "aws", "staging", "1.33", "1.33", true),
			fleetCluster("team-b", "stg-aks", "azure", "staging", "1.33", "1.33", true),
			fleetCluster("team-a", "prod-eks", "aws", "production", "1.33", "1.33", true),
		} {
			if slices.Contains(moved, c.GetName()) {
				c = withChart(c, "v1.19.2")
			}
			// What the function reports under the chart baseline.
			out = append(out, asked(c, "1.33", "cert-manager", "v1.19.2", "ingress-nginx", "4.13.3"))
		}
		return out
	}
	type wave struct {
		Name, Verdict       string
		Changes, Unapproved []string
		Approved            bool
	}
	type want struct {
		charts map[string]string
		waves  []wave
		runs   map[string]string
	}
	all := []string{"canary-gke", "stg-eks", "stg-aks"}
	cm := []string{"cert-manager=v1.19.2"}
	cases := map[string]struct {
		reason string
		objs   []runtime.Object
		want   want
	}{
		"ChartMoveHolds": {
			reason: "The catalog moves cert-manager alone: canary moves, staging holds while canary runs v1.19.1, production too, and waits for the chart's approval.",
			objs:   chartFleet(chartBaseline()),
			want: want{
				waves: []wave{
					{Name: "canary", Verdict: "Adopt", Changes: cm},
					{Name: "staging", Verdict: "Hold", Changes: cm},
					{Name: "production", Verdict: "Hold", Changes: cm, Unapproved: cm},
				},
				runs: map[string]string{"platform/canary-gke": "v1.19.1", "team-a/prod-eks": "v1.19.1"},
			},
		},
		"ChartNotApproved": {
			reason: "The earlier waves run v1.19.2 Ready (their gate is what a Cluster that joins them as the fleet asks would meet); approving the minor does not approve the chart: production waits for its approval.",
			objs:   chartFleet(chartBaseline("1.33"), all...),
			want: want{
				waves: []wave{
					{Name: "canary", Verdict: "Adopt", Changes: cm},
					{Name: "staging", Verdict: "Adopt", Changes: cm},
					{Name: "production", Verdict: "Approval", Changes: cm, Unapproved: cm},
				},
				runs: map[string]string{"platform/canary-gke": "v1.19.2", "team-a/prod-eks": "v1.19.1"},
			},
		},
		"ChartApproved": {
			reason: "The chart's move approved by name, and the earlier waves done: production moves.",
			objs:   chartFleet(chartBaseline("cert-manager=v1.19.2"), all...),
			want: want{
				waves: []wave{
					{Name: "canary", Verdict: "Adopt", Changes: cm},
					{Name: "staging", Verdict: "Adopt", Changes: cm},
					{Name: "production", Verdict: "Adopt", Changes: cm, Approved: true},
				},
				runs: map[string]string{"platform/canary-gke": "v1.19.2", "team-a/prod-eks": "v1.19.1"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.objs...)
			rec := w.do(t, http.MethodGet, "/api/v1/fleet", tokenPat, "")
			var v FleetView
			if err := json.Unmarshal(rec.Body.Bytes(), &v); rec.Code != http.StatusOK || err != nil {
				t.Fatalf("GET /api/v1/fleet: %d %s (%v)", rec.Code, rec.Body, err)
			}
			got := want{charts: map[string]string{"cert-manager": v.Charts["cert-manager"]}, runs: map[string]string{}}
			for _, wv := range v.Waves {
				got.waves = append(got.waves, wave{Name: wv.Name, Verdict: wv.Gate.Verdict, Changes: wv.Gate.Changes, Unapproved: wv.Gate.Unapproved, Approved: wv.Approved})
				for _, c := range wv.Clouds {
					for _, cl := range c.Clusters {
						if cl.Name == "canary-gke" || cl.Name == "prod-eks" {
							got.runs[cl.Namespace+"/"+cl.Name] = cl.Charts["cert-manager"]
						}
					}
				}
			}
			tc.want.charts = map[string]string{"cert-manager": "v1.19.2"}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nGET /api/v1/fleet: -want, +got:\n%s\n%s", tc.reason, diff, rec.Body.String())
			}
		})
	}
}

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
