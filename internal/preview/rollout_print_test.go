package preview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPrintRollout(t *testing.T) {
	updated := baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": threeWaves}})
	cases := map[string]struct {
		reason string
		report FleetReport
		want   string
	}{
		"ThreeWavesThreeClouds": {
			reason: "After the fleet's table, each wave in order: what admits a Cluster, what gates it, what its gate answers now, and its Clusters per cloud with what they run.",
			report: FleetReport{Rollout: RolloutOf(baseline(map[string]any{"version": "1.33"}), updated, threeClouds("1.33"), time.Time{})},
			want: `XR             ADDED  CHANGED  HELD  REMOVED  COST-DELTA    FATAL
TOTAL (0 XRs)  0      0        0     0        +0.00..+0.00  0

Rollout of Kubernetes 1.34 (the old environment asks for 1.33) in 3 waves (rollout.waves):

Wave 1 of 3: canary (namespaces team-pay)
  after:     nothing: the first wave
  at once:   no limit (maxUnavailable 0)
  approval:  none required
  now:       Adopt: wave canary adopts 1.34: the earlier waves run it and are Ready
  CLOUD  NAMESPACE  NAME      RUNS  READY  NOTE
  gcp    team-pay   payments  1.33  yes    -

Wave 2 of 3: staging (namespaces team-ml, team-web)
  after:     every Cluster of canary runs 1.34 and is Ready
  at once:   at most 1 of its Clusters (maxUnavailable)
  approval:  requires approval of 1.34: approved (rollout.waves[1].approved)
  now:       Hold: wave staging holds 1.34 until wave canary runs it and is Ready
  CLOUD  NAMESPACE  NAME  RUNS  READY  NOTE
  aws    team-web   shop  1.33  yes    -
  azure  team-ml    ml    1.33  yes    -

Wave 3 of 3: production (every namespace; the last wave: also every Cluster whose label names no wave that admits it)
  after:     every Cluster of canary, staging runs 1.34 and is Ready
  at once:   at most 2 of its Clusters (maxUnavailable)
  approval:  requires approval of 1.34: not approved yet (rollout.waves[2].approved)
  now:       Hold: wave production holds 1.34 until wave canary runs it and is Ready
  CLOUD  NAMESPACE  NAME    RUNS  READY  NOTE
  aws    team-s     search  1.33  yes    no wave label: counts in the last wave
  azure  team-b     web     1.33  yes    -
  azure  team-x     edge    1.33  yes    labelled qa, which is no wave: counts in the last wave
  gcp    platform   prod    1.33  yes    labelled staging, whose namespaces (rollout.waves[1].namespaces) do not admit platform: counts in the last wave; pins 1.33 (spec.parameters.version): the environment's version does not move it
`,
		},
		"NoWaves": {
			reason: "Without waves, the message, then every Cluster: a Cluster that reports no version and one cluster-scoped show a dash, and one not Ready says why.",
			report: FleetReport{Rollout: &Rollout{From: "1.33", Target: "1.34", Message: "the environment sets no rollout waves (rollout.waves): every Cluster adopts 1.34 at once", Waves: []Wave{{
				Last: true, Verdict: "Adopt", Message: "no rollout waves: every Cluster adopts the target at once",
				Clouds: []WaveCloud{{Cloud: "aws", Clusters: []WaveCluster{{Name: "search-w2x9q", Note: "not Ready: Creating"}}}},
			}}}},
			want: `XR             ADDED  CHANGED  HELD  REMOVED  COST-DELTA    FATAL
TOTAL (0 XRs)  0      0        0     0        +0.00..+0.00  0

Rollout of Kubernetes 1.34 (the old environment asks for 1.33): the environment sets no rollout waves (rollout.waves): every Cluster adopts 1.34 at once

  CLOUD  NAMESPACE  NAME          RUNS  READY  NOTE
  aws    -          search-w2x9q  -     no     not Ready: Creating
`,
		},
		"EmptyWave": {
			reason: "A wave without Clusters says so; an unchanged version says so.",
			report: FleetReport{Rollout: &Rollout{From: "1.34", Target: "1.34", Waves: []Wave{{
				Name: "all", Last: true, Verdict: "Adopt", Message: "wave all adopts 1.34: the earlier waves run it and are Ready",
			}}}},
			want: `XR             ADDED  CHANGED  HELD  REMOVED  COST-DELTA    FATAL
TOTAL (0 XRs)  0      0        0     0        +0.00..+0.00  0

Rollout of Kubernetes 1.34 (unchanged) in 1 waves (rollout.waves):

Wave 1 of 1: all (every namespace; the last wave: also every Cluster whose label names no wave that admits it)
  after:     nothing: the first wave
  at once:   no limit (maxUnavailable 0)
  approval:  none required
  now:       Adopt: wave all adopts 1.34: the earlier waves run it and are Ready
  (no Cluster)
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := PrintFleet(&b, &tc.report, false); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("%s\nPrintFleet(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrintRolloutJSON(t *testing.T) {
	updated := baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": threeWaves}})
	three := RolloutOf(baseline(map[string]any{"version": "1.33"}), updated, threeClouds("1.33"), time.Time{})
	cases := map[string]struct {
		reason string
		report FleetReport
		// want is the JSON's rollout, when given.
		want string
	}{
		"FieldNames": {
			reason: "The JSON's rollout carries the waves with stable field names: empty lists as [], never null.",
			report: FleetReport{Rollout: &Rollout{From: "1.33", Target: "1.34", Waves: []Wave{{
				Name: "canary", Namespaces: []string{"team-pay"}, After: []string{}, RequiresApproval: true, Approved: true,
				Verdict: "Adopt", Message: "wave canary adopts 1.34: the earlier waves run it and are Ready",
				Clouds: []WaveCloud{{Cloud: "gcp", Clusters: []WaveCluster{{
					Name: "payments", Namespace: "team-pay", Runs: "1.33", Ready: true, Label: "staging", ByDefault: true, Pins: "1.33",
					Target: "1.34", Verdict: "Hold", Message: "m", Until: "2026-11-30T11:00:00Z", Note: "n",
				}}}},
			}}}},
			want: `{
    "from": "1.33",
    "target": "1.34",
    "waves": [
      {
        "name": "canary",
        "index": 0,
        "namespaces": [
          "team-pay"
        ],
        "last": false,
        "after": [],
        "maxUnavailable": 0,
        "requiresApproval": true,
        "approved": true,
        "verdict": "Adopt",
        "message": "wave canary adopts 1.34: the earlier waves run it and are Ready",
        "clouds": [
          {
            "cloud": "gcp",
            "clusters": [
              {
                "name": "payments",
                "namespace": "team-pay",
                "runs": "1.33",
                "ready": true,
                "failed": false,
                "label": "staging",
                "byDefault": true,
                "pins": "1.33",
                "target": "1.34",
                "verdict": "Hold",
                "message": "m",
                "until": "2026-11-30T11:00:00Z",
                "note": "n"
              }
            ]
          }
        ]
      }
    ]
  }`,
		},
		"ThreeWavesThreeClouds": {
			reason: "The JSON carries the same structure as the text: it reads back as the rollout it was written from.",
			report: FleetReport{Rollout: three},
		},
		"NoRollout": {
			reason: "A change without a rollout has no rollout key.",
			report: FleetReport{},
			want:   "null",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := PrintFleet(&b, &tc.report, true); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Rollout json.RawMessage `json:"rollout"`
			}
			if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, b.String())
			}
			if got.Rollout == nil {
				got.Rollout = json.RawMessage("null")
			}
			if tc.want != "" {
				if diff := cmp.Diff(tc.want, string(got.Rollout)); diff != "" {
					t.Errorf("%s\nPrintFleet(..., true): rollout: -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			var back FleetReport
			if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.report.Rollout, back.Rollout); diff != "" {
				t.Errorf("%s\nPrintFleet(..., true): read back: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
