package main

import (
	"net"
	"strconv"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
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

// TestMetricsAddress: the binary's metrics default keeps clear of the ports
// a developer's machine already serves (8080 and 8081: Crossplane core's
// and the providers' metrics and probes; 9090: Prometheus; 9443 to 9543:
// the function's gRPC, which make render tries in turn), and the shipped
// DeploymentRuntimeConfig's arguments parse and serve the metrics on 8080,
// the port Crossplane's package runtime declares for them.
func TestMetricsAddress(t *testing.T) {
	parse := func(args []string) *CLI {
		t.Helper()
		var cli CLI
		p, err := kong.New(&cli, kong.Exit(func(int) { t.Fatal("kong exited") }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Fatalf("Parse(%q): %v", args, err)
		}
		return &cli
	}
	def := parse([]string{"--insecure"}).Serve.MetricsAddress
	_, port, err := net.SplitHostPort(def)
	if err != nil {
		t.Fatalf("default --metrics-address %q: %v", def, err)
	}
	n, _ := strconv.Atoi(port)
	if n == 8080 || n == 8081 || n == 9090 || (n >= 9443 && n <= 9543) {
		t.Errorf("default --metrics-address %q is a port a developer's machine already serves", def)
	}

	objs, err := xpsim.Load("examples/install/deploymentruntimeconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := objs[0]["spec"].(map[string]any)["deploymentTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	if got := parse(args).Serve.MetricsAddress; got != ":8080" {
		t.Errorf("the DeploymentRuntimeConfig's --metrics-address is %q, want :8080 (Crossplane's package runtime's metrics port)", got)
	}
}
