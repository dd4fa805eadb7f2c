package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestClassify(t *testing.T) {
	type args struct {
		flag      string
		succeeded bool
		stderr    string
	}
	type want struct {
		ok   bool
		hint string
		err  error
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Succeeded": {
			reason: "A flag without a value followed by --help prints the help: it exists.",
			args:   args{flag: "--insecure", succeeded: true},
			want:   want{ok: true},
		},
		"Unknown": {
			reason: "kong's unknown flag error: it does not exist.",
			args:   args{flag: "--bogus", stderr: "fcp: error: unknown flag --bogus\n"},
			want:   want{},
		},
		"UnknownWithHint": {
			reason: "kong's suggestion is the hint.",
			args:   args{flag: "--env-contxt", stderr: "fcp: error: unknown flag --env-contxt, did you mean \"--env-context\"?\n"},
			want:   want{hint: "--env-context"},
		},
		"Value": {
			reason: "A flag that refuses --help as its value exists.",
			args:   args{flag: "--address", stderr: "fcp: error: --address: expected string value but got \"--help\" (long flag); perhaps try --address=\"--help\"?\n"},
			want:   want{ok: true},
		},
		"Unexpected": {
			reason: "Any other failure is an error, not a guess.",
			args:   args{flag: "--address", stderr: "panic: boom\n"},
			want:   want{err: cmpopts.AnyError},
		},
		"OtherFlag": {
			reason: "An error about another flag says nothing about this one.",
			args:   args{flag: "--env", stderr: "fcp: error: unknown flag --other\n"},
			want:   want{err: cmpopts.AnyError},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.ok, got.hint, got.err = Classify(tc.args.flag, tc.args.succeeded, tc.args.stderr)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nClassify(%q, %t, %q): -want, +got:\n%s", tc.reason, tc.args.flag, tc.args.succeeded, tc.args.stderr, diff)
			}
		})
	}
}

func TestParseCommands(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   [][]string
	}{
		"Kong": {
			reason: "The two-space lines of the Commands section, up to their arguments; descriptions and other sections are not commands.",
			args: "Usage: fcp <command>\n\nFlags:\n  -h, --help    Show help.\n\nCommands:\n  serve [flags]\n    Serve it.\n\n" +
				"  preview [<files> ...] [flags]\n    Show it.\n\n  db migrate [flags]\n    Nested.\n\nRun \"fcp <command> --help\" for more.\n",
			want: [][]string{{"serve"}, {"preview"}, {"db", "migrate"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseCommands(tc.args)); diff != "" {
				t.Errorf("%s\nParseCommands(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
