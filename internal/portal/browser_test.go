package portal

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// chromium finds Debian's chromium; without it the browser test skips,
// unless PORTAL_BROWSER=required (CI installs it) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PORTAL_BROWSER") == "required" {
		t.Fatal("PORTAL_BROWSER=required but no chromium is installed (apt-get install chromium)")
	}
	t.Skip("SKIP: no chromium here (apt-get install chromium); the page is not tested in a browser")
	return ""
}

// crossplane plays Crossplane for environments the page creates: it
// composes three resources, then makes them Ready one by one, then the
// environment.
func (w *world) crossplane(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	c := w.dyn.Resource(envGVR).Namespace("team-a")
	var u *unstructured.Unstructured
	for u == nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
		u, _ = c.Get(ctx, name, metav1.GetOptions{})
	}
	refs := []any{}
	parts := []struct{ name, component string }{{name + "-bucket", "bucket"}, {name + "-backend", "backend"}, {name + "-service", "service"}}
	for i, p := range parts {
		g, gvr := bucketGVK, bucketGVR
		if i > 0 {
			g, gvr = objectGVK, objectGVR
		}
		if _, err := w.dyn.Resource(gvr).Namespace("team-a").Create(ctx, composed(g, p.name, name, p.component, "False"), metav1.CreateOptions{}); err != nil {
			t.Errorf("cannot compose %s: %v", p.name, err)
			return
		}
		refs = append(refs, map[string]any{"apiVersion": g.GroupVersion().String(), "kind": g.Kind, "name": p.name})
	}
	_ = unstructured.SetNestedSlice(u.Object, refs, "spec", "crossplane", "resourceRefs")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "False", "reason": "Creating"}, map[string]any{"type": "Synced", "status": "True"}}, "status", "conditions")
	if _, err := c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Errorf("cannot reference the composed resources: %v", err)
		return
	}
	for i, p := range parts {
		time.Sleep(300 * time.Millisecond)
		gvr := bucketGVR
		if i > 0 {
			gvr = objectGVR
		}
		w.setReady(t, gvr, p.name, "True")
	}
	time.Sleep(300 * time.Millisecond)
	w.setReady(t, envGVR, name, "True")
}

// browse starts headless Chromium for a test: its context, bounded to a
// minute, and the console messages the page logged so far, each a defect.
func browse(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	bin := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)

	var mu sync.Mutex
	var console []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, fmt.Sprintf("%s: %s", m.Type, m.Text))
			mu.Unlock()
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(console)
	}
}

// screenshot saves a PNG of the page as _output/portal/name.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("..", "..", "_output", "portal")
	if err := os.MkdirAll(out, 0o750); err == nil {
		_ = os.WriteFile(filepath.Join(out, name), shot, 0o600)
	}
}

func TestPageInABrowser(t *testing.T) {
	w := newWorld(t, env("existing"))
	srv := httptest.NewServer(w.srv.Handler())
	t.Cleanup(srv.Close) // after the browser closed its stream
	ctx, console := browse(t)

	go w.crossplane(ctx, t, "browser-app")
	const allReady = `(() => { const rows = [...document.querySelectorAll('#resources-body tr[data-id]')];
		return rows.length === 3 && rows.every(r => r.dataset.ready === 'True') &&
			document.getElementById('env-ready').dataset.ready === 'True'; })()`
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("connect")),
		chromedp.SendKeys(chromedp.ID("token"), tokenAlice),
		chromedp.SendKeys(chromedp.ID("namespace"), "team-a"),
		chromedp.Click(chromedp.ID("connect")),
		chromedp.WaitVisible(chromedp.CSS(`#env-list li[data-name="existing"]`)),
		chromedp.SendKeys(chromedp.ID("name"), "browser-app"),
		chromedp.SetValue(chromedp.ID("size"), "small"),
		chromedp.Click(chromedp.ID("create")),
		chromedp.WaitVisible(chromedp.CSS(`#resources-body tr[data-id]`)),
	)
	if err != nil {
		t.Fatalf("cannot create an environment through the form: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](allReady, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		rows, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('resources-body').innerText`))
		t.Fatalf("the rows did not all turn ready: %v\n%s", err, rows)
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('stream-status').dataset.state`))
	if err != nil || status != "live" {
		t.Errorf("the stream's status: %q, %v; want live", status, err)
	}
	screenshot(ctx, t, "page.png")
	if msgs := console(); len(msgs) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}
