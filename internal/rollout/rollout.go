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
	"maps"
	"slices"
	"strings"
	"time"

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
	// Soak is how long the next waves wait after the wave's last Cluster
	// turned Ready on the target, as a Go duration ("30m", "24h"); empty
	// or "0s" means no wait. Only a clock can tell it has passed, so only
	// the fleet controller decides it (package fleet).
	Soak string `json:"soak"`
}

// SoakDuration is Soak parsed; 0 when it is empty or does not parse
// (Validate names it then).
func (w Wave) SoakDuration() time.Duration {
	d, err := time.ParseDuration(w.Soak)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// Settings are the environment's rollout keys (environment.rollout).
type Settings struct {
	// Waves are the rollout's waves, in order. A Cluster without the
	// wave label is in the last. Without waves every Cluster adopts a
	// new version at once.
	Waves []Wave `json:"waves"`
	// Namespace is where the fleet controller writes each gated Cluster's
	// Ruling (a ConfigMap the Cluster reads by name): a namespace of the
	// platform team's, which no tenant may write. Empty means
	// DefaultNamespace.
	Namespace string `json:"namespace"`
	// Release moves the fleet's XRs, of every kind, to a platform
	// release over the same waves; nil when no release rolls out. Only
	// the fleet controller reads it (Release.Validate): a mistake in it
	// stops the release's moves, never a Cluster's render.
	Release *Release `json:"release"`
}

// DefaultNamespace is where Rulings live when the environment names no
// rollout.namespace: Crossplane's own namespace.
const DefaultNamespace = "crossplane-system"

// RulingNamespace is Namespace, else DefaultNamespace.
func (s Settings) RulingNamespace() string { return cmp.Or(s.Namespace, DefaultNamespace) }

// Validate returns what is wrong with the waves, each error naming its
// environment key under path (environment.rollout).
func (s Settings) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if msgs := validation.IsDNS1123Label(s.Namespace); s.Namespace != "" && len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("namespace"), s.Namespace, strings.Join(msgs, "; ")))
	}
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
		if d, err := time.ParseDuration(w.Soak); w.Soak != "" && (err != nil || d < 0) {
			errs = append(errs, field.Invalid(p.Child("soak"), w.Soak, "must be a duration of 0 or more, such as 30m or 24h"))
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
// Kubernetes minor and the chart catalog's versions; or, for a platform
// release's rollout, the release every XR is rendered by.
type Target struct {
	// Kubernetes is the control plane's and every pool's version.
	Kubernetes string
	// Charts are the catalog's chart versions by chart name.
	Charts map[string]string
	// Release is a platform release's name (rollout.release.target): a
	// target that names one asks for nothing else.
	Release string
}

// String is the target as approvals name it: "1.31" or
// "1.31+cert-manager=v1.16.1,ingress-nginx=4.11.3", or "release=r2".
func (t Target) String() string {
	if t.Release != "" {
		return "release=" + t.Release
	}
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
	if t.Kubernetes != o.Kubernetes || t.Release != o.Release || len(t.Charts) != len(o.Charts) {
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
	// Kind is the XR's kind, set only where XRs of several kinds are
	// members (a platform release's rollout: ReleaseMemberOf).
	Kind string
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
	// Stale is set when its Ready or Synced condition was observed at an
	// older generation than the object's: what it says is about a spec
	// that is no longer asked for, so the Cluster neither proves the
	// target nor counts as failed until Crossplane reconciles it again.
	Stale bool
	// Deleting is set when the Cluster is being deleted: it neither holds
	// nor proves anything, and is left out of every wave.
	Deleting bool
	// ReadySince is when the Cluster last turned Ready on what it runs:
	// the latest transition of its Ready condition and of its Upgrading
	// condition (an upgrade that ended), zero when unknown. A wave's soak
	// counts from its last Cluster's.
	ReadySince time.Time
}

// Key is the member's namespace/name, after its kind when it has one: its
// place in every deterministic order here.
func (m Member) Key() string {
	if m.Kind != "" {
		return m.Kind + " " + m.Namespace + "/" + m.Name
	}
	return m.Namespace + "/" + m.Name
}

// Covers reports whether a Cluster that runs t has proven o: it runs o's
// Kubernetes minor or a newer one (an earlier wave's environment layer
// may ask its cloud for a newer minor than this Cluster's asks for), and
// each chart of o that it runs at o's version or a newer one. A chart it
// does not run (disabled, or pinned by its XR) proves nothing and holds
// nothing; a Cluster that reports no charts at all has not proven any. A
// release is covered only by itself: releases have no order, so that a
// rollback is a rollout like any other.
func (t Target) Covers(o Target) bool {
	if o.Release != "" || t.Release != "" {
		return t.Release == o.Release
	}
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
	if t.Release != "" {
		if from.Release == t.Release {
			return nil
		}
		return []string{t.String()}
	}
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
func (m Member) Done(target Target) bool {
	return m.Ready && !m.Failed && !m.Stale && m.Runs.Covers(target)
}

// Unavailable reports whether the member is mid-change or not Ready: what
// a wave's maxUnavailable counts.
func (m Member) Unavailable() bool { return !m.Ready || !m.Runs.Equal(m.Asks) }

// Broken reports whether the member failed: a step stuck (Failed, which
// reads each condition at the object's generation), or not Ready while no
// change is under way, observed at the object's generation (a Stale
// member that has not failed has yet to be reconciled).
func (m Member) Broken() bool {
	return m.Failed || (!m.Stale && !m.Ready && m.Runs.Equal(m.Asks))
}

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
