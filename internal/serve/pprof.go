package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// CheckPprofAddress refuses an address the profiling endpoint must not
// listen on: one that is not host:port, or, unless allowRemote, one whose
// host is not a loopback IP or localhost. An empty host (":6060") listens
// on every interface and a host name other than localhost may resolve to
// any, so both are refused too. The endpoint has no authentication, and a
// profile shows the function's code and, through heap profiles and
// goroutine dumps, the shape of what it holds; a remote profiler reaches a
// loopback endpoint through kubectl port-forward instead. Empty is no
// endpoint, which is always allowed.
func CheckPprofAddress(address string, allowRemote bool) error {
	if address == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("cannot serve pprof at %q: %w", address, err)
	}
	if port == "" {
		return fmt.Errorf("cannot serve pprof at %q: no port", address)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("cannot serve pprof at %q: not a loopback address (127.0.0.1, ::1 or localhost); allow others explicitly with --pprof-allow-remote", address)
}

// PprofHandler serves net/http/pprof's pages under /debug/pprof/: the
// index, every runtime profile by name (heap, goroutine, allocs, block,
// mutex, threadcreate), and the CPU profile, the execution trace, the
// command line and symbol lookup. It is a mux of its own: importing
// net/http/pprof also registers these on http.DefaultServeMux, which
// nothing in the function serves.
func PprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
