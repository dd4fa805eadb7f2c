package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// result of one server under load.
type result struct {
	startup    time.Duration
	throughput float64 // requests per second, closed loop
	closedLat  []time.Duration
	openLat    []time.Duration
	cpuPer1000 float64 // CPU seconds per 1,000 requests, closed loop
	peakRSS    int64   // bytes
	requests   int64
}

// server is a function or floor process under load.
type server struct {
	cmd     *exec.Cmd
	clients []fnv1.FunctionRunnerServiceClient
	conns   []*grpc.ClientConn
	// startup is the time from exec to the first successful response,
	// first that response.
	startup time.Duration
	first   *fnv1.RunFunctionResponse
}

// start starts a server, and times its first successful response to req.
func (c config) start(argv []string, addr string, req *fnv1.RunFunctionRequest) (*server, error) {
	s := &server{cmd: exec.Command(argv[0], argv[1:]...)} //nolint:gosec // our own binaries
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	for range max(c.conns, 1) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
		if err != nil {
			s.stop()
			return nil, err
		}
		s.conns = append(s.conns, conn)
		s.clients = append(s.clients, fnv1.NewFunctionRunnerServiceClient(conn))
	}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		s.stop()
		return nil, err
	}
	// Poll the port rather than the gRPC client, whose reconnect backoff
	// would add up to a second after a refused connection.
	for {
		conn, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			s.stop()
			return nil, fmt.Errorf("not listening within 10s: %w", err)
		}
		time.Sleep(200 * time.Microsecond)
	}
	rsp, err := s.clients[0].RunFunction(context.Background(), req)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("first request: %w", err)
	}
	s.startup, s.first = time.Since(start), rsp
	return s, nil
}

// stop kills the server and closes its connections.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	for _, conn := range s.conns {
		_ = conn.Close()
	}
}

// load runs the closed loop on s for d and returns the calls answered,
// their latencies and the CPU seconds the server used for them.
func (c config) load(s *server, req *fnv1.RunFunctionRequest, d time.Duration) (int64, []time.Duration, float64, error) {
	cpu0, err := cpuSeconds(s.cmd.Process.Pid)
	if err != nil {
		return 0, nil, 0, err
	}
	n, lat, failed := c.closedLoop(s.clients, req, d)
	if failed > 0 {
		return 0, nil, 0, fmt.Errorf("%d of %d calls of the closed loop failed", failed, n+failed)
	}
	cpu1, err := cpuSeconds(s.cmd.Process.Pid)
	return n, lat, cpu1 - cpu0, err
}

// measure starts a server, times its first successful response, loads it
// and stops it.
func (c config) measure(argv []string, addr string, wire []byte, open bool) (result, error) {
	var r result
	req := &fnv1.RunFunctionRequest{}
	if err := proto.Unmarshal(wire, req); err != nil {
		return r, err
	}
	s, err := c.start(argv, addr, req)
	if err != nil {
		return r, err
	}
	defer s.stop()
	r.startup = s.startup
	// Warm up, then the closed loop.
	c.closedLoop(s.clients, req, time.Second)
	n, lat, cpu, err := c.load(s, req, c.closed)
	if err != nil {
		return r, err
	}
	r.requests = n
	r.throughput = float64(n) / c.closed.Seconds()
	r.closedLat = lat
	r.cpuPer1000 = cpu / float64(n) * 1000
	if r.peakRSS, err = peakRSS(s.cmd.Process.Pid); err != nil {
		return r, err
	}
	if open {
		r.openLat, err = c.openLoop(s.clients, req, c.open)
	}
	return r, err
}

// closedLoop runs c.clients clients, spread over the connections, that each
// send the next request as soon as the last one returns. It returns the
// calls answered, their latencies and the calls that failed.
func (c config) closedLoop(clients []fnv1.FunctionRunnerServiceClient, req *fnv1.RunFunctionRequest, d time.Duration) (int64, []time.Duration, int64) {
	var n, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range c.clients {
		client := clients[i%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t := time.Now()
				if _, err := client.RunFunction(context.Background(), req); err != nil {
					failed.Add(1)
					continue
				}
				mine = append(mine, time.Since(t))
				n.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return n.Load(), lat, failed.Load()
}

// openLoop sends c.rate requests per second for d on a fixed schedule, whatever
// the responses do, and measures each latency from its intended send time,
// so that a slow response delays no later measurement (no coordinated
// omission).
func (c config) openLoop(clients []fnv1.FunctionRunnerServiceClient, req *fnv1.RunFunctionRequest, d time.Duration) ([]time.Duration, error) {
	interval := time.Second / time.Duration(c.rate)
	total := int(d / interval)
	lat := make([]time.Duration, total)
	errs := make([]error, total)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range total {
		intended := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(intended))
		client := clients[i%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = client.RunFunction(context.Background(), req)
			lat[i] = time.Since(intended)
		}()
	}
	wg.Wait()
	return lat, errors.Join(errs...)
}

// cpuSeconds is the user and system CPU time of a process, from
// /proc/<pid>/stat, in seconds (USER_HZ is 100 on Linux).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err := strconv.ParseFloat(f[11], 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseFloat(f[12], 64)
	if err != nil {
		return 0, err
	}
	return (utime + stime) / 100, nil
}

// peakRSS is the process's peak resident set size, VmHWM of
// /proc/<pid>/status, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, err := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

func percentile(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

// functionArgv starts the function as the benchmark serves it, on a free
// port, with the extra flags; it returns the address and the command.
func (c config) functionArgv() (string, []string) {
	addr := freeAddr()
	return addr, append([]string{c.function, "--insecure", "--address=" + addr, "--metrics-address=" + freeAddr()}, c.flags...)
}

// freeAddr is a loopback address with a port free now, so that the benchmark
// does not collide with another server on the machine (make render's, e2e's).
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:9443"
	}
	defer l.Close() //nolint:errcheck // only its port was wanted
	return l.Addr().String()
}
