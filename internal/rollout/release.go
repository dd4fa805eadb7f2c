package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LabelRelease names a platform release: a label of the Compositions of a
// release (Crossplane copies a Composition's labels to each of its
// revisions), and the key of an XR's composition revision selector that
// the fleet controller writes, so that Crossplane renders the XR with the
// newest revision of its Composition that belongs to the release.
const LabelRelease = "platform.example.org/release"

// A Release is the environment's platform release keys
// (environment.rollout.release): which release the fleet moves to, over
// the rollout's waves.
type Release struct {
	// Target is the release every XR moves to: the value of LabelRelease
	// on its Compositions.
	Target string `json:"target"`
	// From is the release the fleet moves from: what an XR that selects
	// no release yet is given while the waves hold it.
	From string `json:"from"`
	// Rollback moves the XRs to Target from the last wave back to the
	// first: a wave moves once no XR of a later wave runs another
	// release, with no approval and no soak, so that no later wave ever
	// runs a release an earlier one does not.
	Rollback bool `json:"rollback"`
}

// Validate returns what is wrong with the release keys beside waves, each
// error naming its environment key under rollout (environment.rollout):
// a release needs a target, the release it moves from (what an XR that
// selects none is given while it waits), and waves: without them every XR
// would move at once.
func (r Release) Validate(rollout *field.Path, waves []Wave) field.ErrorList {
	var errs field.ErrorList
	path := rollout.Child("release")
	if len(waves) == 0 {
		errs = append(errs, field.Required(rollout.Child("waves"), "a release moves over the rollout's waves: without them every XR would move at once"))
	}
	if r.From == "" {
		errs = append(errs, field.Required(path.Child("from"), "the release the fleet moves from: what an XR that selects no release yet is given while the waves hold it"))
	}
	for _, k := range []struct{ name, value string }{{"target", r.Target}, {"from", r.From}} {
		if msgs := validation.IsValidLabelValue(k.value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child(k.name), k.value, strings.Join(msgs, "; ")))
		}
	}
	if r.Target == "" {
		errs = append(errs, field.Required(path.Child("target"), "the release the fleet moves to: the value of the label "+LabelRelease+" on its Compositions"))
	}
	if r.From != "" && r.From == r.Target {
		errs = append(errs, field.Invalid(path.Child("from"), r.From, "the release the fleet moves from cannot be the one it moves to"))
	}
	return errs
}

// A vocabulary is how a Fleet's messages name its members and what pins
// one.
type vocabulary struct {
	// noun names a member ("Cluster", "XR"), after its indefinite
	// article a; pins says what a pinned one pins.
	a, noun, pins string
	// moves is what a member that moves does ("adopts", "moves to").
	moves string
}

var (
	clusterWords = vocabulary{a: "a", noun: "Cluster", pins: "pins its version", moves: "adopts"}
	releaseWords = vocabulary{a: "an", noun: "XR", pins: "pins its release", moves: "moves to"}
)

// CrossplaneSpec is where an XR's Crossplane fields (its Composition, its
// revision selector, its update policy) are, by its XRD's scope:
// spec.crossplane on a Crossplane v2 namespaced XR, spec on a legacy
// cluster-scoped one, and on a legacy XR's claim (namespaced, but of the
// legacy schema: CrossplaneSpec(false)).
func CrossplaneSpec(namespaced bool) []string {
	if namespaced {
		return []string{"spec", "crossplane"}
	}
	return []string{"spec"}
}

// ReleaseSelection is where an XR's release selection is: the matchLabels
// of its composition revision selector (CrossplaneSpec).
func ReleaseSelection(namespaced bool) []string {
	return append(CrossplaneSpec(namespaced), "compositionRevisionSelector", "matchLabels")
}

// ReleaseMemberOf reads an XR of any kind, as a map, as a member of a
// platform release's rollout: as MemberOf reads a Cluster (its wave, its
// conditions at its generation, Failed, Stale, Deleting, ReadySince), with
// claim the XR's claim when it is a legacy XR of a claim (nil otherwise),
// and
//
//   - Kind its kind, so that XRs of several kinds with one name are apart;
//
//   - Runs.Release the release that rendered it last: status.platformRelease,
//     which the function writes from its step's Input, part of the release's
//     Composition revision;
//
//   - Asks.Release the release its composition revision selector selects
//     (LabelRelease), or for an XR of a claim its claim's (Crossplane's
//     claim syncer applies a claim's selector over its XR's), when the
//     fleet controller wrote it (owned, called with the XR or the claim);
//     otherwise what it runs: a selection someone else wrote (its owner's,
//     or the XRD's default that Crossplane wrote) is not the rollout's, and
//     the controller writes its own over it;
//
//   - Pinned its composition update policy being Manual (Crossplane keeps it
//     on the revision it names), or its reconciles being paused
//     (crossplane.io/paused), on the XR or its claim (whose policy
//     Crossplane applies over its XR's, and which, paused, syncs nothing to
//     it): the rollout neither moves it nor counts it, for or against a
//     wave;
//
//   - Deleting also set when its claim is being deleted (the claim's
//     deletion deletes its XR);
//
//   - Ready also requiring Synced True: a release that cannot render the XR
//     (a Fatal, or no revision of its Composition carries the release)
//     proves nothing, and fails;
//
//   - ReadySince, while Ready, the transition of its PlatformRelease
//     condition: when the release it runs first rendered it (Ready's own
//     transition moves at every generation). Zero when it has none.
//
// Kubernetes versions and charts are not read.
func ReleaseMemberOf(obj, claim map[string]any, owned func(obj map[string]any) bool) Member {
	m := MemberOf(obj)
	m.Runs, m.Asks = Target{}, Target{}
	u := unstructured.Unstructured{Object: obj}
	m.Kind = u.GetKind()
	namespaced := u.GetNamespace() != ""
	m.Runs.Release, _, _ = unstructured.NestedString(obj, "status", "platformRelease")
	m.Asks.Release = m.Runs.Release
	// Where its release is selected: the XR, or its claim (of the legacy
	// schema: its Crossplane fields are under spec).
	selector, selNamespaced := obj, namespaced
	if claim != nil {
		selector, selNamespaced = claim, false
	}
	if sel, _, _ := unstructured.NestedStringMap(selector, ReleaseSelection(selNamespaced)...); sel[LabelRelease] != "" && owned != nil && owned(selector) {
		m.Asks.Release = sel[LabelRelease]
	}
	m.Pinned = Pins(obj, namespaced)
	if claim != nil {
		m.Pinned = m.Pinned || Pins(claim, false)
		m.Deleting = m.Deleting || (&unstructured.Unstructured{Object: claim}).GetDeletionTimestamp() != nil
	}
	if m.Ready && !synced(obj) {
		m.Ready = false
		m.Reason = cmp.Or(m.Reason, "Synced is not True")
	}
	m.ReadySince = time.Time{}
	if c := condition(obj, ConditionPlatformRelease); m.Ready && c != nil {
		m.ReadySince = since(c)
	}
	return m
}

// Pins reports whether obj (an XR, or a claim) pins its release: its
// composition update policy (CrossplaneSpec(namespaced)) is Manual, or its
// reconciles are paused.
func Pins(obj map[string]any, namespaced bool) bool {
	policy, _, _ := unstructured.NestedString(obj, append(CrossplaneSpec(namespaced), "compositionUpdatePolicy")...)
	return policy == "Manual" || (&unstructured.Unstructured{Object: obj}).GetAnnotations()[AnnotationPaused] == "true"
}

// Claimed reports whether XR obj is a legacy XR of a claim: cluster-scoped,
// and labelled by Crossplane with its claim's name (LabelClaimName). A
// namespaced XR has no claim, whatever its labels say.
func Claimed(obj map[string]any) bool {
	u := unstructured.Unstructured{Object: obj}
	return u.GetNamespace() == "" && u.GetLabels()[LabelClaimName] != ""
}

// LabelClaimName is the label Crossplane gives a legacy XR of a claim: the
// claim's name.
const LabelClaimName = "crossplane.io/claim-name"

// AnnotationPaused pauses Crossplane's reconciles of an object.
const AnnotationPaused = "crossplane.io/paused"

// ConditionPlatformRelease is the XR condition that names the release
// that rendered it (the function's response.ConditionPlatformRelease).
const ConditionPlatformRelease = "PlatformRelease"

// condition is the XR's condition of type typ, nil when it has none.
func condition(obj map[string]any, typ string) map[string]any {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok && cm["type"] == typ {
			return cm
		}
	}
	return nil
}

// synced reports whether the XR's Synced condition is True.
func synced(obj map[string]any) bool { return condition(obj, "Synced")["status"] == "True" }

// NewReleaseFleet is NewFleet for a platform release's rollout: its
// members are XRs of every kind, and its messages say so.
func NewReleaseFleet(waves []Wave, members []Member, now time.Time) *Fleet {
	f := NewFleet(waves, members, now)
	f.words = releaseWords
	return f
}

// DecideRollback says whether self moves back to target now: once every
// member of the later waves asks for it (the controller selected it for
// them; pinned ones aside), from the last wave back to the first, without approvals, soaks
// or maxUnavailable, so that a rollback is never held by what it undoes.
// One already asking for the target keeps it.
func (f *Fleet) DecideRollback(self Member, target Target, visible func(ns string) bool) Decision {
	d := Decision{Target: target}
	if visible == nil {
		visible = func(ns string) bool { return ns == self.Namespace }
	}
	if len(f.waves) == 0 {
		d.Verdict, d.Message = Adopt, fmt.Sprintf("no rollout waves: every %s moves back to %s at once", f.words.noun, target)
		return d
	}
	wi := WaveOf(f.waves, self)
	d.Wave = f.waves[wi].Name
	if self.Asks.Equal(target) {
		d.Verdict, d.Message = Keep, fmt.Sprintf("wave %s: runs or moves back to %s", d.Wave, target)
		return d
	}
	for j := len(f.waves) - 1; j > wi; j-- {
		for _, m := range f.byWave[j] {
			// A later XR the controller moved back counts, rendered or not:
			// one the target cannot render, or that never reconciles,
			// must not hold the rollback of the waves before it.
			if m.Pinned || m.Key() == self.Key() || m.Asks.Equal(target) {
				continue
			}
			if visible(m.Namespace) {
				d.WaitsFor = append(d.WaitsFor, m)
			} else {
				d.Hidden++
			}
			if d.Blocking == "" {
				d.Blocking = f.waves[j].Name
			}
		}
		if d.Blocking != "" {
			d.Verdict = Hold
			d.Message = fmt.Sprintf("wave %s holds its rollback to %s until wave %s moves back to it: a rollback moves the last wave first", d.Wave, target, d.Blocking)
			return d
		}
	}
	d.Verdict = Adopt
	d.Message = fmt.Sprintf("wave %s moves back to %s: the later waves moved back", d.Wave, target)
	return d
}

// Selection is the release the fleet controller selects for an XR that
// runs and asks for what m says, given its decision on it: the target once
// it moves (Adopt, Keep); otherwise what it asks for (a step under way is
// never taken back), else what it runs, else rel.From (a new XR, or one no
// release rendered yet); "" for a pinned XR, whose selection is its
// owner's.
func Selection(rel Release, m Member, d Decision) string {
	switch {
	case m.Pinned:
		return ""
	case d.Verdict == Adopt || d.Verdict == Keep:
		return d.Target.Release
	}
	return cmp.Or(m.Asks.Release, m.Runs.Release, rel.From)
}

// A Move is the fleet controller's decision on one XR of a platform
// release's rollout: the release its selector is to select.
type Move struct {
	// Ref is the XR.
	Ref Ref
	// Claim is, for a legacy XR of a claim, its claim: the selector Select
	// is written to, since Crossplane applies a claim's selector over its
	// XR's. Zero for an XR of no claim, whose own selector is written.
	Claim Ref
	// Member is the XR as its status reports it.
	Member Member
	// Decision is the rollout's decision on it.
	Decision Decision
	// Select is the release its selector is to select; "" leaves it
	// alone (pinned).
	Select string
}

// Moves decides every XR of xrs (of every kind, as maps) for the release's
// rollout over waves, from one Fleet: forward (Fleet.Decide) or, for a
// rollback, from the last wave back (Fleet.DecideRollback); each naming
// only what its owner may see, in wave order (the last wave first for a
// rollback), then Ref order. claimOf is the claim of a legacy XR of a claim
// (Claimed), nil when it is not found or not bound to the XR; owned reports
// whether the fleet controller wrote the release selection of an XR or a
// claim (ReleaseMemberOf). An XR being deleted, or whose claim is, is left
// alone. An XR of a claim that claimOf does not find is decided on no
// selector: it counts in its wave as its status says, and holds, since
// the controller can write neither its claim's selector nor its own (which
// the claim's would overwrite).
func Moves(waves []Wave, rel Release, xrs []map[string]any, claimOf func(xr map[string]any) map[string]any, owned func(obj map[string]any) bool, now time.Time) []Move {
	members := make([]Member, 0, len(xrs))
	out := make([]Move, 0, len(xrs))
	// unbound are the XRs of a claim not found, by Ref: the claim's name.
	unbound := map[Ref]string{}
	for _, obj := range xrs {
		var claim map[string]any
		if Claimed(obj) && claimOf != nil {
			claim = claimOf(obj)
		}
		m := ReleaseMemberOf(obj, claim, owned)
		members = append(members, m)
		if m.Deleting {
			continue
		}
		mv := Move{Ref: RefOf(obj), Member: m}
		if claim != nil {
			mv.Claim = RefOf(claim)
		}
		if Claimed(obj) && claim == nil {
			unbound[mv.Ref] = (&unstructured.Unstructured{Object: obj}).GetLabels()[LabelClaimName]
		}
		out = append(out, mv)
	}
	// In the order a pass writes them: the earliest wave first, the last
	// first for a rollback, so that a later wave never selects the target
	// before an earlier one in a rollout, nor after one in a rollback,
	// even within one pass.
	order := func(m Move) int {
		if len(waves) == 0 {
			return 0
		}
		if w := WaveOf(waves, m.Member); rel.Rollback {
			return -w
		} else {
			return w
		}
	}
	slices.SortFunc(out, func(a, b Move) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.Ref.String(), b.Ref.String()))
	})
	f := NewReleaseFleet(waves, members, now)
	target := Target{Release: rel.Target}
	for i := range out {
		mv := &out[i]
		switch {
		case mv.Member.Pinned:
			mv.Decision = Decision{Verdict: Pinned, Target: target,
				Message: "its owner pins its release (a composition update policy of Manual, or paused reconciles, on the XR or its claim): the rollout does not move it"}
		case unbound[mv.Ref] != "":
			mv.Decision = Decision{Verdict: Hold, Target: target,
				Message: fmt.Sprintf("its claim %s/%s is not found, or not bound to it: Crossplane applies a claim's selector over its XR's, so the controller writes neither until it reads the claim", mv.Member.Namespace, unbound[mv.Ref])}
		case rel.Rollback:
			mv.Decision = f.DecideRollback(mv.Member, target, nil)
		default:
			mv.Decision = f.Decide(mv.Member, target, nil)
		}
		held := unbound[mv.Ref] != ""
		if (mv.Member.Pinned || held) && len(waves) > 0 {
			mv.Decision.Wave = waves[WaveOf(waves, mv.Member)].Name
		}
		if !held {
			mv.Select = Selection(rel, mv.Member, mv.Decision)
		}
	}
	return out
}
