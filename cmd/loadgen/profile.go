package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/pprof/profile"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench/phase"
)

// profileRunning takes a CPU profile of the running function s, served by
// its --pprof endpoint at addr, for c.profile while a closed loop of
// c.clients drives it at full speed, as in the rounds; writes it to
// c.out/cpu-<name>.pprof (go tool pprof bin/function-cluster-platform
// that file reads it) and reports it by phase (package phase) per call,
// with the CPU /proc counted in the same window and the top functions.
func (c config) profileRunning(report *strings.Builder, s *server, addr, name string, req *fnv1.RunFunctionRequest) error {
	secs := int(c.profile.Round(time.Second).Seconds())
	type fetched struct {
		b   []byte
		err error
	}
	done := make(chan fetched, 1)
	cpu0, err := cpuSeconds(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	go func() {
		b, err := get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), time.Duration(secs)*time.Second+30*time.Second)
		done <- fetched{b, err}
	}()
	n, _, failed := c.closedLoop(s.clients, req, time.Duration(secs)*time.Second)
	f := <-done
	cpu1, err := cpuSeconds(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	if f.err != nil {
		return fmt.Errorf("cannot fetch the CPU profile: %w", f.err)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d calls failed while profiling", failed, n+failed)
	}
	file := filepath.Join(c.out, "cpu-"+name+".pprof")
	if err := os.WriteFile(file, f.b, 0o600); err != nil {
		return err
	}
	p, err := profile.ParseData(f.b)
	if err != nil {
		return fmt.Errorf("cannot parse the CPU profile: %w", err)
	}
	sum, err := phase.Of(p, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "  profile of the running function (%s): %d s at full speed, %d calls; %.3f CPU s sampled, %.3f s counted by /proc over the loop (which the profile's fetch and write add to)\n",
		file, secs, n, sum.Total.Seconds(), cpu1-cpu0)
	report.WriteString(sum.Table(n))
	report.WriteString("  top functions by their own CPU:\n")
	for _, t := range phase.Top(p, 12) {
		fmt.Fprintf(report, "    %6.2f ms/call %5.1f%%  %s\n", float64(t.CPU)/float64(time.Millisecond)/float64(n), 100*float64(t.CPU)/float64(sum.Total), t.Name)
	}
	return nil
}

// get is the body of a GET of url, which must answer 200 within timeout.
func get(url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return nil, err
	}
	if rsp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, rsp.Status, b)
	}
	return b, nil
}

// summarize prints a CPU profile taken elsewhere by phase, the same
// buckets as make bench's profile of the running function: for the
// in-process profile of BenchmarkRunFunction, root is the function's loop
// (BenchmarkRunFunction\.func1$) and calls the -benchtime.
func summarize(w io.Writer, file, root string, calls int64) error {
	f, err := os.Open(filepath.Clean(file))
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read only
	p, err := profile.Parse(f)
	if err != nil {
		return fmt.Errorf("cannot parse %s: %w", file, err)
	}
	var rx *regexp.Regexp
	if root != "" {
		if rx, err = regexp.Compile(root); err != nil {
			return fmt.Errorf("cannot use -root %q: %w", root, err)
		}
	}
	sum, err := phase.Of(p, rx)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, sum.Table(calls))
	return err
}
