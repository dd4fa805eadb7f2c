package rollout

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// xrOf is an XR of kind in namespace ns ("" for a legacy cluster-scoped
// one) named name, labelled with wave, whose status says release renders
// it (none when ""), Ready and Synced as given, at its generation; selects
// the release selected (none when "").
func xrOf(kind, ns, name, wave, release, selected string, ready, synced bool) map[string]any {
	status := func(b bool) string {
		if b {
			return "True"
		}
		return "False"
	}
	meta := map[string]any{"name": name, "generation": int64(2), "labels": map[string]any{Label: wave, "cloud": "gcp"}}
	spec := map[string]any{}
	if ns != "" {
		meta["namespace"] = ns
	}
	if selected != "" {
		sel := map[string]any{"matchLabels": map[string]any{LabelRelease: selected}}
		if ns != "" {
			spec["crossplane"] = map[string]any{"compositionRevisionSelector": sel}
		} else {
			spec["compositionRevisionSelector"] = sel
		}
	}
	st := map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": status(ready), "reason": "Available", "observedGeneration": int64(2), "lastTransitionTime": "2026-12-01T10:00:00Z"},
		map[string]any{"type": "Synced", "status": status(synced), "reason": map[bool]string{true: "ReconcileSuccess", false: "ReconcileError"}[synced], "observedGeneration": int64(2)},
	}}
	if release != "" {
		st["platformRelease"] = release
	}
	return map[string]any{"apiVersion": "platform.example.org/v1alpha1", "kind": kind, "metadata": meta, "spec": spec, "status": st}
}

// ours says the fleet controller wrote an XR's selection, unless the test
// annotates it as its owner's (tenant).
func ours(o map[string]any) bool {
	ann, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	return ann["selected-by"] != "tenant"
}

// byTenant annotates o's selection as its owner's.
func byTenant(o map[string]any) map[string]any {
	o["metadata"].(map[string]any)["annotations"] = map[string]any{"selected-by": "tenant"}
	return o
}

func TestReleaseMemberOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    map[string]any
		owned  func(map[string]any) bool
		want   Member
	}{
		"Namespaced": {
			reason: "A namespaced XR runs the release its status names and asks for the one its spec.crossplane selector selects, which the controller wrote.",
			obj:    xrOf("Database", "team-a", "db", "staging", "r1", "r2", true, true),
			owned:  ours,
			want: Member{Name: "db", Namespace: "team-a", Cloud: "gcp", Kind: "Database", Wave: "staging",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Ready: true, ReadySince: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		},
		"Legacy": {
			reason: "A legacy XR's selector is spec.compositionRevisionSelector.",
			obj:    xrOf("XCluster", "", "c", "canary", "r1", "r2", true, true),
			owned:  ours,
			want: Member{Name: "c", Cloud: "gcp", Kind: "XCluster", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Ready: true, ReadySince: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		},
		"NotOurs": {
			reason: "A selection the controller did not write (its manifest's, its owner's) pins the XR: it asks for what it runs.",
			obj:    xrOf("Cluster", "team-a", "c", "production", "r1", "r2", true, true),
			owned:  func(map[string]any) bool { return false },
			want: Member{Name: "c", Namespace: "team-a", Cloud: "gcp", Kind: "Cluster", Wave: "production", Pinned: true,
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r1"}, Ready: true, ReadySince: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		},
		"NotSynced": {
			reason: "Ready without Synced proves nothing: the release cannot render it (a Fatal), so it failed.",
			obj:    xrOf("AppEnvironment", "team-a", "app", "canary", "r1", "r2", true, false),
			owned:  ours,
			want: Member{Name: "app", Namespace: "team-a", Cloud: "gcp", Kind: "AppEnvironment", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Failed: true, Reason: "ReconcileError"},
		},
		"Pinned": {
			reason: "An XR whose update policy is Manual pins its revision.",
			obj: func() map[string]any {
				o := xrOf("Cluster", "team-a", "c", "canary", "r1", "", true, true)
				o["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "gcp", Kind: "Cluster", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r1"}, Ready: true, Pinned: true, ReadySince: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReleaseMemberOf(tc.obj, tc.owned)); diff != "" {
				t.Errorf("%s\nReleaseMemberOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// releaseWaves are a canary in namespace platform, staging and production
// (which requires approvals).
var releaseWaves = []Wave{{Name: "canary", Namespaces: []string{"platform"}}, {Name: "staging"}, {Name: "production", RequiresApproval: true, Approved: []string{"release=r2"}}}

func TestMoves(t *testing.T) {
	forward := Release{Target: "r2", From: "r1"}
	type move struct{ Verdict, Select string }
	cases := map[string]struct {
		reason string
		waves  []Wave
		rel    Release
		xrs    []map[string]any
		want   map[string]move
	}{
		"Start": {
			reason: "Nothing runs the new release: the canary moves (its selector selects it), every later XR keeps what it runs, and a new XR that no release rendered yet is given the release the fleet moves from.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "new", "production", "", "", false, false),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Adopt", "r2"},
				"Database team-a/db":        {"Hold", "r1"},
				"AppEnvironment team-b/app": {"Hold", "r1"},
				"AppEnvironment team-b/new": {"Hold", "r1"},
			},
		},
		"CanaryProves": {
			reason: "The canary runs the new release Ready and Synced: staging moves; production waits for staging.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Keep", "r2"},
				"Database team-a/db":        {"Adopt", "r2"},
				"AppEnvironment team-b/app": {"Hold", "r1"},
			},
		},
		"CanaryFails": {
			reason: "The new release cannot render the canary (Synced False): the later waves halt and keep what they run; the canary keeps the release, for its owner to see why.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Keep", "r2"},
				"Database team-a/db":      {"Halt", "r1"},
			},
		},
		"TenantJumpsAhead": {
			reason: "A tenant selects the new release on its production XR: not the controller's selection, so its owner pins it; the controller leaves it alone, and it counts for no wave.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true),
				byTenant(xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r2", true, true)),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Adopt", "r2"},
				"AppEnvironment team-b/app": {"Pinned", ""},
			},
		},
		"TenantPinsStaging": {
			reason: "A tenant pins the only staging XR: staging has no XR that follows the rollout, so production holds (an empty wave proves nothing).",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				byTenant(xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true)),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Keep", "r2"},
				"Database team-a/db":        {"Pinned", ""},
				"AppEnvironment team-b/app": {"Hold", "r1"},
			},
		},
		"EmptyWave": {
			reason: "A canary wave with no XR proves nothing: the later waves hold.",
			waves:  releaseWaves, rel: forward,
			xrs:  []map[string]any{xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true)},
			want: map[string]move{"Database team-a/db": {"Hold", "r1"}},
		},
		"Pinned": {
			reason: "An XR that pins its revision is not moved, and holds nothing.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				func() map[string]any {
					o := xrOf("Cluster", "platform", "pinned", "canary", "r1", "", true, true)
					o["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
					return o
				}(),
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/pinned": {"Pinned", ""},
				"Cluster platform/canary": {"Keep", "r2"},
				"Database team-a/db":      {"Adopt", "r2"},
			},
		},
		"RollbackStartsAtTheEnd": {
			reason: "A rollback to r1 moves production first; staging and the canary hold until the later waves run r1.",
			waves:  releaseWaves, rel: Release{Target: "r1", From: "r2", Rollback: true},
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r2", "r2", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r2", "r2", false, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Hold", "r2"},
				"Database team-a/db":        {"Hold", "r2"},
				"AppEnvironment team-b/app": {"Adopt", "r1"},
			},
		},
		"RollbackOfAHalt": {
			reason: "A rollback of a halted rollout (only the canary moved, and failed) moves the canary back at once: the later waves run r1 already.",
			waves:  releaseWaves, rel: Release{Target: "r1", From: "r2", Rollback: true},
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Adopt", "r1"},
				"Database team-a/db":      {"Keep", "r1"},
			},
		},
		"NoWaves": {
			reason: "Without waves every XR moves at once.",
			rel:    forward,
			xrs:    []map[string]any{xrOf("Database", "team-a", "db", "", "r1", "r1", true, true)},
			want:   map[string]move{"Database team-a/db": {"Adopt", "r2"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]move{}
			for _, mv := range Moves(tc.waves, tc.rel, tc.xrs, ours, time.Time{}) {
				got[mv.Member.Key()] = move{string(mv.Decision.Verdict), mv.Select}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nMoves(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReleaseMessages(t *testing.T) {
	xrs := []map[string]any{
		xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
		xrOf("Database", "platform", "db", "staging", "r1", "r1", true, true),
	}
	got := map[string]string{}
	for _, mv := range Moves(releaseWaves, Release{Target: "r2", From: "r1"}, xrs, ours, time.Time{}) {
		got[mv.Member.Key()] = mv.Decision.Message
	}
	want := map[string]string{
		"Cluster platform/canary": "wave canary: runs or moves to release=r2",
		"Database platform/db":    "wave staging halted: XR Cluster platform/canary (gcp, wave canary): ReconcileError failed on its way to release=r2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Moves(...) messages: -want, +got:\n%s", diff)
	}
}

func TestReleaseValidate(t *testing.T) {
	cases := map[string]struct {
		reason string
		rel    Release
		want   []string
	}{
		"Good":     {reason: "A target and where it moves from.", rel: Release{Target: "r2", From: "r1"}},
		"NoTarget": {reason: "A release rollout needs a target.", rel: Release{From: "r1"}, want: []string{"environment.rollout.release.target: Required value: the release the fleet moves to: the value of the label platform.example.org/release on its Compositions"}},
		"Same":     {reason: "From and target are two releases.", rel: Release{Target: "r1", From: "r1"}, want: []string{`environment.rollout.release.from: Invalid value: "r1": the release the fleet moves from cannot be the one it moves to`}},
		"BadLabel": {reason: "A release is a label value.", rel: Release{Target: "r 2"}, want: []string{`environment.rollout.release.target: Invalid value: "r 2": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range tc.rel.Validate(field.NewPath("environment", "rollout", "release")) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nValidate: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// FuzzRelease walks random fleets of XRs of several kinds through a
// release's rollout and random events (Crossplane renders an XR with the
// release its selector selects, which succeeds or fails; Ready flips; a
// tenant writes its own selection; an XR is deleted), the controller
// deciding (Moves) and writing its selections between them, and checks,
// apart from the decision's code, that no XR is ever moved to the target
// while an XR of an earlier wave that does not pin its revision does not
// run it Ready and Synced, or an earlier wave has none that does; and, for
// a rollback, that no XR is moved back while an XR of a later wave runs or
// asks for another release.
func FuzzRelease(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 5, 9, 200, 17, 4, 4, 4, 4, 1, 2, 3, 0, 0, 0, 9, 8, 7})
	f.Add([]byte{1, 8, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2})
	f.Add([]byte{0, 6, 255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 3, 3, 3, 3, 3, 3, 3})
	kinds := []string{"Cluster", "Database", "AppEnvironment", "XCluster"}
	labels := []string{"canary", "staging", "production", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		rel := Release{Target: "r2", From: "r1"}
		if next()%2 == 1 {
			rel = Release{Target: "r1", From: "r2", Rollback: true}
		}
		waves := []Wave{{Name: "canary"}, {Name: "staging"}, {Name: "production"}}
		wave := func(o map[string]any) int {
			switch o["metadata"].(map[string]any)["labels"].(map[string]any)[Label] {
			case "canary":
				return 0
			case "staging":
				return 1
			}
			return 2
		}
		n := 1 + next()%8
		xrs := make([]map[string]any, n)
		// selectedBy: who wrote each XR's selection (the controller or not).
		ownedBy := map[string]bool{}
		for i := range xrs {
			kind := kinds[next()%len(kinds)]
			ns := "team"
			if kind == "XCluster" {
				ns = ""
			}
			xrs[i] = xrOf(kind, ns, fmt.Sprintf("x%d", i), labels[next()%len(labels)], rel.From, "", next()%4 != 0, true)
			if next()%7 == 0 {
				xrs[i]["spec"].(map[string]any)["compositionUpdatePolicy"] = "Manual"
				if ns != "" {
					xrs[i]["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
				}
			}
		}
		name := func(o map[string]any) string {
			return fmt.Sprint(o["kind"], o["metadata"].(map[string]any)["name"])
		}
		owned := func(o map[string]any) bool { return ownedBy[name(o)] }
		status := func(o map[string]any) map[string]any { return o["status"].(map[string]any) }
		cond := func(o map[string]any, typ string) string {
			for _, c := range status(o)["conditions"].([]any) {
				if c.(map[string]any)["type"] == typ {
					return fmt.Sprint(c.(map[string]any)["status"])
				}
			}
			return ""
		}
		setCond := func(o map[string]any, typ, v string) {
			for _, c := range status(o)["conditions"].([]any) {
				if c.(map[string]any)["type"] == typ {
					c.(map[string]any)["status"] = v
				}
			}
		}
		sel := func(o map[string]any) (map[string]any, bool) {
			spec := o["spec"].(map[string]any)
			ns, _ := o["metadata"].(map[string]any)["namespace"].(string)
			if ns != "" {
				c, _ := spec["crossplane"].(map[string]any)
				if c == nil {
					c = map[string]any{}
					spec["crossplane"] = c
				}
				spec = c
			}
			if spec["compositionUpdatePolicy"] == "Manual" {
				return nil, false
			}
			s, _ := spec["compositionRevisionSelector"].(map[string]any)
			if s == nil {
				s = map[string]any{"matchLabels": map[string]any{}}
				spec["compositionRevisionSelector"] = s
			}
			return s["matchLabels"].(map[string]any), true
		}
		deleted := map[int]bool{}
		for step := 0; step < 64 && len(data) > 0; step++ {
			i := next() % n
			switch next() % 6 {
			case 0, 1: // the controller decides and writes its selections
				live := make([]map[string]any, 0, n)
				for j, o := range xrs {
					if !deleted[j] {
						live = append(live, o)
					}
				}
				for _, mv := range Moves(waves, rel, live, owned, time.Time{}) {
					var self map[string]any
					for _, o := range live {
						if mv.Member.Key() == ReleaseMemberOf(o, owned).Key() {
							self = o
						}
					}
					m, ok := sel(self)
					if !ok || mv.Select == "" {
						if mv.Select != "" || (ok && m[LabelRelease] != nil && owned(self)) {
							t.Fatalf("%s: the controller selects %q for an XR its owner pins", name(self), mv.Select)
						}
						continue
					}
					if m[LabelRelease] != nil && !owned(self) {
						t.Fatalf("%s: the controller selects %q over its owner's selection %v", name(self), mv.Select, m[LabelRelease])
					}
					// A move: the controller selects the target for an XR
					// that neither runs it nor selects it already.
					moving := mv.Select == rel.Target && status(self)["platformRelease"] != rel.Target && m[LabelRelease] != rel.Target
					if moving {
						for _, o := range live {
							if pinned := func() bool { m, ok := sel(o); return !ok || (m[LabelRelease] != nil && !owned(o)) }(); pinned {
								continue
							}
							runs := status(o)["platformRelease"]
							switch {
							case !rel.Rollback && wave(o) < wave(self) && (runs != rel.Target || cond(o, "Ready") != "True" || cond(o, "Synced") != "True"):
								t.Fatalf("%s (wave %d) moved to %s while %s (wave %d) runs %v, Ready %s, Synced %s", name(self), wave(self), rel.Target, name(o), wave(o), runs, cond(o, "Ready"), cond(o, "Synced"))
							case rel.Rollback && wave(o) > wave(self) && (runs != rel.Target || (owned(o) && m2(sel, o) != rel.Target)):
								t.Fatalf("%s (wave %d) moved back to %s while %s (wave %d) runs %v", name(self), wave(self), rel.Target, name(o), wave(o), runs)
							}
						}
						if !rel.Rollback {
							for j := range wave(self) {
								proven := false
								for _, o := range live {
									if m, ok := sel(o); ok && (m[LabelRelease] == nil || owned(o)) && wave(o) == j && status(o)["platformRelease"] == rel.Target {
										proven = true
									}
								}
								if !proven {
									t.Fatalf("%s (wave %d) moved to %s while wave %d has no XR that runs it", name(self), wave(self), rel.Target, j)
								}
							}
						}
					}
					m[LabelRelease] = mv.Select
					ownedBy[name(self)] = true
				}
			case 2: // Crossplane renders it with the release it selects: it renders, or fails
				if m, ok := sel(xrs[i]); ok && m[LabelRelease] != nil {
					if next()%4 == 0 {
						setCond(xrs[i], "Synced", "False")
						continue
					}
					status(xrs[i])["platformRelease"] = m[LabelRelease]
					setCond(xrs[i], "Synced", "True")
				}
			case 3: // Ready flips
				if cond(xrs[i], "Ready") == "True" {
					setCond(xrs[i], "Ready", "False")
				} else {
					setCond(xrs[i], "Ready", "True")
				}
			case 4: // a tenant writes its own selection
				if m, ok := sel(xrs[i]); ok {
					m[LabelRelease] = []string{"r1", "r2"}[next()%2]
					ownedBy[name(xrs[i])] = false
				}
			case 5: // it is deleted
				deleted[i] = true
			}
		}
	})
}

// m2 is the release o's selector selects, "" when none.
func m2(sel func(map[string]any) (map[string]any, bool), o map[string]any) any {
	m, ok := sel(o)
	if !ok {
		return ""
	}
	return m[LabelRelease]
}
