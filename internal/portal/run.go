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

// New builds a portal that talks to the API server of cfg with the
// portal's own identity (token and access reviews, policies, the shared
// watches) and impersonates its callers for everything they do.
func New(cfg *rest.Config, o Options) (*Server, error) {
	// One rate limit for everything the portal sends, its callers'
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
		Authn:    &TokenReviewer{Client: dyn, TTL: o.TokenTTL, Audiences: o.Audiences, Now: time.Now},
		Authz:    &AccessReviewer{Client: dyn},
		As:       ImpersonateWith(cfg),
		Policies: ConfigMapPolicies{Client: dyn, Namespace: o.PolicyNamespace, Prefix: o.PolicyPrefix},
		Hub:      NewHub(dyn, disc.Resolve, o.Ring, hex.EncodeToString(b), o.Log),
		Clouds:   o.Clouds, MaxBody: o.MaxBody, Ping: o.Ping, Log: o.Log,
	}, nil
}

// ListenAndServe serves the portal on address, over TLS when certFile and
// keyFile are given, until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, address, certFile, keyFile string) error {
	srv := &http.Server{Addr: address, Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Hub.Close()
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
