package main

import (
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

// TestServePprofFlags parses the serve command's pprof flags as the binary
// does: off by default, a loopback address taken, any other refused while
// parsing unless --pprof-allow-remote.
func TestServePprofFlags(t *testing.T) {
	type want struct {
		Pprof       string
		AllowRemote bool
		Err         bool
	}
	cases := map[string]struct {
		reason string
		args   []string
		want   want
	}{
		"Default": {
			reason: "Without the flag nothing is served.",
			args:   []string{"--insecure"},
			want:   want{},
		},
		"Loopback": {
			reason: "A loopback address is taken.",
			args:   []string{"--insecure", "--pprof=127.0.0.1:6060"},
			want:   want{Pprof: "127.0.0.1:6060"},
		},
		"LoopbackExplicitServe": {
			reason: "The serve command takes it by name too.",
			args:   []string{"serve", "--pprof=localhost:6060"},
			want:   want{Pprof: "localhost:6060"},
		},
		"EveryInterface": {
			reason: "An address on every interface is refused while parsing.",
			args:   []string{"--pprof=:6060"},
			want:   want{Pprof: ":6060", Err: true},
		},
		"Routable": {
			reason: "A routable address is refused while parsing.",
			args:   []string{"--pprof=10.0.0.7:6060"},
			want:   want{Pprof: "10.0.0.7:6060", Err: true},
		},
		"RemoteAllowed": {
			reason: "Any address is taken with --pprof-allow-remote.",
			args:   []string{"--pprof=0.0.0.0:6060", "--pprof-allow-remote"},
			want:   want{Pprof: "0.0.0.0:6060", AllowRemote: true},
		},
		"NoPort": {
			reason: "An address without a port is refused, allowed or not.",
			args:   []string{"--pprof=127.0.0.1", "--pprof-allow-remote"},
			want:   want{Pprof: "127.0.0.1", AllowRemote: true, Err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cli := &CLI{}
			p, err := kong.New(cli, kong.Exit(func(int) { t.Fatal("kong exited") }))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Parse(tc.args)
			got := want{Pprof: cli.Serve.Pprof, AllowRemote: cli.Serve.PprofAllowRemote, Err: err != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParse(%q): -want, +got:\n%s\nerror: %v", tc.reason, tc.args, diff, err)
			}
		})
	}
}
