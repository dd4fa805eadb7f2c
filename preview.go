package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// PreviewCmd previews XRs in process (package preview).
type PreviewCmd struct {
	Files    []string `arg:"" optional:"" help:"XR or claim files (any module, namespaced or legacy)."`
	Env      []string `help:"EnvironmentConfig files or folders." placeholder:"PATH"`
	Required []string `help:"Other objects the XRs' requirements may name (spend ConfigMaps, the Cluster a Database joins): files or folders." placeholder:"PATH"`
	Observed string   `help:"The observed composed resources of the (one) XR: also plan one reconcile against them." placeholder:"FILE"`
	Output   string   `short:"o" enum:"table,yaml,observed" default:"table" help:"table: one line per composed resource; yaml: the converged stack; observed: the composed resources as the providers would report them once converged (for crossplane render --observed-resources)."`
	Fleet    string   `help:"A folder of XRs (observed resources, when known, in <folder>/observed/<file>): plan each under --env and under --env-new; when the change moves the Kubernetes version or a chart's version, or --env-new sets rollout.waves, also show the rollout's waves, their gates and their Clusters per cloud." placeholder:"DIR"`
	EnvNew   []string `help:"With --fleet: the changed EnvironmentConfigs." placeholder:"PATH"`
	JSON     bool     `help:"With --fleet: print the report as JSON (the rollout's waves under rollout.waves)."`
	Now      string   `help:"With --fleet: the time the fleet controller's rulings are made at (RFC 3339), which the waves' soaks are measured against; empty: the current time. 0001-01-01T00:00:00Z is no clock: no soak has passed." placeholder:"TIME"`
	Release  string   `help:"With --fleet, instead of --env-new: a new platform release to render every XR with beside the current one, from the same observed state under --env: its function binary (started on a free loopback port) or the address (host:port) of a running function that serves gRPC without TLS. The report says per XR whether the two renders differ (the composed resources, the XR's status and conditions), what the new release adds, changes (field, old -> new), holds and would remove, which changes the cloud could make only by replacement, and which XRs it refuses with a Fatal." placeholder:"BINARY|HOST:PORT"`
	Current  string   `help:"With --release: the current release, named as --release names it; empty: this binary, in process." placeholder:"BINARY|HOST:PORT"`
	// Compositions and ReleaseCompositions are the two releases'
	// Compositions (preview.Side).
	Compositions        []string `help:"With --fleet and --release or --release-compositions: the current release's Compositions (files or folders): each XR is rendered with its step Input, the resources its step requires and its EnvironmentConfigs step, as its Composition has them (picked in Crossplane's order: the XRD's enforced one, its compositionRef, its compositionSelector, the XRD's default, the only one of its kind; the XRDs among these files count); empty: each kind's shipped step." placeholder:"PATH"`
	ReleaseCompositions []string `help:"With --fleet and --compositions: the new release's Compositions (files or folders); with no --release, a release that changes only its Compositions, rendered by the current function. Empty: the current release's." placeholder:"PATH"`
	EnvContext          bool     `help:"Deliver the EnvironmentConfigs merged into the pipeline context, as function-environment-configs does for the two-step and compat Compositions (selected by the labels baseline, cloud and planeType alone)."`

	// out is where the preview goes; progress, the progress bar and the
	// warnings about the files read.
	out, progress io.Writer
	// next, when set, is the new release's RunFunction in place of
	// --release (tests).
	next preview.Runner
}

// runner runs RunFunction in process.
func runner() preview.Runner {
	f := NewFunction(logging.NewNopLogger(), response.Options{TTLConverging: 15 * time.Second, TTLReady: 5 * time.Minute})
	return func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		rsp, _ := f.RunFunction(context.Background(), req) // it reports errors as Fatal results
		return rsp
	}
}

// world loads the environment and the other objects (preview.Load), and
// writes its warnings to warn.
func world(env, required []string, inContext bool, warn io.Writer) (preview.World, error) {
	w, warnings, err := preview.Load(env, required, inContext)
	for _, m := range warnings {
		if _, werr := fmt.Fprintf(warn, "Warning: %s\n", m); werr != nil && err == nil {
			err = werr
		}
	}
	return w, err
}

// Run previews.
func (c *PreviewCmd) Run() error {
	if c.out == nil {
		c.out, c.progress = os.Stdout, os.Stderr
	}
	if c.progress == nil {
		c.progress = io.Discard
	}
	w, err := world(c.Env, c.Required, c.EnvContext, c.progress)
	if err != nil {
		return err
	}
	run := runner()
	switch {
	case c.Fleet == "" && (len(c.Compositions) > 0 || len(c.ReleaseCompositions) > 0 || c.Release != ""):
		return fmt.Errorf("--release, --compositions and --release-compositions preview a release over a fleet: name its folder with --fleet")
	case c.Fleet != "" && len(c.Compositions) > 0 && c.Release == "" && c.next == nil && len(c.ReleaseCompositions) == 0:
		return fmt.Errorf("--compositions are the current release's: name the new one with --release or --release-compositions")
	}
	if c.Fleet != "" && (c.Release != "" || c.next != nil || len(c.ReleaseCompositions) > 0) {
		return c.release(run, w)
	}
	if c.Fleet != "" {
		return c.fleet(run, w)
	}
	if len(c.Files) == 0 {
		return fmt.Errorf("name XR files, or a folder with --fleet")
	}
	if c.Observed != "" && len(c.Files) != 1 {
		return fmt.Errorf("--observed plans one XR: name one file")
	}
	for i, f := range c.Files {
		xrs, err := xpsim.Load(f)
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", f, err)
		}
		for _, x := range xrs {
			if i > 0 || len(xrs) > 1 {
				if _, err := fmt.Fprintln(c.out); err != nil {
					return err
				}
			}
			if err := c.one(run, w, x); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

// one previews one XR.
func (c *PreviewCmd) one(run preview.Runner, w preview.World, x xpsim.Object) error {
	var observed map[string]xpsim.Object
	if c.Observed != "" {
		objs, err := xpsim.Load(c.Observed)
		if err != nil {
			return fmt.Errorf("cannot read the observed resources: %w", err)
		}
		observed = observedByName(objs)
	}
	st, err := preview.Converge(run, w, x, observed)
	if err != nil {
		return err
	}
	switch {
	case st.Fatal != "" && c.Output != "table":
		return fmt.Errorf("fatal: %s", st.Fatal)
	case c.Output == "yaml":
		err = preview.PrintYAML(c.out, st)
	case c.Output == "observed":
		err = preview.PrintObserved(c.out, st)
	default:
		err = preview.PrintTable(c.out, st)
	}
	if err != nil || observed == nil {
		return err
	}
	p, err := preview.PlanOne(run, w, x, observed)
	if err != nil {
		return err
	}
	if err := preview.PrintPlan(c.out, p); err != nil || c.Output != "table" {
		return err
	}
	return preview.PrintWalk(c.out, st)
}

// fleet plans every XR of the folder under both environments.
func (c *PreviewCmd) fleet(run preview.Runner, old preview.World) error {
	if len(c.EnvNew) == 0 {
		return fmt.Errorf("--fleet needs --env-new (the changed EnvironmentConfigs) or --release (a new platform release)")
	}
	updated, err := world(c.EnvNew, c.Required, c.EnvContext, c.progress)
	if err != nil {
		return err
	}
	xrs, err := loadFleet(c.Fleet)
	if err != nil {
		return err
	}
	now := time.Now()
	if c.Now != "" {
		if now, err = time.Parse(time.RFC3339, c.Now); err != nil {
			return fmt.Errorf("cannot read --now: %w", err)
		}
	}
	// Each XR is planned under the old environment, then under the new
	// one with the fleet as it stands and, for a Cluster the rollout
	// gates, again with the fleet controller's ruling on it at now.
	bar, n := newProgress(c.progress, 2*len(xrs)), 0
	impacts, err := preview.Fleet(run, old, updated, xrs, now, func() { n++; bar.set(n) })
	if err != nil {
		return err
	}
	bar.done()
	var report preview.FleetReport
	for _, im := range impacts {
		report.Add(im)
	}
	report.Rollout = preview.RolloutOf(old, updated, report.XRs, now)
	return preview.PrintFleet(c.out, &report, c.JSON)
}

// loadFleet reads the XRs of a folder, each with its observed resources
// when <dir>/observed/<file> holds them.
func loadFleet(dir string) ([]preview.FleetXR, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no XR in %s", dir)
	}
	var xrs []preview.FleetXR
	for _, f := range files {
		objs, err := xpsim.Load(f)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", f, err)
		}
		var observed map[string]xpsim.Object
		if obs := filepath.Join(dir, "observed", filepath.Base(f)); exists(obs) {
			o, err := xpsim.Load(obs)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", obs, err)
			}
			observed = observedByName(o)
		}
		for _, x := range objs {
			xrs = append(xrs, preview.FleetXR{File: filepath.Base(f), XR: x, Observed: observed})
		}
	}
	return xrs, nil
}

// release renders every XR of the folder with the current release and
// with the new one (--release, --release-compositions), under --env, and
// reports what differs.
func (c *PreviewCmd) release(run preview.Runner, w preview.World) (err error) {
	if len(c.EnvNew) > 0 {
		return fmt.Errorf("--release and --release-compositions preview a new release under the same environment: leave out --env-new (preview one change at a time)")
	}
	// remotes are the releases out of process: a call any of them fails
	// makes the preview fail, not a report of refusals.
	var remotes []*preview.Remote
	open := func(release string) (preview.Runner, error) {
		r, err := preview.Open(release)
		if err != nil {
			return nil, err
		}
		remotes = append(remotes, r)
		return r.Run, nil
	}
	defer func() {
		for _, r := range remotes {
			err = errors.Join(err, r.Close())
		}
	}()
	if len(c.ReleaseCompositions) > 0 && len(c.Compositions) == 0 {
		return fmt.Errorf("--release-compositions needs --compositions, the current release's Compositions, to render both releases alike")
	}
	current, next := preview.Side{}, preview.Side{Run: c.next}
	if len(c.Compositions) > 0 {
		if current.Compositions, err = preview.LoadCompositions(c.Compositions); err != nil {
			return fmt.Errorf("--compositions: %w", err)
		}
		next.Compositions = current.Compositions
	}
	if len(c.ReleaseCompositions) > 0 {
		if next.Compositions, err = preview.LoadCompositions(c.ReleaseCompositions); err != nil {
			return fmt.Errorf("--release-compositions: %w", err)
		}
	}
	if next.Run == nil && c.Release != "" {
		if next.Run, err = open(c.Release); err != nil {
			return err
		}
	}
	if current.Run = run; c.Current != "" {
		if current.Run, err = open(c.Current); err != nil {
			return err
		}
	}
	if next.Run == nil {
		// Only the Compositions change: the current function renders both.
		next.Run = current.Run
	}
	xrs, err := loadFleet(c.Fleet)
	if err != nil {
		return err
	}
	bar, n := newProgress(c.progress, len(xrs)), 0
	impacts, err := preview.Release(current, next, w, xrs, func() { n++; bar.set(n) })
	if err != nil {
		return err
	}
	bar.done()
	for _, r := range remotes {
		if err := r.Err(); err != nil {
			return fmt.Errorf("cannot preview the release: %w", err)
		}
	}
	var report preview.ReleaseReport
	for _, im := range impacts {
		report.Add(im)
	}
	return preview.PrintRelease(c.out, &report, c.JSON)
}

func observedByName(objs []xpsim.Object) map[string]xpsim.Object {
	out := map[string]xpsim.Object{}
	for _, o := range objs {
		if n := xpsim.CompositionResourceName(o); n != "" {
			out[n] = o
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// progress is a bar on a terminal, nothing elsewhere.
type progress struct {
	w     io.Writer
	total int
}

func newProgress(w io.Writer, total int) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{total: total}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &progress{total: total}
	}
	return &progress{w: w, total: total}
}

func (p *progress) set(n int) {
	if p.w == nil {
		return
	}
	const width = 40
	done := width * n / p.total
	_, _ = fmt.Fprintf(p.w, "\r[%s%s] %d/%d plans", strings.Repeat("=", done), strings.Repeat(" ", width-done), n, p.total)
}

func (p *progress) done() {
	if p.w != nil {
		_, _ = fmt.Fprintln(p.w)
	}
}
