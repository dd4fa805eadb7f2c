package portal

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// ReleaseView is the fleet view's platform release (docs/releases.md):
// the baseline's release keys (rollout.release) and, per wave in order,
// what the wave waits for and the XRs of every kind the user may see, each
// with the fleet controller's move (fleet.ReleaseMoves: the same decision,
// from the same XRs, Composition revisions and baseline, at the portal's
// clock).
type ReleaseView struct {
	// Target is the release every XR moves to; From what it moves from;
	// Rollback whether it moves back, from the last wave to the first.
	Target   string `json:"target"`
	From     string `json:"from"`
	Rollback bool   `json:"rollback,omitempty"`
	// Message says what is wrong with the release keys (then nothing
	// moves, and no wave is shown), and which resources the portal could
	// not read (then the verdicts here leave them out; the controller's
	// own do not).
	Message string `json:"message,omitempty"`
	// Outside counts the XRs of the fleet whose Composition has no
	// revision of any release: they take no part, and are not shown.
	Outside int `json:"outside"`
	// Waves are the rollout's waves in order.
	Waves []ReleaseWaveView `json:"waves"`
}

// ReleaseWaveView is one wave of a release: its settings, its gate, and
// its XRs the user may see.
type ReleaseWaveView struct {
	WaveSettings
	// Approved is whether the wave's approvals list release=<target>
	// (rollout.Wave.Unapproved); a rollback needs none.
	Approved bool `json:"approved"`
	// Done and Total count the wave's XRs the user may see that take part
	// (pinned ones do not: Pinned counts them): those that run the target
	// Ready (rollout.Member.Done), and all.
	Done   int `json:"done"`
	Total  int `json:"total"`
	Pinned int `json:"pinned"`
	// Gate is what the wave waits for.
	Gate ReleaseGateView `json:"gate"`
	// XRs are the wave's XRs the user may see, in the controller's order.
	XRs []ReleaseXRView `json:"xrs"`
}

// ReleaseGateView is what a wave of a release waits for: the controller's
// verdict on the wave's first XR (of any namespace) that has not moved to
// the target yet, else on its first that has, else (a wave of no XR that
// takes part) on an XR that would join it asking for From; and its
// message, the XRs it waits for and the one that halts it, as the user
// may see them: an XR of a namespace the user may not see everything of
// is counted (Hidden), never named.
type ReleaseGateView struct {
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	// Until is when the soak that holds the wave ends (RFC 3339).
	Until string `json:"until,omitempty"`
	// WaitsFor are the XRs it waits for ("Kind namespace/name"), Hidden
	// how many more the user may not see; Failed the XR that halts it.
	WaitsFor []string `json:"waitsFor"`
	Hidden   int      `json:"hidden"`
	Failed   string   `json:"failed,omitempty"`
}

// ReleaseXRView is one XR of a release as its status reports it
// (rollout.ReleaseMemberOf), with the controller's move.
type ReleaseXRView struct {
	// Kind and Name are the XR's; Namespace is its own, or for a legacy
	// XR its claim's ("" for one of no claim).
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Claim is, for a legacy XR of a claim, the claim whose selector
	// selects its release ("Kind namespace/name"), which the controller
	// writes; "" for an XR of no claim, or whose claim is not found.
	Claim string `json:"claim,omitempty"`
	// Runs is the release that rendered it last (status.platformRelease);
	// Selects the one its composition revision selector selects (its
	// claim's, for an XR of a claim), "" when none; Owned whether the
	// controller wrote that selection.
	Runs    string `json:"runs"`
	Selects string `json:"selects"`
	Owned   bool   `json:"owned,omitempty"`
	// Ready and Synced are its conditions (at its generation: Stale says
	// when they are not); Reason its own words when it is not Ready.
	Ready  bool   `json:"ready"`
	Synced bool   `json:"synced"`
	Stale  bool   `json:"stale,omitempty"`
	Failed bool   `json:"failed,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Pinned is set when its owner pins its release.
	Pinned bool `json:"pinned,omitempty"`
	// Verdict, Message and Until are the controller's decision on it;
	// Select the release it selects for it ("" for a pinned XR).
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	Until   string `json:"until,omitempty"`
	Select  string `json:"select,omitempty"`
}

// releaseView is the baseline's platform release at now as a user sees
// it: nil when the baseline sets no release keys. xrs are the XRs of every
// kind (as SlimXR keeps them), claims the legacy XRs' claims (as SlimClaim
// keeps them), revisions the Composition revisions of releases; sees reports whether the user may see an XR (listAccess);
// unread says which resources could not be read. It returns too when the
// view changes though nothing of the fleet does: the earliest end of a
// soak that holds an XR or a gate.
func releaseView(b fleet.Baseline, xrs, claims, revisions []*unstructured.Unstructured, sees func(*unstructured.Unstructured) bool, unread []string, now time.Time) (*ReleaseView, time.Time) {
	rel := b.Settings.Release
	if rel == nil {
		return nil, time.Time{}
	}
	v := &ReleaseView{Target: rel.Target, From: rel.From, Rollback: rel.Rollback, Waves: []ReleaseWaveView{}}
	if len(unread) > 0 {
		v.Message = "The portal cannot list some of the release's XRs, their claims or Composition revisions, so the gates and verdicts here leave them out (the fleet controller's own moves do not): " + strings.Join(unread, "; ")
	}
	objs := make([]map[string]any, 0, len(xrs))
	byRef := make(map[rollout.Ref]*unstructured.Unstructured, len(xrs))
	for _, u := range xrs {
		objs = append(objs, u.Object)
		byRef[rollout.RefOf(u.Object)] = u
	}
	claimed := make([]map[string]any, 0, len(claims))
	byClaim := make(map[rollout.Ref]*unstructured.Unstructured, len(claims))
	for _, u := range claims {
		claimed = append(claimed, u.Object)
		byClaim[rollout.RefOf(u.Object)] = u
	}
	moves, outside, err := fleet.ReleaseMoves(b, objs, claimed, fleet.ReleasesOf(revisions), now)
	v.Outside = outside
	if err != nil {
		v.Message = strings.TrimSpace("The release keys are invalid, so nothing moves: " + err.Error() + ". " + v.Message)
		return v, time.Time{}
	}
	// A namespace is the user's to see when it may see every XR of the
	// release there: only then may a gate name one of them.
	seesNS := map[string]bool{}
	members := make([]rollout.Member, 0, len(moves))
	for _, mv := range moves {
		ns := mv.Member.Namespace
		ok, known := seesNS[ns]
		seesNS[ns] = (ok || !known) && sees(byRef[mv.Ref])
		members = append(members, mv.Member)
	}
	waves := b.Settings.Waves
	f := rollout.NewReleaseFleet(waves, members, now)
	var wake time.Time
	byWave := make([][]rollout.Move, len(waves))
	for _, mv := range moves {
		i := rollout.WaveOf(waves, mv.Member)
		byWave[i] = append(byWave[i], mv)
		wake = earlier(wake, mv.Decision.Until)
	}
	target := rollout.Target{Release: rel.Target}
	for i, w := range waves {
		wv := ReleaseWaveView{
			WaveSettings: settingsOf(w), XRs: []ReleaseXRView{},
			Approved: len(w.Approved) > 0 && len(w.Unapproved(target, rollout.Target{})) == 0,
		}
		for _, mv := range byWave[i] {
			u := byRef[mv.Ref]
			if !sees(u) {
				continue
			}
			switch {
			case mv.Member.Pinned:
				wv.Pinned++
			case mv.Member.Done(target):
				wv.Done++
				wv.Total++
			default:
				wv.Total++
			}
			wv.XRs = append(wv.XRs, releaseXRView(u, byClaim[mv.Claim], mv))
		}
		var until time.Time
		wv.Gate, until = releaseGate(f, *rel, w, byWave[i], func(ns string) bool { return seesNS[ns] })
		wake = earlier(wake, until)
		v.Waves = append(v.Waves, wv)
	}
	return v, wake
}

// releaseGate is what wave w of rel waits for (ReleaseGateView), decided
// on f as the controller decides it, and when the soak that holds it
// ends; moves are the wave's, in the controller's order.
func releaseGate(f *rollout.Fleet, rel rollout.Release, w rollout.Wave, moves []rollout.Move, visible func(ns string) bool) (ReleaseGateView, time.Time) {
	var self *rollout.Move
	for i := range moves {
		mv := &moves[i]
		if mv.Member.Pinned {
			continue
		}
		if self == nil || (self.Decision.Verdict == rollout.Keep && mv.Decision.Verdict != rollout.Keep) {
			self = mv
		}
	}
	// An XR that would join the wave: it asks for what the fleet moves
	// from.
	m := rollout.Member{Wave: w.Name, Ready: true, Asks: rollout.Target{Release: rel.From}}
	if len(w.Namespaces) > 0 {
		m.Namespace = w.Namespaces[0]
	}
	if self != nil {
		m = self.Member
	}
	target := rollout.Target{Release: rel.Target}
	d := f.Decide(m, target, visible)
	if rel.Rollback {
		d = f.DecideRollback(m, target, visible)
	}
	g := ReleaseGateView{Verdict: string(d.Verdict), Message: d.Message, Until: timeString(d.Until), WaitsFor: make([]string, 0, len(d.WaitsFor)), Hidden: d.Hidden}
	for _, m := range d.WaitsFor {
		g.WaitsFor = append(g.WaitsFor, m.Key())
	}
	if d.Failed != nil {
		g.Failed = d.Failed.Key()
	}
	return g, d.Until
}

// releaseXRView is an XR of a release for the page, with the controller's
// move on it; claim is its claim when the move names one (nil otherwise),
// whose selection it shows.
func releaseXRView(u, claim *unstructured.Unstructured, mv rollout.Move) ReleaseXRView {
	selector, claimRef := u, ""
	if claim != nil {
		selector, claimRef = claim, mv.Claim.String()
	}
	sel := fleet.Selected(selector.Object)
	status := func(typ string) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return slices.ContainsFunc(conds, func(c any) bool {
			cm, _ := c.(map[string]any)
			return cm["type"] == typ && cm["status"] == "True"
		})
	}
	m := mv.Member
	return ReleaseXRView{
		Kind: mv.Ref.Kind, Namespace: m.Namespace, Name: mv.Ref.Name, Claim: claimRef,
		Runs: m.Runs.Release, Selects: sel, Owned: fleet.Owned(selector.Object),
		Ready: status("Ready"), Synced: status("Synced"), Stale: m.Stale, Failed: m.Failed, Reason: m.Reason, Pinned: m.Pinned,
		Verdict: string(mv.Decision.Verdict), Message: mv.Decision.Message, Until: timeString(mv.Decision.Until), Select: mv.Select,
	}
}
