package rollout

import (
	"fmt"
	"testing"
	"time"
)

// FuzzRollout walks random fleets through random events (a Cluster
// renders, a change finishes, Ready flips, a step fails, a Cluster's spec
// changes so that its conditions are stale, a Cluster is deleted) and
// checks, apart from Decide's own code, that no Cluster ever adopts the
// target while a Cluster of an earlier wave that does not pin its version
// and is not being deleted does not run it Ready at its generation, nor
// while an earlier wave has no such Cluster at all, nor in a wave that
// requires an approval not given, nor past its wave's maxUnavailable
// (Clusters under way to the target).
func FuzzRollout(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 5, 9, 200, 17, 4, 4, 4, 4, 1, 2, 3, 0, 0, 0, 9, 8, 7})
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2})
	f.Add([]byte{6, 255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 3, 3, 3, 3, 3, 3, 3})
	namespaces := []string{"platform", "team-a", "team-b"}
	labels := []string{"canary", "staging", "production", "", "early-bird"}
	old, target := Target{Kubernetes: "1.30"}, Target{Kubernetes: "1.31"}
	f.Fuzz(func(t *testing.T, data []byte) {
		next, more := bytesOf(data)
		ws := []Wave{
			{Name: "canary", Namespaces: []string{"platform"}, MaxUnavailable: next() % 2},
			{Name: "staging", MaxUnavailable: next() % 3},
			{Name: "production", RequiresApproval: next()%2 == 0, MaxUnavailable: next() % 3},
		}
		if next()%2 == 0 {
			ws[2].Approved = []string{target.String()}
		}
		n := 1 + next()%8
		fleet := make([]Member, n)
		for i := range fleet {
			m := Member{Name: fmt.Sprintf("c%d", i), Namespace: namespaces[next()%len(namespaces)], Cloud: []string{"gcp", "aws", "azure"}[i%3],
				Wave: labels[next()%len(labels)], Runs: old, Asks: old, Ready: next()%4 != 0, Pinned: next()%6 == 0}
			fleet[i] = m
		}
		// wave is the reference: the label's wave when it admits the
		// namespace, otherwise the last.
		wave := func(m Member) int {
			switch {
			case m.Wave == "canary" && m.Namespace == "platform":
				return 0
			case m.Wave == "staging":
				return 1
			default:
				return 2
			}
		}
		for step := 0; step < 64 && more(); step++ {
			i := next() % n
			switch next() % 7 {
			case 0, 1: // the Cluster renders
				self := fleet[i]
				others := append(append([]Member{}, fleet[:i]...), fleet[i+1:]...)
				d := Decide(Request{Waves: ws, Self: self, Target: target, Fleet: others, Visible: everywhere})
				if d.Verdict != Adopt {
					continue
				}
				proven := map[int]bool{}
				for _, o := range others {
					// A pinned Cluster follows its owner, and one being
					// deleted is going: neither proves nor holds.
					if o.Pinned || o.Deleting || wave(o) >= wave(self) {
						continue
					}
					if !o.Ready || o.Stale || !o.Runs.Equal(target) {
						t.Fatalf("%s (wave %d) adopted %s while %s (wave %d) runs %s, Ready %t, stale %t", self.Key(), wave(self), target, o.Key(), wave(o), o.Runs, o.Ready, o.Stale)
					}
					proven[wave(o)] = true
				}
				for j := range wave(self) {
					if !proven[j] {
						t.Fatalf("%s (wave %d) adopted %s while wave %d has no Cluster that proves it", self.Key(), wave(self), target, j)
					}
				}
				w := ws[wave(self)]
				if w.RequiresApproval && len(w.Approved) == 0 {
					t.Fatalf("%s adopted %s in wave %s before its approval", self.Key(), target, w.Name)
				}
				if w.MaxUnavailable > 0 {
					// Under way to the target: adopted it, not there
					// yet, neither failed nor pinned (those take no
					// place, so that a tenant cannot fill a wave).
					busy := 0
					for _, o := range others {
						if wave(o) == wave(self) && o.Asks.Equal(target) && !o.Runs.Equal(target) && !o.Failed && !o.Pinned && !o.Deleting {
							busy++
						}
					}
					if busy >= w.MaxUnavailable {
						t.Fatalf("%s adopted %s in wave %s with %d of its Clusters already moving (maxUnavailable %d)", self.Key(), target, w.Name, busy, w.MaxUnavailable)
					}
				}
				fleet[i].Asks = target
			case 2: // its change finishes
				fleet[i].Runs = fleet[i].Asks
			case 3: // Ready flips
				fleet[i].Ready = !fleet[i].Ready
			case 4: // a step fails, or recovers
				fleet[i].Failed = !fleet[i].Failed && !fleet[i].Runs.Equal(fleet[i].Asks)
			case 5: // its spec changes (stale), or Crossplane reconciles it
				fleet[i].Stale = !fleet[i].Stale
				if fleet[i].Stale {
					fleet[i].Ready, fleet[i].Failed = false, false
				}
			case 6: // it is deleted
				fleet[i].Deleting = true
			}
		}
	})
}

// bytesOf reads a fuzzer's data a byte at a time: next is the next byte
// (0 once none is left), more whether any is left.
func bytesOf(data []byte) (next func() int, more func() bool) {
	next = func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	return next, func() bool { return len(data) > 0 }
}

// FuzzRelease walks random fleets of XRs of several kinds through a
// release's rollout and random events (Crossplane renders an XR with the
// release its selector selects, which succeeds or fails; Ready flips; a
// tenant writes its own selection; an XR is deleted; Crossplane's claim
// syncer applies a claim's selector over its XR's; a claim is lost from
// sight), the controller deciding (Moves) and writing its selections
// between them, each write to an XR a new generation that Crossplane has
// not reconciled yet. Some XRs run no release yet, some pin theirs
// (Manual), some XClusters are of claims, whose selector the controller
// writes and Crossplane copies onto the XR, a new generation of it. Apart
// from the decision's code, it checks that the controller never writes a
// pinned XR's selection, never a claim's XR's own but its claim's, nothing
// for an XR whose claim it does not find; never selects the target for an
// XR that does not run it while an XR of an earlier wave that does not pin
// its release does not run it Ready and Synced at its generation, or an
// earlier wave has none that does; and, for a rollback, never while an XR
// of a later wave does not select it (by the controller's hand; one whose
// claim is not found, run it).
func FuzzRelease(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 5, 9, 200, 17, 4, 4, 4, 4, 1, 2, 3, 0, 0, 0, 9, 8, 7})
	f.Add([]byte{1, 8, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2})
	f.Add([]byte{0, 6, 255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 3, 3, 3, 3, 3, 3, 3})
	// One canary XCluster of a claim, Ready on r1: its claim is lost,
	// the controller decides; found again, the controller moves it, the
	// claim syncer copies the selector, Crossplane renders it.
	f.Add([]byte{0, 0, 3, 1, 1, 0, 1, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 6, 0, 2, 1, 1, 0, 0, 0})
	kinds := []string{"Cluster", "Database", "AppEnvironment", "XCluster"}
	labels := []string{"canary", "staging", "production", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		next, more := bytesOf(data)
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
		type state struct {
			obj      map[string]any
			name     string
			ns       string
			manual   bool
			selected string // the selector's release, "" when none: the claim's, of an XR of a claim
			owned    bool   // the controller wrote it
			gen      int64
			// Of an XR of a claim: the claim, the XR's own selector (the
			// claim syncer's copy of the claim's), and whether the claim
			// is lost from sight (claimOf does not find it).
			claim      map[string]any
			xrSelected string
			lost       bool
		}
		n := 1 + next()%8
		xrs := make([]*state, n)
		for i := range xrs {
			kind := kinds[next()%len(kinds)]
			ns := "team"
			if kind == "XCluster" {
				ns = ""
			}
			runs := rel.From
			if next()%5 == 0 {
				runs = "" // no release rendered it yet
			}
			st := &state{name: fmt.Sprintf("%s/x%d", kind, i), ns: ns, manual: next()%7 == 0, gen: 2}
			st.obj = xrOf(kind, ns, fmt.Sprintf("x%d", i), labels[next()%len(labels)], runs, "", next()%4 != 0, true)
			if kind == "XCluster" && next()%2 == 0 {
				st.claim = claimFor(st.obj, "team", fmt.Sprintf("claim%d", i), "")
			}
			xrs[i] = st
		}
		// sync writes the test's state of an XR into its object (and its
		// claim's): the selector, the update policy, the generation.
		sync := func(st *state) {
			selector := func(where map[string]any, selected string) {
				if st.manual {
					where["compositionUpdatePolicy"] = "Manual"
				}
				if selected != "" {
					where["compositionRevisionSelector"] = map[string]any{"matchLabels": map[string]any{LabelRelease: selected}}
				}
			}
			spec := map[string]any{}
			where := spec
			if st.ns != "" {
				where = map[string]any{}
				spec["crossplane"] = where
			}
			if st.claim == nil {
				selector(where, st.selected)
			} else {
				selector(where, st.xrSelected)
				cspec := map[string]any{"resourceRef": st.claim["spec"].(map[string]any)["resourceRef"]}
				selector(cspec, st.selected)
				st.claim["spec"] = cspec
			}
			st.obj["spec"] = spec
			st.obj["metadata"].(map[string]any)["generation"] = st.gen
		}
		conds := func(st *state) []any { return st.obj["status"].(map[string]any)["conditions"].([]any) }
		cond := func(st *state, typ string) (string, int64) {
			for _, c := range conds(st) {
				if m := c.(map[string]any); m["type"] == typ {
					return fmt.Sprint(m["status"]), m["observedGeneration"].(int64)
				}
			}
			return "", 0
		}
		set := func(st *state, typ, v string) {
			for _, c := range conds(st) {
				if m := c.(map[string]any); m["type"] == typ {
					m["status"] = v
					m["observedGeneration"] = st.gen
				}
			}
		}
		runs := func(st *state) any { return st.obj["status"].(map[string]any)["platformRelease"] }
		proven := func(st *state) bool {
			ready, rg := cond(st, "Ready")
			synced, sg := cond(st, "Synced")
			return runs(st) == rel.Target && ready == "True" && synced == "True" && rg == st.gen && sg == st.gen
		}
		byName := map[string]*state{}
		byClaim := map[string]*state{}
		for _, st := range xrs {
			sync(st)
			byName[ReleaseMemberOf(st.obj, nil, nil).Key()] = st
			if st.claim != nil {
				byClaim[st.claim["metadata"].(map[string]any)["name"].(string)] = st
			}
		}
		// owned: the controller wrote a claim's selection, or an XR's of
		// no claim (a claim's XR's own is the claim syncer's).
		owned := func(o map[string]any) bool {
			if o["apiVersion"] == claimAPIVersion {
				return byClaim[o["metadata"].(map[string]any)["name"].(string)].owned
			}
			st := byName[ReleaseMemberOf(o, nil, nil).Key()]
			return st.claim == nil && st.owned
		}
		claimOf := func(o map[string]any) map[string]any {
			if st := byName[ReleaseMemberOf(o, nil, nil).Key()]; !st.lost {
				return st.claim
			}
			return nil
		}
		// selects reports whether o selects the target by the controller's
		// hand, or, when its claim is lost, runs it: what a later wave's XR
		// must do before an earlier one moves back.
		selects := func(o *state) bool {
			if o.lost {
				return runs(o) == rel.Target
			}
			return o.owned && o.selected == rel.Target
		}
		deleted := map[*state]bool{}
		for step := 0; step < 64 && more(); step++ {
			st := xrs[next()%n]
			switch next() % 8 {
			case 0, 1: // the controller decides and writes its selections
				var live []*state
				var objs []map[string]any
				for _, o := range xrs {
					if !deleted[o] {
						live = append(live, o)
						objs = append(objs, o.obj)
					}
				}
				for _, mv := range Moves(waves, rel, objs, claimOf, owned, time.Time{}) {
					self := byName[mv.Member.Key()]
					if self == nil {
						t.Fatalf("Moves decided %s, which is not in the fleet", mv.Member.Key())
					}
					if (mv.Claim != Ref{}) != (self.claim != nil && !self.lost) {
						t.Fatalf("%s: the controller writes to %v, its claim is %v (lost %v)", self.name, mv.Claim, self.claim != nil, self.lost)
					}
					if self.manual || self.lost {
						if mv.Select != "" {
							t.Fatalf("%s: the controller selects %q for an XR that pins its revision or whose claim it does not find", self.name, mv.Select)
						}
						continue
					}
					if mv.Select == "" {
						t.Fatalf("%s: the controller selects nothing for an XR that pins nothing", self.name)
					}
					// A move: the target selected for an XR that neither
					// runs it nor already selects it by the controller's
					// hand (a step under way is kept, not taken again).
					if mv.Select == rel.Target && runs(self) != rel.Target && (!self.owned || self.selected != rel.Target) {
						for _, o := range live {
							switch {
							case o.manual:
							case !rel.Rollback && wave(o.obj) < wave(self.obj) && !proven(o):
								t.Fatalf("%s (wave %d) selects %s while %s (wave %d) has not proven it", self.name, wave(self.obj), rel.Target, o.name, wave(o.obj))
							case rel.Rollback && wave(o.obj) > wave(self.obj) && !selects(o):
								t.Fatalf("%s (wave %d) moves back to %s while %s (wave %d) selects %q", self.name, wave(self.obj), rel.Target, o.name, wave(o.obj), o.selected)
							}
						}
						if !rel.Rollback {
							for j := range wave(self.obj) {
								ok := false
								for _, o := range live {
									ok = ok || (!o.manual && wave(o.obj) == j && proven(o))
								}
								if !ok {
									t.Fatalf("%s (wave %d) selects %s while wave %d has no XR that proves it", self.name, wave(self.obj), rel.Target, j)
								}
							}
						}
					}
					// A new value on an XR is a new generation; on a claim,
					// or taking over the same value, it changes only the
					// managed fields.
					if self.selected != mv.Select && self.claim == nil {
						self.gen++
					}
					self.selected, self.owned = mv.Select, true
					sync(self)
				}
			case 2: // Crossplane renders it with the release its selector selects
				selected := st.selected
				if st.claim != nil {
					selected = st.xrSelected
				}
				if st.manual || selected == "" {
					continue
				}
				if next()%4 == 0 {
					set(st, "Synced", "False")
					set(st, "Ready", "False")
					continue
				}
				st.obj["status"].(map[string]any)["platformRelease"] = selected
				set(st, "Synced", "True")
				set(st, "Ready", []string{"True", "False"}[next()%2])
			case 3: // Ready flips
				if r, _ := cond(st, "Ready"); r == "True" {
					set(st, "Ready", "False")
				} else {
					set(st, "Ready", "True")
				}
			case 4: // a tenant writes its own selection, on the claim of a claim's XR
				if v := []string{"r1", "r2"}[next()%2]; v != st.selected {
					st.selected = v
					if st.claim == nil {
						st.gen++
					}
				}
				st.owned = false
				sync(st)
			case 5: // it is deleted
				deleted[st] = true
			case 6: // the claim syncer applies the claim's selector over its XR's
				if st.claim != nil && !st.lost && st.xrSelected != st.selected {
					st.xrSelected = st.selected
					st.gen++
					sync(st)
				}
			case 7: // its claim is lost from sight, or found again
				st.lost = st.claim != nil && !st.lost
			}
		}
	})
}
