package portal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Options configure a portal built by New.
type Options struct {
	// PolicyNamespace and PolicyPrefix: namespace ns's policy is the
	// ConfigMap PolicyPrefix+ns in PolicyNamespace.
	PolicyNamespace string
	PolicyPrefix    string
	// TokenTTL is how long an authenticated token is remembered.
	TokenTTL time.Duration
	// NegativeTTL is how long a token the API server refused is
	// remembered (refused without another TokenReview). Default 10 s.
	NegativeTTL time.Duration
	// ReviewQPS and ReviewBurst bound the TokenReviews the portal sends:
	// they have their own client and rate limit, apart from those of
	// authenticated users' requests. Defaults 20 and 40.
	ReviewQPS   float32
	ReviewBurst int
	// ReviewsInFlight bounds the TokenReviews made at once; past it a new
	// token gets a 429. Default 32.
	ReviewsInFlight int
	// Grace is how long a namespace's watches outlive its last viewer.
	// Default DefaultGrace.
	Grace time.Duration
	// Limits bound what one client can hold.
	Limits Limits
	// Audiences a token must be meant for; empty: the API server's.
	Audiences []string
	// Ring is how many events of each environment are kept for viewers
	// that reconnect.
	Ring    int
	MaxBody int64
	Ping    time.Duration
	Clouds  []string
	Log     *slog.Logger
}

// The default Options.
const (
	DefaultNegativeTTL     = 10 * time.Second
	DefaultReviewQPS       = 20
	DefaultReviewBurst     = 40
	DefaultReviewsInFlight = 32
)

// New builds a portal that talks to the API server of cfg with the
// portal's own identity (token and access reviews, policies, the shared
// watches) and impersonates its callers for everything they do.
func New(cfg *rest.Config, o Options) (*Server, error) {
	if o.NegativeTTL <= 0 {
		o.NegativeTTL = DefaultNegativeTTL
	}
	if o.ReviewQPS <= 0 {
		o.ReviewQPS = DefaultReviewQPS
	}
	if o.ReviewBurst <= 0 {
		o.ReviewBurst = DefaultReviewBurst
	}
	if o.ReviewsInFlight <= 0 {
		o.ReviewsInFlight = DefaultReviewsInFlight
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	// TokenReviews, which anyone can cause with any token, have a client
	// and a rate limit of their own: a flood of bad tokens waits there,
	// not before the requests of users already authenticated.
	rcfg := rest.CopyConfig(cfg)
	rcfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(o.ReviewQPS, o.ReviewBurst)
	reviews, err := dynamic.NewForConfig(rcfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build the token review client: %w", err)
	}
	// One rate limit for everything else the portal sends, its callers'
	// impersonated requests included: each impersonating client copies
	// this config, and with it the same limiter.
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build the dynamic client: %w", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build the HTTP client: %w", err)
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	disc := &Discovery{Client: hc, Host: host}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("cannot draw the event epoch: %w", err)
	}
	return &Server{
		Authn: &TokenReviewer{
			Client: reviews, TTL: o.TokenTTL, NegativeTTL: o.NegativeTTL, InFlight: o.ReviewsInFlight,
			Audiences: o.Audiences, Now: time.Now,
		},
		Authz:    &AccessReviewer{Client: dyn},
		As:       ImpersonateWith(cfg),
		Policies: ConfigMapPolicies{Client: dyn, Namespace: o.PolicyNamespace, Prefix: o.PolicyPrefix},
		Hub:      NewHub(dyn, disc.Resolve, HubOptions{Ring: o.Ring, Epoch: hex.EncodeToString(b), Grace: o.Grace, Log: o.Log}),
		Fleet:    NewFleet(dyn, hex.EncodeToString(b), o.Log),
		Own:      dyn,
		Clouds:   o.Clouds, MaxBody: o.MaxBody, Ping: o.Ping, Limits: o.Limits, Log: o.Log,
	}, nil
}

// ListenAndServe serves the portal on address, over TLS when certFile and
// keyFile are given, until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, address, certFile, keyFile string) error {
	srv := s.HTTPServer(address)
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.Hub.Close()
		s.Fleet.Close()
		done <- srv.Shutdown(sctx)
	}()
	s.Log.Info("portal serving", "address", address, "tls", certFile != "")
	var err error
	if certFile != "" {
		err = srv.ListenAndServeTLS(certFile, keyFile)
	} else {
		err = srv.ListenAndServe()
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("cannot serve the portal: %w", err)
	}
	return <-done
}
