package database

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testEngine upgrades 13 to 15 at most, then one major at a time: a cloud
// that demands steps.
var testEngine = Engine{
	Targets: map[string][]string{"13": {"14", "15"}, "14": {"15"}, "15": {"16"}, "16": {"17"}},
	Source:  "the test's table",
}

func TestWalk(t *testing.T) {
	type want struct {
		upgrade Upgrade
		err     string
	}
	cases := map[string]struct {
		reason string
		target string
		server Server
		want   want
	}{
		"New": {
			reason: "A server not created yet is created at the target.",
			target: "17",
			want:   want{upgrade: Upgrade{Target: "17", Step: "17"}},
		},
		"Runs": {
			reason: "A server that runs the target has nothing to walk.",
			target: "16", server: Server{Exists: true, Asked: "16", Runs: "16"},
			want: want{upgrade: Upgrade{Target: "16", Running: "16", Step: "16"}},
		},
		"OneStep": {
			reason: "A target the cloud reaches in one step is asked for at once.",
			target: "17", server: Server{Exists: true, Asked: "16", Runs: "16"},
			want: want{upgrade: Upgrade{Target: "17", Running: "16", Step: "17", Steps: []string{"17"}, Waiting: "the server to report running PostgreSQL 17"}},
		},
		"Steps": {
			reason: "Where the cloud demands steps, the walk takes the furthest it allows each time.",
			target: "17", server: Server{Exists: true, Asked: "13", Runs: "13"},
			want: want{upgrade: Upgrade{Target: "17", Running: "13", Step: "15", Steps: []string{"15", "16", "17"}, Waiting: "the server to report running PostgreSQL 15"}},
		},
		"StepUnderWay": {
			reason: "A step under way goes on: the spec asks for 15, the server still runs 13.",
			target: "16", server: Server{Exists: true, Asked: "15", Runs: "13"},
			want: want{upgrade: Upgrade{Target: "16", Running: "13", Step: "15", Steps: []string{"15", "16"}, Waiting: "the server to report running PostgreSQL 15"}},
		},
		"StepUnderWayTargetLowered": {
			reason: "A step under way is never taken back, even when the target is lowered to what runs.",
			target: "13", server: Server{Exists: true, Asked: "15", Runs: "13"},
			want: want{upgrade: Upgrade{Target: "13", Running: "13", Step: "15", Steps: []string{"15"}, Waiting: "the server to report running PostgreSQL 15"}},
		},
		"StepRefused": {
			reason: "A step the cloud refused is not under way: the owner may take it back to what runs.",
			target: "13", server: Server{Exists: true, Asked: "15", Runs: "13", Refusal: "ReconcileError: InvalidParameterCombination"},
			want: want{upgrade: Upgrade{Target: "13", Running: "13", Step: "13"}},
		},
		"StepRefusedAskedAgain": {
			reason: "A step the cloud refused and the owner still asks for is asked again, waiting on the refusal.",
			target: "15", server: Server{Exists: true, Asked: "15", Runs: "13", Refusal: "ReconcileError: InvalidParameterCombination"},
			want: want{upgrade: Upgrade{Target: "15", Running: "13", Step: "15", Steps: []string{"15"}, Waiting: "the provider, which fails to apply PostgreSQL 15 (ReconcileError: InvalidParameterCombination)"}},
		},
		"Downgrade": {
			reason: "A target below what runs is refused, naming the field, what runs and what is allowed.",
			target: "15", server: Server{Exists: true, Asked: "16", Runs: "16"},
			want: want{upgrade: Upgrade{Target: "15", Running: "16", Step: "15"}, err: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 16, and a major version is never downgraded in place (the cloud refuses it; the data would need a dump and restore into a new Database); allowed: 16, 17`},
		},
		"Unreachable": {
			reason: "A target the cloud cannot reach from what runs is refused with what is allowed.",
			target: "12", server: Server{Exists: true, Asked: "11", Runs: "11"},
			want: want{upgrade: Upgrade{Target: "12", Running: "11", Step: "12"}, err: `spec.parameters.version: Invalid value: "12": the server runs PostgreSQL 11, which the cloud cannot upgrade to 12 in place (the test's table); allowed: 11`},
		},
		"Unreported": {
			reason: "A server that reports no version keeps what it asks for, and the walk waits for the report.",
			target: "17", server: Server{Exists: true, Asked: "16"},
			want: want{upgrade: Upgrade{Target: "17", Step: "16", Steps: []string{"17"}, Waiting: "the server to report the version it runs"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkWalk(t, tc.reason, testEngine, tc.target, tc.server, tc.want.upgrade, tc.want.err)
		})
	}
}

// checkWalk checks the walk of eng from server to target against the
// upgrade and the error ("" for none) it should give.
func checkWalk(t *testing.T, reason string, eng Engine, target string, server Server, upgrade Upgrade, wantErr string) {
	t.Helper()
	path := field.NewPath("spec", "parameters", "version")
	got, err := eng.Walk(target, server, path)
	if diff := cmp.Diff(upgrade, got); diff != "" {
		t.Errorf("%s\nWalk(...): -want, +got:\n%s", reason, diff)
	}
	gotErr := ""
	if err != nil {
		gotErr = err.Error()
	}
	if diff := cmp.Diff(wantErr, gotErr); diff != "" {
		t.Errorf("%s\nWalk(...) error: -want, +got:\n%s", reason, diff)
	}
}

func TestMajor(t *testing.T) {
	cases := map[string]string{"16.4": "16", "POSTGRES_17": "17", "15": "15", "": "", "POSTGRES_9_6": "9"}
	for in, want := range cases {
		if got := Major(in); got != want {
			t.Errorf("Major(%q) = %q, want %q", in, got, want)
		}
	}
}

// testMinors upgrades a minor only to the minors it lists, as RDS does:
// 14.7 only to 15; 14.9 to 15 or straight to 16, whose 16.1 has no row;
// 13.9 only to 14.8, which has none either.
var testMinors = Engine{
	Minors: map[string][]string{
		"13.9": {"14.8"},
		"14.7": {"15.2", "15.3"},
		"14.9": {"15.4", "15.5", "16.1"},
		"15.3": {"16.1", "16.2"},
		"15.5": {"16.2", "16.3", "17.1"},
		"16.2": {"17.1", "17.2"},
		"16.3": {"17.2"},
	},
	Source: "the test's table of minors",
}

func TestWalkMinors(t *testing.T) {
	type args struct {
		target string
		server Server
	}
	type want struct {
		upgrade Upgrade
		err     string
	}
	runs := func(asked, running string) Server {
		return Server{Exists: true, Asked: Major(asked), Runs: Major(running), AskedVersion: asked, RunningVersion: running}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"New": {
			reason: "A server not created yet is created at the target's major version alone: the cloud picks its minor.",
			args:   args{target: "16"},
			want:   want{upgrade: Upgrade{Target: "16", Step: "16"}},
		},
		"StepsThroughTheNextMajor": {
			reason: "14.7 lists only minors of 15: the walk asks for the newest, 15.3, then for the newest of 16 that 15.3 lists.",
			args:   args{target: "16", server: runs("14", "14.7")},
			want: want{upgrade: Upgrade{Target: "16", Running: "14", Step: "15", Steps: []string{"15", "16"}, Version: "15.3", Versions: []string{"15.3", "16.2"},
				Waiting: "the server to report running PostgreSQL 15.3"}},
		},
		"SkipsWhereListed": {
			reason: "A minor that lists one of the target's major goes there in one step, as the walk of major versions takes the furthest step the cloud allows.",
			args:   args{target: "16", server: runs("14", "14.9")},
			want: want{upgrade: Upgrade{Target: "16", Running: "14", Step: "16", Steps: []string{"16"}, Version: "16.1", Versions: []string{"16.1"},
				Waiting: "the server to report running PostgreSQL 16.1"}},
		},
		"AvoidsADeadEnd": {
			reason: "Straight to 16.1, the walk to 17 would stop (16.1 has no row): it takes the newest minor from which it gets there, 15.5, then 17.1.",
			args:   args{target: "17", server: runs("14", "14.9")},
			want: want{upgrade: Upgrade{Target: "17", Running: "14", Step: "15", Steps: []string{"15", "17"}, Version: "15.5", Versions: []string{"15.5", "17.1"},
				Waiting: "the server to report running PostgreSQL 15.5"}},
		},
		"StepUnderWay": {
			reason: "The step to 15.3 is under way (the spec asks for it, 14.7 runs): it goes on, and the next is planned from it.",
			args:   args{target: "16", server: runs("15.3", "14.7")},
			want: want{upgrade: Upgrade{Target: "16", Running: "14", Step: "15", Steps: []string{"15", "16"}, Version: "15.3", Versions: []string{"15.3", "16.2"},
				Waiting: "the server to report running PostgreSQL 15.3"}},
		},
		"NextStepOnceObserved": {
			reason: "Once the server reports 15.3, the next step is asked for: the newest of 16 that 15.3 lists.",
			args:   args{target: "16", server: runs("15.3", "15.3")},
			want: want{upgrade: Upgrade{Target: "16", Running: "15", Step: "16", Kept: "15.3", Steps: []string{"16"}, Version: "16.2", Versions: []string{"16.2"},
				Waiting: "the server to report running PostgreSQL 16.2"}},
		},
		"StepUnderWayAsksAMajor": {
			reason: "A step under way that asks for a major version alone (begun before minors were known) goes on; the rest is planned once it runs.",
			args:   args{target: "16", server: runs("15", "14.7")},
			want: want{upgrade: Upgrade{Target: "16", Running: "14", Step: "15", Steps: []string{"15", "16"}, Versions: []string{"", ""},
				Waiting: "the server to report running PostgreSQL 15"}},
		},
		"StepRefused": {
			reason: "A step the cloud refused waits on the refusal, asked again as the table says.",
			args: args{target: "15", server: Server{Exists: true, Asked: "15", Runs: "14", AskedVersion: "15.3", RunningVersion: "14.7",
				Refusal: "ReconcileError: InvalidParameterCombination"}},
			want: want{upgrade: Upgrade{Target: "15", Running: "14", Step: "15", Steps: []string{"15"}, Version: "15.3", Versions: []string{"15.3"},
				Waiting: "the provider, which fails to apply PostgreSQL 15.3 (ReconcileError: InvalidParameterCombination)"}},
		},
		"Runs": {
			reason: "A server that runs the minor its spec asks for keeps asking for it.",
			args:   args{target: "16", server: runs("16.2", "16.2")},
			want:   want{upgrade: Upgrade{Target: "16", Running: "16", Step: "16", Kept: "16.2", Version: "16.2"}},
		},
		"RunsANewerMinor": {
			reason: "A server the cloud moved to a newer minor (its automatic minor upgrades) is asked for what it runs, never less.",
			args:   args{target: "16", server: runs("16.2", "16.3")},
			want:   want{upgrade: Upgrade{Target: "16", Running: "16", Step: "16", Kept: "16.3", Version: "16.3"}},
		},
		"AsksAMajor": {
			reason: "A server whose spec asks for the major version alone keeps asking for it alone.",
			args:   args{target: "16", server: runs("16", "16.3")},
			want:   want{upgrade: Upgrade{Target: "16", Running: "16", Step: "16"}},
		},
		"Unlisted": {
			reason: "A minor the table has no row for is not upgraded: the error names the field, says to walk to a listed minor first, and what is listed.",
			args:   args{target: "15", server: runs("14.8", "14.8")},
			want: want{upgrade: Upgrade{Target: "15", Running: "14", Step: "15", Kept: "14.8"},
				err: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 14.8, and the test's table of minors lists no major upgrade from 14.8: the cloud upgrades a minor only to the targets it lists, and which it lists for 14.8 is not known here; walk the server to a minor that is listed first (listed of 14: 14.7, 14.9; the cloud's automatic minor upgrades, or a minor upgrade in the cloud, move it), then raise spec.parameters.version; allowed now: 14`},
		},
		"ThreeSteps": {
			reason: "Each step asks for the newest minor of the furthest major the one before it lists: 14.7, 15.3, 16.2, 17.2.",
			args:   args{target: "17", server: runs("14.7", "14.7")},
			want: want{upgrade: Upgrade{Target: "17", Running: "14", Step: "15", Kept: "14.7", Steps: []string{"15", "16", "17"}, Version: "15.3", Versions: []string{"15.3", "16.2", "17.2"},
				Waiting: "the server to report running PostgreSQL 15.3"}},
		},
		"UnlistedOnTheWay": {
			reason: "A walk whose every way passes a minor without a row is refused before its first step, naming where it would stop and what is allowed now.",
			args:   args{target: "15", server: runs("13.9", "13.9")},
			want: want{upgrade: Upgrade{Target: "15", Running: "13", Step: "15", Kept: "13.9"},
				err: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 13.9, from which the walk reaches 14.8, and the test's table of minors lists no major upgrade from 14.8: the cloud upgrades a minor only to the targets it lists, and which it lists for 14.8 is not known here; walk the server to a minor that is listed first (listed of 14: 14.7, 14.9; the cloud's automatic minor upgrades, or a minor upgrade in the cloud, move it), then raise spec.parameters.version; allowed now: 13, 14`},
		},
		"Downgrade": {
			reason: "A target below what runs is refused with what the walk reaches.",
			args:   args{target: "15", server: runs("16.2", "16.2")},
			want: want{upgrade: Upgrade{Target: "15", Running: "16", Step: "15"},
				err: `spec.parameters.version: Invalid value: "15": the server runs PostgreSQL 16, and a major version is never downgraded in place (the cloud refuses it; the data would need a dump and restore into a new Database); allowed: 16, 17`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkWalk(t, tc.reason, testMinors, tc.args.target, tc.args.server, tc.want.upgrade, tc.want.err)
		})
	}
}

func TestCompareVersions(t *testing.T) {
	cases := map[string]struct {
		a, b string
		want int
	}{
		"MinorsByNumber": {a: "16.9", b: "16.10", want: -1},
		"Majors":         {a: "17.1", b: "16.9", want: 1},
		"Equal":          {a: "16.4", b: "16.4", want: 0},
		"MajorAlone":     {a: "16", b: "16.4", want: -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CompareVersions(tc.a, tc.b)); diff != "" {
				t.Errorf("CompareVersions(%q, %q): -want, +got:\n%s", tc.a, tc.b, diff)
			}
		})
	}
}
