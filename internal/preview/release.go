package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/lifecycle"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// A ReleaseImpact is what a new platform release does to one XR: its
// render by the new release against the current release's, both from the
// same observed state under the same environment. A render is what
// crossplane render prints of a reconcile: the composed resources and the
// XR with its status and conditions; a Fatal is a render that fails.
type ReleaseImpact struct {
	File string `json:"file"`
	XR   string `json:"xr"`
	// Differs is set when the two renders differ in anything below.
	Differs bool `json:"differs"`
	// Added are the composed resources only the new release renders.
	Added []string `json:"added,omitempty"`
	// Changed are the composed resources both render, differently: each
	// field, old → new.
	Changed []ResourceChange `json:"changed,omitempty"`
	// Held are the observed resources the new release no longer renders
	// and the trust rules keep (only the XR's spec may remove them);
	// Removed those it would delete.
	Held    []string `json:"held,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Dropped are the composed resources the current release renders and
	// the new one does not, observed or not.
	Dropped []string `json:"dropped,omitempty"`
	// Status are the fields of the rendered XR (its status, conditions)
	// that differ.
	Status []FieldChange `json:"status,omitempty"`
	// Fatal is the new release's refusal of the XR, where the current
	// release renders it.
	Fatal string `json:"fatal,omitempty"`
	// Refused is the current release's refusal: there is nothing to
	// compare (the new release's is in Fatal when it refuses it too).
	Refused string `json:"refused,omitempty"`
	// Pinned is set for an XR that pins its release (a composition update
	// policy of Manual, or paused reconciles, on the XR or its claim):
	// Crossplane keeps it on its Composition revision and the release's
	// rollout does not move it; what the new release would render for it
	// is compared all the same, for when its owner unpins it.
	Pinned bool `json:"pinned,omitempty"`
}

// A ResourceChange is a composed resource both releases render: the fields
// that differ, and those of them its provider can change only by replacing
// the cloud resource (this binary's tables, package lifecycle), against
// what is observed.
type ResourceChange struct {
	Resource string        `json:"resource"`
	Fields   []FieldChange `json:"fields"`
	// Replaces are the replacement-only fields the new release would
	// change, each as "path old -> new (action)": a new release that
	// renders one without a Fatal would have the cloud replace the
	// resource, or its provider refuse the update forever.
	Replaces []string `json:"replaces,omitempty"`
}

// A FieldChange is one field of a render, old → new; nil means absent.
type FieldChange struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// String is the change as one line.
func (c FieldChange) String() string {
	show := func(v any) string {
		if v == nil {
			return "(none)"
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%s: %s -> %s", c.Path, show(c.Old), show(c.New))
}

// A Side is one release of a release preview: the function that renders
// it, and the Compositions it cut, which call that function (none: each
// kind's shipped step, as the examples' Compositions call it).
type Side struct {
	Run          Runner
	Compositions *Compositions
}

// Release renders every XR of the fleet with the current release and with
// the new one, from the same observed state (its observed resources, or
// the stack the current release converges it to) under the same
// environment, and compares the renders. Every XR it renders with current
// is delivered to the others as the API server would hold it (a Database
// requires its Cluster), for both releases alike. planned, when not nil,
// is called after each of the len(xrs) XRs. An XR that pins its release
// is compared too, and marked Pinned. An XR that a side's
// Compositions cannot compose (none of its kind, or several and no
// compositionRef) fails the preview, naming it and the side.
func Release(current, next Side, w World, xrs []FleetXR, planned func()) ([]ReleaseImpact, error) {
	if planned == nil {
		planned = func() {}
	}
	w.Compositions = current.Compositions
	all := make([]fleetPlan, 0, len(xrs))
	var peers []xpsim.Object
	for _, f := range xrs {
		p, err := fleetBefore(current.Run, w, f)
		if err != nil {
			return nil, fmt.Errorf("%s: the current release: %w", f.File, err)
		}
		if p.before != nil && p.before.Fatal == "" {
			p.x = p.before.XR
			peers = append(peers, p.x)
		}
		all = append(all, p)
	}
	w.Objects = append(slices.Clone(w.Objects), peers...)
	wNext := w
	wNext.Compositions = next.Compositions

	out := make([]ReleaseImpact, 0, len(all))
	for _, p := range all {
		im := ReleaseImpact{File: p.im.File, XR: p.im.XR, Refused: p.refused, Pinned: rollout.Pins(p.x, namespaced(p.x))}
		if p.before != nil && p.before.Fatal != "" {
			im.Refused = p.before.Fatal
		}
		var before, after *Plan
		var err error
		if im.Refused == "" {
			// The current release again, now that the fleet is delivered
			// as the API server holds it, so that both renders see the
			// same requests.
			if before, err = PlanOne(current.Run, w, p.x, p.observed); err != nil {
				return nil, fmt.Errorf("%s: the current release: %w", p.im.File, err)
			}
			im.Refused = before.Fatal
		}
		if after, err = PlanOne(next.Run, wNext, p.x, p.observed); err != nil {
			return nil, fmt.Errorf("%s: the new release: %w", p.im.File, err)
		}
		planned()
		if im.Refused != "" {
			im.Fatal = after.Fatal
			im.Differs = after.Fatal != im.Refused
			out = append(out, im)
			continue
		}
		compare(&im, before, after, p.observed)
		out = append(out, im)
	}
	return out, nil
}

// compare fills im with what differs between the current release's plan
// before and the new release's after, against observed.
func compare(im *ReleaseImpact, before, after *Plan, observed map[string]xpsim.Object) {
	if after.Fatal != "" {
		im.Fatal, im.Differs = after.Fatal, true
		return
	}
	for _, name := range slices.Sorted(maps.Keys(after.Desired)) {
		old, ok := before.Desired[name]
		if !ok {
			im.Added = append(im.Added, name)
			continue
		}
		if fields := fieldDiff("", old, after.Desired[name]); len(fields) > 0 {
			im.Changed = append(im.Changed, ResourceChange{Resource: name, Fields: fields, Replaces: replaces(after.Desired[name], observed[name])})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before.Desired)) {
		if _, ok := after.Desired[name]; !ok {
			im.Dropped = append(im.Dropped, name)
		}
	}
	im.Held = newOnes(after.Held, before.Held)
	im.Removed = newOnes(after.Removed, before.Removed)
	im.Status = fieldDiff("", before.XR, after.XR)
	im.Differs = len(im.Added)+len(im.Changed)+len(im.Dropped)+len(im.Status) > 0
}

// newOnes are the names of after that before does not list.
func newOnes(after, before []string) []string {
	var out []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			out = append(out, n)
		}
	}
	return out
}

// fieldDiff lists every leaf where old and new differ, both ways: a field
// only one of them has is a change from or to nothing. Lists compare as a
// whole.
func fieldDiff(path string, old, new any) []FieldChange {
	om, oIsMap := old.(map[string]any)
	nm, nIsMap := new.(map[string]any)
	if oIsMap && nIsMap {
		keys := slices.Collect(maps.Keys(om))
		for k := range nm {
			if _, ok := om[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var out []FieldChange
		for _, k := range keys {
			out = append(out, fieldDiff(join(path, k), om[k], nm[k])...)
		}
		return out
	}
	if reflect.DeepEqual(old, new) {
		return nil
	}
	return []FieldChange{{Path: path, Old: old, New: new}}
}

// replaces are the fields of a composed resource's kind that its provider
// can change only by replacement (or in steps, or by rotating a pool) and
// that desired changes against observed, in words; none when the
// resource is not observed or its kind has no table here.
func replaces(desired, observed xpsim.Object) []string {
	if observed == nil {
		return nil
	}
	apiVersion, _ := desired["apiVersion"].(string)
	kind, _ := desired["kind"].(string)
	obs, err := structpb.NewStruct(observed)
	if err != nil {
		return nil
	}
	for _, name := range registry.Clouds() {
		c, _ := registry.Lookup(name)
		k, ok := c.KindOf(apiVersion, kind)
		if !ok {
			continue
		}
		var out []string
		for _, ch := range lifecycle.Compare(k.Replacements, desired, obs).Changes {
			out = append(out, fmt.Sprintf("%s (%s)", ch, strings.ToLower(string(ch.Action))))
		}
		return out
	}
	return nil
}

// A ReleaseReport is a new release's impact on a fleet: each XR's, and
// the totals.
type ReleaseReport struct {
	XRs   []ReleaseImpact `json:"xrs"`
	Total struct {
		XRs      int `json:"xrs"`
		Differ   int `json:"differ"`
		Added    int `json:"added"`
		Changed  int `json:"changed"`
		Held     int `json:"held"`
		Removed  int `json:"removed"`
		Replaces int `json:"replaces"`
		// Fatals counts the XRs the new release refuses and the current
		// one renders; Refused those the current release refuses.
		Fatals  int `json:"fatals"`
		Refused int `json:"refused"`
	} `json:"total"`
}

// Add records one XR's impact.
func (r *ReleaseReport) Add(im ReleaseImpact) {
	r.XRs = append(r.XRs, im)
	t := &r.Total
	t.XRs++
	if im.Differs {
		t.Differ++
	}
	t.Added += len(im.Added)
	t.Changed += len(im.Changed)
	t.Held += len(im.Held)
	t.Removed += len(im.Removed)
	for _, c := range im.Changed {
		t.Replaces += len(c.Replaces)
	}
	switch {
	case im.Refused != "":
		t.Refused++
	case im.Fatal != "":
		t.Fatals++
	}
}

// PrintRelease writes the report as a table, one line per XR and a total
// line, then what differs for each XR whose render does; or as JSON.
func PrintRelease(w io.Writer, r *ReleaseReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := &errWriter{w: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	tw.printf("XR\tFILE\tRENDER\tADDED\tCHANGED\tHELD\tREMOVED\tREPLACES\tFATAL\n")
	for _, im := range r.XRs {
		render, replace := "same", 0
		if im.Differs {
			render = "differs"
		}
		if im.Pinned {
			render += " (pinned)"
		}
		for _, c := range im.Changed {
			replace += len(c.Replaces)
		}
		fatal := "-"
		switch {
		case im.Refused != "" && im.Fatal == "":
			render, fatal = "renders", "(only the current release refuses it)"
		case im.Refused != "" && !im.Differs:
			render, fatal = "refused", "(both refuse it the same) "+brief(im.Fatal)
		case im.Fatal != "":
			fatal = brief(im.Fatal)
		}
		tw.printf("%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", im.XR, im.File, render, len(im.Added), len(im.Changed), len(im.Held), len(im.Removed), replace, fatal)
	}
	t := r.Total
	tw.printf("TOTAL (%d XRs, %d differ)\t\t\t%d\t%d\t%d\t%d\t%d\t%d (and %d the current release refuses)\n", t.XRs, t.Differ, t.Added, t.Changed, t.Held, t.Removed, t.Replaces, t.Fatals, t.Refused)
	if err := tw.flush(); err != nil {
		return err
	}
	out := &errWriter{w: w}
	for _, im := range r.XRs {
		if !im.Differs {
			continue
		}
		out.printf("\n%s (%s):\n", im.XR, im.File)
		switch {
		case im.Refused != "" && im.Fatal == "":
			out.printf("  the current release refuses it (%s); the new one renders it\n", brief(im.Refused))
		case im.Refused != "":
			out.printf("  both refuse it: current %s; new %s\n", brief(im.Refused), brief(im.Fatal))
		case im.Fatal != "":
			out.printf("  ! the new release refuses it: %s\n", im.Fatal)
		}
		for _, n := range im.Added {
			out.printf("  + %s\n", n)
		}
		for _, c := range im.Changed {
			out.printf("  ~ %s\n", c.Resource)
			for _, f := range c.Fields {
				out.printf("      %s: %s -> %s\n", f.Path, brief(f.Old), brief(f.New))
			}
			for _, rep := range c.Replaces {
				out.printf("      ! only by replacement: %s\n", rep)
			}
		}
		for _, n := range im.Held {
			out.printf("  = %s: no longer rendered, held (the trust rules keep it)\n", n)
		}
		for _, n := range im.Removed {
			out.printf("  - %s: would be removed\n", n)
		}
		for _, n := range im.Dropped {
			if !slices.Contains(im.Held, n) && !slices.Contains(im.Removed, n) {
				out.printf("  - %s: no longer rendered\n", n)
			}
		}
		for _, f := range im.Status {
			out.printf("  XR %s: %s -> %s\n", f.Path, brief(f.Old), brief(f.New))
		}
	}
	return out.err
}
