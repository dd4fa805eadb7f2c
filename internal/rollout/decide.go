package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Decision is the verdict and everything status says about it.
//
// Its Message changes only when the verdict does, or when what holds it
// moves from one wave to the next: it names waves, never counts or lists
// of Clusters that change as each Cluster moves, so that a gated
// Cluster's status is not rewritten at every step of the fleet.
type Decision struct {
	// Verdict is what the Cluster does.
	Verdict Verdict
	// Wave is the Cluster's wave as the environment counts it (the last
	// wave when its label names none, or a wave that does not admit its
	// namespace).
	Wave string
	// Target is the environment's target.
	Target Target
	// WaitsFor are the Clusters it waits for, that its owner may see:
	// what the fleet view and preview --fleet list; never in Message.
	WaitsFor []Member
	// Hidden counts the Clusters it waits for that its owner may not see.
	Hidden int
	// Failed is the Cluster of an earlier wave that halts it, when Verdict
	// is Halt and its owner may see it.
	Failed *Member
	// Pinned counts the Clusters of the earlier waves that pin their own
	// version: they are not waited for, and prove nothing.
	Pinned int
	// Blocking is the earlier wave that holds it, when Verdict is Hold
	// because of an earlier wave.
	Blocking string
	// Until is when the soak that holds it ends: zero unless it holds for
	// an earlier wave's soak whose start is known.
	Until time.Time
	// Message says it in a sentence.
	Message string
}

// A Request is everything Decide reads.
type Request struct {
	// Waves are the environment's waves, in order.
	Waves []Wave
	// Self is the Cluster being decided.
	Self Member
	// Target is what the environment asks Self for.
	Target Target
	// Fleet are the other Clusters of the fleet (Self among them or not).
	Fleet []Member
	// Visible reports whether Self's owner may see a Cluster of namespace
	// ns; nil means only Self's own namespace.
	Visible func(ns string) bool
	// Now is the time a wave's soak is measured against; zero means no
	// clock, so that no soak has passed.
	Now time.Time
}

// WaveOf is the index of the wave m counts for: its label's wave when
// that wave admits its namespace, otherwise the last wave.
func WaveOf(waves []Wave, m Member) int {
	for i, w := range waves {
		if w.Name == m.Wave && w.Admits(m.Namespace) {
			return i
		}
	}
	return len(waves) - 1
}

// Decide says whether Self adopts the target now. A Cluster already asking
// for the target keeps it: a step under way is never taken back.
func Decide(r Request) Decision {
	return NewFleet(r.Waves, r.Fleet, r.Now).Decide(r.Self, r.Target, r.Visible)
}

// A Fleet is a rollout's Clusters grouped by wave, read once and asked for
// many decisions: the fleet controller decides every gated Cluster of a
// fleet of thousands from one Fleet, at a cost that grows with the fleet,
// not with its square (what the earlier waves prove is worked out once per
// wave and target). A Fleet is not safe for concurrent use.
type Fleet struct {
	words  vocabulary
	waves  []Wave
	byWave [][]Member
	now    time.Time
	proofs map[proofKey]*proof
}

// proofKey names what proof is about: the waves before wave, for target.
type proofKey struct {
	wave   int
	target string
}

// proof is what the waves before one wave prove of one target.
type proof struct {
	// waiting are the members of those waves that have not proven it, in
	// wave order, then namespace/name order.
	waiting []Member
	// failed is the first of them that failed, nil when none did.
	failed *Member
	// pinned counts the members that pin their own version.
	pinned int
	// blocking is the first of those waves that holds (-1 when none), and
	// why: empty (no member follows the environment), waiting (a member
	// has not proven the target), or soaking until until (unknown when
	// zero).
	blocking int
	empty    bool
	soaking  bool
	until    time.Time
}

// NewFleet groups members by wave (WaveOf), each once, in namespace/name
// order. A Cluster being deleted is left out: it neither holds nor proves.
// now is the time a wave's soak is measured against; zero means no clock,
// so that no soak has passed.
func NewFleet(waves []Wave, members []Member, now time.Time) *Fleet {
	f := &Fleet{words: clusterWords, waves: waves, byWave: make([][]Member, len(waves)), now: now, proofs: map[proofKey]*proof{}}
	if len(waves) == 0 {
		return f
	}
	seen := map[string]bool{}
	for _, m := range slices.SortedStableFunc(slices.Values(members), func(a, b Member) int { return cmp.Compare(a.Key(), b.Key()) }) {
		if seen[m.Key()] || m.Deleting {
			continue
		}
		seen[m.Key()] = true
		i := WaveOf(waves, m)
		f.byWave[i] = append(f.byWave[i], m)
	}
	return f
}

// Members are the fleet's Clusters of wave i, in namespace/name order.
func (f *Fleet) Members(i int) []Member {
	if i < 0 || i >= len(f.byWave) {
		return nil
	}
	return f.byWave[i]
}

// Decide says whether self, asking for target, adopts it now; visible is
// Request.Visible. Self is never counted among the fleet's members.
func (f *Fleet) Decide(self Member, target Target, visible func(ns string) bool) Decision {
	d := Decision{Target: target}
	if len(f.waves) == 0 {
		d.Verdict, d.Message = Adopt, fmt.Sprintf("no rollout waves: every %s %s the target at once", f.words.noun, f.words.moves)
		return d
	}
	if visible == nil {
		visible = func(ns string) bool { return ns == self.Namespace }
	}
	wi := WaveOf(f.waves, self)
	d.Wave = f.waves[wi].Name
	if self.Asks.Equal(target) || self.Runs.Holds(target) {
		d.Verdict, d.Message = Keep, fmt.Sprintf("wave %s: runs or moves to %s", d.Wave, target)
		return d
	}

	p := f.proofOf(wi, target)
	d.Pinned = p.pinned
	for _, m := range p.waiting {
		if m.Key() == self.Key() {
			continue
		}
		if visible(m.Namespace) {
			d.WaitsFor = append(d.WaitsFor, m)
		} else {
			d.Hidden++
		}
	}
	if p.failed != nil {
		d.Verdict = Halt
		who := f.words.a + " " + f.words.noun + " its owner may not see"
		if visible(p.failed.Namespace) {
			d.Failed = p.failed
			who = fmt.Sprintf("%s %s (%s, wave %s): %s", f.words.noun, p.failed.Key(), p.failed.Cloud, f.waves[WaveOf(f.waves, *p.failed)].Name, p.failed.Why())
		}
		d.Message = fmt.Sprintf("wave %s halted: %s failed on its way to %s", d.Wave, who, target)
		return d
	}
	if p.blocking >= 0 {
		d.Verdict, d.Blocking, d.Until = Hold, f.waves[p.blocking].Name, p.until
		d.Message = f.holdMessage(d.Wave, target, p)
		return d
	}

	w := f.waves[wi]
	if missing := w.Unapproved(target, self.Asks); w.RequiresApproval && len(missing) > 0 {
		d.Verdict = Approval
		d.Message = fmt.Sprintf("wave %s waits for the environment to approve %s (rollout.waves[%d].approved)", d.Wave, strings.Join(missing, ", "), wi)
		return d
	}

	// Within the wave: at most MaxUnavailable move at once. Those under
	// way to the target (they adopted it and do not run it yet) take the
	// places; of the others, those that would adopt it now (Ready, not
	// failed) queue in namespace/name order. A Cluster that is pinned,
	// failed or broken takes no place and queues for none: a tenant
	// cannot fill a wave with a Cluster that never moves.
	if w.MaxUnavailable > 0 {
		var first []Member
		for _, m := range f.byWave[wi] {
			switch {
			case m.Key() == self.Key(), m.Pinned, m.Failed, m.Done(target):
			case m.Asks.Covers(target):
				first = append(first, m)
			case m.Ready && !m.Stale && m.Key() < self.Key():
				first = append(first, m)
			}
		}
		if len(first) >= w.MaxUnavailable {
			d.Verdict, d.WaitsFor, d.Hidden = Hold, nil, 0
			for _, m := range first {
				if visible(m.Namespace) {
					d.WaitsFor = append(d.WaitsFor, m)
				} else {
					d.Hidden++
				}
			}
			d.Message = fmt.Sprintf("wave %s moves at most %d %s(s) at once: it holds %s until this %s's turn (namespace/name order)", d.Wave, w.MaxUnavailable, f.words.noun, target, f.words.noun)
			return d
		}
	}
	d.Verdict = Adopt
	d.Message = fmt.Sprintf("wave %s %s %s: the earlier waves run it and are Ready", d.Wave, f.words.moves, target)
	return d
}

// proofOf is what the waves before wave wi prove of target, worked out
// once per Fleet.
func (f *Fleet) proofOf(wi int, target Target) *proof {
	key := proofKey{wave: wi, target: target.String()}
	if p, ok := f.proofs[key]; ok {
		return p
	}
	p := &proof{blocking: -1}
	f.proofs[key] = p
	block := func(j int) {
		if p.blocking < 0 {
			p.blocking = j
		}
	}
	for j := range wi {
		counted := 0
		for _, m := range f.byWave[j] {
			if m.Pinned {
				p.pinned++
				continue
			}
			counted++
			if m.Done(target) {
				continue
			}
			if m.Broken() && p.failed == nil {
				p.failed = &m
			}
			p.waiting = append(p.waiting, m)
			block(j)
		}
		if counted == 0 {
			if p.blocking < 0 {
				p.empty = true
			}
			block(j)
		}
	}
	if p.blocking >= 0 {
		return p
	}
	// Every earlier wave runs the target Ready; each one with a soak must
	// have run it so for that long, counted from its last Cluster's turn.
	for j := range wi {
		soak := f.waves[j].SoakDuration()
		if soak == 0 {
			continue
		}
		var since time.Time
		known := true
		for _, m := range f.byWave[j] {
			if m.Pinned {
				continue
			}
			if m.ReadySince.IsZero() {
				known = false
			}
			if m.ReadySince.After(since) {
				since = m.ReadySince
			}
		}
		var until time.Time
		if known {
			until = since.Add(soak).UTC()
		}
		if !known || f.now.IsZero() || f.now.Before(until) {
			p.blocking, p.soaking, p.until = j, true, until
			return p
		}
	}
	return p
}

// holdMessage says why wave holds target for p's blocking wave, in words
// that change only when the blocking wave or its reason does.
func (f *Fleet) holdMessage(wave string, target Target, p *proof) string {
	j := p.blocking
	w := f.waves[j]
	switch {
	case p.empty:
		where := "in any namespace"
		if len(w.Namespaces) > 0 {
			where = "in its namespaces " + strings.Join(w.Namespaces, ", ")
		}
		return fmt.Sprintf("wave %s holds %s: wave %s has no %s that follows the environment (rollout.waves[%d]: none labelled %s=%s %s, or each %s), and an empty wave proves nothing", wave, target, w.Name, f.words.noun, j, Label, w.Name, where, f.words.pins)
	case p.soaking && p.until.IsZero():
		return fmt.Sprintf("wave %s holds %s until wave %s has run it Ready for %s (rollout.waves[%d].soak): when its last Cluster turned Ready is not known yet", wave, target, w.Name, w.SoakDuration(), j)
	case p.soaking:
		return fmt.Sprintf("wave %s holds %s until wave %s has run it Ready for %s (rollout.waves[%d].soak): until %s", wave, target, w.Name, w.SoakDuration(), j, p.until.Format(time.RFC3339))
	}
	return fmt.Sprintf("wave %s holds %s until wave %s runs it and is Ready", wave, target, w.Name)
}
