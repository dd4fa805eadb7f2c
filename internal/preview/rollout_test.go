package preview

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// baseline is a world of one baseline EnvironmentConfig with data, and a
// cloud layer that sets a version of its own, which the rollout does not
// read (the fleet's version and waves are the baseline's).
func baseline(data map[string]any) World {
	config := func(name string, labels, data map[string]any) xpsim.Object {
		labels["platform.example.org/environment"] = "cluster-platform"
		return xpsim.Object{
			"apiVersion": "apiextensions.crossplane.io/v1beta1", "kind": "EnvironmentConfig",
			"metadata": map[string]any{"name": name, "labels": labels}, "data": data,
		}
	}
	return World{Environment: []xpsim.Object{
		config("baseline", map[string]any{"baseline": "default"}, data),
		config("cloud-gcp", map[string]any{"cloud": "gcp"}, map[string]any{"version": "1.36"}),
	}}
}

// fleetCluster is an Impact of a Ready Cluster that runs runs.
func fleetCluster(cloud, ns, name, wave, runs string) Impact {
	m := rollout.Member{Name: name, Namespace: ns, Cloud: cloud, Wave: wave, Ready: true,
		Runs: rollout.Target{Kubernetes: runs}, Asks: rollout.Target{Kubernetes: runs}}
	return Impact{XR: "Cluster " + ns + "/" + name, Cluster: &FleetCluster{Member: m}}
}

// pinned is im with spec.parameters.version v.
func pinned(im Impact, v string) Impact {
	im.Cluster.Pins = v
	return im
}

// threeWaves are the waves of the three-wave cases: a canary of one
// namespace, a staging of two that is approved for 1.34, a production
// for every namespace whose approval is 1.33's only.
var threeWaves = []any{
	map[string]any{"name": "canary", "namespaces": []any{"team-pay"}},
	map[string]any{"name": "staging", "namespaces": []any{"team-ml", "team-web"}, "maxUnavailable": 1.0, "requiresApproval": true, "approved": []any{"1.34"}},
	map[string]any{"name": "production", "maxUnavailable": 2.0, "requiresApproval": true, "approved": []any{"1.33"}},
}

// threeClouds is a fleet over threeWaves on three clouds that runs
// runsEarly in the canary and staging waves and 1.33 in production: an
// unlabelled Cluster, one labelled with a wave that does not admit its
// namespace, one labelled with no wave at all, and a Database.
func threeClouds(runsEarly string) []Impact {
	return []Impact{
		{XR: "Database platform/billing"},
		fleetCluster("azure", "team-b", "web", "production", "1.33"),
		fleetCluster("aws", "team-web", "shop", "staging", runsEarly),
		fleetCluster("gcp", "team-pay", "payments", "canary", runsEarly),
		fleetCluster("aws", "team-s", "search", "", "1.33"),
		pinned(fleetCluster("gcp", "platform", "prod", "staging", "1.33"), "1.33"),
		fleetCluster("azure", "team-ml", "ml", "staging", runsEarly),
		fleetCluster("azure", "team-x", "edge", "qa", "1.33"),
	}
}

// threeWavesWant are threeWaves as RolloutOf shows them, with gates and
// the Clusters of threeClouds(runsEarly).
func threeWavesWant(runsEarly string, gates [3][2]string) []Wave {
	return []Wave{
		{
			Name: "canary", Index: 0, Namespaces: []string{"team-pay"}, After: []string{},
			Verdict: gates[0][0], Message: gates[0][1],
			Clouds: []WaveCloud{{Cloud: "gcp", Clusters: []WaveCluster{{Name: "payments", Namespace: "team-pay", Runs: runsEarly, Ready: true, Label: "canary"}}}},
		},
		{
			Name: "staging", Index: 1, Namespaces: []string{"team-ml", "team-web"}, After: []string{"canary"},
			MaxUnavailable: 1, RequiresApproval: true, Approved: true, Verdict: gates[1][0], Message: gates[1][1],
			Clouds: []WaveCloud{
				{Cloud: "aws", Clusters: []WaveCluster{{Name: "shop", Namespace: "team-web", Runs: runsEarly, Ready: true, Label: "staging"}}},
				{Cloud: "azure", Clusters: []WaveCluster{{Name: "ml", Namespace: "team-ml", Runs: runsEarly, Ready: true, Label: "staging"}}},
			},
		},
		{
			Name: "production", Index: 2, Namespaces: []string{}, Last: true, After: []string{"canary", "staging"},
			MaxUnavailable: 2, RequiresApproval: true, Verdict: gates[2][0], Message: gates[2][1],
			Clouds: []WaveCloud{
				{Cloud: "aws", Clusters: []WaveCluster{{Name: "search", Namespace: "team-s", Runs: "1.33", Ready: true, ByDefault: true, Note: "no wave label: counts in the last wave"}}},
				{Cloud: "azure", Clusters: []WaveCluster{
					{Name: "web", Namespace: "team-b", Runs: "1.33", Ready: true, Label: "production"},
					{Name: "edge", Namespace: "team-x", Runs: "1.33", Ready: true, Label: "qa", ByDefault: true, Note: "labelled qa, which is no wave: counts in the last wave"},
				}},
				{Cloud: "gcp", Clusters: []WaveCluster{{
					Name: "prod", Namespace: "platform", Runs: "1.33", Ready: true, Label: "staging", ByDefault: true, Pins: "1.33",
					Note: "labelled staging, whose namespaces (rollout.waves[1].namespaces) do not admit platform: counts in the last wave; " +
						"pins 1.33 (spec.parameters.version): the environment's version does not move it",
				}}},
			},
		},
	}
}

func TestRolloutOf(t *testing.T) {
	type args struct {
		old, updated World
		xrs          []Impact
	}
	// threeWavesArgs move threeClouds(runsEarly) from 1.33 to 1.34 over
	// threeWaves.
	threeWavesArgs := func(runsEarly string) args {
		return args{
			old:     baseline(map[string]any{"version": "1.33"}),
			updated: baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": threeWaves}}),
			xrs:     threeClouds(runsEarly),
		}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *Rollout
	}{
		"ThreeWavesThreeClouds": {
			reason: "Each wave in order with its Clusters per cloud (cloud order, then namespace/name): the canary adopts the target now, the later waves hold for the Clusters of every earlier wave; " +
				"an unlabelled Cluster, one labelled with a wave that does not admit its namespace, and one labelled with no wave count in the last wave, and say so. The version and waves are the baseline's, not a cloud layer's.",
			args: threeWavesArgs("1.33"),
			want: &Rollout{From: "1.33", Target: "1.34", Waves: threeWavesWant("1.33", [3][2]string{
				{"Adopt", "wave canary adopts 1.34: the earlier waves run it and are Ready"},
				{"Hold", "wave staging holds 1.34 until the earlier waves run it and are Ready: team-pay/payments (gcp) runs 1.33"},
				{"Hold", "wave production holds 1.34 until the earlier waves run it and are Ready: team-pay/payments (gcp) runs 1.33, team-ml/ml (azure) runs 1.33, team-web/shop (aws) runs 1.33"},
			})},
		},
		"ApprovalGate": {
			reason: "Once the earlier waves run the target and are Ready, a wave whose approved does not list it waits for the approval; one that does adopts it.",
			args:   threeWavesArgs("1.34"),
			want: &Rollout{From: "1.33", Target: "1.34", Waves: threeWavesWant("1.34", [3][2]string{
				{"Adopt", "wave canary adopts 1.34: the earlier waves run it and are Ready"},
				{"Adopt", "wave staging adopts 1.34: the earlier waves run it and are Ready"},
				{"Approval", "wave production waits for the environment to approve 1.34 (rollout.waves[2].approved)"},
			})},
		},
		"NoWaves": {
			reason: "A version change without waves moves every Cluster at once: one unnamed wave of every Cluster, and a message that says so.",
			args: args{
				old:     baseline(map[string]any{"version": "1.33"}),
				updated: baseline(map[string]any{"version": "1.34"}),
				xrs:     []Impact{fleetCluster("gcp", "team-pay", "payments", "canary", "1.33")},
			},
			want: &Rollout{From: "1.33", Target: "1.34", Message: "the environment sets no rollout waves (rollout.waves): every Cluster adopts 1.34 at once", Waves: []Wave{{
				Namespaces: []string{}, Last: true, After: []string{}, Verdict: "Adopt", Message: "no rollout waves: every Cluster adopts the target at once",
				Clouds: []WaveCloud{{Cloud: "gcp", Clusters: []WaveCluster{{Name: "payments", Namespace: "team-pay", Runs: "1.33", Ready: true, Label: "canary"}}}},
			}}},
		},
		"DefaultVersion": {
			reason: "An environment without a version asks for the function's default, which a change from it moves.",
			args: args{
				old:     baseline(map[string]any{}),
				updated: baseline(map[string]any{"version": "v1.34.2"}),
			},
			want: &Rollout{From: "1.33", Target: "1.34", Message: "the environment sets no rollout waves (rollout.waves): every Cluster adopts 1.34 at once", Waves: []Wave{{
				Namespaces: []string{}, Last: true, After: []string{}, Verdict: "Adopt", Message: "no rollout waves: every Cluster adopts the target at once", Clouds: []WaveCloud{},
			}}},
		},
		"WavesWithoutAChange": {
			reason: "Waves are shown when the environment sets them, whether or not the change moves the version; the gate is what a Cluster of the wave that does not run the target would do.",
			args: args{
				old:     baseline(map[string]any{"version": "1.34"}),
				updated: baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": []any{map[string]any{"name": "all"}}}}),
				xrs:     []Impact{fleetCluster("aws", "team-s", "search", "", "1.34")},
			},
			want: &Rollout{From: "1.34", Target: "1.34", Waves: []Wave{{
				Name: "all", Namespaces: []string{}, Last: true, After: []string{}, Verdict: "Adopt", Message: "wave all adopts 1.34: the earlier waves run it and are Ready",
				Clouds: []WaveCloud{{Cloud: "aws", Clusters: []WaveCluster{{Name: "search", Namespace: "team-s", Runs: "1.34", Ready: true, ByDefault: true, Note: "no wave label: counts in the last wave"}}}},
			}}},
		},
		"NothingToShow": {
			reason: "A change that moves no version, under an environment without waves, has no rollout.",
			args: args{
				old:     baseline(map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 2.0}}),
				updated: baseline(map[string]any{"version": "1.33", "ingress": map[string]any{"replicas": 5.0}}),
				xrs:     []Impact{fleetCluster("gcp", "team-pay", "payments", "", "1.33")},
			},
		},
		"InvalidWaves": {
			reason: "Invalid rollout keys are said, naming each key, and no wave is shown: the function refuses every Cluster.",
			args: args{
				old: baseline(map[string]any{"version": "1.33"}),
				updated: baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": []any{
					map[string]any{"name": "a"}, map[string]any{"name": "a", "maxUnavailable": -1.0},
				}}}),
				xrs: []Impact{fleetCluster("gcp", "team-pay", "payments", "a", "1.33")},
			},
			want: &Rollout{From: "1.33", Target: "1.34", Waves: []Wave{}, Message: "the rollout keys are invalid, so the function refuses every Cluster and no wave is shown: " +
				`[environment.rollout.waves[1].name: Duplicate value: "a", environment.rollout.waves[1].maxUnavailable: Invalid value: -1: must be 0 (no limit) or more]`},
		},
		"WronglyTyped": {
			reason: "Rollout keys of the wrong type are said as the function says them.",
			args: args{
				old:     baseline(map[string]any{"version": "1.33"}),
				updated: baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": "canary"}, "ingress": map[string]any{"replicas": "many"}}),
			},
			want: &Rollout{From: "1.33", Target: "1.34", Waves: []Wave{}, Message: "the rollout keys are invalid, so the function refuses every Cluster and no wave is shown: " +
				`environment.rollout.waves: Invalid value: "canary": must be a list`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RolloutOf(tc.args.old, tc.args.updated, tc.args.xrs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRolloutOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestClusterOf(t *testing.T) {
	xr := func(status map[string]any) xpsim.Object {
		x := xpsim.Object{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "ml", "namespace": "team-ml", "labels": map[string]any{"cloud": "azure", rollout.Label: "staging"}},
			"spec":     map[string]any{"parameters": map[string]any{"version": "1.33"}},
		}
		if status != nil {
			x["status"] = status
		}
		return x
	}
	status := func(cp string, ready string) map[string]any {
		return map[string]any{"upgrade": map[string]any{"controlPlane": cp, "target": cp}, "conditions": []any{map[string]any{"type": "Ready", "status": ready}}}
	}
	member := func(runs string, ready bool) rollout.Member {
		return rollout.Member{Name: "ml", Namespace: "team-ml", Cloud: "azure", Wave: "staging", Ready: ready,
			Runs: rollout.Target{Kubernetes: runs}, Asks: rollout.Target{Kubernetes: runs}, Pinned: true}
	}
	type args struct {
		x, before xpsim.Object
		fatal     string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *FleetCluster
	}{
		"FromTheOldEnvironment": {
			reason: "An XR file without status is what the old environment's reconcile leaves: its desired status and Ready condition.",
			args:   args{x: xr(nil), before: xr(status("1.32", "True"))},
			want:   &FleetCluster{Member: member("1.32", true), Pins: "1.33"},
		},
		"FromTheFile": {
			reason: "An XR file with conditions (kubectl get -o yaml) is what the Cluster reports: its status wins over the simulation.",
			args:   args{x: xr(status("1.31", "False")), before: xr(status("1.32", "True"))},
			want:   &FleetCluster{Member: member("1.31", false), Pins: "1.33"},
		},
		"Refused": {
			reason: "A Cluster the old environment refuses has failed, in the Fatal's words.",
			args:   args{x: xr(nil), fatal: "under the old environment: invalid"},
			want:   &FleetCluster{Member: rollout.Member{Name: "ml", Namespace: "team-ml", Cloud: "azure", Wave: "staging", Failed: true, Reason: "under the old environment: invalid", Pinned: true}, Pins: "1.33"},
		},
		"NotACluster": {
			reason: "Only Clusters have waves.",
			args:   args{x: xpsim.Object{"kind": "Database"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := clusterOf(tc.args.x, tc.args.before, tc.args.fatal)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nclusterOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrintRollout(t *testing.T) {
	updated := baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": threeWaves}})
	cases := map[string]struct {
		reason string
		report FleetReport
		want   string
	}{
		"ThreeWavesThreeClouds": {
			reason: "After the fleet's table, each wave in order: what admits a Cluster, what gates it, what its gate answers now, and its Clusters per cloud with what they run.",
			report: FleetReport{Rollout: RolloutOf(baseline(map[string]any{"version": "1.33"}), updated, threeClouds("1.33"))},
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
  now:       Hold: wave staging holds 1.34 until the earlier waves run it and are Ready: team-pay/payments (gcp) runs 1.33
  CLOUD  NAMESPACE  NAME  RUNS  READY  NOTE
  aws    team-web   shop  1.33  yes    -
  azure  team-ml    ml    1.33  yes    -

Wave 3 of 3: production (every namespace; the last wave: also every Cluster whose label names no wave that admits it)
  after:     every Cluster of canary, staging runs 1.34 and is Ready
  at once:   at most 2 of its Clusters (maxUnavailable)
  approval:  requires approval of 1.34: not approved yet (rollout.waves[2].approved)
  now:       Hold: wave production holds 1.34 until the earlier waves run it and are Ready: team-pay/payments (gcp) runs 1.33, team-ml/ml (azure) runs 1.33, team-web/shop (aws) runs 1.33
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
	three := RolloutOf(baseline(map[string]any{"version": "1.33"}), updated, threeClouds("1.33"))
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
				Clouds: []WaveCloud{{Cloud: "gcp", Clusters: []WaveCluster{{Name: "payments", Namespace: "team-pay", Runs: "1.33", Ready: true, Label: "staging", ByDefault: true, Pins: "1.33", Note: "n"}}}},
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

// TestRolloutOfCharts shows a change of the chart catalog as the rollout
// gates it: the chart's new version beside the minor, each wave's gate on
// the earlier waves running it, and approvals that name the change.
func TestRolloutOfCharts(t *testing.T) {
	waves := []any{
		map[string]any{"name": "canary", "namespaces": []any{"team-pay"}},
		map[string]any{"name": "staging", "requiresApproval": true, "approved": []any{"cert-manager=v1.19.2"}},
		map[string]any{"name": "production", "requiresApproval": true, "approved": []any{"1.33"}},
	}
	withCharts := func(im Impact, v string) Impact {
		im.Cluster.Runs.Charts = map[string]string{"cert-manager": v}
		im.Cluster.Asks.Charts = map[string]string{"cert-manager": v}
		return im
	}
	type gate struct {
		Verdict  string
		Approved bool
	}
	cases := map[string]struct {
		reason string
		canary string
		want   []gate
	}{
		"CanaryRunsOldChart": {
			reason: "The canary runs cert-manager v1.19.1: it adopts v1.19.2 first, staging holds; staging's approval names the change, production's does not.",
			canary: "v1.19.1",
			want:   []gate{{"Adopt", false}, {"Hold", true}, {"Hold", false}},
		},
		"CanaryRunsNewChart": {
			reason: "The canary runs v1.19.2 Ready: staging, approved, adopts it.",
			canary: "v1.19.2",
			want:   []gate{{"Adopt", false}, {"Adopt", true}, {"Hold", false}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := RolloutOf(baseline(map[string]any{"version": "1.33"}),
				baseline(map[string]any{"version": "1.33", "charts": map[string]any{"cert-manager": map[string]any{"version": "v1.19.2"}}, "rollout": map[string]any{"waves": waves}}),
				[]Impact{
					withCharts(fleetCluster("gcp", "team-pay", "payments", "canary", "1.33"), tc.canary),
					withCharts(fleetCluster("azure", "team-ml", "ml", "staging", "1.33"), "v1.19.1"),
				})
			if r == nil {
				t.Fatalf("%s\nno rollout for a chart change", tc.reason)
			}
			if diff := cmp.Diff(map[string]string{"cert-manager": "v1.19.2"}, r.Charts); diff != "" {
				t.Errorf("%s\nCharts: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(map[string]string{"cert-manager": "v1.19.1"}, r.FromCharts); diff != "" {
				t.Errorf("%s\nFromCharts: -want, +got:\n%s", tc.reason, diff)
			}
			var got []gate
			for _, w := range r.Waves {
				got = append(got, gate{w.Verdict, w.Approved})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ngates: -want, +got:\n%s", tc.reason, diff)
			}
			var out strings.Builder
			if err := PrintRollout(&out, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Kubernetes 1.33 (unchanged), chart cert-manager v1.19.2 (was v1.19.1)", "runs 1.33, cert-manager v1.19.2 and is Ready", "requires approval of cert-manager=v1.19.2: approved"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%s\nthe printed rollout lacks %q:\n%s", tc.reason, want, out.String())
				}
			}
		})
	}
}
