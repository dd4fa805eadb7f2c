package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// redteamFleet is the red team's fleet: testFleet's Clusters (among them
// team-b's "sneaky", labelled canary), carol's own in team-c labelled
// canary too, and the baseline with three waves.
func redteamFleet() map[string][]any {
	clusters := []any{fleetCluster("team-c", "carol-prod", "aws", "canary", "1.33", "1.33", true).Object}
	xclusters := []any{legacy(fleetCluster("team-c", "carol-search", "gcp", "", "1.33", "1.33", true), "team-c", "carol-search-q9w2e").Object}
	for _, o := range testFleet() {
		c, ok := o.(*unstructured.Unstructured)
		if !ok || (c.GetKind() != "Cluster" && c.GetKind() != "XCluster") {
			continue
		}
		// Each other tenant's Cluster runs a chart of its own, which
		// carol must learn nothing of either.
		_ = unstructured.SetNestedField(c.Object, "v0.0.1-"+c.GetName(), "status", "charts", "private-chart")
		if c.GetKind() == "XCluster" {
			xclusters = append(xclusters, c.Object)
			continue
		}
		clusters = append(clusters, c.Object)
	}
	out := map[string][]any{
		clusterGVR.Resource:   clusters,
		xclusterGVR.Resource:  xclusters,
		envConfigGVR.Resource: {withRelease(baselineConfig("cluster-platform-baseline", testWaves), toR2).Object},
	}
	// A platform release to r2 over the same waves: XRs of every other
	// kind, carol's among them; the canary's Database runs r2, team-a's
	// staging Database failed on it (Synced False), so that production
	// halts.
	for _, x := range []struct {
		kind, ns, name, wave, runs string
		synced                     bool
	}{
		{xr.DatabaseKind, "platform", "canary-db", "canary", "r2", true},
		{xr.DatabaseKind, "team-a", "ledger", "staging", "r2", false},
		{xr.LegacyDatabaseKind, "team-b", "billing-x1y2z", "staging", "r1", true},
		{xr.AppEnvironmentKind, "team-b", "storefront", "production", "r1", true},
		{xr.WorkloadBudgetKind, "team-a", "quota", "production", "r1", true},
		{xr.LegacyAppEnvironmentKind, "", "internal-tools-k3j4h", "production", "r1", true},
		{xr.AppEnvironmentKind, "team-c", "carol-app", "production", "r1", true},
		{xr.LegacyDatabaseKind, "team-c", "carol-db-m5n6p", "production", "r1", true},
	} {
		k := releaseKind(x.kind)
		u := releaseXR(k, x.ns, x.name, x.wave, x.runs, x.runs, x.synced)
		// Each other tenant's XR runs a chart of its own, which carol must
		// learn nothing of either.
		_ = unstructured.SetNestedField(u.Object, "v0.0.1-"+x.name, "status", "charts", "private-chart")
		out[k.Resource.Resource] = append(out[k.Resource.Resource], u.Object)
	}
	for _, k := range fleet.ReleaseKinds {
		for _, r := range []string{"r1", "r2"} {
			out[fleet.CompositionRevisionResource.Resource] = append(out[fleet.CompositionRevisionResource.Resource], compositionRevision(k, r).Object)
		}
	}
	return out
}

// otherTenants are the names the red team's fleet holds of other tenants
// than carol (team-c): none may reach her.
var otherTenants = []string{
	"team-a", "team-b", "stg-eks", "stg-aks", "prod-eks", "prod-aks", "sneaky", "canary-gke", "private-chart", "v0.0.1-", "search-x7k2q", "ops-p4m8z",
	"canary-db", "ledger", "billing-x1y2z", "storefront", "quota", "internal-tools-k3j4h",
}

// fleet: a tenant who may list Clusters only in team-c learns no other
// tenant's Cluster, nor a chart it runs, through the fleet view or its
// stream, whatever path or
// query it sends; what production waits for elsewhere is a count; its own
// Cluster labelled canary stays in the last wave (the environment admits
// only platform to canary); a user who may list Clusters nowhere is
// refused without a count; the access reviews are remembered; and ten
// viewers cost the API server one watch of each resource the fleet view
// reads (fleetResources).
func (rt *redteam) fleet(t *testing.T) {
	reviews := rt.api.count("subjectaccessreviews")
	for _, path := range []string{
		"/api/v1/fleet", "/api/v1/fleet?namespace=team-a", "/api/v1/fleet?namespace=*&all=true",
		"/api/v1/fleet/", "/api/v1/namespaces/team-a/fleet", "/api/v1/fleet/events/team-a", "/api/v1/fleet?user=viewer",
	} {
		code, _, body := rt.call(t, nil, http.MethodGet, path, "Bearer "+rtCarol, "")
		namesNoOther(t, fmt.Sprintf("GET %s as carol (%d)", path, code), body)
	}
	code, _, body := rt.call(t, nil, http.MethodGet, "/api/v1/fleet", "Bearer "+rtCarol, "")
	var v FleetView
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil {
		t.Fatalf("carol's fleet view: %d %s (%v)", code, body, err)
	}
	got := summarize(v)
	want := []waveSummary{
		{Name: "canary", Verdict: "Adopt"},
		{Name: "staging", Verdict: "Adopt"},
		{Name: "production", Verdict: "Hold", Hidden: 2, Clusters: []string{"team-c/carol-prod(aws)", "team-c/carol-search-q9w2e(gcp)"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("carol's waves: -want, +got:\n%s", diff)
	}
	if n := rt.api.count("subjectaccessreviews") - reviews; n != 13 {
		t.Errorf("carol's 8 requests on a fleet of 4 namespaces and an XCluster of no claim, and a release's XRs of 5 more kinds: want 13 access reviews (one per kind and namespace that holds XRs, and one per cluster-scoped kind of an XR of no claim, remembered), got %d", n)
	}
	t.Logf("carol (team-c) through 7 paths and queries: no other tenant's name; production waits for %d Cluster(s) she may not see; her Cluster labelled canary is in wave %s; %d access reviews", got[2].Hidden, v.Waves[2].Name, rt.api.count("subjectaccessreviews")-reviews)

	code, _, body = rt.call(t, nil, http.MethodGet, "/api/v1/fleet", "Bearer "+rtNobody, "")
	if code != http.StatusForbidden || strings.Contains(body, "hidden") || strings.Contains(body, "team-") {
		t.Errorf("a user who may list Clusters nowhere: want a 403 without names or counts, got %d %s", code, body)
	}
	if code, _, _ := rt.call(t, nil, http.MethodGet, "/api/v1/fleet/events", "Bearer  x", ""); code != http.StatusUnauthorized {
		t.Errorf("the fleet stream with a malformed header: want 401, got %d", code)
	}

	// Ten viewers of the stream: each gets its view, and the API server
	// one watch of each kind.
	var stops []func()
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	for range 10 {
		lines, stop := rt.openStream(t, rtCarol, "/api/v1/fleet/events")
		stops = append(stops, stop)
		namesNoOther(t, "carol's fleet stream", firstData(lines))
	}
	watches := rt.api.activeWatches()
	t.Logf("10 fleet streams as carol: each names no other tenant's Cluster; %d watches open on the API server", watches)
	if want := len(fleetResources()); watches != want {
		t.Errorf("10 fleet viewers: want %d watches on the API server (Clusters, XClusters, EnvironmentConfigs, the release's other XR kinds, Composition revisions), got %d", want, watches)
	}
}

// namesNoOther fails the test when what carol got, body, names any of
// otherTenants.
func namesNoOther(t *testing.T, what, body string) {
	t.Helper()
	for _, s := range otherTenants {
		if strings.Contains(body, s) {
			t.Errorf("%s names %q: %s", what, s, body)
		}
	}
}

// firstData is the data of a stream's first event, "" when it ends first.
func firstData(lines <-chan string) string {
	for line := range lines {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return ""
}

// TestFleetReleaseRedteam replays the red team's attack on the fleet view's
// platform release (rt.fleetRelease) in every run, not only in make
// redteam-portal's.
func TestFleetReleaseRedteam(t *testing.T) {
	newRedteam(t).fleetRelease(t)
}

// fleetRelease: a tenant who may list XRs only in team-c learns, through
// the fleet view's platform release or its stream, whatever path or query
// it sends, no other namespace's XR, nor a chart one runs: its own XRs are
// shown with the fleet controller's move on them; the XRs of the earlier
// waves it waits for are counted, and the one that halts production is
// not named to it, while a user who may see team-a sees it named.
func (rt *redteam) fleetRelease(t *testing.T) {
	for _, path := range []string{"/api/v1/fleet", "/api/v1/fleet?namespace=team-a&kind=Database", "/api/v1/fleet?release=r1", "/api/v1/fleet/"} {
		code, _, body := rt.call(t, nil, http.MethodGet, path, "Bearer "+rtCarol, "")
		namesNoOther(t, fmt.Sprintf("GET %s as carol (%d)", path, code), body)
	}
	view := func(token string) *ReleaseView {
		code, _, body := rt.call(t, nil, http.MethodGet, "/api/v1/fleet", "Bearer "+token, "")
		var v FleetView
		if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil || v.Release == nil {
			t.Fatalf("the fleet view's release: %d %s (%v)", code, body, err)
		}
		return v.Release
	}
	type wave struct {
		Name, Verdict, Failed string
		Hidden                int
		XRs                   []string
	}
	summary := func(r *ReleaseView) []wave {
		var out []wave
		for _, w := range r.Waves {
			s := wave{Name: w.Name, Verdict: w.Gate.Verdict, Failed: w.Gate.Failed, Hidden: w.Gate.Hidden}
			for _, x := range w.XRs {
				s.XRs = append(s.XRs, x.Kind+" "+x.Namespace+"/"+x.Name+" "+x.Verdict)
			}
			out = append(out, s)
		}
		return out
	}
	carol := view(rtCarol)
	want := []wave{
		{Name: "canary", Verdict: "Keep"},
		{Name: "staging", Verdict: "Adopt"},
		{Name: "production", Verdict: "Halt", Hidden: 2, XRs: []string{"AppEnvironment team-c/carol-app Halt", "XDatabase team-c/carol-db-m5n6p Halt"}},
	}
	if diff := cmp.Diff(want, summary(carol)); diff != "" {
		t.Errorf("carol's release: -want, +got:\n%s", diff)
	}
	if msg := carol.Waves[2].Gate.Message; !strings.Contains(msg, "may not see") {
		t.Errorf("production's halt as carol sees it: %q, want one that names no XR", msg)
	}
	alice := view(rtAlice)
	if got := alice.Waves[2].Gate.Failed; got != "Database team-a/ledger" {
		t.Errorf("production's halt as alice (team-a, team-b) sees it: failed %q, want team-a's Database named", got)
	}
	lines, stop := rt.openStream(t, rtCarol, "/api/v1/fleet/events")
	defer stop()
	namesNoOther(t, "carol's fleet stream", firstData(lines))
	t.Logf("carol (team-c) through 4 paths and the stream: no other namespace's XR; production halts on %d XR(s) she may not see, %d XR(s) of no release's Composition left out", carol.Waves[2].Gate.Hidden, carol.Outside)
}

// TestFleetXClustersUnread reads the fleet from an API server over HTTP
// that does not serve XClusters (a Crossplane without the legacy XRD), or
// does not let the portal list them: the informers sync all the same, at
// once, with no XCluster; only the refusal is said, since the fleet
// controller reads XClusters the portal then cannot show.
func TestFleetXClustersUnread(t *testing.T) {
	type want struct {
		clusters []string
		unread   string
	}
	cases := map[string]struct {
		reason    string
		forbidden bool
		want      want
	}{
		"NotServed": {
			reason: "An API server that serves no XClusters answers 404: there are none, and nothing is wrong.",
			want:   want{clusters: []string{"Cluster team-c/carol-prod"}},
		},
		"Forbidden": {
			reason:    "An API server that refuses the portal XClusters answers 403: the view goes on without them and says why.",
			forbidden: true,
			want:      want{clusters: []string{"Cluster team-c/carol-prod"}, unread: "xclusters.legacy.platform.example.org is forbidden: RBAC: the portal may not list them"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api := &fakeAPI{
				fleet: map[string][]any{
					clusterGVR.Resource:   {fleetCluster("team-c", "carol-prod", "aws", "canary", "1.33", "1.33", true).Object},
					envConfigGVR.Resource: {baselineConfig("cluster-platform-baseline", testWaves).Object},
				},
				watches: map[string]int{}, seen: map[string]int{},
			}
			if tc.forbidden {
				api.forbidden = map[string]string{xclusterGVR.Resource: "RBAC: the portal may not list them"}
			}
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			f := NewFleet(dyn, "test", slog.New(slog.DiscardHandler))
			t.Cleanup(f.Close)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := f.synced(ctx); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			clusters, _, unread := f.state()
			got := want{unread: unread}
			for _, c := range clusters {
				got.clusters = append(got.clusters, c.GetKind()+" "+c.GetNamespace()+"/"+c.GetName())
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nthe fleet read: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
