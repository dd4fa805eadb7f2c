package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-6471616d/function-cluster-platform/internal/portal"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// restConfig is the control plane's client config: from kubeconfig, else
// the in-cluster service account's, with the client's rate limits and user
// agent.
func restConfig(kubeconfig string, qps float32, burst int, agent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("cannot load the control plane's config: %w", err)
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = qps, burst, agent
	return cfg, nil
}

// PortalCmd serves the self-service portal (package portal).
type PortalCmd struct {
	Address         string        `default:":8000" help:"Address at which to serve the page and the API."`
	TLSCertFile     string        `help:"Serve HTTPS with this certificate; without it serve plain HTTP behind a TLS-terminating Ingress (bearer tokens must never cross a network in the clear)." placeholder:"FILE"`
	TLSKeyFile      string        `help:"The key of --tls-cert-file." placeholder:"FILE"`
	Kubeconfig      string        `env:"KUBECONFIG" help:"The control plane's kubeconfig; empty: the in-cluster service account." placeholder:"FILE"`
	PolicyNamespace string        `env:"POD_NAMESPACE" default:"crossplane-system" help:"The namespace of the policy ConfigMaps (the portal's own; tenants must not be able to edit it)."`
	PolicyPrefix    string        `default:"portal-policy-" help:"Namespace N's policy is the ConfigMap <prefix>N, key policy.yaml."`
	TokenCacheTTL   time.Duration `default:"30s" help:"How long a token the API server authenticated is remembered (by its hash)."`
	Audiences       []string      `help:"Audiences a bearer token must be meant for; empty: the API server's own."`
	Ring            int           `default:"256" help:"Events kept per environment, so that a viewer that reconnects resumes without a gap."`
	MaxBodyBytes    int64         `default:"65536" help:"Largest request body accepted."`
	Ping            time.Duration `default:"15s" help:"How often an idle event stream gets a keep-alive comment."`
	QPS             float32       `default:"50" help:"Requests per second to the API server."`
	Burst           int           `default:"100" help:"Burst of requests to the API server."`
	NegativeTTL     time.Duration `name:"token-negative-ttl" default:"10s" help:"How long a token the API server refused is remembered (by its hash)."`
	ReviewQPS       float32       `default:"20" help:"TokenReviews per second: their own rate limit, apart from authenticated users' requests."`
	ReviewBurst     int           `default:"40" help:"Burst of TokenReviews."`
	ReviewsInFlight int           `default:"32" help:"TokenReviews at once; past it a new token gets a 429."`
	AddressReviews  float64       `name:"reviews-per-address" default:"5" help:"TokenReviews per second one client address may cause (a token bucket; a cached token costs none)."`
	AddressBurst    int           `name:"review-burst-per-address" default:"20" help:"Burst of TokenReviews of one client address."`
	StreamsPerUser  int           `default:"20" help:"Event streams one user may have open at once."`
	StreamGrace     time.Duration `default:"30s" help:"How long a namespace's watches outlive its last viewer."`
	HeaderTimeout   time.Duration `default:"10s" help:"How long a request's headers may take to arrive."`
	BodyTimeout     time.Duration `default:"10s" help:"How long a request with a body may take to arrive whole."`
	Debug           bool          `short:"d" help:"Log at debug level."`
}

// Run serves the portal until SIGTERM or SIGINT.
func (c *PortalCmd) Run() error {
	level := slog.LevelInfo
	if c.Debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := restConfig(c.Kubeconfig, c.QPS, c.Burst, "function-cluster-platform-portal")
	if err != nil {
		return err
	}
	s, err := portal.New(cfg, portal.Options{
		PolicyNamespace: c.PolicyNamespace, PolicyPrefix: c.PolicyPrefix, TokenTTL: c.TokenCacheTTL, Audiences: c.Audiences,
		NegativeTTL: c.NegativeTTL, ReviewQPS: c.ReviewQPS, ReviewBurst: c.ReviewBurst, ReviewsInFlight: c.ReviewsInFlight, Grace: c.StreamGrace,
		Limits: portal.Limits{
			HeaderTimeout: c.HeaderTimeout, BodyTimeout: c.BodyTimeout, StreamsPerUser: c.StreamsPerUser,
			ReviewsPerAddress: c.AddressReviews, ReviewBurstPerAddress: c.AddressBurst,
		},
		Ring: c.Ring, MaxBody: c.MaxBodyBytes, Ping: c.Ping, Clouds: registry.Clouds(), Log: log,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return s.ListenAndServe(ctx, c.Address, c.TLSCertFile, c.TLSKeyFile)
}
