package portal

import (
	"context"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
