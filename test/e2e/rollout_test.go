package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

func TestReruns(t *testing.T) {
	type args struct {
		last, from, to, ttl time.Duration
	}
	cases := map[string]struct {
		reason string
		args   args
		want   int
	}{
		"WrittenRecently": {
			reason: "An XR written less than its TTL (less the jitter) before the window ends is not re-run by time in it.",
			args:   args{last: 50 * time.Second, from: 60 * time.Second, to: 105 * time.Second, ttl: 5 * time.Minute},
		},
		"ShortTTL": {
			reason: "A 15 s TTL re-runs an XR every 13.5 s at the most: three times in a 45 s window that begins as the XR is written.",
			args:   args{last: 60 * time.Second, from: 60 * time.Second, to: 105 * time.Second, ttl: 15 * time.Second},
			want:   3,
		},
		"DueInWindow": {
			reason: "An XR whose TTL may run out in the window is allowed one re-run.",
			args:   args{last: 0, from: 280 * time.Second, to: 325 * time.Second, ttl: 5 * time.Minute},
			want:   1,
		},
		"NoTTL": {
			reason: "No TTL, no re-run by time.",
			args:   args{from: 0, to: time.Minute},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := reruns(tc.args.last, tc.args.from, tc.args.to, tc.args.ttl); got != tc.want {
				t.Errorf("%s\nreruns(...): want %d, got %d", tc.reason, tc.want, got)
			}
		})
	}
}

func TestWithWaves(t *testing.T) {
	xrs := fleetXRs("../../examples", 40)
	waves := withWaves(xrs)
	type cloudWave struct{ cloud, wave string }
	got := map[cloudWave]int{}
	for _, x := range xrs {
		w, ok := waves[fleetRef(x.kind, x.namespace, x.name)]
		labels, _ := x.obj["metadata"].(map[string]any)["labels"].(map[string]any)
		_, pinned := x.obj["spec"].(map[string]any)["parameters"].(map[string]any)["version"]
		switch x.kind {
		case "Cluster", "XCluster":
			if !ok || labels[rollout.Label] != w || pinned {
				t.Errorf("%s %s: wave %q (label %v), pinned %t: want a wave, its label, no pin", x.kind, x.name, w, labels[rollout.Label], pinned)
			}
			got[cloudWave{str(x.obj, "metadata", "labels", "cloud"), w}]++
		default:
			if ok || labels[rollout.Label] != nil {
				t.Errorf("%s %s: in wave %q: only Clusters are", x.kind, x.name, w)
			}
		}
	}
	// Four groups: a quarter of the 16 Clusters canary, a quarter
	// staging, every cloud in every wave; the legacy XClusters production.
	want := map[cloudWave]int{
		{"gcp", "canary"}: 2, {"gcp", "staging"}: 1, {"gcp", "production"}: 5,
		{"aws", "canary"}: 1, {"aws", "staging"}: 2, {"aws", "production"}: 1,
		{"azure", "canary"}: 1, {"azure", "staging"}: 1, {"azure", "production"}: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withWaves(40 XRs): Clusters by cloud and wave: -want, +got:\n%s", diff)
	}
	if got, want := waveCounts(waves), "canary 4, staging 4, production 8 Clusters"; got != want {
		t.Errorf("waveCounts: want %q, got %q", want, got)
	}
}

func TestWaveWatchOrder(t *testing.T) {
	waves := map[string]string{"Cluster p/a": "canary", "Cluster p/b": "staging", "XCluster c": "production"}
	cases := map[string]struct {
		reason   string
		asked    map[string]int64
		done     map[string]int64
		approved int64
		wantErr  bool
	}{
		"InOrder": {
			reason:   "Each wave asked after the one before it was done, production after its approval too.",
			asked:    map[string]int64{"Cluster p/a": 10, "Cluster p/b": 21, "XCluster c": 41},
			done:     map[string]int64{"canary": 20, "staging": 30, "production": 50},
			approved: 40,
		},
		"StagingEarly": {
			reason:   "Staging asking before canary was done is an error.",
			asked:    map[string]int64{"Cluster p/a": 10, "Cluster p/b": 15, "XCluster c": 41},
			done:     map[string]int64{"canary": 20, "staging": 30, "production": 50},
			approved: 40,
			wantErr:  true,
		},
		"BeforeApproval": {
			reason:   "Production asking after staging was done but before its approval is an error.",
			asked:    map[string]int64{"Cluster p/a": 10, "Cluster p/b": 21, "XCluster c": 35},
			done:     map[string]int64{"canary": 20, "staging": 30, "production": 50},
			approved: 40,
			wantErr:  true,
		},
		"NeverAsked": {
			reason:   "A Cluster never seen asking is an error.",
			asked:    map[string]int64{"Cluster p/a": 10, "Cluster p/b": 21},
			done:     map[string]int64{"canary": 20, "staging": 30, "production": 50},
			approved: 40,
			wantErr:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &waveWatch{to: "1.34", waves: waves, asked: tc.asked, done: tc.done}
			if err := w.order(tc.approved); (err != nil) != tc.wantErr {
				t.Errorf("%s\norder(%d): want error %t, got %v", tc.reason, tc.approved, tc.wantErr, err)
			}
		})
	}
}

func TestRolloutEnvTypo(t *testing.T) {
	objs := rolloutEnv{version: "1.34", approved: []string{"1.34"}, typo: true}.objects()
	if len(objs) != 2 || str(objs[0], "metadata", "labels", "baseline") != "default" || str(objs[1], "data", "version") != "1.34" {
		t.Fatalf("objects(): want the baseline's waves, then the plane type's version; got %v", objs)
	}
	waves := at(objs[0], "data", "rollout", "waves").([]any)
	got := map[string]any{}
	for _, w := range waves {
		m := w.(map[string]any)
		got[m["name"].(string)] = m["namespaces"]
	}
	want := map[string]any{
		"canary":     []any{"rollout-a", "rollout-b"},
		"staging":    []any{"rolout-c", "rolout-d"},
		"production": []any{"rollout-e", "rollout-f"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects() with the typo: the waves' namespaces: -want, +got:\n%s", diff)
	}
	if a := at(waves[2].(map[string]any), "approved"); !cmp.Equal(a, []any{"1.34"}) {
		t.Errorf("objects(): production's approvals: want [1.34], got %v", a)
	}
}
