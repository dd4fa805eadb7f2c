package portal

import (
	"context"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pageVerdicts is each Cluster row of the page as "Kind namespace/name"
// and its verdict, in page order.
const pageVerdicts = `[...document.querySelectorAll('#waves tr[data-key]')].map(r => r.dataset.kind + ' ' + r.dataset.key + '=' + r.dataset.verdict).join(',')`

// ruledAsPage are the fleet controller's rulings on the world's Clusters
// and XClusters under its baseline EnvironmentConfigs, now, in the order
// of the page's rows (rows, pageVerdicts without the verdicts), as
// pageVerdicts says them.
func ruledAsPage(t *testing.T, w *world, rows string) string {
	t.Helper()
	list := func(gvr schema.GroupVersionResource) []map[string]any {
		l, err := w.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, u := range l.Items {
			out = append(out, u.Object)
		}
		return out
	}
	ruled := controllerVerdicts(t, list(envConfigGVR), append(list(clusterGVR), list(xclusterGVR)...), time.Now())
	var out []string
	for _, row := range strings.Split(rows, ",") {
		out = append(out, row+"="+ruled[row])
	}
	return strings.Join(out, ",")
}

// reportCharts makes every Cluster and XCluster report, in
// status.rollout, that it is asked for chart at version: what the
// function reports once the catalog moves it.
func reportCharts(t *testing.T, w *world, chart, version string) {
	t.Helper()
	for _, gvr := range []schema.GroupVersionResource{clusterGVR, xclusterGVR} {
		l, err := w.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			_ = unstructured.SetNestedField(o.Object, version, "status", "rollout", "charts", chart)
			if _, err := w.dyn.Resource(gvr).Namespace(o.GetNamespace()).Update(context.Background(), &o, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestFleetInABrowser(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))...)
	srv := httptest.NewServer(w.srv.Handler())
	t.Cleanup(srv.Close) // after the browser closed its stream
	ctx, console := browse(t)

	// The platform team's view: three waves in order, each Cluster of
	// both kinds per cloud, production waiting for both staging Clusters
	// by name, and each Cluster with the fleet controller's ruling on it.
	const waves = `[...document.querySelectorAll('#waves > li')].map(li => li.dataset.wave + ':' + li.dataset.verdict).join(',')`
	const waits = `[...document.querySelectorAll('#waves > li[data-wave="production"] .waits-for li')].map(li => li.dataset.key || 'hidden ' + li.dataset.hidden).join(',')`
	const rows = `[...document.querySelectorAll('#waves tr[data-key]')].map(r => r.dataset.kind + ' ' + r.dataset.key).join(',')`
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/fleet"),
		chromedp.WaitVisible(chromedp.ID("connect")),
		chromedp.SendKeys(chromedp.ID("token"), tokenPat),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#waves tr[data-key="team-b/sneaky"]`)),
	)
	if err != nil {
		t.Fatalf("cannot show the fleet: %v", err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](waves)); err != nil || got != "canary:Adopt,staging:Adopt,production:Hold" {
		t.Errorf("the waves in order with their gates: got %q, %v", got, err)
	}
	clouds, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#waves > li[data-wave="production"] .cloud')].map(c => c.dataset.cloud + '=' + [...c.querySelectorAll('tr[data-key]')].map(r => r.dataset.key).join('+')).join(',')`))
	if want := "aws=team-a/prod-eks+team-a/search-x7k2q,azure=team-b/prod-aks,gcp=/ops-p4m8z+team-b/sneaky"; err != nil || clouds != want {
		t.Errorf("the production wave's Clusters and XClusters per cloud: got %q, %v; want %q", clouds, err, want)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](waits)); err != nil || got != "team-a/stg-eks,team-b/stg-aks" {
		t.Errorf("what production waits for: got %q, %v", got, err)
	}
	order, err := chromedp.Run(ctx, chromedp.Evaluate[string](rows))
	if err != nil {
		t.Fatal(err)
	}
	const wantVerdicts = "Cluster platform/canary-gke=Keep,Cluster team-a/stg-eks=Keep,Cluster team-b/stg-aks=Adopt," +
		"Cluster team-a/prod-eks=Hold,XCluster team-a/search-x7k2q=Hold,Cluster team-b/prod-aks=Hold,XCluster /ops-p4m8z=Hold,Cluster team-b/sneaky=Hold"
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageVerdicts)); err != nil || got != wantVerdicts || got != ruledAsPage(t, w, order) {
		t.Errorf("each Cluster's verdict on the page: got %q, %v; want %q, the fleet controller's rulings %q", got, err, wantVerdicts, ruledAsPage(t, w, order))
	}

	// Live: team-b's staging Cluster reaches the target; production now
	// waits for team-a's alone, without a reload, and the Cluster keeps
	// its target.
	reachTarget(t, w, "team-b", "stg-aks")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](waits+` === "team-a/stg-eks"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](waits))
		t.Errorf("production's wait after team-b's Cluster moved: got %q, %v", got, err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#waves tr[data-key="team-b/stg-aks"]').dataset.verdict`)); err != nil || got != "Keep" {
		t.Errorf("team-b's staging Cluster once it runs the target: got %q, %v; want Keep", got, err)
	}
	if status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('stream-status').dataset.state`)); err != nil || status != "live" {
		t.Errorf("the stream's status: %q, %v; want live", status, err)
	}
	screenshot(ctx, t, "fleet.png")

	// A tenant's view in the same tab: its own Clusters, the rest
	// counted, nothing of team-a's nor the platform team's XCluster of no
	// claim on the page.
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("token"), tokenBob),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitNotPresent(chromedp.CSS(`#waves tr[data-key="team-a/stg-eks"]`)),
	)
	if err != nil {
		t.Fatalf("cannot show the fleet as a tenant: %v", err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](waits)); err != nil || got != "hidden 1" {
		t.Errorf("what production waits for, as team-b sees it: got %q, %v; want one hidden", got, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil || strings.Contains(text, "team-a") || strings.Contains(text, "canary-gke") || strings.Contains(text, "ops-p4m8z") || strings.Contains(text, "search-x7k2q") {
		t.Errorf("team-b's page names another tenant's Cluster (%v):\n%s", err, text)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageVerdicts)); err != nil || got != "Cluster team-b/stg-aks=Keep,Cluster team-b/prod-aks=Hold,Cluster team-b/sneaky=Hold" {
		t.Errorf("team-b's Clusters' verdicts: got %q, %v", got, err)
	}
	screenshot(ctx, t, "fleet-tenant.png")

	// The platform team again, and the catalog raises cert-manager, which
	// every Cluster then reports it is asked for: each Cluster shows the
	// chart versions it runs, and the gates name the chart's move;
	// production waits for the earlier waves' Clusters that run the old
	// version, and for its approval by name.
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("token"), tokenPat),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#waves tr[data-key="team-a/stg-eks"]`)),
	)
	if err != nil {
		t.Fatalf("cannot show the fleet to the platform team again: %v", err)
	}
	raiseChart(t, w, "cert-manager", "v1.19.2")
	reportCharts(t, w, "cert-manager", "v1.19.2")
	const moves = `[...document.querySelectorAll('#waves > li')].map(li => li.dataset.wave + ':' + li.dataset.verdict + ':' + [...li.querySelectorAll('.facts dt')].filter(dt => dt.textContent === 'Moves').map(dt => dt.nextSibling.textContent).join('')).join(' | ')`
	const wantMoves = "canary:Adopt:cert-manager=v1.19.2 | staging:Hold:cert-manager=v1.19.2 | production:Hold:1.34, cert-manager=v1.19.2"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](moves+` === "`+wantMoves+`"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](moves))
		t.Errorf("the waves' moves once the catalog raised cert-manager: got %q, %v; want %q", got, err, wantMoves)
	}
	order, err = chromedp.Run(ctx, chromedp.Evaluate[string](rows))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]struct{ js, want string }{
		"the catalog's versions": {`[...document.querySelectorAll('#fleet-charts .chart')].map(c => c.textContent).join(',')`,
			"cert-manager v1.19.2,external-dns 1.19.0,ingress-nginx 4.13.3,kube-prometheus-stack 79.5.0"},
		"the chart versions prod-eks runs": {`[...document.querySelectorAll('#waves tr[data-key="team-a/prod-eks"] td.charts .chart')].map(c => c.textContent).join(',')`,
			"cert-manager v1.19.1,ingress-nginx 4.13.3"},
		"what production waits for, with the chart it runs": {`[...document.querySelectorAll('#waves > li[data-wave="production"] .waits-for li')].map(li => li.textContent).join(' | ')`,
			"platform/canary-gke (gcp) runs 1.34, cert-manager v1.19.1 | team-a/stg-eks (aws) runs 1.33, cert-manager v1.19.1, not Ready | team-b/stg-aks (azure) runs 1.34, cert-manager v1.19.1"},
		"production's approval, by change": {`[...document.querySelectorAll('#waves > li[data-wave="production"] .facts dt')].filter(dt => dt.textContent === 'Approval').map(dt => dt.nextSibling.textContent).join('')`,
			"required, not given for 1.34, cert-manager=v1.19.2"},
		"each Cluster's verdict, the controller's": {pageVerdicts, ruledAsPage(t, w, order)},
		"the canary's verdict on the chart": {`document.querySelector('#waves tr[data-key="platform/canary-gke"] td.ruling').innerText.replace(/\s+/g, ' ').trim()`,
			"Adopts Wave canary adopts 1.34+cert-manager=v1.19.2,ingress-nginx=4.13.3: the earlier waves run it and are Ready."},
	}
	for _, what := range slices.Sorted(maps.Keys(checks)) {
		c := checks[what]
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](c.js)); err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", what, got, err, c.want)
		}
	}
	screenshot(ctx, t, "fleet-charts.png")
	if msgs := console(); len(msgs) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}

// pageMoves is each XR row of the page's platform release as "Kind
// namespace/name" and its verdict, in page order.
const pageMoves = `[...document.querySelectorAll('#release-waves tr[data-xr]')].map(r => r.dataset.xr + '=' + r.dataset.verdict).join(',')`

// releaseGates is each release wave's name and its gate's verdict, in
// order.
const releaseGates = `[...document.querySelectorAll('#release-waves > li')].map(li => li.dataset.wave + ':' + li.dataset.verdict).join(',')`

// movedAsPage are the fleet controller's moves (fleet.ReleaseMoves) on
// the world's XRs, Composition revisions and baseline as the API server
// holds them, at now, in the order of the page's rows (pageMoves without
// the verdicts), as pageMoves says them.
func movedAsPage(t *testing.T, w *world, rows string, now time.Time) string {
	t.Helper()
	var objs []runtime.Object
	for _, gvr := range fleetResources() {
		l, err := w.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	}
	moves, _ := controllerMoves(t, objs, now)
	var out []string
	for _, row := range strings.Split(rows, ",") {
		verdict, _, _ := strings.Cut(moves[row], ": ")
		out = append(out, row+"="+verdict)
	}
	return strings.Join(out, ",")
}

// setRelease makes the world's XRs, claims and baseline what releaseFleet(state,
// rel, approved...) makes them: what Crossplane and the platform team
// would have done.
func setRelease(t *testing.T, w *world, state releaseState, rel map[string]any, approved ...any) {
	t.Helper()
	for _, o := range releaseFleet(state, rel, approved...) {
		u, _ := o.(*unstructured.Unstructured)
		gvr := envConfigGVR
		if k, ok := kindOf(u); ok {
			gvr = k.Resource
		} else if k, ok := claimKindOf(u); ok {
			gvr = k.Resource
		} else if u.GetKind() != "EnvironmentConfig" {
			continue
		}
		c := w.dyn.Resource(gvr).Namespace(u.GetNamespace())
		old, err := c.Get(context.Background(), u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.SetResourceVersion(old.GetResourceVersion())
		if _, err := c.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// shoot saves a PNG of the element sel as _output/portal/name, and logs
// where.
func shoot(ctx context.Context, t *testing.T, sel, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("..", "..", "_output", "portal")
	if err := os.MkdirAll(out, 0o750); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, name)
	if err := os.WriteFile(path, shot, 0o600); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot of %s: %s", sel, abs)
}

// TestFleetReleaseInABrowser shows a platform release in Chromium: per
// wave its gate and each XR of every kind with the fleet controller's move
// on it, live through a halt, to the platform team and to a tenant, and
// then a rollback.
func TestFleetReleaseInABrowser(t *testing.T) {
	noon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	canaryDone := releaseState{"canary-gke": "r2", "canary-db": "r2"}
	w := newWorld(t, releaseFleet(canaryDone, toR2)...)
	w.srv.Fleet.now = func() time.Time { return noon }
	srv := httptest.NewServer(w.srv.Handler())
	t.Cleanup(srv.Close) // after the browser closed its stream
	ctx, console := browse(t)

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/fleet"),
		chromedp.WaitVisible(chromedp.ID("connect")),
		chromedp.SendKeys(chromedp.ID("token"), tokenPat),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#release-waves tr[data-xr="Database team-b/orders"]`)),
	)
	if err != nil {
		t.Fatalf("cannot show the fleet's release: %v", err)
	}
	// rows are the page's XR rows, in order.
	const rows = `[...document.querySelectorAll('#release-waves tr[data-xr]')].map(r => r.dataset.xr).join(',')`
	check := func(what string, checks map[string]struct{ js, want string }) {
		t.Helper()
		for _, name := range slices.Sorted(maps.Keys(checks)) {
			c := checks[name]
			if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](c.js)); err != nil || got != c.want {
				t.Errorf("%s, %s: got %q, %v; want %q", what, name, got, err, c.want)
			}
		}
	}
	// rowsNow are the page's XR rows.
	rowsNow := func() string {
		t.Helper()
		order, err := chromedp.Run(ctx, chromedp.Evaluate[string](rows))
		if err != nil {
			t.Fatal(err)
		}
		return order
	}
	// as signs in again in the same tab as who with token, waits until
	// wait, and returns the page's XR rows.
	as := func(who, token string, wait chromedp.Action[chromedp.Void]) string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("connect")), wait); err != nil {
			t.Fatalf("cannot show the release to %s: %v", who, err)
		}
		return rowsNow()
	}
	// gatesBecome waits until the release's gates are want, live, and
	// returns the page's XR rows then.
	gatesBecome := func(what, want string) string {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](releaseGates+` === "`+want+`"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](releaseGates))
			t.Fatalf("the release's gates %s: got %q, %v; want %q", what, got, err, want)
		}
		return rowsNow()
	}
	order := rowsNow()
	check("the release as the canary ran r2", map[string]struct{ js, want string }{
		"the heading":                      {`document.getElementById('release-title').textContent`, "Release r2 (from r1)"},
		"the waves' gates":                 {releaseGates, "canary:Keep,staging:Adopt,production:Hold"},
		"each XR's move, the controller's": {pageMoves, movedAsPage(t, w, order, noon)},
		"the XRs in order": {rows, "Cluster platform/canary-gke,Database platform/canary-db,Cluster team-a/stg-eks,Database team-b/orders,XDatabase team-b/orders-x7k2q," +
			"AppEnvironment team-a/shop,WorkloadBudget team-c/budget,XAppEnvironment team-c/shop-q9w2e,XCluster /ops-p4m8z"},
		"staging's done count":  {`document.querySelector('#release-waves > li[data-wave="staging"] .done').textContent`, "0 of 3 on r2"},
		"production's approval": {`document.querySelector('#release-waves > li[data-wave="production"] .approval').textContent`, "Needs approval: release=r2"},
		"what is left out":      {`document.getElementById('release-outside').textContent`, "1 XR(s) whose Composition is no release's: not moved"},
	})

	// Live: staging moved, and r2 cannot render team-b's Database:
	// production halts, naming it to the platform team.
	halted := releaseState{"canary-gke": "r2", "canary-db": "r2", "stg-eks": "r2", "orders": "r2!", "orders-x7k2q": "r1>r2"}
	setRelease(t, w, halted, toR2)
	order = gatesBecome("once staging's Database failed on r2", "canary:Keep,staging:Keep,production:Halt")
	check("the halted release", map[string]struct{ js, want string }{
		"each XR's move, the controller's": {pageMoves, movedAsPage(t, w, order, noon)},
		"what production waits for": {`[...document.querySelectorAll('#release-waves > li[data-wave="production"] .waits-for li')].map(li => li.textContent).join(' | ')`,
			"Database team-b/orders — failed | XDatabase team-b/orders-x7k2q"},
		"the claim's XR's selection, its claim's": {`document.querySelector('#release-waves tr[data-xr="XDatabase team-b/orders-x7k2q"] .runs').innerText.replace(/\s+/g, ' ').trim()`,
			"r1 → r2 on its claim Database team-b/orders"},
		"the failed Database's row": {`document.querySelector('#release-waves tr[data-xr="Database team-b/orders"]').innerText.replace(/\s+/g, ' ').trim()`,
			"DATABASE orders team-b r2 → r2 Ready Not Synced failed ReconcileError: cannot compose resources: the release refused it Selected Wave staging: runs or moves to release=r2."},
	})
	shoot(ctx, t, "#release-part", "fleet-release.png")

	// A tenant of team-a, in the same tab: its own XRs, the rest counted,
	// and the halt without the name of team-b's Database.
	order = as("a tenant", tokenAlice, chromedp.WaitNotPresent(chromedp.CSS(`#release-waves tr[data-xr="Database team-b/orders"]`)))
	check("team-a's view", map[string]struct{ js, want string }{
		"its XRs' moves, the controller's": {pageMoves, movedAsPage(t, w, order, noon)},
		"its XRs":                          {rows, "Cluster team-a/stg-eks,AppEnvironment team-a/shop"},
		"what production waits for":        {`[...document.querySelectorAll('#release-waves > li[data-wave="production"] .waits-for li')].map(li => li.textContent).join(' | ')`, "2 XR(s) of namespaces you may not see"},
	})
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	for _, other := range []string{"canary-gke", "canary-db", "orders", "shop-q9w2e", "budget", "ops-p4m8z", "foreign"} {
		if err != nil || strings.Contains(text, other) {
			t.Errorf("team-a's page names %q, of another namespace (%v):\n%s", other, err, text)
		}
	}
	shoot(ctx, t, "#release-part", "fleet-release-tenant.png")

	// The platform team rolls back: production first.
	as("the platform team again", tokenPat, chromedp.WaitVisible(chromedp.CSS(`#release-waves tr[data-xr="Database team-b/orders"]`)))
	rollingBack := releaseState{"canary-gke": "r2", "canary-db": "r2", "stg-eks": "r2", "orders": "r2", "orders-x7k2q": "r2", "shop": "r2>r1", "shop-q9w2e": "r2", "budget": "r2", "ops-p4m8z": "r1"}
	setRelease(t, w, rollingBack, backR1)
	order = gatesBecome("of the rollback", "canary:Hold,staging:Hold,production:Adopt")
	check("the rollback", map[string]struct{ js, want string }{
		"the heading":                      {`document.getElementById('release-title').textContent`, "Rollback to r1 (from r2)"},
		"each XR's move, the controller's": {pageMoves, movedAsPage(t, w, order, noon)},
		"production's approval":            {`document.querySelector('#release-waves > li[data-wave="production"] .approval').textContent`, "No approval: a rollback"},
	})
	shoot(ctx, t, "#release-part", "fleet-release-rollback.png")
	screenshot(ctx, t, "fleet-release-page.png")
	if msgs := console(); len(msgs) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}
