package aws

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// TestRDSMajorUpgradesTable holds the table's rows to what RDS lists: a
// minor of a major version upgrades to minors of later major versions,
// oldest first, each once.
func TestRDSMajorUpgradesTable(t *testing.T) {
	for from, targets := range rdsMajorUpgrades {
		major, minor, ok := strings.Cut(from, ".")
		if !ok || minor == "" || strings.Contains(minor, ".") {
			t.Errorf("row %q: not a minor version such as 16.4", from)
		}
		if len(targets) == 0 {
			t.Errorf("row %q lists no target: leave it out", from)
		}
		for i, to := range targets {
			if !database.Older(major, database.Major(to)) {
				t.Errorf("row %q: %s is no later major version", from, to)
			}
			if i > 0 && database.CompareVersions(targets[i-1], to) >= 0 {
				t.Errorf("row %q: %s and %s are not oldest first, each once", from, targets[i-1], to)
			}
		}
	}
}

func TestRDSWalk(t *testing.T) {
	eng := database.Engines[Name]
	path := xr.ParametersPath("version")
	type args struct {
		target string
		// asked and runs are the versions the instance's spec asks for
		// and RDS reports it runs.
		asked, runs string
	}
	type want struct {
		steps, versions []string
		version         string
		err             string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"TwoSteps": {
			reason: "13.9 lists only minors of 14: it steps to 14.8, the newest, then to 15.3, the newest of 15 that 14.8 lists.",
			args:   args{target: "15", asked: "13", runs: "13.9"},
			want:   want{steps: []string{"14", "15"}, versions: []string{"14.8", "15.3"}, version: "14.8"},
		},
		"SkipsWhereListed": {
			reason: "13.11 lists 15.3: to 15 in one step.",
			args:   args{target: "15", asked: "13", runs: "13.11"},
			want:   want{steps: []string{"15"}, versions: []string{"15.3"}, version: "15.3"},
		},
		"NewestOfTheNextMajor": {
			reason: "16.4 lists 17.1 to 17.5: the newest.",
			args:   args{target: "17", asked: "16", runs: "16.4"},
			want:   want{steps: []string{"17"}, versions: []string{"17.5"}, version: "17.5"},
		},
		"NewestOfTheTargetsMajor": {
			reason: "15.13 lists 16.9 and 17.5: raised to 16, it goes to 16.9.",
			args:   args{target: "16", asked: "15", runs: "15.13"},
			want:   want{steps: []string{"16"}, versions: []string{"16.9"}, version: "16.9"},
		},
		"RunsTheTarget": {
			reason: "An instance that runs a minor of the target keeps asking for what it runs.",
			args:   args{target: "17", asked: "17.5", runs: "17.5"},
			want:   want{version: "17.5"},
		},
		"UnlistedOnTheWay": {
			reason: "14.7 reaches 15.3 only, which has no row: 16 is refused before the first step, naming the field, with what is allowed now.",
			args:   args{target: "16", asked: "14", runs: "14.7"},
			want: want{err: `spec.parameters.version: Invalid value: "16": the server runs PostgreSQL 14.7, from which the walk reaches 15.3, and ` + rdsUpgradesSource +
				` lists no major upgrade from 15.3: the cloud upgrades a minor only to the targets it lists, and which it lists for 15.3 is not known here; walk the server to a minor that is listed first (listed of 15: 15.13; the cloud's automatic minor upgrades, or a minor upgrade in the cloud, move it), then raise spec.parameters.version; allowed now: 14, 15`},
		},
		"Unlisted": {
			reason: "A minor newer than the table's rows is refused, naming the field and the listed minors of its major.",
			args:   args{target: "17", asked: "16", runs: "16.10"},
			want: want{err: `spec.parameters.version: Invalid value: "17": the server runs PostgreSQL 16.10, and ` + rdsUpgradesSource +
				` lists no major upgrade from 16.10: the cloud upgrades a minor only to the targets it lists, and which it lists for 16.10 is not known here; walk the server to a minor that is listed first (listed of 16: 16.1, 16.2, 16.3, 16.4, 16.5, 16.6, 16.7, 16.8, 16.9; the cloud's automatic minor upgrades, or a minor upgrade in the cloud, move it), then raise spec.parameters.version; allowed now: 16`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := database.Server{Exists: true, Asked: database.Major(tc.args.asked), Runs: database.Major(tc.args.runs), AskedVersion: tc.args.asked, RunningVersion: tc.args.runs}
			u, err := eng.Walk(tc.args.target, s, path)
			got := want{steps: u.Steps, versions: u.Versions, version: u.Version}
			if err != nil {
				got = want{err: err.Error()}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nWalk(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
