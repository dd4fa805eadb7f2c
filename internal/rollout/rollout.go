// Package rollout decides when a Cluster adopts a change its environment
// makes for the whole fleet (a Kubernetes version, the chart catalog's
// versions): only once every Cluster of the earlier waves, on every cloud,
// runs it and is Ready; within a wave, at most maxUnavailable at once; past
// an approval gate only once the environment approves the target.
//
// It is the decision alone, a pure function of the waves, the Cluster and
// what the fleet reports: no clock, no I/O, nothing of a cloud or of the
// registry, so that the same request renders the same bytes and a fuzz
// test can walk a fleet through it. Who counts as a member of a wave is
// the environment's decision (Wave.Namespaces), never the label alone: a
// label is the XR author's to set, so a tenant can neither rush its own
// Cluster into an early wave nor hold back another tenant's production by
// labelling a broken Cluster "staging".
package rollout

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Label is the label that names a Cluster's wave.
const Label = "platform.example.org/wave"

// A Wave is one step of the rollout, in the environment's order
// (environment.rollout.waves).
type Wave struct {
	// Name is the wave's name: the value of the label
	// platform.example.org/wave on its Clusters.
	Name string `json:"name"`
	// Namespaces are the namespaces whose Clusters count for this wave
	// when labelled with its name; empty means every namespace.
	Namespaces []string `json:"namespaces"`
	// MaxUnavailable is how many of the wave's Clusters may be mid-change
	// at once; 0 means no limit.
	MaxUnavailable int `json:"maxUnavailable"`
	// RequiresApproval holds the wave until approved lists the target.
	RequiresApproval bool `json:"requiresApproval"`
	// Approved are the changes approved for this wave: a Kubernetes minor
	// ("1.34") or a chart's version ("cert-manager=v1.19.2"), each as
	// status.rollout's message names what waits for approval. A change in
	// Git, reviewed like any other.
	Approved []string `json:"approved"`
}

// Settings are the environment's rollout keys (environment.rollout).
type Settings struct {
	// Waves are the rollout's waves, in order. A Cluster without the
	// wave label is in the last. Without waves every Cluster adopts a
	// new version at once.
	Waves []Wave `json:"waves"`
}

// Validate returns what is wrong with the waves, each error naming its
// environment key under path (environment.rollout).
func (s Settings) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, w := range s.Waves {
		p := path.Child("waves").Index(i)
		switch msgs := validation.IsValidLabelValue(w.Name); {
		case w.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "a wave needs a name: the value of the label "+Label+" on its Clusters"))
		case len(msgs) > 0:
			errs = append(errs, field.Invalid(p.Child("name"), w.Name, strings.Join(msgs, "; ")))
		case seen[w.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), w.Name))
		}
		seen[w.Name] = true
		for j, ns := range w.Namespaces {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("namespaces").Index(j), ns, strings.Join(msgs, "; ")))
			}
		}
		if w.MaxUnavailable < 0 {
			errs = append(errs, field.Invalid(p.Child("maxUnavailable"), w.MaxUnavailable, "must be 0 (no limit) or more"))
		}
		if len(w.Approved) > 0 && !w.RequiresApproval {
			errs = append(errs, field.Invalid(p.Child("approved"), w.Approved, "approvals of a wave that requires none: set requiresApproval, or remove them"))
		}
	}
	return errs
}

// Unapproved are the changes of target, for a Cluster that asks for asks
// (what it adopted), that the wave's approvals do not list: none when they
// list the whole target (Target.String) or each change (Target.Changes).
func (w Wave) Unapproved(target, asks Target) []string {
	if slices.Contains(w.Approved, target.String()) {
		return nil
	}
	var out []string
	for _, c := range target.Changes(asks) {
		if !slices.Contains(w.Approved, c) {
			out = append(out, c)
		}
	}
	return out
}

// Admits reports whether a Cluster in namespace ns, labelled with the
// wave's name, counts as one of its members.
func (w Wave) Admits(ns string) bool {
	return len(w.Namespaces) == 0 || slices.Contains(w.Namespaces, ns)
}

// A Target is what the environment asks every Cluster to run: the
// Kubernetes minor and the chart catalog's versions.
type Target struct {
	// Kubernetes is the control plane's and every pool's version.
	Kubernetes string
	// Charts are the catalog's chart versions by chart name.
	Charts map[string]string
}

// String is the target as approvals name it: "1.31" or
// "1.31+cert-manager=v1.16.1,ingress-nginx=4.11.3".
func (t Target) String() string {
	if len(t.Charts) == 0 {
		return t.Kubernetes
	}
	parts := make([]string, 0, len(t.Charts))
	for _, name := range slices.Sorted(maps.Keys(t.Charts)) {
		parts = append(parts, name+"="+t.Charts[name])
	}
	return t.Kubernetes + "+" + strings.Join(parts, ",")
}

// Equal reports whether two targets ask for the same.
func (t Target) Equal(o Target) bool {
	if t.Kubernetes != o.Kubernetes || len(t.Charts) != len(o.Charts) {
		return false
	}
	for k, v := range t.Charts {
		if w, ok := o.Charts[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A Member is a Cluster of the fleet as its status reports it.
type Member struct {
	// Name and Namespace identify the Cluster; Cloud is its cloud.
	Name, Namespace, Cloud string
	// Wave is its Label's value, empty when it has none.
	Wave string
	// Runs is what it runs: the control plane's version only when every
	// pool runs it too, and the charts its releases run.
	Runs Target
	// Asks is what it has adopted: the target its composed resources ask
	// for. Asks differs from Runs while a change is under way.
	Asks Target
	// Ready is the Cluster's Ready condition.
	Ready bool
	// Failed is set when a step is stuck (refused, or past its deadline);
	// Reason says why.
	Failed bool
	// Reason is the Cluster's own words for its state.
	Reason string
	// Pinned is set when its XR pins its own version
	// (spec.parameters.version): it follows its owner, not the
	// environment, so it neither proves nor holds a later wave.
	Pinned bool
}

// Key is the member's namespace/name, its place in every deterministic
// order here.
func (m Member) Key() string { return m.Namespace + "/" + m.Name }

// Covers reports whether a Cluster that runs t has proven o: it runs o's
// Kubernetes minor or a newer one (an earlier wave's environment layer
// may ask its cloud for a newer minor than this Cluster's asks for), and
// each chart of o that it runs at o's version or a newer one. A chart it
// does not run (disabled, or pinned by its XR) proves nothing and holds
// nothing; a Cluster that reports no charts at all has not proven any.
func (t Target) Covers(o Target) bool {
	if Minor(t.Kubernetes) == "" || Minor(o.Kubernetes) == "" || lessMinor(t.Kubernetes, o.Kubernetes) {
		return false
	}
	if len(o.Charts) > 0 && t.Charts == nil {
		return false
	}
	for k, v := range o.Charts {
		if runs, ok := t.Charts[k]; ok && !chartAtLeast(runs, v) {
			return false
		}
	}
	return true
}

// Holds reports whether a Cluster that runs t runs all of o: Covers, and
// every chart o names, which a Cluster's own decision requires (a chart it
// runs nothing of, or whose version is unknown, it does not hold yet).
func (t Target) Holds(o Target) bool {
	if !t.Covers(o) {
		return false
	}
	for k := range o.Charts {
		if _, ok := t.Charts[k]; !ok {
			return false
		}
	}
	return true
}

// Changes are the parts of t that differ from from, as approvals name
// them: the Kubernetes minor ("1.34"), and name=version for each chart
// ("cert-manager=v1.19.2"), in that order.
func (t Target) Changes(from Target) []string {
	var out []string
	if from.Kubernetes != t.Kubernetes {
		out = append(out, t.Kubernetes)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Charts)) {
		if from.Charts[name] != t.Charts[name] {
			out = append(out, name+"="+t.Charts[name])
		}
	}
	return out
}

// chartAtLeast reports whether a chart that runs version runs at least
// want: the same, or a newer semantic version.
func chartAtLeast(runs, want string) bool {
	if runs == want {
		return true
	}
	v := func(s string) string {
		if !strings.HasPrefix(s, "v") {
			s = "v" + s
		}
		return s
	}
	a, b := v(runs), v(want)
	return semver.IsValid(a) && semver.IsValid(b) && semver.Compare(a, b) >= 0
}

// Done reports whether the member has proven target: it runs it (or a
// newer minor), is Ready, and has not failed (a Cluster whose provider
// cannot reconcile something proves nothing, whatever it runs).
func (m Member) Done(target Target) bool { return m.Ready && !m.Failed && m.Runs.Covers(target) }

// Unavailable reports whether the member is mid-change or not Ready: what
// a wave's maxUnavailable counts.
func (m Member) Unavailable() bool { return !m.Ready || !m.Runs.Equal(m.Asks) }

// Broken reports whether the member failed: a step stuck, or not Ready
// while no change is under way.
func (m Member) Broken() bool { return m.Failed || (!m.Ready && m.Runs.Equal(m.Asks)) }

// A Verdict is what a Cluster does with the environment's target.
type Verdict string

// Verdicts.
const (
	// Adopt: the Cluster moves to the target now.
	Adopt Verdict = "Adopt"
	// Keep: the Cluster already asks for the target, or runs it.
	Keep Verdict = "Keep"
	// Hold: an earlier wave has not finished, or the wave is full.
	Hold Verdict = "Hold"
	// Halt: a Cluster of an earlier wave failed.
	Halt Verdict = "Halt"
	// Approval: the wave waits for the environment to approve the target.
	Approval Verdict = "Approval"
	// Pinned: the Cluster's owner pins its version; the rollout does not
	// gate it (Decide never returns it: the caller decides it).
	Pinned Verdict = "Pinned"
)

// Gated reports whether the verdict holds the Cluster where it is.
func (v Verdict) Gated() bool { return v == Hold || v == Halt || v == Approval }

// A Decision is the verdict and everything status says about it.
type Decision struct {
	// Verdict is what the Cluster does.
	Verdict Verdict
	// Wave is the Cluster's wave as the environment counts it (the last
	// wave when its label names none, or a wave that does not admit its
	// namespace).
	Wave string
	// Target is the environment's target.
	Target Target
	// WaitsFor are the Clusters it waits for, that its owner may see.
	WaitsFor []Member
	// Hidden counts the Clusters it waits for that its owner may not see.
	Hidden int
	// Failed is the Cluster of an earlier wave that halts it, when Verdict
	// is Halt and its owner may see it.
	Failed *Member
	// Pinned counts the Clusters of the earlier waves that pin their own
	// version: they are not waited for, and prove nothing.
	Pinned int
	// Message says it in a sentence.
	Message string
}

// A Request is everything Decide reads.
type Request struct {
	// Waves are the environment's waves, in order.
	Waves []Wave
	// Self is the Cluster being rendered.
	Self Member
	// Target is what the environment asks for.
	Target Target
	// Fleet are the other Clusters of the earlier waves and of Self's own
	// wave, as required resources brought them (Self among them or not).
	Fleet []Member
	// Visible reports whether Self's owner may see a Cluster of namespace
	// ns; nil means only Self's own namespace.
	Visible func(ns string) bool
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
	d := Decision{Target: r.Target}
	if len(r.Waves) == 0 {
		d.Verdict, d.Message = Adopt, "no rollout waves: every Cluster adopts the target at once"
		return d
	}
	visible := r.Visible
	if visible == nil {
		visible = func(ns string) bool { return ns == r.Self.Namespace }
	}
	wi := WaveOf(r.Waves, r.Self)
	d.Wave = r.Waves[wi].Name
	if r.Self.Asks.Equal(r.Target) || r.Self.Runs.Holds(r.Target) {
		d.Verdict, d.Message = Keep, fmt.Sprintf("wave %s: runs or moves to %s", d.Wave, r.Target)
		return d
	}

	// The fleet by wave, Self left out, each member once, in a stable
	// order.
	byWave := make([][]Member, len(r.Waves))
	seen := map[string]bool{r.Self.Key(): true}
	for _, m := range slices.SortedFunc(slices.Values(r.Fleet), func(a, b Member) int { return cmp.Compare(a.Key(), b.Key()) }) {
		if seen[m.Key()] {
			continue
		}
		seen[m.Key()] = true
		i := WaveOf(r.Waves, m)
		byWave[i] = append(byWave[i], m)
	}

	// Every earlier wave done: each member runs the target and is Ready.
	// A failed one halts; the first failure in wave order is named.
	var failed *Member
	for i := range wi {
		for _, m := range byWave[i] {
			if m.Pinned {
				d.Pinned++
				continue
			}
			if m.Done(r.Target) {
				continue
			}
			if m.Broken() && failed == nil {
				failed = &m
			}
			if visible(m.Namespace) {
				d.WaitsFor = append(d.WaitsFor, m)
			} else {
				d.Hidden++
			}
		}
	}
	if failed != nil {
		d.Verdict = Halt
		who := "a Cluster its owner may not see"
		if visible(failed.Namespace) {
			d.Failed = failed
			who = fmt.Sprintf("Cluster %s (%s, wave %s): %s", failed.Key(), failed.Cloud, r.Waves[WaveOf(r.Waves, *failed)].Name, failed.Reason)
		}
		d.Message = fmt.Sprintf("wave %s halted: %s failed on its way to %s", d.Wave, who, r.Target)
		return d
	}
	if len(d.WaitsFor)+d.Hidden > 0 {
		d.Verdict = Hold
		d.Message = fmt.Sprintf("wave %s holds %s until the earlier waves run it and are Ready: %s", d.Wave, r.Target, waiting(d))
		return d
	}

	w := r.Waves[wi]
	if missing := w.Unapproved(r.Target, r.Self.Asks); w.RequiresApproval && len(missing) > 0 {
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
		for _, m := range byWave[wi] {
			switch {
			case m.Pinned, m.Failed, m.Done(r.Target):
			case m.Asks.Covers(r.Target):
				first = append(first, m)
			case m.Ready && m.Key() < r.Self.Key():
				first = append(first, m)
			}
		}
		if len(first) >= w.MaxUnavailable {
			d.Verdict = Hold
			for _, m := range first {
				if visible(m.Namespace) {
					d.WaitsFor = append(d.WaitsFor, m)
				} else {
					d.Hidden++
				}
			}
			d.Message = fmt.Sprintf("wave %s moves at most %d Cluster(s) at once, and %d of its Clusters move or come first: %s", d.Wave, w.MaxUnavailable, len(first), waiting(d))
			return d
		}
	}
	d.Verdict = Adopt
	d.Message = fmt.Sprintf("wave %s adopts %s: the earlier waves run it and are Ready", d.Wave, r.Target)
	return d
}

// waiting names up to three of the Clusters d waits for and counts the
// rest.
func waiting(d Decision) string {
	var parts []string
	for i, m := range d.WaitsFor {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(d.WaitsFor)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s) runs %s", m.Key(), m.Cloud, runs(m)))
	}
	if d.Hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d Cluster(s) of other namespaces", d.Hidden))
	}
	return strings.Join(parts, ", ")
}

// runs says what a member runs, and that it is not Ready when it is not.
func runs(m Member) string {
	s := m.Runs.Kubernetes
	if s == "" {
		s = "nothing yet"
	}
	if !m.Ready {
		s += ", not Ready"
	}
	return s
}
