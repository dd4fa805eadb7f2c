// Package serve serves a composition function over gRPC the way
// function-sdk-go v0.7.1's function.Serve does, plus a bound on the
// RunFunction calls in progress, which Serve cannot set.
//
// Memory grows with the calls in progress, not with the fleet: gRPC reads and
// decodes a request before any handler or interceptor runs, so a bound taken
// in the handler leaves every waiting request read and decoded in memory. The
// bound here is taken before the request is read, at two places:
//
//   - On each connection, HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS
//     (grpc.MaxConcurrentStreams). A gRPC client honours it: a call past it
//     waits in the client for a stream, so the server holds nothing for it.
//     A stream is held until the client has read the response, so responses
//     not yet read by a slow client count too. Crossplane dials one
//     connection to each replica of a function, so for Crossplane this is
//     the bound.
//   - Across connections, a gate (a stats.Handler) whose TagRPC waits for a
//     place, in first-come order. TagRPC runs in the call's own goroutine
//     before the request is read, so a call waiting there holds at most its
//     stream's flow-control window of request bytes, never a decoded
//     request. An InTapHandle cannot do this: grpc-go calls it on the
//     connection's reader goroutine holding the transport's lock, where
//     waiting would stall every call on the connection, and its only other
//     choice is to refuse the call.
//
// Either way a call past the bound is queued, not refused. The queue of a
// connection is the gRPC client's, which is not first come first served: a
// call made as a stream frees up can take it before one already waiting.
package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	ginsecure "google.golang.org/grpc/credentials/insecure"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
)

// Options of a server. The zero value of a field is function-sdk-go's
// default where it has one.
type Options struct {
	// Network and Address to listen on; tcp and :9443 when empty.
	Network string
	Address string

	// TLSCertsDir holds tls.crt, tls.key and ca.crt, the CA that client
	// certificates must chain to. Insecure serves without TLS instead and
	// wins when both are set.
	TLSCertsDir string
	Insecure    bool

	// MaxRecvMsgSize in bytes; 4 MiB when zero.
	MaxRecvMsgSize int

	// HealthServer, registered when not nil.
	HealthServer healthgrpc.HealthServer

	// MetricsAddress serves Prometheus metrics on /metrics when not empty,
	// from MetricsRegistry (prometheus.DefaultRegisterer's when nil), with
	// the gRPC server metrics built with MetricsOptions.
	MetricsAddress  string
	MetricsRegistry *prometheus.Registry
	MetricsOptions  []grpcprometheus.ServerMetricsOption

	// MaxConcurrentCalls bounds the RunFunction calls read, decoded and
	// answered at once; the others wait. Zero means no bound, as
	// function-sdk-go serves.
	MaxConcurrentCalls int

	// PprofAddress serves net/http/pprof (PprofHandler) over TCP when not
	// empty: off by default. It must be a loopback address unless
	// PprofAllowRemote (CheckPprofAddress).
	PprofAddress     string
	PprofAllowRemote bool
}

// Credentials returns the server's transport credentials as function-sdk-go's
// MTLSCertificates and Insecure options make them: TLS 1.2 or later with the
// certificate tls.crt and key tls.key of dir, requiring a client certificate
// verified against ca.crt of dir; or none when insecure.
func Credentials(dir string, insecure bool) (credentials.TransportCredentials, error) {
	if insecure {
		return ginsecure.NewCredentials(), nil
	}
	if dir == "" {
		return nil, errors.New("cannot serve without credentials: set --tls-certs-dir or --insecure")
	}
	crt, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("cannot load X509 keypair: %w", err)
	}
	ca, err := os.ReadFile(filepath.Clean(filepath.Join(dir, "ca.crt")))
	if err != nil {
		return nil, fmt.Errorf("cannot read CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("cannot use CA certificate %s: no PEM certificate in it", filepath.Join(dir, "ca.crt"))
	}
	return credentials.NewTLS(&tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{crt},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}), nil
}

// A Server serves a function.
type Server struct {
	grpc    *grpc.Server
	metrics *http.Server
	pprof   *http.Server
}

// New builds the gRPC server of fn as function.Serve of function-sdk-go
// v0.7.1 builds it: the maximum received message size, the credentials, the
// Prometheus server metrics interceptor (registered with the registry) when
// metrics are served, reflection, fn registered as the v1 and, through
// function.ServeBeta, the v1beta1 FunctionRunnerService, and the health
// server. To that it adds the bound of o.MaxConcurrentCalls, decodes the
// v1 RunFunctionRequest with package wire, and, when o.PprofAddress is
// set, a pprof endpoint that Serve starts.
func New(fn fnv1.FunctionRunnerServiceServer, o Options) (*Server, error) {
	creds, err := Credentials(o.TLSCertsDir, o.Insecure)
	if err != nil {
		return nil, err
	}
	if o.MaxConcurrentCalls < 0 || o.MaxConcurrentCalls > math.MaxInt32 {
		return nil, fmt.Errorf("cannot bound concurrent calls to %d: want 0 (no bound) to %d", o.MaxConcurrentCalls, math.MaxInt32)
	}
	if err := CheckPprofAddress(o.PprofAddress, o.PprofAllowRemote); err != nil {
		return nil, err
	}
	if o.MaxRecvMsgSize == 0 {
		o.MaxRecvMsgSize = function.DefaultMaxRecvMsgSize
	}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(o.MaxRecvMsgSize), grpc.Creds(creds), grpc.ForceServerCodecV2(newCodec())}
	if n := o.MaxConcurrentCalls; n > 0 {
		streams := uint32(n)
		opts = append(opts, grpc.MaxConcurrentStreams(streams), grpc.StatsHandler(newGate(n,
			fnv1.FunctionRunnerService_RunFunction_FullMethodName, v1beta1.FunctionRunnerService_RunFunction_FullMethodName)))
	}
	var metrics *grpcprometheus.ServerMetrics
	if o.MetricsAddress != "" {
		metrics = grpcprometheus.NewServerMetrics(o.MetricsOptions...)
		opts = append(opts, grpc.ChainUnaryInterceptor(metrics.UnaryServerInterceptor()))
		reg := o.MetricsRegistry
		if reg == nil {
			reg = prometheus.DefaultRegisterer.(*prometheus.Registry) //nolint:forcetypeassert // as function-sdk-go: the default registerer is a *Registry
		}
		if err := reg.Register(metrics); err != nil {
			return nil, fmt.Errorf("cannot register the gRPC server metrics: %w", err)
		}
		o.MetricsRegistry = reg
	}
	s := &Server{grpc: grpc.NewServer(opts...)}
	reflection.Register(s.grpc)
	fnv1.RegisterFunctionRunnerServiceServer(s.grpc, fn)
	v1beta1.RegisterFunctionRunnerServiceServer(s.grpc, function.ServeBeta(fn))
	if o.HealthServer != nil {
		healthgrpc.RegisterHealthServer(s.grpc, o.HealthServer)
	}
	if metrics != nil {
		metrics.InitializeMetrics(s.grpc)
		s.metrics = &http.Server{
			Addr:              o.MetricsAddress,
			Handler:           promhttp.HandlerFor(o.MetricsRegistry, promhttp.HandlerOpts{}),
			ReadHeaderTimeout: 30 * time.Second,
		}
	}
	if o.PprofAddress != "" {
		s.pprof = &http.Server{Addr: o.PprofAddress, Handler: PprofHandler(), ReadHeaderTimeout: 30 * time.Second}
	}
	return s, nil
}

// Serve gRPC on lis, and metrics and pprof in the background, until Stop.
// As function-sdk-go does, a metrics server that cannot listen does not
// stop the function; pprof, asked for explicitly, that cannot listen does.
func (s *Server) Serve(lis net.Listener) error {
	if s.pprof != nil {
		pl, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", s.pprof.Addr)
		if err != nil {
			return fmt.Errorf("cannot listen for pprof at address %q: %w", s.pprof.Addr, err)
		}
		go func() { _ = s.pprof.Serve(pl) }()
	}
	if s.metrics != nil {
		go func() { _ = s.metrics.ListenAndServe() }()
	}
	if err := s.grpc.Serve(lis); err != nil {
		return fmt.Errorf("cannot serve gRPC connections: %w", err)
	}
	return nil
}

// Stop the server: close its listeners and connections at once.
func (s *Server) Stop() {
	s.grpc.Stop()
	if s.metrics != nil {
		_ = s.metrics.Close()
	}
	if s.pprof != nil {
		_ = s.pprof.Close()
	}
}

// Serve fn with o until the server fails.
func Serve(fn fnv1.FunctionRunnerServiceServer, o Options) error {
	s, err := New(fn, o)
	if err != nil {
		return err
	}
	network, address := o.Network, o.Address
	if network == "" {
		network = function.DefaultNetwork
	}
	if address == "" {
		address = function.DefaultAddress
	}
	lis, err := (&net.ListenConfig{}).Listen(context.Background(), network, address)
	if err != nil {
		return fmt.Errorf("cannot listen for %s connections at address %q: %w", network, address, err)
	}
	return s.Serve(lis)
}

// gate admits at most cap(places) calls of its methods at once, across every
// connection, and holds the others where they are before their request is
// read. It is a stats.Handler because TagRPC is the last hook gRPC calls in a
// call's own goroutine before it reads the request (grpc-go's
// Server.handleStream, then processUnaryRPC), and HandleRPC's *stats.End is
// its last event, after the response is written.
type gate struct {
	places  chan struct{}
	methods map[string]bool
}

func newGate(n int, methods ...string) *gate {
	g := &gate{places: make(chan struct{}, n), methods: map[string]bool{}}
	for _, m := range methods {
		g.methods[m] = true
	}
	return g
}

// admitted marks the context of a call that holds a place.
type admitted struct{}

// TagRPC waits for a place for a call of the gate's methods, or until the
// call ends (its caller gives up, or its deadline passes), when gRPC then
// fails it without reading it.
func (g *gate) TagRPC(ctx context.Context, i *stats.RPCTagInfo) context.Context {
	if !g.methods[i.FullMethodName] {
		return ctx
	}
	select {
	case g.places <- struct{}{}:
		return context.WithValue(ctx, admitted{}, true)
	case <-ctx.Done():
		return ctx
	}
}

// HandleRPC frees the place of a call that ends.
func (g *gate) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, end := s.(*stats.End); end && ctx.Value(admitted{}) != nil {
		<-g.places
	}
}

// TagConn does nothing.
func (g *gate) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn does nothing.
func (g *gate) HandleConn(context.Context, stats.ConnStats) {}
