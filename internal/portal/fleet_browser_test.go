package portal

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestFleetInABrowser(t *testing.T) {
	w := newWorld(t, append(testFleet(), baselineConfig("cluster-platform-baseline", testWaves))...)
	srv := httptest.NewServer(w.srv.Handler())
	t.Cleanup(srv.Close) // after the browser closed its stream
	ctx, console := browse(t)

	// The platform team's view: three waves in order, each Cluster per
	// cloud, production waiting for both staging Clusters by name.
	const waves = `[...document.querySelectorAll('#waves > li')].map(li => li.dataset.wave + ':' + li.dataset.verdict).join(',')`
	const waits = `[...document.querySelectorAll('#waves > li[data-wave="production"] .waits-for li')].map(li => li.dataset.key || 'hidden ' + li.dataset.hidden).join(',')`
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
	clouds, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#waves > li[data-wave="staging"] .cloud')].map(c => c.dataset.cloud + '=' + [...c.querySelectorAll('tr[data-key]')].map(r => r.dataset.key).join('+')).join(',')`))
	if err != nil || clouds != "aws=team-a/stg-eks,azure=team-b/stg-aks" {
		t.Errorf("the staging wave's Clusters per cloud: got %q, %v", clouds, err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](waits)); err != nil || got != "team-a/stg-eks,team-b/stg-aks" {
		t.Errorf("what production waits for: got %q, %v", got, err)
	}

	// Live: team-b's staging Cluster reaches the target; production now
	// waits for team-a's alone, without a reload.
	reachTarget(t, w, "team-b", "stg-aks")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](waits+` === "team-a/stg-eks"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](waits))
		t.Errorf("production's wait after team-b's Cluster moved: got %q, %v", got, err)
	}
	if status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('stream-status').dataset.state`)); err != nil || status != "live" {
		t.Errorf("the stream's status: %q, %v; want live", status, err)
	}
	screenshot(ctx, t, "fleet.png")

	// A tenant's view in the same tab: its own Clusters, the rest
	// counted, nothing of team-b's on the page.
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
	if err != nil || strings.Contains(text, "team-a") || strings.Contains(text, "canary-gke") {
		t.Errorf("team-b's page names another tenant's Cluster (%v):\n%s", err, text)
	}
	screenshot(ctx, t, "fleet-tenant.png")

	// The platform team again, and the catalog raises cert-manager: each
	// Cluster shows the chart versions it runs, and the gates name the
	// chart's move; production waits for the earlier waves' Clusters
	// that run the old version, and for its approval by name.
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("token"), tokenPat),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#waves tr[data-key="team-a/stg-eks"]`)),
	)
	if err != nil {
		t.Fatalf("cannot show the fleet to the platform team again: %v", err)
	}
	raiseChart(t, w, "cert-manager", "v1.19.2")
	const moves = `[...document.querySelectorAll('#waves > li')].map(li => li.dataset.wave + ':' + li.dataset.verdict + ':' + [...li.querySelectorAll('.facts dt')].filter(dt => dt.textContent === 'Moves').map(dt => dt.nextSibling.textContent).join('')).join(' | ')`
	const wantMoves = "canary:Adopt:cert-manager=v1.19.2 | staging:Hold:cert-manager=v1.19.2 | production:Hold:1.34, cert-manager=v1.19.2"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](moves+` === "`+wantMoves+`"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](moves))
		t.Errorf("the waves' moves once the catalog raised cert-manager: got %q, %v; want %q", got, err, wantMoves)
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
	}
	for what, c := range checks {
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](c.js)); err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", what, got, err, c.want)
		}
	}
	screenshot(ctx, t, "fleet-charts.png")
	if msgs := console(); len(msgs) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}
