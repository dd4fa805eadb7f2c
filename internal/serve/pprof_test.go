package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

func TestCheckPprofAddress(t *testing.T) {
	type args struct {
		address     string
		allowRemote bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   bool // refused
	}{
		"Off":             {reason: "No address serves nothing, which is always allowed.", args: args{address: ""}},
		"LoopbackV4":      {reason: "127.0.0.1 is loopback.", args: args{address: "127.0.0.1:6060"}},
		"LoopbackV4Other": {reason: "All of 127/8 is loopback.", args: args{address: "127.0.0.2:6060"}},
		"LoopbackV6":      {reason: "::1 is loopback.", args: args{address: "[::1]:6060"}},
		"Localhost":       {reason: "localhost is loopback by name.", args: args{address: "localhost:6060"}},
		"AnyPort":         {reason: "Port 0 lets the kernel choose.", args: args{address: "127.0.0.1:0"}},
		"EveryInterface":  {reason: "An empty host listens on every interface.", args: args{address: ":6060"}, want: true},
		"Unspecified":     {reason: "0.0.0.0 listens on every interface.", args: args{address: "0.0.0.0:6060"}, want: true},
		"UnspecifiedV6":   {reason: ":: listens on every interface.", args: args{address: "[::]:6060"}, want: true},
		"PodIP":           {reason: "A routable address is refused.", args: args{address: "10.0.0.7:6060"}, want: true},
		"HostName":        {reason: "A host name other than localhost may resolve to anything.", args: args{address: "function.example:6060"}, want: true},
		"NoPort":          {reason: "An address without a port is not an address to listen on.", args: args{address: "127.0.0.1"}, want: true},
		"EmptyPort":       {reason: "An empty port is refused.", args: args{address: "127.0.0.1:"}, want: true},
		"NoPortAllowed":   {reason: "Allowing remote addresses does not allow malformed ones.", args: args{address: "0.0.0.0", allowRemote: true}, want: true},
		"RemoteAllowed":   {reason: "Every interface, when allowed explicitly.", args: args{address: ":6060", allowRemote: true}},
		"PodIPAllowed":    {reason: "A routable address, when allowed explicitly.", args: args{address: "10.0.0.7:6060", allowRemote: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckPprofAddress(tc.args.address, tc.args.allowRemote)
			if diff := cmp.Diff(tc.want, err != nil); diff != "" {
				t.Errorf("%s\nCheckPprofAddress(%q, %t): -want refused, +got:\n%s\nerror: %v", tc.reason, tc.args.address, tc.args.allowRemote, diff, err)
			}
		})
	}
}

func TestNewRefusesRemotePprof(t *testing.T) {
	if _, err := New(newBlocking(), Options{Insecure: true, PprofAddress: "0.0.0.0:6060"}); err == nil {
		t.Error("New(..., PprofAddress 0.0.0.0:6060): no error, want a non-loopback address refused")
	}
	s, err := New(newBlocking(), Options{Insecure: true, PprofAddress: "0.0.0.0:6060", PprofAllowRemote: true})
	if err != nil {
		t.Errorf("New(..., PprofAddress 0.0.0.0:6060, PprofAllowRemote): %v, want it allowed", err)
	}
	if s == nil || s.pprof == nil {
		t.Error("New(..., PprofAddress set): no pprof server")
	}
	s, err = New(newBlocking(), Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.pprof != nil {
		t.Error("New(...) without PprofAddress: a pprof server, want none")
	}
}

// TestPprofHandler fetches a CPU profile and the index from the handler,
// as make bench fetches them from the running function.
func TestPprofHandler(t *testing.T) {
	srv := httptest.NewServer(PprofHandler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	get := func(path string) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer rsp.Body.Close() //nolint:errcheck // read to the end below
		b, err := io.ReadAll(rsp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if rsp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", path, rsp.Status, b)
		}
		return b
	}
	if idx := string(get("/debug/pprof/")); !strings.Contains(idx, "goroutine") {
		t.Errorf("GET /debug/pprof/: no goroutine profile listed:\n%s", idx)
	}
	p, err := profile.ParseData(get("/debug/pprof/profile?seconds=1"))
	if err != nil {
		t.Fatalf("GET /debug/pprof/profile: cannot parse the profile: %v", err)
	}
	if len(p.SampleType) == 0 || p.SampleType[len(p.SampleType)-1].Type != "cpu" {
		t.Errorf("GET /debug/pprof/profile: sample types %v, want cpu last", p.SampleType)
	}
}
