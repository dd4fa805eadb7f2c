package rollout

import (
	"fmt"
	"testing"
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
