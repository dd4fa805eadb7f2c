package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestGateOf(t *testing.T) {
	approved := append([]Wave{}, waves...)
	approved[2].Approved = []string{"1.31"}
	done := []Member{
		member("platform", "canary-gke", "gcp", "canary", v31),
		member("team-a", "stg-1", "aws", "staging", v31),
	}

	type want struct {
		verdict  Verdict
		wave     string
		waitsFor []string
	}
	cases := map[string]struct {
		reason string
		waves  []Wave
		wave   int
		fleet  []Member
		want   want
	}{
		"NoWaves": {
			reason: "Without waves every Cluster adopts the target at once.",
			fleet:  []Member{member("team-a", "c", "aws", "", v30)},
			want:   want{verdict: Adopt},
		},
		"FirstWave": {
			reason: "The first wave waits for nobody; its gate is in a namespace it admits, so it is the canary wave's own.",
			waves:  waves, wave: 0,
			fleet: []Member{member("platform", "canary-gke", "gcp", "canary", v30), member("team-a", "stg-1", "aws", "staging", v30)},
			want:  want{verdict: Adopt, wave: "canary"},
		},
		"LaterWaveHolds": {
			reason: "A later wave waits for every Cluster of the earlier waves that does not run the target and is not Ready.",
			waves:  waves, wave: 2,
			fleet: []Member{member("platform", "canary-gke", "gcp", "canary", v31), member("team-a", "stg-1", "aws", "staging", v30), member("team-b", "unlabelled", "azure", "", v30)},
			want:  want{verdict: Hold, wave: "production", waitsFor: []string{"team-a/stg-1"}},
		},
		"ApprovalGate": {
			reason: "Once the earlier waves are done, a wave that requires approval waits for it.",
			waves:  waves, wave: 2, fleet: done,
			want: want{verdict: Approval, wave: "production"},
		},
		"Approved": {
			reason: "An approved target passes the approval gate.",
			waves:  approved, wave: 2, fleet: done,
			want: want{verdict: Adopt, wave: "production"},
		},
		"FullWave": {
			reason: "A wave whose Clusters mid-change fill maxUnavailable shows as full: the gate's Cluster comes first in the wave's order, and still waits.",
			waves:  waves, wave: 1,
			fleet: []Member{member("platform", "canary-gke", "gcp", "canary", v31), moving(member("team-a", "stg-1", "aws", "staging", v30), v31)},
			want:  want{verdict: Hold, wave: "staging", waitsFor: []string{"team-a/stg-1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := GateOf(tc.waves, tc.wave, v30, v31, tc.fleet, everywhere)
			got := want{verdict: d.Verdict, wave: d.Wave}
			for _, m := range d.WaitsFor {
				got.waitsFor = append(got.waitsFor, m.Key())
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nGateOf(...): -want, +got:\n%s\nmessage: %s", tc.reason, diff, d.Message)
			}
		})
	}
}
