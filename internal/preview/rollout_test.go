package preview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// fleetCluster is an Impact of a Ready Cluster that runs runs, and
// reports no target.
func fleetCluster(cloud, ns, name, wave, runs string) Impact {
	m := rollout.Member{Name: name, Namespace: ns, Cloud: cloud, Wave: wave, Ready: true,
		Runs: rollout.Target{Kubernetes: runs}, Asks: rollout.Target{Kubernetes: runs}}
	return Impact{XR: "Cluster " + ns + "/" + name, Cluster: &FleetCluster{Member: m}}
}

// pinned is im with spec.parameters.version v.
func pinned(im Impact, v string) Impact {
	im.Cluster.Pins, im.Cluster.Pinned = v, true
	return im
}

// reporting is im reporting that it is asked for Kubernetes 1.34 and the
// chart versions charts (name, version, ...), and ruled on with verdict
// (none when ""), until the time until when not zero.
func reporting(im Impact, verdict string, until time.Time, charts ...string) Impact {
	t := rollout.Target{Kubernetes: "1.34", Charts: map[string]string{}}
	for i := 0; i+1 < len(charts); i += 2 {
		t.Charts[charts[i]] = charts[i+1]
	}
	im.Cluster.Wants, im.Cluster.Reports = t, true
	if verdict != "" {
		im.Cluster.Ruling = &rollout.Ruling{Verdict: rollout.Verdict(verdict), Message: "ruled " + verdict, Target: t.String(), Until: until}
	}
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
					Name: "prod", Namespace: "platform", Runs: "1.33", Ready: true, Label: "staging", ByDefault: true, Pins: "1.33", Verdict: "Pinned",
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
		now          time.Time
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
				{"Hold", "wave staging holds 1.34 until wave canary runs it and is Ready"},
				{"Hold", "wave production holds 1.34 until wave canary runs it and is Ready"},
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
			got := RolloutOf(tc.args.old, tc.args.updated, tc.args.xrs, tc.args.now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRolloutOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRolloutOfRulings shows each Cluster with the fleet controller's
// ruling on it and the target it reports, and gates each wave for the
// target its Clusters report (the first that has not adopted it, else the
// first), from what that Cluster has adopted, at the given time.
func TestRolloutOfRulings(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 30, h, m, 0, 0, time.UTC) }
	// ready is im Ready on what it runs since 10:00.
	ready := func(im Impact) Impact {
		im.Cluster.ReadySince = at(10, 0)
		return im
	}
	withCharts := func(im Impact, charts ...string) Impact {
		im.Cluster.Runs.Charts, im.Cluster.Asks.Charts = map[string]string{}, map[string]string{}
		for i := 0; i+1 < len(charts); i += 2 {
			im.Cluster.Runs.Charts[charts[i]], im.Cluster.Asks.Charts[charts[i]] = charts[i+1], charts[i+1]
		}
		return im
	}
	soaking := []any{
		map[string]any{"name": "canary", "namespaces": []any{"team-pay"}, "soak": "1h"},
		threeWaves[1], threeWaves[2],
	}
	type args struct {
		waves []any
		xrs   []Impact
		now   time.Time
	}
	type wave struct {
		Verdict, Message string
		Approved         bool
		// Clusters are name: target, verdict, until, note.
		Clusters []string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []wave
	}{
		"OwnTargets": {
			reason: "The canary runs its target Ready and keeps it; staging is gated for the target ml reports (with its charts), from what ml adopted: approved, it adopts; production holds for staging. Each Cluster says its ruling.",
			args: args{waves: threeWaves, xrs: []Impact{
				reporting(withCharts(fleetCluster("gcp", "team-pay", "payments", "canary", "1.34"), "cert-manager", "v1.19.1"), "Keep", time.Time{}, "cert-manager", "v1.19.1"),
				reporting(withCharts(fleetCluster("azure", "team-ml", "ml", "staging", "1.33"), "cert-manager", "v1.19.1"), "Adopt", time.Time{}, "cert-manager", "v1.19.1"),
				reporting(withCharts(fleetCluster("aws", "team-s", "search", "", "1.33"), "cert-manager", "v1.19.1"), "Hold", time.Time{}, "cert-manager", "v1.19.1"),
				pinned(fleetCluster("gcp", "platform", "prod", "", "1.33"), "1.33"),
			}},
			want: []wave{
				{Verdict: "Keep", Message: "wave canary: runs or moves to 1.34+cert-manager=v1.19.1",
					Clusters: []string{"payments: 1.34+cert-manager=v1.19.1, Keep, , ruled Keep"}},
				{Verdict: "Adopt", Message: "wave staging adopts 1.34+cert-manager=v1.19.1: the earlier waves run it and are Ready", Approved: true,
					Clusters: []string{"ml: 1.34+cert-manager=v1.19.1, Adopt, , ruled Adopt"}},
				{Verdict: "Hold", Message: "wave production holds 1.34+cert-manager=v1.19.1 until wave staging runs it and is Ready",
					Clusters: []string{"search: 1.34+cert-manager=v1.19.1, Hold, , no wave label: counts in the last wave; ruled Hold",
						"prod: , Pinned, , no wave label: counts in the last wave; pins 1.33 (spec.parameters.version): the environment's version does not move it"}},
			},
		},
		"Soaking": {
			reason: "The canary runs 1.34 Ready since 10:00 and soaks for an hour: at 10:30 staging holds until 11:00, as its ruling says.",
			args: args{waves: soaking, now: at(10, 30), xrs: []Impact{
				ready(fleetCluster("gcp", "team-pay", "payments", "canary", "1.34")),
				reporting(fleetCluster("azure", "team-ml", "ml", "staging", "1.33"), "Hold", at(11, 0)),
			}},
			want: []wave{
				{Verdict: "Adopt", Message: "wave canary adopts 1.34: the earlier waves run it and are Ready", Clusters: []string{"payments: , , , "}},
				{Verdict: "Hold", Message: "wave staging holds 1.34 until wave canary has run it Ready for 1h0m0s (rollout.waves[0].soak): until 2026-11-30T11:00:00Z", Approved: true,
					Clusters: []string{"ml: 1.34, Hold, 2026-11-30T11:00:00Z, ruled Hold until 2026-11-30T11:00:00Z"}},
				{Verdict: "Hold", Message: "wave production holds 1.34 until wave staging runs it and is Ready"},
			},
		},
		"Soaked": {
			reason: "At noon the canary's hour has passed: staging adopts.",
			args: args{waves: soaking, now: at(12, 0), xrs: []Impact{
				ready(fleetCluster("gcp", "team-pay", "payments", "canary", "1.34")),
				reporting(fleetCluster("azure", "team-ml", "ml", "staging", "1.33"), "Adopt", time.Time{}),
			}},
			want: []wave{
				{Verdict: "Adopt", Message: "wave canary adopts 1.34: the earlier waves run it and are Ready", Clusters: []string{"payments: , , , "}},
				{Verdict: "Adopt", Message: "wave staging adopts 1.34: the earlier waves run it and are Ready", Approved: true,
					Clusters: []string{"ml: 1.34, Adopt, , ruled Adopt"}},
				{Verdict: "Hold", Message: "wave production holds 1.34 until wave staging runs it and is Ready"},
			},
		},
		"NoClock": {
			reason: "Without a clock no soak has passed: staging holds for the canary's; production, for staging, which has no Cluster: an empty wave proves nothing.",
			args: args{waves: soaking, xrs: []Impact{
				ready(fleetCluster("gcp", "team-pay", "payments", "canary", "1.34")),
			}},
			want: []wave{
				{Verdict: "Adopt", Message: "wave canary adopts 1.34: the earlier waves run it and are Ready", Clusters: []string{"payments: , , , "}},
				{Verdict: "Hold", Message: "wave staging holds 1.34 until wave canary has run it Ready for 1h0m0s (rollout.waves[0].soak): until 2026-11-30T11:00:00Z", Approved: true},
				{Verdict: "Hold", Message: "wave production holds 1.34: wave staging has no Cluster that follows the environment (rollout.waves[1]: " +
					"none labelled platform.example.org/wave=staging in its namespaces team-ml, team-web, or each pins its version), and an empty wave proves nothing"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := RolloutOf(baseline(map[string]any{"version": "1.33"}), baseline(map[string]any{"version": "1.34", "rollout": map[string]any{"waves": tc.args.waves}}), tc.args.xrs, tc.args.now)
			var got []wave
			for _, w := range r.Waves {
				wv := wave{Verdict: w.Verdict, Message: w.Message, Approved: w.Approved}
				for _, c := range w.Clouds {
					for _, m := range c.Clusters {
						wv.Clusters = append(wv.Clusters, fmt.Sprintf("%s: %s, %s, %s, %s", m.Name, m.Target, m.Verdict, m.Until, m.Note))
					}
				}
				got = append(got, wv)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRolloutOf(...): -want, +got:\n%s", tc.reason, diff)
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
				}, time.Time{})
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
