package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// browser finds Chromium or Chrome, "" when there is none.
func browser() string {
	for _, b := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// pageState is what the page shows of the open environment.
type pageState struct {
	Rows    int    `json:"rows"`
	Ready   int    `json:"ready"`
	Env     string `json:"env"`
	Stream  string `json:"stream"`
	Message string `json:"message"`
}

// pageStateJS reads pageState from the page.
const pageStateJS = `(() => {
  const rows = [...document.querySelectorAll('#resources tbody tr')];
  const env = document.getElementById('env-ready');
  const stream = document.getElementById('stream-status');
  const msg = document.getElementById('message');
  return {
    rows: rows.length,
    ready: rows.filter((r) => r.dataset.ready === 'True').length,
    env: env ? (env.dataset.ready || '') : '',
    stream: stream ? (stream.dataset.state || '') : '',
    message: msg ? msg.textContent : '',
  };
})()`

// portalPage creates an environment as alice through the page in a
// headless Chromium and waits until the page shows every row and the
// environment Ready, failing on any console error or uncaught exception;
// then deletes it through the API. It returns the summary line, "" when
// it was skipped for want of a browser.
func (s *scenarios) portalPage(p *portalClient, screenshot, alice, size string) (string, error) {
	const name = "browser-app"
	ns := portalTenant
	path := browser()
	if path == "" {
		if os.Getenv("PORTAL_BROWSER") == "required" {
			return "", errors.New("no Chromium or Chrome found, and PORTAL_BROWSER=required (apt-get install chromium)")
		}
		fmt.Println("  portal page: SKIP: no Chromium or Chrome found (apt-get install chromium; PORTAL_BROWSER=required makes this an error)")
		return "", nil
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 1400))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with its sandbox.
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return "", fmt.Errorf("cannot start %s: %w", path, err)
	}

	// Every console error and uncaught exception fails the page.
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text))
				mu.Unlock()
			}
		}
	}()
	consoleErrors := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}

	tctx, tcancel := context.WithTimeout(ctx, s.timeout)
	defer tcancel()
	start := time.Now()
	poll := []chromedp.PollOption{chromedp.WithPollingInterval(100 * time.Millisecond), chromedp.WithPollingTimeout(time.Minute)}
	if err := chromedp.Do(tctx,
		chromedp.Navigate(p.base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), alice),
		chromedp.SendKeys(chromedp.ID("namespace"), ns),
		chromedp.Click(chromedp.ID("connect")),
		// The policy filled the form: its sizes, its database option.
		chromedp.Poll[chromedp.Void](`!document.getElementById('workspace').hidden && document.querySelectorAll('#size option').length > 0 && !document.getElementById('create-fieldset').disabled`, poll...),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SetValue(chromedp.ID("size"), size),
		chromedp.Evaluate[chromedp.Void](`(() => { const d = document.getElementById('database'); if (!d.checked) d.click(); })()`),
		chromedp.Click(chromedp.ID("create")),
		chromedp.WaitVisible(chromedp.ID("env-detail")),
	); err != nil {
		return "", fmt.Errorf("cannot create %s through the page: %w (console: %v)", name, err, consoleErrors())
	}
	created := time.Now()
	var last pageState
	for {
		var err error
		last, err = chromedp.Run(tctx, chromedp.Evaluate[pageState](pageStateJS))
		if err != nil {
			return "", fmt.Errorf("cannot read the page: %w (last %+v)", err, last)
		}
		if last.Rows > 0 && last.Ready == last.Rows && last.Env == "True" {
			break
		}
		if errs := consoleErrors(); len(errs) > 0 {
			return "", fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
		}
		if time.Since(created) > s.timeout {
			return "", fmt.Errorf("timed out after %s waiting for the page to show %s Ready: %+v", s.timeout, name, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
	readyIn := time.Since(created)
	if _, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name); err != nil {
		return "", fmt.Errorf("the AppEnvironment the page created: %w", err)
	}
	if screenshot != "" {
		time.Sleep(2 * time.Second) // the rows' change highlight fades
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			return "", fmt.Errorf("cannot take a screenshot: %w", err)
		}
		if err := os.WriteFile(screenshot, png, 0o600); err != nil {
			return "", fmt.Errorf("cannot save the screenshot: %w", err)
		}
	}
	// A moment more for late errors, then none may have been logged.
	time.Sleep(500 * time.Millisecond)
	if errs := consoleErrors(); len(errs) > 0 {
		return "", fmt.Errorf("the page logged errors: %s", strings.Join(errs, "; "))
	}
	shot := ""
	if screenshot != "" {
		shot = "; screenshot " + screenshot
	}
	fmt.Printf("  portal page: %s created in %s through the page (sign-in and form in %.1f s) -> the page shows it and all %d rows Ready in %.1f s; stream %s; no console error or exception%s\n",
		name, filepath.Base(path), created.Sub(start).Seconds(), last.Rows, readyIn.Seconds(), last.Stream, shot)

	live, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return "", err
	}
	if _, err := p.expect(http.StatusAccepted, "alice", http.MethodDelete, envsPath(ns, name), alice, nil); err != nil {
		return "", err
	}
	took, err := s.gone("AppEnvironment", ns, name, resourceRefs(live))
	if err != nil {
		return "", err
	}
	fmt.Printf("  portal page: %s deleted through the API, gone with its %d composed resources in %.1f s\n", name, len(resourceRefs(live)), took.Seconds())
	return fmt.Sprintf("%-30s Ready in %5.1f s, %3d rows Ready on the page, no console error", "portal page "+ns+"/"+name, readyIn.Seconds(), last.Rows), nil
}
