package rollout

import (
	"testing"
	"time"

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
			d := GateOf(tc.waves, tc.wave, v30, v31, tc.fleet, everywhere, time.Time{})
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

func TestAsksOf(t *testing.T) {
	cm := func(k, v string) Target { return Target{Kubernetes: k, Charts: map[string]string{"cert-manager": v}} }
	target := cm("1.31", "v1.19.2")
	pinned := member("team-a", "pinned", "aws", "production", cm("1.29", "v1.18.0"))
	pinned.Pinned = true
	type args struct {
		wave  int
		fleet []Member
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Target
	}{
		"KubernetesOnly": {
			reason: "A Cluster of the wave asks for the old minor and the target's chart: the minor is the one change.",
			args:   args{wave: 2, fleet: []Member{member("team-a", "prod", "aws", "production", cm("1.30", "v1.19.2"))}},
			want:   cm("1.30", "v1.19.2"),
		},
		"ChartOnly": {
			reason: "A Cluster of the wave asks for the target's minor and an old chart: the chart is the one change.",
			args:   args{wave: 2, fleet: []Member{member("team-a", "prod", "aws", "production", cm("1.31", "v1.19.1"))}},
			want:   cm("1.31", "v1.19.1"),
		},
		"EachChangeOfAnyCluster": {
			reason: "One Cluster has the minor left, another the chart: both are changes of the wave; the first in namespace/name order names each.",
			args: args{wave: 2, fleet: []Member{
				member("team-b", "prod", "azure", "production", cm("1.31", "v1.18.0")),
				member("team-a", "prod", "aws", "production", cm("1.30", "v1.19.2")),
				member("team-a", "prod2", "aws", "production", cm("1.31", "v1.19.1")),
			}},
			want: cm("1.30", "v1.19.1"),
		},
		"UnreportedIsNoChange": {
			reason: "A Cluster that reports no minor and no chart is created at the target: no change.",
			args:   args{wave: 2, fleet: []Member{member("team-a", "new", "aws", "production", Target{})}},
			want:   target,
		},
		"PinnedLeftOut": {
			reason: "A Cluster that pins its version follows its owner: its asks are no change of the wave.",
			args:   args{wave: 2, fleet: []Member{pinned, member("team-a", "prod", "aws", "production", cm("1.31", "v1.19.1"))}},
			want:   cm("1.31", "v1.19.1"),
		},
		"WaveDoneFleetNot": {
			reason: "Every Cluster of canary adopted the target: its gate is a Cluster's that asks what the rest of the fleet asks.",
			args: args{wave: 0, fleet: []Member{
				member("platform", "canary", "gcp", "canary", target),
				member("team-a", "prod", "aws", "production", cm("1.30", "v1.19.1")),
			}},
			want: cm("1.30", "v1.19.1"),
		},
		"NothingLeft": {
			reason: "Every Cluster adopted the target: it is the target, which GateOf keeps.",
			args:   args{wave: 1, fleet: []Member{member("platform", "canary", "gcp", "canary", target)}},
			want:   target,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := AsksOf(waves, tc.args.wave, target, tc.args.fleet)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nAsksOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
