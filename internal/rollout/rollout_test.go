package rollout

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	v30 = Target{Kubernetes: "1.30"}
	v31 = Target{Kubernetes: "1.31"}

	waves = []Wave{
		{Name: "canary", Namespaces: []string{"platform"}},
		{Name: "staging", MaxUnavailable: 1},
		{Name: "production", RequiresApproval: true, MaxUnavailable: 2},
	}
)

// member is a Ready Cluster of wave in namespace ns that runs and asks
// for runs.
func member(ns, name, cloud, wave string, runs Target) Member {
	return Member{Name: name, Namespace: ns, Cloud: cloud, Wave: wave, Runs: runs, Asks: runs, Ready: true}
}

// moving is m asking for to, not there yet.
func moving(m Member, to Target) Member {
	m.Asks = to
	return m
}

func everywhere(string) bool { return true }

// chartsDone is a Cluster of wave in ns that runs 1.31 and cert-manager
// v1.19.2 Ready.
func chartsDone(ns, wave string) Member {
	return member(ns, wave+"-done", "aws", wave, Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.2"}})
}

// soaking are waves whose canary soaks an hour.
var soaking = func() []Wave {
	w := append([]Wave{}, waves...)
	w[0].Soak = "1h"
	return w
}()

// at is 2026-12-01 at h:m UTC.
func at(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, time.UTC) }

// readySince is m, Ready on what it runs since t.
func readySince(m Member, t time.Time) Member {
	m.ReadySince = t
	return m
}

// canaryDone is a canary Cluster that runs v31 Ready.
var canaryDone = member("platform", "canary-done", "gcp", "canary", v31)

func TestDecide(t *testing.T) {
	approved := append([]Wave{}, waves...)
	approved[2].Approved = []string{"1.31"}

	type want struct {
		verdict  Verdict
		wave     string
		waitsFor []string
		hidden   int
		failed   string
		pinned   int
		blocking string
		until    string
	}
	cases := map[string]struct {
		reason string
		args   Request
		want   want
	}{
		"NoWaves": {
			reason: "Without waves every Cluster adopts the target at once, as before.",
			args:   Request{Self: member("a", "c", "gcp", "", v30), Target: v31},
			want:   want{verdict: Adopt},
		},
		"CanaryFirst": {
			reason: "The first wave waits for nobody.",
			args: Request{Waves: waves, Self: member("platform", "canary-gke", "gcp", "canary", v30), Target: v31,
				Fleet: []Member{member("team-a", "prod", "aws", "production", v30)}},
			want: want{verdict: Adopt, wave: "canary"},
		},
		"PinnedEarlierWave": {
			reason: "A canary Cluster that pins the old version follows its owner: it neither holds staging nor proves anything, and is counted.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{func() Member { m := member("platform", "canary-gke", "gcp", "canary", v30); m.Pinned = true; return m }(),
					member("platform", "canary-eks", "aws", "canary", v31)}},
			want: want{verdict: Adopt, wave: "staging", pinned: 1},
		},
		"PinnedFailedEarlierWave": {
			reason: "A pinned canary Cluster that failed does not halt staging: its failure is its owner's change, not the environment's. With no other canary Cluster, the canary wave proves nothing, so staging holds.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{func() Member {
					m := member("platform", "canary-gke", "gcp", "canary", v30)
					m.Pinned, m.Failed, m.Ready = true, true, false
					return m
				}()}},
			want: want{verdict: Hold, wave: "staging", pinned: 1, blocking: "canary"},
		},
		"ApprovalNamesEachChange": {
			reason: "Approving the Kubernetes minor does not approve a chart's new version: each change is approved by name.",
			args: Request{Waves: func() []Wave { w := append([]Wave{}, waves...); w[2].Approved = []string{"1.31"}; return w }(),
				Self: member("team-a", "prod", "aws", "production", Target{Kubernetes: "1.30", Charts: map[string]string{"cert-manager": "v1.19.1"}}), Target: Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.2"}},
				Fleet: []Member{chartsDone("platform", "canary"), chartsDone("team-a", "staging")}},
			want: want{verdict: Approval, wave: "production"},
		},
		"ApprovedEachChange": {
			reason: "The minor and the chart's version approved one by one: the wave moves.",
			args: Request{Waves: func() []Wave {
				w := append([]Wave{}, waves...)
				w[2].Approved = []string{"cert-manager=v1.19.2", "1.31"}
				return w
			}(),
				Self: member("team-a", "prod", "aws", "production", Target{Kubernetes: "1.30", Charts: map[string]string{"cert-manager": "v1.19.1"}}), Target: Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.2"}},
				Fleet: []Member{chartsDone("platform", "canary"), chartsDone("team-a", "staging")}},
			want: want{verdict: Adopt, wave: "production"},
		},
		"ChartOnlyChange": {
			reason: "A chart's new version alone is gated like a Kubernetes minor: staging holds while canary runs the old chart.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}}), Visible: everywhere,
				Target: Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.2"}},
				Fleet:  []Member{member("platform", "canary-gke", "gcp", "canary", Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}})}},
			want: want{verdict: Hold, wave: "staging", waitsFor: []string{"platform/canary-gke"}, blocking: "canary"},
		},
		"StagingWaitsForCanary": {
			reason: "A staging Cluster holds while a canary Cluster still runs the old version, and names it.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{moving(member("platform", "canary-gke", "gcp", "canary", v30), v31)}},
			want: want{verdict: Hold, wave: "staging", waitsFor: []string{"platform/canary-gke"}, blocking: "canary"},
		},
		"StagingWaitsForReady": {
			reason: "Running the target is not enough: the canary must be Ready.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{{Name: "canary-gke", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v31, Asks: v31}}},
			want: want{verdict: Halt, wave: "staging", waitsFor: []string{"platform/canary-gke"}, failed: "platform/canary-gke"},
		},
		"StagingMovesOnceCanaryDone": {
			reason: "Every earlier Cluster runs the target and is Ready: the staging Cluster adopts.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{member("platform", "canary-gke", "gcp", "canary", v31), member("platform", "canary-aks", "azure", "canary", v31)}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"FailedCanaryHalts": {
			reason: "A canary stuck on its step halts the later waves, and the halt names it.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{{Name: "canary-gke", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v30, Asks: v31, Ready: true, Failed: true, Reason: "the control plane's update was refused"}}},
			want: want{verdict: Halt, wave: "staging", waitsFor: []string{"platform/canary-gke"}, failed: "platform/canary-gke"},
		},
		"HiddenNamesCounted": {
			reason: "The Clusters of namespaces its owner may not see are counted, not named.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{moving(member("platform", "canary-gke", "gcp", "canary", v30), v31)}},
			want: want{verdict: Hold, wave: "staging", hidden: 1, blocking: "canary"},
		},
		"HiddenFailureNotNamed": {
			reason: "A failure in a namespace its owner may not see halts it without naming the Cluster.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{{Name: "canary-gke", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v30, Asks: v31, Failed: true}}},
			want: want{verdict: Halt, wave: "staging", hidden: 1},
		},
		"ProductionWaitsForEveryCloud": {
			reason: "Production waits for the staging Clusters of every cloud, not only its own.",
			args: Request{Waves: approved, Self: member("team-a", "prod", "aws", "production", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{
					member("team-a", "stg-eks", "aws", "staging", v31),
					moving(member("team-b", "stg-aks", "azure", "staging", v30), v31),
					member("platform", "canary-gke", "gcp", "canary", v31),
				}},
			want: want{verdict: Hold, wave: "production", waitsFor: []string{"team-b/stg-aks"}, blocking: "staging"},
		},
		"ApprovalGate": {
			reason: "A wave that requires approval holds until the environment approves the target.",
			args: Request{Waves: waves, Self: member("team-a", "prod", "aws", "production", v30), Target: v31,
				Fleet: []Member{member("team-a", "stg-eks", "aws", "staging", v31), member("platform", "canary-gke", "gcp", "canary", v31)}},
			want: want{verdict: Approval, wave: "production"},
		},
		"Approved": {
			reason: "Once approved, production adopts.",
			args: Request{Waves: approved, Self: member("team-a", "prod", "aws", "production", v30), Target: v31,
				Fleet: []Member{member("team-a", "stg-eks", "aws", "staging", v31), member("platform", "canary-gke", "gcp", "canary", v31)}},
			want: want{verdict: Adopt, wave: "production"},
		},
		"UnlabelledIsLastWave": {
			reason: "A Cluster without the label is in the last wave.",
			args: Request{Waves: waves, Self: member("team-a", "plain", "gcp", "", v30), Target: v31,
				Fleet: []Member{moving(member("team-a", "stg", "aws", "staging", v30), v31)}},
			want: want{verdict: Hold, wave: "production", waitsFor: []string{"team-a/stg"}, blocking: "canary"},
		},
		"TenantCannotRush": {
			reason: "A tenant labelling its Cluster canary, in a namespace the canary wave does not admit, is in the last wave.",
			args: Request{Waves: waves, Self: member("team-a", "sneaky", "gcp", "canary", v30), Target: v31,
				Fleet: []Member{moving(member("platform", "canary-gke", "gcp", "canary", v30), v31)}},
			want: want{verdict: Hold, wave: "production", hidden: 1, blocking: "canary"},
		},
		"TenantCannotHoldBack": {
			reason: "A broken Cluster labelled canary in a namespace the canary wave does not admit does not hold staging back.",
			args: Request{Waves: waves, Self: member("team-b", "stg", "azure", "staging", v30), Target: v31,
				Fleet: []Member{{Name: "broken", Namespace: "team-a", Cloud: "gcp", Wave: "canary", Runs: v30, Asks: v30}, member("platform", "canary-gke", "gcp", "canary", v31)}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"UnknownWaveIsLast": {
			reason: "A label that names no wave puts the Cluster in the last wave.",
			args: Request{Waves: waves, Self: member("team-a", "x", "gcp", "early-bird", v30), Target: v31,
				Fleet: []Member{member("team-a", "stg", "aws", "staging", v31), canaryDone}},
			want: want{verdict: Approval, wave: "production"},
		},
		"StepUnderWayKept": {
			reason: "A Cluster that already asks for the target keeps it, even when an earlier wave fails afterwards.",
			args: Request{Waves: waves, Self: moving(member("team-a", "stg", "aws", "staging", v30), v31), Target: v31,
				Fleet: []Member{{Name: "canary-gke", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v31, Asks: v31, Failed: true}}},
			want: want{verdict: Keep, wave: "staging"},
		},
		"EmptyEarlierWaveHolds": {
			reason: "A canary wave whose namespaces match no Cluster (a typo) proves nothing: staging holds and the message names the empty wave.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{member("platform-canry", "canary-gke", "gcp", "canary", v31)}},
			want: want{verdict: Hold, wave: "staging", blocking: "canary"},
		},
		"StaleReadyDoesNotProve": {
			reason: "A canary Ready at an older generation than its own proves nothing: it holds staging, and it has not failed either.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{func() Member {
					m := member("platform", "canary-gke", "gcp", "canary", v31)
					m.Ready, m.Stale = false, true
					return m
				}()}},
			want: want{verdict: Hold, wave: "staging", waitsFor: []string{"platform/canary-gke"}, blocking: "canary"},
		},
		"StaleRefusalDoesNotHalt": {
			reason: "A Synced False of an older generation fails nothing: the canary holds staging without halting it.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{{Name: "canary-gke", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v30, Asks: v30, Stale: true}}},
			want: want{verdict: Hold, wave: "staging", waitsFor: []string{"platform/canary-gke"}, blocking: "canary"},
		},
		"DeletingNeitherHoldsNorProves": {
			reason: "A broken canary being deleted does not halt staging while another canary runs the target Ready.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{canaryDone, {Name: "going", Namespace: "platform", Cloud: "gcp", Wave: "canary", Runs: v30, Asks: v30, Failed: true, Deleting: true}}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"DeletingDoesNotProve": {
			reason: "A canary being deleted proves nothing, even Ready on the target: with no other, the wave is empty and staging holds.",
			args: Request{Waves: waves, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{func() Member { m := canaryDone; m.Deleting = true; return m }()}},
			want: want{verdict: Hold, wave: "staging", blocking: "canary"},
		},
		"SoakHolds": {
			reason: "Canary runs the target Ready since 10:00 and soaks an hour: at 10:30 staging holds until 11:00.",
			args: Request{Waves: soaking, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Now: at(10, 30),
				Fleet: []Member{readySince(canaryDone, at(9, 0)), readySince(member("platform", "canary-aks", "azure", "canary", v31), at(10, 0))}},
			want: want{verdict: Hold, wave: "staging", blocking: "canary", until: "2026-12-01T11:00:00Z"},
		},
		"SoakPassed": {
			reason: "An hour after the last canary turned Ready, staging adopts.",
			args: Request{Waves: soaking, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Now: at(11, 0),
				Fleet: []Member{readySince(canaryDone, at(9, 0)), readySince(member("platform", "canary-aks", "azure", "canary", v31), at(10, 0))}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"SoakWithoutClockHolds": {
			reason: "Without a clock no soak has passed: fail closed.",
			args: Request{Waves: soaking, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31,
				Fleet: []Member{readySince(canaryDone, at(9, 0))}},
			want: want{verdict: Hold, wave: "staging", blocking: "canary", until: "2026-12-01T10:00:00Z"},
		},
		"SoakStartUnknownHolds": {
			reason: "A canary whose Ready has no transition time cannot prove its soak: staging holds.",
			args: Request{Waves: soaking, Self: member("team-a", "stg", "aws", "staging", v30), Target: v31, Now: at(23, 0),
				Fleet: []Member{canaryDone}},
			want: want{verdict: Hold, wave: "staging", blocking: "canary"},
		},
		"MaxUnavailableFull": {
			reason: "Staging moves one Cluster at a time: one is moving, so the next holds.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, moving(member("team-a", "stg-1", "aws", "staging", v30), v31)}},
			want: want{verdict: Hold, wave: "staging", hidden: 1},
		},
		"MaxUnavailableOrder": {
			reason: "With one place free, the first Cluster in namespace/name order takes it.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, member("team-a", "stg-1", "aws", "staging", v30)}},
			want: want{verdict: Hold, wave: "staging", hidden: 1},
		},
		"MaxUnavailableNamesWhoIsFirst": {
			reason: "The Clusters that take the places are named when the owner may see them.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31, Visible: everywhere,
				Fleet: []Member{canaryDone, moving(member("team-a", "stg-1", "aws", "staging", v30), v31)}},
			want: want{verdict: Hold, wave: "staging", waitsFor: []string{"team-a/stg-1"}},
		},
		"MaxUnavailableBrokenTakesNoPlace": {
			reason: "A broken Cluster that never moves takes no place: a tenant cannot fill the wave with it.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, func() Member { m := member("team-a", "stg-1", "aws", "staging", v30); m.Ready = false; return m }()}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"MaxUnavailablePinnedTakesNoPlace": {
			reason: "A pinned Cluster never adopts the target: it takes no place and queues for none.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, func() Member { m := member("team-a", "stg-1", "aws", "staging", v30); m.Pinned = true; return m }()}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"MaxUnavailableFailedTakesNoPlace": {
			reason: "A failed Cluster, even one that asks for the target, takes no place: a tenant cannot stall the wave by breaking its own.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, func() Member {
					m := moving(member("team-a", "stg-1", "aws", "staging", v30), v31)
					m.Failed = true
					return m
				}()}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"MaxUnavailableFirst": {
			reason: "The first Cluster in namespace/name order adopts.",
			args: Request{Waves: waves, Self: member("team-a", "stg-1", "aws", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, member("team-b", "stg-2", "azure", "staging", v30)}},
			want: want{verdict: Adopt, wave: "staging"},
		},
		"MaxUnavailableDoneFreesPlace": {
			reason: "A Cluster of the wave that is done frees its place.",
			args: Request{Waves: waves, Self: member("team-b", "stg-2", "azure", "staging", v30), Target: v31,
				Fleet: []Member{canaryDone, member("team-a", "stg-1", "aws", "staging", v31)}},
			want: want{verdict: Adopt, wave: "staging"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.args)
			got := want{verdict: d.Verdict, wave: d.Wave, hidden: d.Hidden, pinned: d.Pinned, blocking: d.Blocking}
			if !d.Until.IsZero() {
				got.until = d.Until.Format(time.RFC3339)
			}
			for _, m := range d.WaitsFor {
				got.waitsFor = append(got.waitsFor, m.Key())
			}
			if d.Failed != nil {
				got.failed = d.Failed.Key()
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecide(...): -want, +got:\n%s\nmessage: %s", tc.reason, diff, d.Message)
			}
			if d.Message == "" {
				t.Errorf("%s\nDecide(...): no message", tc.reason)
			}
		})
	}
}

// TestMessageStable: a gated Cluster's status is written only when its own
// verdict changes, so its message must not follow the fleet Cluster by
// Cluster: one more staging Cluster done, or one more waiting, says the
// same.
func TestMessageStable(t *testing.T) {
	self := member("team-a", "prod", "aws", "production", v30)
	staging := func(n int) []Member {
		var out []Member
		for i := range 3 {
			runs := v30
			if i < n {
				runs = v31
			}
			out = append(out, member("team-b", fmt.Sprintf("stg-%d", i), "gcp", "staging", runs))
		}
		return append(out, canaryDone)
	}
	first := Decide(Request{Waves: waves, Self: self, Target: v31, Fleet: staging(0), Visible: everywhere})
	for n := 1; n < 3; n++ {
		d := Decide(Request{Waves: waves, Self: self, Target: v31, Fleet: staging(n), Visible: everywhere})
		if d.Verdict != first.Verdict || d.Message != first.Message {
			t.Errorf("with %d of 3 staging Clusters done: %s %q, with none: %s %q", n, d.Verdict, d.Message, first.Verdict, first.Message)
		}
	}
	full := func(ahead int) Decision {
		fleet := []Member{canaryDone, member("team-z", "stg", "gcp", "staging", v31)}
		for i := range ahead {
			fleet = append(fleet, moving(member("team-a", fmt.Sprintf("a-%d", i), "gcp", "production", v30), v31))
		}
		w := append([]Wave{}, waves...)
		w[2].Approved = []string{"1.31"}
		return Decide(Request{Waves: w, Self: self, Target: v31, Fleet: fleet, Visible: everywhere})
	}
	if a, b := full(2), full(3); a.Verdict != Hold || a.Message != b.Message {
		t.Errorf("a full wave with 2 and 3 ahead: %s %q and %s %q", a.Verdict, a.Message, b.Verdict, b.Message)
	}
}

// TestRulingStable: the ruling on a halted Cluster, the message and the
// failed Cluster's reason, does not change while the failed Cluster's
// provider rewrites its message at every reconcile.
func TestRulingStable(t *testing.T) {
	self := member("team-a", "stg", "aws", "staging", v30)
	failing := func(msg string) Member {
		return Member{Name: "canary-gke", Namespace: "team-a", Cloud: "gcp", Wave: "staging", Runs: v30, Asks: v31, Ready: true, Failed: true,
			Reason: "ClusterReady ReconcileError: " + msg}
	}
	ws := []Wave{{Name: "staging"}, {Name: "production"}}
	prod := member("team-a", "prod", "aws", "production", v30)
	ref := Ref{Kind: "Cluster", Namespace: "team-a", Name: "prod"}
	a := RulingOf(ref, Decide(Request{Waves: ws, Self: prod, Target: v31, Fleet: []Member{self, failing("retry 1: quota exceeded")}}))
	b := RulingOf(ref, Decide(Request{Waves: ws, Self: prod, Target: v31, Fleet: []Member{self, failing("retry 2: quota exceeded at 10:02")}}))
	if a.Verdict != Halt {
		t.Fatalf("verdict %s, want Halt: %s", a.Verdict, a.Message)
	}
	if diff := cmp.Diff(a.Data(), b.Data()); diff != "" {
		t.Errorf("the ruling changes with the failed Cluster's message: -first, +second:\n%s", diff)
	}
}

func TestCovers(t *testing.T) {
	cases := map[string]struct {
		reason string
		runs   Target
		target Target
		want   bool
	}{
		"Same":             {reason: "Running the target proves it.", runs: v31, target: v31, want: true},
		"Newer":            {reason: "A newer minor proves an older target: its cloud's layer asked for more.", runs: Target{Kubernetes: "1.32"}, target: v31, want: true},
		"Older":            {reason: "An older minor proves nothing.", runs: v30, target: v31},
		"TenMinors":        {reason: "Minors compare as numbers.", runs: Target{Kubernetes: "1.10"}, target: Target{Kubernetes: "1.9"}, want: true},
		"Nothing":          {reason: "A Cluster that runs nothing yet proves nothing.", runs: Target{}, target: v31},
		"NoTarget":         {reason: "Nothing is no target.", runs: v31, target: Target{}},
		"ChartBehind":      {reason: "A chart the target names at another version is not proven.", runs: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "1"}}, target: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "2"}}},
		"ChartNewer":       {reason: "A newer chart version proves an older one.", runs: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "4.14.0"}}, target: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "4.13.3"}}, want: true},
		"ChartNotRun":      {reason: "A chart the Cluster does not run proves nothing and holds nothing.", runs: Target{Kubernetes: "1.31", Charts: map[string]string{}}, target: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "2"}}, want: true},
		"NoChartsReported": {reason: "A Cluster that reports no charts at all has proven none.", runs: v31, target: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "2"}}},
		"ChartSame":        {reason: "Charts the target names at their versions, and more, prove it.", runs: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "2", "b": "1"}}, target: Target{Kubernetes: "1.31", Charts: map[string]string{"a": "2"}}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.runs.Covers(tc.target); got != tc.want {
				t.Errorf("%s\n%v.Covers(%v): want %v, got %v", tc.reason, tc.runs, tc.target, tc.want, got)
			}
		})
	}
}

func TestTargetString(t *testing.T) {
	cases := map[string]struct {
		reason string
		target Target
		want   string
	}{
		"Kubernetes": {reason: "A version alone.", target: v31, want: "1.31"},
		"Charts": {reason: "Charts in name order.", target: Target{Kubernetes: "1.31", Charts: map[string]string{"ingress-nginx": "4.11.3", "cert-manager": "v1.16.1"}},
			want: "1.31+cert-manager=v1.16.1,ingress-nginx=4.11.3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.target.String()); diff != "" {
				t.Errorf("%s\nString(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		reason string
		waves  []Wave
		want   []string
	}{
		"Valid": {reason: "The test's waves are valid.", waves: waves},
		"None":  {reason: "No waves is valid: every Cluster moves at once."},
		"Bad": {
			reason: "Every wrong key is named by its path.",
			waves: []Wave{
				{Name: ""},
				{Name: "Staging!"},
				{Name: "prod", Namespaces: []string{"Team_A"}, MaxUnavailable: -1},
				{Name: "prod", Approved: []string{"1.31"}},
				{Name: "late", Soak: "a day"},
				{Name: "later", Soak: "-1h"},
			},
			want: []string{
				"environment.rollout.waves[0].name: Required value",
				"environment.rollout.waves[1].name: Invalid value",
				"environment.rollout.waves[2].namespaces[0]: Invalid value",
				"environment.rollout.waves[2].maxUnavailable: Invalid value",
				"environment.rollout.waves[3].name: Duplicate value",
				"environment.rollout.waves[3].approved: Invalid value",
				"environment.rollout.waves[4].soak: Invalid value",
				"environment.rollout.waves[5].soak: Invalid value",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range (Settings{Waves: tc.waves}).Validate(field.NewPath("environment", "rollout")) {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nValidate(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
