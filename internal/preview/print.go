package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/seed-6471616d/function-cluster-platform/internal/simulate"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// PrintTable writes the stack as a table: name, kind, external name, what
// it waits for, and the rounds it was created and ready in; then the
// warnings, the Fatal and the estimate.
func PrintTable(out io.Writer, st *Stack) error {
	w := &errWriter{w: out}
	meta, _ := st.XR["metadata"].(map[string]any)
	name := fmt.Sprint(meta["name"])
	if ns, _ := meta["namespace"].(string); ns != "" {
		name = ns + "/" + name
	}
	state := fmt.Sprintf("Ready after %d rounds", st.Rounds)
	switch {
	case st.Fatal != "":
		state = fmt.Sprintf("Fatal in round %d", st.Rounds)
	case !st.Converged:
		state = fmt.Sprintf("not converged after %d rounds", st.Rounds)
	}
	w.printf("%v %s: %s, %d composed resources\n\n", st.XR["kind"], name, state, len(st.Resources))
	tw := &errWriter{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	tw.printf("NAME\tKIND\tEXTERNAL-NAME\tWAITS-FOR\tCREATED\tREADY\n")
	for _, r := range st.Table {
		if strings.Contains(r.Name, usageInfix) {
			continue // Usages are the WAITS-FOR column
		}
		tw.printf("%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Kind, dash(r.ExternalName), dash(strings.Join(r.WaitsFor, ",")), roundOf(r.Created), roundOf(r.Ready))
	}
	if err := tw.flush(); err != nil {
		return err
	}
	usages := 0
	for _, r := range st.Table {
		if strings.Contains(r.Name, usageInfix) {
			usages++
		}
	}
	plural := "s"
	if usages == 1 {
		plural = ""
	}
	w.printf("(and %d Usage%s, on the WAITS-FOR edges whose order of deletion matters)\n", usages, plural)
	printResults(w, st.Warnings, st.Fatal, st.Estimate)
	return w.err
}

func printResults(w *errWriter, warnings []string, fatal string, est *Cost) {
	for _, m := range warnings {
		w.printf("Warning: %s\n", m)
	}
	if fatal != "" {
		w.printf("Fatal: %s\n", fatal)
	}
	if est != nil {
		w.printf("Estimated monthly cost: $%.2f to $%.2f\n", est.Min, est.Max)
	}
}

// PrintPlan writes what one reconcile would do to the observed resources,
// and its Warnings and Fatal as Crossplane surfaces them (crossplane render
// prints them too).
func PrintPlan(out io.Writer, p *Plan) error {
	w := &errWriter{w: out}
	w.printf("\nPlan against the observed resources: %d added, %d changed, %d held, %d removed\n", len(p.Added), len(p.Changed), len(p.Held), len(p.Removed))
	for _, n := range p.Added {
		w.printf("  + %s\n", n)
	}
	for _, n := range slices.Sorted(maps.Keys(p.Changed)) {
		w.printf("  ~ %s\n", n)
		for _, c := range p.Changed[n] {
			w.printf("      %s: %s -> %s\n", c.Path, brief(c.Old), brief(c.New))
		}
	}
	for _, n := range p.Held {
		w.printf("  = %s (held: only the XR's spec may remove it)\n", n)
	}
	for _, n := range p.Removed {
		w.printf("  - %s\n", n)
	}
	if u := p.Upgrade; u != nil && len(u.Plan) > 0 {
		if u.Running != "" {
			w.printf("\nUpgrade to PostgreSQL %s (the server runs %s), in the steps the cloud upgrades in place: %d step(s)\n", u.Target, u.Running, len(u.Plan))
		} else {
			w.printf("\nUpgrade to %s (the control plane runs %s), one minor at a time, control plane first, node pools after: %d step(s)\n", u.Target, dash(u.ControlPlane), len(u.Plan))
		}
		for i, s := range u.Plan {
			now := ""
			if i == 0 {
				now = "   <- now: waits for " + u.WaitingFor
			}
			w.printf("  %d) %s%s\n", i+1, s, now)
		}
	}
	for _, r := range p.Rotations {
		if len(r.From) == 0 {
			w.printf("\nRotation of node pool %s waits: %s (%s)\n", r.Pool, r.WaitingFor, strings.Join(r.Changes, ", "))
			continue
		}
		w.printf("\nRotation of node pool %s: %s beside %s (%s); waits for %s\n", r.Pool, r.Resource, strings.Join(r.From, ", "), strings.Join(r.Changes, ", "), r.WaitingFor)
	}
	printResults(w, p.Warnings, p.Fatal, nil)
	return w.err
}

// PrintWalk writes what each simulated round changed of the resources that
// existed: the steps of an upgrade or a rotation in the order they happen.
func PrintWalk(out io.Writer, st *Stack) error {
	w := &errWriter{w: out}
	if len(st.Walk) == 0 {
		return nil
	}
	w.printf("\nSimulated walk (the providers report each step done as soon as it is asked for):\n")
	for _, r := range st.Walk {
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(r.Changed)) {
			for _, c := range r.Changed[n] {
				parts = append(parts, fmt.Sprintf("%s %s %s -> %s", n, c.Path, brief(c.Old), brief(c.New)))
			}
		}
		for _, n := range r.Added {
			if !strings.Contains(n, usageInfix) {
				parts = append(parts, "+ "+n)
			}
		}
		for _, n := range r.Removed {
			if !strings.Contains(n, usageInfix) {
				parts = append(parts, "- "+n)
			}
		}
		if len(parts) == 0 {
			continue
		}
		w.printf("  round %d:\n", r.Number)
		for _, p := range parts {
			w.printf("    %s\n", p)
		}
	}
	return w.err
}

// PrintYAML writes the converged stack as crossplane render
// --include-full-xr prints it (see Rendered): the XR with its status and
// conditions, then every composed resource in name order, with the
// metadata Crossplane sets.
func PrintYAML(w io.Writer, st *Stack) error {
	b, err := xpsim.YAMLList(Rendered(st))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// PrintObserved writes the composed resources as the providers report them
// once the stack converged (package simulate): what crossplane render takes
// as --observed-resources to render the converged stack.
func PrintObserved(w io.Writer, st *Stack) error {
	observed := make(map[string]xpsim.Object, len(st.Resources))
	for name, o := range st.Resources {
		observed[name] = simulate.Observe(o, name)
	}
	b, err := xpsim.YAML(observed)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// FleetReport sums the impacts of an environment change.
type FleetReport struct {
	XRs   []Impact `json:"xrs"`
	Total struct {
		XRs     int  `json:"xrs"`
		Added   int  `json:"added"`
		Changed int  `json:"changed"`
		Held    int  `json:"held"`
		Removed int  `json:"removed"`
		Fatals  int  `json:"fatals"`
		Cost    Cost `json:"costDelta"`
	} `json:"total"`
	// Rollout is how the rollout waves take the fleet's Clusters to the
	// updated environment's Kubernetes version (RolloutOf); nil when the
	// change moves no version and the environment sets no waves.
	Rollout *Rollout `json:"rollout,omitempty"`
}

// Add records one XR's impact.
func (r *FleetReport) Add(im Impact) {
	r.XRs = append(r.XRs, im)
	t := &r.Total
	t.XRs++
	t.Added += len(im.Added)
	t.Changed += len(im.Changed)
	t.Held += len(im.Held)
	t.Removed += len(im.Removed)
	if im.Fatal != "" {
		t.Fatals++
	}
	if im.CostDelta != nil {
		t.Cost.Min = round(t.Cost.Min + im.CostDelta.Min)
		t.Cost.Max = round(t.Cost.Max + im.CostDelta.Max)
	}
}

// PrintFleet writes the report as a table per XR and a total line, then
// the rollout (see PrintRollout), or as JSON.
func PrintFleet(w io.Writer, r *FleetReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := &errWriter{w: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	tw.printf("XR\tADDED\tCHANGED\tHELD\tREMOVED\tCOST-DELTA\tFATAL\n")
	for _, im := range r.XRs {
		cost := "-"
		if im.CostDelta != nil {
			cost = fmt.Sprintf("%+.2f..%+.2f", im.CostDelta.Min, im.CostDelta.Max)
		}
		fatal := "-"
		if im.Fatal != "" {
			fatal = brief(im.Fatal)
		}
		tw.printf("%s\t%d\t%d\t%d\t%d\t%s\t%s\n", im.XR, len(im.Added), len(im.Changed), len(im.Held), len(im.Removed), cost, fatal)
	}
	t := r.Total
	tw.printf("TOTAL (%d XRs)\t%d\t%d\t%d\t%d\t%+.2f..%+.2f\t%d\n", t.XRs, t.Added, t.Changed, t.Held, t.Removed, t.Cost.Min, t.Cost.Max, t.Fatals)
	if err := tw.flush(); err != nil || r.Rollout == nil {
		return err
	}
	return PrintRollout(w, r.Rollout)
}

// PrintRollout writes the rollout: the target, then each wave in order
// with what gates it (the earlier waves, maxUnavailable, the approval)
// and what its gate answers now, and its Clusters per cloud with what
// they run now.
func PrintRollout(out io.Writer, r *Rollout) error {
	w := &errWriter{w: out}
	moves := fmt.Sprintf("Kubernetes %s (the old environment asks for %s)", r.Target, r.From)
	if r.From == r.Target {
		moves = fmt.Sprintf("Kubernetes %s (unchanged)", r.Target)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Charts)) {
		moves += fmt.Sprintf(", chart %s %s (was %s)", name, r.Charts[name], dash(r.FromCharts[name]))
	}
	// runs is the target as a Cluster runs it; changes as approvals name
	// them (rollout.Target.Changes).
	runs := r.Target
	for _, name := range slices.Sorted(maps.Keys(r.Charts)) {
		runs += fmt.Sprintf(", %s %s", name, r.Charts[name])
	}
	changes := r.Target
	if r.From == r.Target && len(r.Charts) > 0 {
		changes = ""
	}
	for _, name := range slices.Sorted(maps.Keys(r.Charts)) {
		changes = strings.TrimPrefix(changes+", "+name+"="+r.Charts[name], ", ")
	}
	switch {
	case r.Message != "":
		w.printf("\nRollout of %s: %s\n", moves, r.Message)
	default:
		w.printf("\nRollout of %s in %d waves (rollout.waves):\n", moves, len(r.Waves))
	}
	tw := &errWriter{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	for _, wv := range r.Waves {
		if wv.Name != "" {
			tw.printf("\nWave %d of %d: %s (%s)\n", wv.Index+1, len(r.Waves), wv.Name, admits(wv))
			tw.printf("  after:     %s\n", after(wv, runs))
			tw.printf("  at once:   %s\n", atOnce(wv))
			tw.printf("  approval:  %s\n", approval(wv, changes))
			tw.printf("  now:       %s: %s\n", wv.Verdict, wv.Message)
		} else {
			tw.printf("\n")
		}
		if len(wv.Clouds) == 0 {
			tw.printf("  (no Cluster)\n")
			continue
		}
		tw.printf("  CLOUD\tNAMESPACE\tNAME\tRUNS\tREADY\tNOTE\n")
		for _, c := range wv.Clouds {
			for _, m := range c.Clusters {
				ready := "yes"
				if !m.Ready {
					ready = "no"
				}
				tw.printf("  %s\t%s\t%s\t%s\t%s\t%s\n", dash(c.Cloud), dash(m.Namespace), m.Name, dash(m.Runs), ready, dash(m.Note))
			}
		}
	}
	if err := tw.flush(); err != nil {
		return err
	}
	return w.err
}

// admits says which Clusters a wave counts.
func admits(wv Wave) string {
	s := "namespaces " + strings.Join(wv.Namespaces, ", ")
	if len(wv.Namespaces) == 0 {
		s = "every namespace"
	}
	if wv.Last {
		s += "; the last wave: also every Cluster whose label names no wave that admits it"
	}
	return s
}

// after says which earlier waves a wave waits for.
func after(wv Wave, target string) string {
	if len(wv.After) == 0 {
		return "nothing: the first wave"
	}
	return fmt.Sprintf("every Cluster of %s runs %s and is Ready", strings.Join(wv.After, ", "), target)
}

// atOnce says how many of a wave's Clusters move at once.
func atOnce(wv Wave) string {
	if wv.MaxUnavailable == 0 {
		return "no limit (maxUnavailable 0)"
	}
	return fmt.Sprintf("at most %d of its Clusters (maxUnavailable)", wv.MaxUnavailable)
}

// approval says whether a wave waits for the target's approval.
func approval(wv Wave, target string) string {
	if !wv.RequiresApproval {
		return "none required"
	}
	state := "not approved yet"
	if wv.Approved {
		state = "approved"
	}
	return fmt.Sprintf("requires approval of %s: %s (rollout.waves[%d].approved)", target, state, wv.Index)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func roundOf(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// brief prints a value in at most 80 characters.
func brief(v any) string {
	s := "<none>"
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// errWriter prints until the first error, which it keeps.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

// flush flushes a tabwriter underneath, and returns the first error.
func (e *errWriter) flush() error {
	if f, ok := e.w.(*tabwriter.Writer); ok && e.err == nil {
		e.err = f.Flush()
	}
	return e.err
}
