package portal

import (
	"context"
	"encoding/json"
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
	return map[string][]any{
		clusterGVR.Resource:   clusters,
		xclusterGVR.Resource:  xclusters,
		envConfigGVR.Resource: {baselineConfig("cluster-platform-baseline", testWaves).Object},
	}
}

// fleet: a tenant who may list Clusters only in team-c learns no other
// tenant's Cluster, nor a chart it runs, through the fleet view or its
// stream, whatever path or
// query it sends; what production waits for elsewhere is a count; its own
// Cluster labelled canary stays in the last wave (the environment admits
// only platform to canary); a user who may list Clusters nowhere is
// refused without a count; the access reviews are remembered; and ten
// viewers cost the API server one watch of Clusters, one of XClusters and
// one of EnvironmentConfigs.
func (rt *redteam) fleet(t *testing.T) {
	others := []string{"team-a", "team-b", "stg-eks", "stg-aks", "prod-eks", "prod-aks", "sneaky", "canary-gke", "private-chart", "v0.0.1-", "search-x7k2q", "ops-p4m8z"}
	reviews := rt.api.count("subjectaccessreviews")
	for _, path := range []string{
		"/api/v1/fleet", "/api/v1/fleet?namespace=team-a", "/api/v1/fleet?namespace=*&all=true",
		"/api/v1/fleet/", "/api/v1/namespaces/team-a/fleet", "/api/v1/fleet/events/team-a", "/api/v1/fleet?user=viewer",
	} {
		code, _, body := rt.call(t, nil, http.MethodGet, path, "Bearer "+rtCarol, "")
		for _, s := range others {
			if strings.Contains(body, s) {
				t.Errorf("GET %s as carol (%d) names %q: %s", path, code, s, body)
			}
		}
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
	if n := rt.api.count("subjectaccessreviews") - reviews; n != 5 {
		t.Errorf("carol's 8 requests on a fleet of 4 namespaces and an XCluster of no claim: want 5 access reviews (one per namespace and one of the cluster-scoped XClusters, remembered), got %d", n)
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
		for line := range lines {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				for _, s := range others {
					if strings.Contains(data, s) {
						t.Errorf("carol's fleet stream names %q: %s", s, data)
					}
				}
				break
			}
		}
	}
	watches := rt.api.activeWatches()
	t.Logf("10 fleet streams as carol: each names no other tenant's Cluster; %d watches open on the API server", watches)
	if watches != 3 {
		t.Errorf("10 fleet viewers: want 3 watches on the API server (Clusters, XClusters, EnvironmentConfigs), got %d", watches)
	}
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
