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
	path := field.NewPath("spec", "parameters", "version")
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
			got, err := testEngine.Walk(tc.target, tc.server, path)
			if diff := cmp.Diff(tc.want.upgrade, got); diff != "" {
				t.Errorf("%s\nWalk(...): -want, +got:\n%s", tc.reason, diff)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, gotErr); diff != "" {
				t.Errorf("%s\nWalk(...) error: -want, +got:\n%s", tc.reason, diff)
			}
		})
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
