package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// proc is a process of the stack, found by its pid file.
type proc struct{ name, pidFile string }

var stackProcs = []proc{
	{"function", "function.pid"}, {"crossplane", "crossplane.pid"}, {"kube-apiserver", "kube-apiserver.pid"},
	{"etcd", "etcd.pid"}, {"provider-kubernetes", "provider-kubernetes.pid"}, {"kube-controller-manager", "kcm.pid"},
	{"fleet-controller", "fleet.pid"},
}

// usage is a process's CPU seconds and peak RSS.
type usage struct {
	cpu    float64
	peakMB float64
}

// machineBusy is the CPU seconds the machine's cores have been busy
// (everything but idle and I/O wait) since boot, and how many cores it has.
func machineBusy() (busy float64, cores int, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	for l := range strings.Lines(string(b)) {
		f := strings.Fields(l)
		switch {
		case len(f) > 8 && f[0] == "cpu":
			for i, v := range f[1:9] {
				if i == 3 || i == 4 { // idle, iowait
					continue
				}
				t, _ := strconv.ParseFloat(v, 64)
				busy += t / 100 // USER_HZ
			}
		case strings.HasPrefix(f[0], "cpu"):
			cores++
		}
	}
	return busy, cores, nil
}

// readUsage reads /proc for a pid.
func readUsage(work string, p proc) (usage, error) {
	b, err := os.ReadFile(filepath.Join(work, p.pidFile)) //nolint:gosec // run.sh's pid files
	if err != nil {
		return usage{}, err
	}
	pid := strings.TrimSpace(string(b))
	stat, err := os.ReadFile("/proc/" + pid + "/stat") //nolint:gosec // a pid of ours
	if err != nil {
		return usage{}, err
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:])) // the fields after "(comm) "
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	u := usage{cpu: (ut + st) / 100}                   // USER_HZ
	status, err := os.Open("/proc/" + pid + "/status") //nolint:gosec // a pid of ours
	if err != nil {
		return u, err
	}
	defer status.Close() //nolint:errcheck // read only
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			u.peakMB = kb / 1024
		}
	}
	return u, nil
}

// runFunctionLatency reads RunFunction's handling-time histogram from the
// function's metrics: the call count and the p50 and p99, interpolated in
// their buckets.
func runFunctionLatency(metrics string) (count float64, p50, p99 time.Duration, err error) {
	rsp, err := http.Get(metrics) //nolint:gosec,noctx // the function's own metrics, on loopback
	if err != nil {
		return 0, 0, 0, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end
	type bucket struct{ le, n float64 }
	var buckets []bucket
	sc := bufio.NewScanner(rsp.Body)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "grpc_server_handling_seconds_bucket{") || !strings.Contains(l, `grpc_method="RunFunction"`) || !strings.Contains(l, "fn.proto.v1.") {
			continue
		}
		i := strings.Index(l, `le="`)
		j := strings.Index(l[i+4:], `"`)
		le, n := l[i+4:i+4+j], l[strings.LastIndexByte(l, ' ')+1:]
		b := bucket{le: math.Inf(1)}
		if le != "+Inf" {
			b.le, _ = strconv.ParseFloat(le, 64)
		}
		b.n, _ = strconv.ParseFloat(n, 64)
		buckets = append(buckets, b)
	}
	if len(buckets) == 0 {
		return 0, 0, 0, errors.New("no RunFunction histogram in the function's metrics")
	}
	slices.SortFunc(buckets, func(a, b bucket) int { return int(math.Copysign(1, a.le-b.le)) })
	count = buckets[len(buckets)-1].n
	q := func(f float64) time.Duration {
		rank, lo, prev := f*count, 0.0, 0.0
		for _, b := range buckets {
			if b.n >= rank {
				if math.IsInf(b.le, 1) {
					return time.Duration(lo * float64(time.Second))
				}
				frac := 0.0
				if b.n > prev {
					frac = (rank - prev) / (b.n - prev)
				}
				return time.Duration((lo + (b.le-lo)*frac) * float64(time.Second))
			}
			lo, prev = b.le, b.n
		}
		return 0
	}
	return count, q(0.5), q(0.99), nil
}

// stackReading is the stack at one moment: each process's CPU seconds and
// peak RSS, the function's RunFunction calls and their p50 and p99, and
// the API server's work by request.
type stackReading struct {
	procs    map[string]usage
	calls    float64
	p50, p99 time.Duration
	work     map[string]requestWork
}

// readStack reads the stack as it is now.
func (s *scenarios) readStack(work, metrics string) (stackReading, error) {
	r := stackReading{procs: map[string]usage{}}
	for _, p := range stackProcs {
		u, err := readUsage(work, p)
		if err != nil {
			return r, fmt.Errorf("%s: %w", p.name, err)
		}
		r.procs[p.name] = u
	}
	var err error
	if r.calls, r.p50, r.p99, err = runFunctionLatency(metrics); err != nil {
		return r, err
	}
	r.work, err = s.k.apiserverWork()
	return r, err
}

// crossplaneMetrics is Crossplane core's metrics endpoint (run.sh's
// --metrics-port).
var crossplaneMetrics = "http://127.0.0.1:18080/metrics"

// dumpMetrics keeps the API server's and Crossplane core's metrics as they
// are now in the work directory (fleet-<when>-apiserver.prom and
// fleet-<when>-crossplane.prom), for reading after the run what the
// summary leaves out. A metrics endpoint that does not answer is skipped.
func (s *scenarios) dumpMetrics(work, when string) {
	if b, err := s.k.metrics(); err == nil {
		_ = os.WriteFile(filepath.Join(work, "fleet-"+when+"-apiserver.prom"), b, 0o600)
	}
	rsp, err := http.Get(crossplaneMetrics) //nolint:noctx,gosec // a one-off read of Crossplane's metrics on loopback, at the flag's URL
	if err != nil {
		return
	}
	defer rsp.Body.Close() //nolint:errcheck // a read-only body
	if b, err := io.ReadAll(rsp.Body); err == nil {
		_ = os.WriteFile(filepath.Join(work, "fleet-"+when+"-crossplane.prom"), b, 0o600)
	}
}
