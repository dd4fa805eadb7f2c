package portal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
