package main

import (
	"slices"
	"testing"
	"time"
)

// TestVerifyWaves: the release scenario's check of its records finds a wave
// that changed revision before an earlier one proved the release, within
// the canary's soak, or before production's approval.
func TestVerifyWaves(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	revs := map[string]string{"rev-1": "r1", "rev-2": "r2"}
	proven := func(at time.Time) releaseState {
		return releaseState{selects: "r2", revision: "rev-2", runs: "r2", ready: true, synced: true, current: true, since: at}
	}
	moved := releaseState{selects: "r2", revision: "rev-2", runs: "r1", ready: true, synced: true, current: true}
	// inOrder is a rollout that respects every rule: each wave moves, then
	// proves r2; staging 20 s after the canary proved it; production after
	// its approval at t0+60s.
	inOrder := func() []releaseEvent {
		var out []releaseEvent
		add := func(at time.Duration, of string, st releaseState) {
			out = append(out, releaseEvent{at: t0.Add(at), of: of, st: st})
		}
		for i, c := range releaseFleet {
			start := map[string]time.Duration{"canary": 0, "staging": 30 * time.Second, "production": 70 * time.Second}[c.wave]
			add(start+time.Duration(i)*time.Millisecond, c.key(), moved)
			add(start+5*time.Second+time.Duration(i)*time.Millisecond, c.key(), proven(t0.Add(start+5*time.Second)))
		}
		// etcd writes them in the order they happen.
		slices.SortFunc(out, func(a, b releaseEvent) int { return a.at.Compare(b.at) })
		for i := range out {
			out[i].rv = int64(101 + i)
		}
		return out
	}
	approved := t0.Add(60 * time.Second)
	cases := map[string]struct {
		reason   string
		events   func() []releaseEvent
		approved time.Time
		wantErr  bool
	}{
		"InOrder": {
			reason:   "Each wave changes revision once the earlier ones proved r2, staging after the soak, production after its approval.",
			events:   inOrder,
			approved: approved,
		},
		"ProductionAheadOfStaging": {
			reason: "A production XR that changed revision before staging proved r2 is found.",
			events: func() []releaseEvent {
				e := inOrder()
				// Production's first event at the very start, ahead of staging.
				e = append(e, releaseEvent{rv: 1, at: t0, of: releaseFleet[4].key(), st: moved})
				return e
			},
			approved: t0.Add(-time.Minute),
			wantErr:  true,
		},
		"WithinTheSoak": {
			reason: "Staging moving 5 s after the canary proved r2 is within the canary's soak.",
			events: func() []releaseEvent {
				e := inOrder()
				for i := range e {
					if e[i].of == releaseFleet[2].key() || e[i].of == releaseFleet[3].key() {
						e[i].at = e[i].at.Add(-20 * time.Second)
					}
				}
				return e
			},
			approved: approved,
			wantErr:  true,
		},
		"BeforeApproval": {
			reason:   "Production changing revision before its approval is found.",
			events:   inOrder,
			approved: t0.Add(90 * time.Second),
			wantErr:  true,
		},
		"ProvenOnlyAtAnOlderGeneration": {
			reason: "A canary Ready of an older generation proves nothing.",
			events: func() []releaseEvent {
				e := inOrder()
				for i := range e {
					if e[i].of == releaseFleet[0].key() {
						e[i].st.current = false
					}
				}
				return e
			},
			approved: approved,
			wantErr:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &releaseRecord{eventLog[releaseEvent]{start: t0}}
			for _, e := range tc.events() {
				r.add(e)
			}
			err := r.verifyWaves("r2", revs, tc.approved)
			if (err != nil) != tc.wantErr {
				t.Errorf("%s\nverifyWaves(...): %v, want an error: %t", tc.reason, err, tc.wantErr)
			}
		})
	}
}
