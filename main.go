// Package main implements function-cluster-platform, a Crossplane composition
// function that renders a complete Kubernetes cluster platform on GCP, AWS
// or Azure from one small Cluster composite resource.
package main

import (
	"time"

	"github.com/alecthomas/kong"
	function "github.com/crossplane/function-sdk-go"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/serve"
)

// CLI of this function: it serves RunFunction over gRPC by default, and
// previews XRs in process.
type CLI struct {
	Serve   ServeCmd   `cmd:"" default:"withargs" help:"Serve the function over gRPC (the default command)."`
	Preview PreviewCmd `cmd:"" help:"Show the stack an XR converges to, its plan against observed resources, or the fleet impact of an environment change, in process."`
	Portal  PortalCmd  `cmd:"" help:"Serve the self-service portal: a JSON API and a page that create AppEnvironments from a namespace's policy, with live status, as the caller (Kubernetes RBAC decides)."`
	Fleet   FleetCmd   `cmd:"" help:"The fleet controller of rollout waves: decide every gated Cluster (a wave's soak needs a clock, its gate the whole fleet) and write each one's ruling, a ConfigMap the Cluster requires by name."`
}

// ServeCmd serves the function.
type ServeCmd struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address            string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir        string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure           bool   `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`
	MaxRecvMessageSize int    `default:"4"     help:"Maximum size of received messages in MB."`
	MetricsAddress     string `default:":9544" help:"Address at which to serve Prometheus metrics; empty to disable. The default keeps clear of what a developer's machine already runs: 8080 and 8081 (Crossplane core's and the providers' metrics and health probes, provider-kubernetes among them), 9090 (Prometheus), and 9443 to 9543 (the function's gRPC, and the ports make render tries for it). In a cluster, Crossplane's package runtime declares the function's metrics on port 8080 (a container port named metrics, and Prometheus annotations): examples/install/deploymentruntimeconfig.yaml sets --metrics-address=:8080 to match."`
	MaxConcurrentCalls int    `default:"8"     help:"RunFunction calls read, decoded and rendered at once; the others wait, before their request is read, and are not refused (HTTP/2 streams on each connection, and a gate across connections: internal/serve). 8 is more than a 1-CPU replica renders in parallel and held 100 concurrent callers of the converged AWS request to 60-80 MiB peak RSS (250-412 MiB unbounded; make bench); raise it for replicas with more CPUs. 0 for no bound."`
	Pprof              string `placeholder:"HOST:PORT" help:"Address at which to serve Go's net/http/pprof under /debug/pprof/ (CPU and heap profiles, goroutines, traces of the running function), for example 127.0.0.1:6060; empty, the default, serves nothing. A loopback address unless --pprof-allow-remote: the endpoint has no authentication (reach it with kubectl port-forward)."`
	PprofAllowRemote   bool   `help:"Allow --pprof to listen on an address that is not loopback."`

	TTLConverging time.Duration `default:"15s" help:"Response TTL while the XR waits for another XR (the Cluster it runs on, or a value one of its resources reports) or a WorkloadBudget's spend, which Crossplane v2.3 does not watch for it (v2.4 watches them as required resources)."`
	TTLReady      time.Duration `default:"5m"  help:"Response TTL otherwise: once every composed resource is ready, and while the XR waits only for its own composed resources, whose changes re-run it."`
	TTLGated      time.Duration `default:"5m"  help:"Response TTL while a rollout wave holds a Cluster: Crossplane v2.4 re-runs it when the fleet controller's ruling on it changes, so time alone changes nothing; on v2.3, which does not watch the ruling, it is how late the Cluster sees a new one."`
}

// Validate refuses, while the flags are parsed, a --pprof address that is
// not loopback unless --pprof-allow-remote (serve.CheckPprofAddress).
func (c *ServeCmd) Validate() error {
	return serve.CheckPprofAddress(c.Pprof, c.PprofAllowRemote)
}

// Run this function.
func (c *ServeCmd) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	hs := health.NewServer()
	hs.SetServingStatus("", healthgrpc.HealthCheckResponse_SERVING)

	return serve.Serve(NewFunction(log, response.Options{TTLConverging: c.TTLConverging, TTLReady: c.TTLReady, TTLGated: c.TTLGated}), serve.Options{
		Network:            c.Network,
		Address:            c.Address,
		TLSCertsDir:        c.TLSCertsDir,
		Insecure:           c.Insecure,
		MaxRecvMsgSize:     c.MaxRecvMessageSize * 1024 * 1024,
		HealthServer:       hs,
		MetricsAddress:     c.MetricsAddress,
		MetricsOptions:     []grpcprometheus.ServerMetricsOption{grpcprometheus.WithServerHandlingTimeHistogram()},
		MaxConcurrentCalls: c.MaxConcurrentCalls,
		PprofAddress:       c.Pprof,
		PprofAllowRemote:   c.PprofAllowRemote,
	})
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("A Crossplane composition function that renders complete cluster platforms on GCP, AWS and Azure."))
	ctx.FatalIfErrorf(ctx.Run())
}
