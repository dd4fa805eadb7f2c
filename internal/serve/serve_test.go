package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// blocking is a function whose calls wait until released, and which counts
// the calls inside it.
type blocking struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	release chan struct{}
	entered chan struct{}
	in, max atomic.Int64
}

func newBlocking() *blocking {
	return &blocking{release: make(chan struct{}), entered: make(chan struct{}, 1000)}
}

func (b *blocking) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	n := b.in.Add(1)
	defer b.in.Add(-1)
	for {
		m := b.max.Load()
		if n <= m || b.max.CompareAndSwap(m, n) {
			break
		}
	}
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag()}}, nil
}

// serveLoopback serves fn with o on a loopback listener until the test ends,
// and returns its address.
func serveLoopback(t *testing.T, fn fnv1.FunctionRunnerServiceServer, o Options) string {
	t.Helper()
	s, err := New(fn, o)
	if err != nil {
		t.Fatalf("New(...): %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("Serve(...): %v", err)
		}
	})
	return lis.Addr().String()
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// bigRequest is a request of about size bytes, so that a call's request
// spans many HTTP/2 frames and more than a stream's flow-control window.
func bigRequest(tag string, size int) *fnv1.RunFunctionRequest {
	s, _ := structpb.NewStruct(map[string]any{"spec": map[string]any{"blob": string(make([]byte, size))}})
	return &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: tag},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: s}},
	}
}

func TestMaxConcurrentCallsQueues(t *testing.T) {
	type args struct {
		limit int
		conns int
		calls int
	}
	type want struct {
		max      int64
		answered int
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"OneConnection": {
			reason: "Crossplane's case: calls past the bound on one connection wait, and all are answered once released.",
			args:   args{limit: 2, conns: 1, calls: 6},
			want:   want{max: 2, answered: 6},
		},
		"ConnectionPerCall": {
			reason: "The bound holds across connections: calls on other connections wait too, and are not refused.",
			args:   args{limit: 2, conns: 6, calls: 6},
			want:   want{max: 2, answered: 6},
		},
		"Unbounded": {
			reason: "With no bound every call runs at once, as function-sdk-go serves.",
			args:   args{limit: 0, conns: 1, calls: 6},
			want:   want{max: 6, answered: 6},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fn := newBlocking()
			addr := serveLoopback(t, fn, Options{Insecure: true, MaxConcurrentCalls: tc.args.limit})
			clients := make([]fnv1.FunctionRunnerServiceClient, tc.args.conns)
			for i := range clients {
				clients[i] = fnv1.NewFunctionRunnerServiceClient(dial(t, addr, insecure.NewCredentials()))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			var wg sync.WaitGroup
			errs := make([]error, tc.args.calls)
			for i := range tc.args.calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rsp, err := clients[i%len(clients)].RunFunction(ctx, bigRequest(name, 256<<10))
					if err == nil && rsp.GetMeta().GetTag() != name {
						t.Errorf("call %d: answered with tag %q, want %q", i, rsp.GetMeta().GetTag(), name)
					}
					errs[i] = err
				}()
			}
			// Wait for as many calls as the bound admits, then give the
			// others time to get in, if the bound let them.
			for range tc.want.max {
				select {
				case <-fn.entered:
				case <-ctx.Done():
					t.Fatalf("%s\nonly %d calls reached the function", tc.reason, fn.in.Load())
				}
			}
			time.Sleep(300 * time.Millisecond)
			if got := fn.in.Load(); got != tc.want.max {
				t.Errorf("%s\ncalls in the function before release: got %d, want %d", tc.reason, got, tc.want.max)
			}
			close(fn.release)
			wg.Wait()

			answered := 0
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s\ncall %d: %v (code %s), want an answer", tc.reason, i, err, status.Code(err))
					continue
				}
				answered++
			}
			got := want{max: fn.max.Load(), answered: answered}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWaitingCallGivesUp(t *testing.T) {
	// A call waiting for a place whose caller gives up frees nothing it
	// does not hold: the calls after it still get in.
	fn := newBlocking()
	addr := serveLoopback(t, fn, Options{Insecure: true, MaxConcurrentCalls: 1})
	client := fnv1.NewFunctionRunnerServiceClient(dial(t, addr, insecure.NewCredentials()))

	first := make(chan error, 1)
	go func() {
		_, err := client.RunFunction(context.Background(), bigRequest("first", 1024))
		first <- err
	}()
	<-fn.entered

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := client.RunFunction(ctx, bigRequest("impatient", 1024)); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a call past the bound whose deadline passed: got %v, want DeadlineExceeded", err)
	}
	if got := fn.max.Load(); got != 1 {
		t.Errorf("calls in the function at once: got %d, want 1", got)
	}
	close(fn.release)
	if err := <-first; err != nil {
		t.Fatalf("first call: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if _, err := client.RunFunction(ctx2, bigRequest("after", 1024)); err != nil {
		t.Errorf("a call after the impatient one: %v, want an answer (its place was not leaked)", err)
	}
}

// pki writes a CA, a server certificate and key signed by it, into dir as
// tls.crt, tls.key and ca.crt, and returns a client certificate signed by
// the same CA.
func pki(t *testing.T, dir string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	crt, key := leaf(2, x509.ExtKeyUsageServerAuth)
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", crt)
	write("tls.key", key)
	write("ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	ccrt, ckey := leaf(3, x509.ExtKeyUsageClientAuth)
	client, err := tls.X509KeyPair(ccrt, ckey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return client, pool
}

func TestCredentials(t *testing.T) {
	good := t.TempDir()
	pki(t, good)
	badCA := t.TempDir()
	pki(t, badCA)
	if err := os.WriteFile(filepath.Join(badCA, "ca.crt"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	noCA := t.TempDir()
	pki(t, noCA)
	if err := os.Remove(filepath.Join(noCA, "ca.crt")); err != nil {
		t.Fatal(err)
	}

	type args struct {
		dir      string
		insecure bool
	}
	type want struct {
		protocol string
		err      bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Insecure": {
			reason: "--insecure serves without TLS.",
			args:   args{insecure: true},
			want:   want{protocol: "insecure"},
		},
		"InsecureWinsOverDir": {
			reason: "--insecure ignores --tls-certs-dir, as its help says.",
			args:   args{dir: "/nonexistent", insecure: true},
			want:   want{protocol: "insecure"},
		},
		"MTLS": {
			reason: "A directory with tls.crt, tls.key and ca.crt serves TLS.",
			args:   args{dir: good},
			want:   want{protocol: "tls"},
		},
		"NoCredentials": {
			reason: "Neither a directory nor --insecure cannot serve, as function-sdk-go refuses to.",
			args:   args{},
			want:   want{err: true},
		},
		"NoKeypair": {
			reason: "A directory without the server's keypair cannot serve.",
			args:   args{dir: t.TempDir()},
			want:   want{err: true},
		},
		"NoCA": {
			reason: "A directory without ca.crt cannot serve.",
			args:   args{dir: noCA},
			want:   want{err: true},
		},
		"BadCA": {
			reason: "A ca.crt without a PEM certificate cannot serve.",
			args:   args{dir: badCA},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Credentials(tc.args.dir, tc.args.insecure)
			got := want{err: err != nil}
			if c != nil {
				got.protocol = c.Info().SecurityProtocol
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nCredentials(%q, %t): -want, +got:\n%s\nerror: %v", tc.reason, tc.args.dir, tc.args.insecure, diff, err)
			}
		})
	}
}

func TestMTLS(t *testing.T) {
	dir := t.TempDir()
	client, pool := pki(t, dir)
	fn := newBlocking()
	close(fn.release)

	cases := map[string]struct {
		reason string
		tls    *tls.Config
		want   bool
	}{
		"ClientCertificate": {
			reason: "A client presenting a certificate of the CA is answered.",
			tls:    &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{client}},
			want:   true,
		},
		"NoClientCertificate": {
			reason: "A client without a certificate is refused, as function-sdk-go requires and verifies one.",
			tls:    &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool},
			want:   false,
		},
	}
	for _, limit := range []int{0, 4} {
		addr := serveLoopback(t, fn, Options{TLSCertsDir: dir, MaxConcurrentCalls: limit})
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c := fnv1.NewFunctionRunnerServiceClient(dial(t, addr, credentials.NewTLS(tc.tls)))
				_, err := c.RunFunction(ctx, &fnv1.RunFunctionRequest{})
				if got := err == nil; got != tc.want {
					t.Errorf("%s\nlimit %d: answered %t, want %t (error: %v)", tc.reason, limit, got, tc.want, err)
				}
			})
		}
	}
}

func TestNew(t *testing.T) {
	type want struct {
		services []string
		err      bool
	}
	cases := map[string]struct {
		reason string
		o      Options
		want   want
	}{
		"AsTheSDK": {
			reason: "The server registers what function-sdk-go's Serve does: v1 and v1beta1 RunFunction, reflection and health.",
			o:      Options{Insecure: true, HealthServer: health.NewServer(), MetricsAddress: "127.0.0.1:0", MetricsRegistry: prometheus.NewRegistry(), MaxConcurrentCalls: 8},
			want: want{services: []string{
				"apiextensions.fn.proto.v1.FunctionRunnerService",
				"apiextensions.fn.proto.v1beta1.FunctionRunnerService",
				"grpc.health.v1.Health",
				"grpc.reflection.v1.ServerReflection",
				"grpc.reflection.v1alpha.ServerReflection",
			}},
		},
		"NoHealthServer": {
			reason: "Without a health server none is registered.",
			o:      Options{Insecure: true},
			want: want{services: []string{
				"apiextensions.fn.proto.v1.FunctionRunnerService",
				"apiextensions.fn.proto.v1beta1.FunctionRunnerService",
				"grpc.reflection.v1.ServerReflection",
				"grpc.reflection.v1alpha.ServerReflection",
			}},
		},
		"NegativeBound": {
			reason: "A negative bound is a mistake, not no bound.",
			o:      Options{Insecure: true, MaxConcurrentCalls: -1},
			want:   want{err: true},
		},
		"NoCredentials": {
			reason: "A server needs credentials or --insecure.",
			o:      Options{},
			want:   want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := New(newBlocking(), tc.o)
			got := want{err: err != nil}
			if s != nil {
				for svc := range s.grpc.GetServiceInfo() {
					got.services = append(got.services, svc)
				}
				sort.Strings(got.services)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nNew(...): -want, +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
		})
	}
}

func TestServesAsTheSDK(t *testing.T) {
	// The v1beta1 service, health and metrics answer on a served server.
	fn := newBlocking()
	close(fn.release)
	hs := health.NewServer()
	hs.SetServingStatus("", healthgrpc.HealthCheckResponse_SERVING)
	reg := prometheus.NewRegistry()
	addr := serveLoopback(t, fn, Options{
		Insecure: true, HealthServer: hs, MaxConcurrentCalls: 2,
		MetricsAddress: "127.0.0.1:0", MetricsRegistry: reg,
		MetricsOptions: []grpcprometheus.ServerMetricsOption{grpcprometheus.WithServerHandlingTimeHistogram()},
	})
	conn := dial(t, addr, insecure.NewCredentials())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if rsp, err := v1beta1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, &v1beta1.RunFunctionRequest{Meta: &v1beta1.RequestMeta{Tag: "beta"}}); err != nil || rsp.GetMeta().GetTag() != "beta" {
		t.Errorf("v1beta1 RunFunction: got %v, %v; want the tag beta answered", rsp, err)
	}
	if rsp, err := healthgrpc.NewHealthClient(conn).Check(ctx, &healthgrpc.HealthCheckRequest{}); err != nil || rsp.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
		t.Errorf("health check: got %v, %v; want SERVING", rsp, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{"grpc_server_handled_total", "grpc_server_handling_seconds"} {
		if !got[name] {
			t.Errorf("metric %s is not registered; registered: %v", name, got)
		}
	}
}
