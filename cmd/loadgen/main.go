// Command loadgen is the load benchmark (make bench). For each cloud's
// converged Cluster, AppEnvironment and Database it starts the real function
// binary and, answering the same captured request with the function's own
// response, the two floors of package bench: the raw floor (gRPC decodes
// the request and encodes the response, nothing else) and the SDK floor
// (the request decoded and the desired state built through function-sdk-go).
// It drives the three in alternating rounds over gRPC on loopback, so that
// whatever else the machine runs weighs on all three alike, and reports CPU
// per call as a ratio to each floor, per round and over all rounds. For
// each Cluster it also reports, with ratios to the floors: throughput at
// full speed (closed loop, several clients), latency percentiles at a fixed
// rate (open loop, measured from the intended send time), peak RSS of the
// server process (from /proc), and the time from exec to the first
// successful response. It also reports how CPU per call grows from 5
// to 50 node pools, and how the function holds up when many callers call
// at once (Crossplane's burst after a restart): throughput, latency and peak
// RSS with 1, 10 and 100 concurrent callers on the converged AWS request,
// each on a fresh process.
//
// On each converged Cluster, after those figures, it takes a CPU profile of
// the running function through its --pprof endpoint while a closed loop
// drives it at full speed, writes it to the output folder
// (cpu-<cloud>-cluster.pprof) and reports it by phase of the call (package
// phase). With -profile it only prints a profile taken elsewhere by the
// same phases, such as go test -cpuprofile's of BenchmarkRunFunction.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// config of a run.
type config struct {
	function, floor string
	examples        bench.Examples
	out             string
	clients         int
	closed, open    time.Duration
	rate            int
	clouds          []string
	// conns is how many connections the clients share, round robin.
	conns int
	// callers are the caller counts of the concurrency section, each run
	// for burst on a fresh process; flags are extra flags of the function.
	callers []int
	burst   time.Duration
	flags   []string
	// only runs one section: "concurrency", or all when empty.
	only string
	// rounds of round each: the alternating closed loops of CPU per call.
	rounds int
	round  time.Duration
	// kinds are the XR kinds measured, by name; all when empty.
	kinds []string
	// profile is how long the CPU profile of the running function on each
	// converged Cluster lasts (--pprof); none when zero.
	profile time.Duration
}

func main() {
	c := config{}
	var examples, clouds, callers, flags string
	flag.StringVar(&c.function, "function", "bin/function-cluster-platform", "the function binary")
	flag.StringVar(&c.floor, "floor", "bin/floor", "the floor binary")
	flag.StringVar(&examples, "examples", "examples", "the examples folder")
	flag.StringVar(&c.out, "out", "_output/bench", "where captured requests and the report go")
	flag.IntVar(&c.clients, "clients", 4, "concurrent clients of the closed loop")
	flag.DurationVar(&c.closed, "closed", 8*time.Second, "duration of the closed loop")
	flag.DurationVar(&c.open, "open", 15*time.Second, "duration of the open loop")
	flag.IntVar(&c.rate, "rate", 20, "requests per second of the open loop")
	flag.StringVar(&clouds, "clouds", "gcp,aws,azure", "the clouds to measure")
	flag.IntVar(&c.conns, "conns", 1, "connections the clients share, round robin (Crossplane dials one per replica)")
	flag.StringVar(&callers, "callers", "100", "concurrent AWS callers of the concurrency section, comma-separated; empty to skip it")
	flag.DurationVar(&c.burst, "burst", 5*time.Second, "duration of each closed loop of the concurrency section")
	flag.StringVar(&flags, "function-flags", "", "extra flags of the function, space-separated (e.g. --max-concurrent-calls=0)")
	flag.StringVar(&c.only, "only", "", "run only this section: concurrency")
	flag.IntVar(&c.rounds, "rounds", 3, "alternating rounds of closed loops (function, raw floor, SDK floor) for CPU per call")
	flag.DurationVar(&c.round, "round", 3*time.Second, "duration of each closed loop of a round")
	var kinds string
	flag.StringVar(&kinds, "kinds", "Cluster,AppEnvironment,Database", "the XR kinds to measure on each cloud")
	flag.DurationVar(&c.profile, "profile-for", 5*time.Second, "CPU profile of the running function (its --pprof endpoint) on each converged Cluster at full speed, after the measurements, for this long in whole seconds; 0 for none")
	var prof, root string
	var calls int64
	flag.StringVar(&prof, "profile", "", "only print this CPU profile by phase, as make bench prints its own, and exit (with -root and -calls for go test -cpuprofile's)")
	flag.StringVar(&root, "root", "", "with -profile: count only the samples with a function this regular expression matches on their stack (BenchmarkRunFunction\\.func1$ for the function's own loop)")
	flag.Int64Var(&calls, "calls", 0, "with -profile: the calls profiled, for CPU per call (0: seconds in all)")
	flag.Parse()
	if prof != "" {
		if err := summarize(os.Stdout, prof, root, calls); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		return
	}
	c.kinds = strings.Split(kinds, ",")
	c.examples = bench.Examples(examples)
	c.clouds = strings.Split(clouds, ",")
	c.flags = strings.Fields(flags)
	for _, f := range strings.Split(callers, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "loadgen: -callers: %q is not a count of callers\n", f)
			os.Exit(2)
		}
		c.callers = append(c.callers, n)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if err := os.MkdirAll(c.out, 0o750); err != nil {
		return err
	}
	var report strings.Builder
	fmt.Fprintf(&report, "load benchmark: %d clients on %d connection(s) closed loop for %s, open loop at %d req/s for %s, on %s\n", c.clients, c.conns, c.closed, c.rate, c.open, host())
	if len(c.flags) > 0 {
		fmt.Fprintf(&report, "function flags: %s\n", strings.Join(c.flags, " "))
	}
	report.WriteString("\n")
	targets := map[string]bool{}
	clouds := c.clouds
	if c.only == "concurrency" {
		clouds = nil
	}
	var rows []ratioRow
	for _, cloud := range clouds {
		for _, k := range bench.Kinds {
			if !slices.Contains(c.kinds, k.Name) {
				continue
			}
			row, err := c.compare(&report, cloud, k, targets)
			if err != nil {
				return fmt.Errorf("%s %s: %w", cloud, k.Name, err)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) > 0 {
		c.ratios(&report, rows, targets)
	}
	if c.only != "concurrency" {
		if err := c.pools(&report, targets); err != nil {
			return err
		}
	}
	if err := c.concurrency(&report, targets); err != nil {
		return err
	}
	fmt.Print(report.String())
	if err := os.WriteFile(filepath.Join(c.out, "report.txt"), []byte(report.String()), 0o644); err != nil { //nolint:gosec // a report to read
		return err
	}
	for name, ok := range targets {
		if !ok {
			return fmt.Errorf("target missed: %s", name)
		}
	}
	return nil
}

// capture writes the request and the function's response as binary
// protobuf, the request for inspection and the response for the floor.
func capture(out, name string, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) ([]byte, error) {
	wire, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	rb, err := proto.Marshal(rsp)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, name+".request.pb"), wire, 0o600); err != nil {
		return nil, err
	}
	return wire, os.WriteFile(filepath.Join(out, name+".response.pb"), rb, 0o600)
}

// A ratioRow is the CPU per call of one XR's converged request: the
// function's and the floors', over all rounds, and the function's ratio
// to the raw floor in each round.
type ratioRow struct {
	cloud, kind         string
	fn, raw, sdk        float64 // CPU s per 1,000 calls
	rounds              []float64
	requestKB, observed int
	responseKB          int
}

// compare measures the function against both floors on a cloud's
// converged XR of the kind: the floors answer with the function's own
// response to the same request. CPU per call comes from alternating rounds
// of closed loops (function, raw floor, SDK floor); for a Cluster also
// latency at a fixed rate, peak RSS and start-up, and the targets.
func (c config) compare(report *strings.Builder, cloud string, k bench.Kind, targets map[string]bool) (ratioRow, error) {
	row := ratioRow{cloud: cloud, kind: k.Name}
	req, err := c.examples.ConvergedKind(cloud, k)
	if err != nil {
		return row, fmt.Errorf("cannot capture the converged request: %w", err)
	}
	name := cloud + "-" + strings.ToLower(k.Name)
	addr, argv := c.functionArgv()
	var pprofAddr string
	if k.Name == "Cluster" && c.profile > 0 {
		pprofAddr = freeAddr()
		argv = append(argv, "--pprof="+pprofAddr)
	}
	fn, err := c.start(argv, addr, req)
	if err != nil {
		return row, fmt.Errorf("function: %w", err)
	}
	defer fn.stop()
	if msg := xpsim.Fatal(fn.first); msg != "" {
		return row, fmt.Errorf("the function answers the converged request with a Fatal: %s", msg)
	}
	wire, err := capture(c.out, name, req, fn.first)
	if err != nil {
		return row, err
	}
	floor := func(raw bool) (*server, error) {
		addr, metrics := freeAddr(), freeAddr()
		argv := []string{c.floor, "--address=" + addr, "--metrics-address=" + metrics, "--response=" + filepath.Join(c.out, name+".response.pb")}
		if raw {
			argv = append(argv, "--raw")
		}
		return c.start(argv, addr, req)
	}
	raw, err := floor(true)
	if err != nil {
		return row, fmt.Errorf("raw floor: %w", err)
	}
	defer raw.stop()
	sdk, err := floor(false)
	if err != nil {
		return row, fmt.Errorf("SDK floor: %w", err)
	}
	defer sdk.stop()

	servers := []*server{fn, raw, sdk}
	res := make([]result, len(servers))
	cpu := make([]float64, len(servers))
	for _, s := range servers {
		c.closedLoop(s.clients, req, time.Second)
	}
	for range c.rounds {
		var perCall [3]float64
		for i, s := range servers {
			n, lat, sec, err := c.load(s, req, c.round)
			if err != nil {
				return row, err
			}
			res[i].requests += n
			res[i].closedLat = append(res[i].closedLat, lat...)
			cpu[i] += sec
			perCall[i] = sec / float64(n)
		}
		row.rounds = append(row.rounds, perCall[0]/perCall[1])
	}
	for i, s := range servers {
		res[i].startup = s.startup
		res[i].throughput = float64(res[i].requests) / (float64(c.rounds) * c.round.Seconds())
		res[i].cpuPer1000 = cpu[i] / float64(res[i].requests) * 1000
	}
	row.fn, row.raw, row.sdk = res[0].cpuPer1000, res[1].cpuPer1000, res[2].cpuPer1000
	row.requestKB, row.responseKB, row.observed = len(wire)/1024, proto.Size(fn.first)/1024, len(req.GetObserved().GetResources())
	if k.Name != "Cluster" {
		return row, nil
	}
	// The open loop in alternating rounds too, c.open in all per server.
	for range c.rounds {
		for i, s := range servers {
			lat, err := c.openLoop(s.clients, req, c.open/time.Duration(c.rounds))
			if err != nil {
				return row, err
			}
			res[i].openLat = append(res[i].openLat, lat...)
		}
	}
	for i, s := range servers {
		if res[i].peakRSS, err = peakRSS(s.cmd.Process.Pid); err != nil {
			return row, err
		}
	}
	table(report, cloud, len(wire), proto.Size(fn.first), row.observed, res[0], res[1], res[2])
	if cloud == "gcp" {
		maps.Copy(targets, check(report, res[0], res[2]))
	}
	if pprofAddr != "" {
		// After every figure above, so that profiling weighs on none.
		if err := c.profileRunning(report, fn, pprofAddr, name, req); err != nil {
			return row, err
		}
	}
	return row, nil
}

// ratios reports CPU per call of every XR measured as a ratio to both
// floors, and the target on each cloud's Cluster.
func (c config) ratios(b *strings.Builder, rows []ratioRow, targets map[string]bool) {
	fmt.Fprintf(b, "CPU per call, converged, one run: %d alternating rounds of %s closed loops (function, raw floor, SDK floor),\nthe floors answering the function's own response to the same request; CPU s per 1,000 calls over all rounds:\n", c.rounds, c.round)
	fmt.Fprintf(b, "  %-6s %-15s %9s %9s %9s %9s %-19s %9s   %s\n", "cloud", "kind", "function", "raw", "SDK", "x raw", "(per round)", "x SDK", "request")
	for _, r := range rows {
		fmt.Fprintf(b, "  %-6s %-15s %9.3f %9.3f %9.3f %8.2fx %-19s %8.2fx   %d KB, %d observed, response %d KB\n",
			r.cloud, r.kind, r.fn, r.raw, r.sdk, r.fn/r.raw, "("+spread(r.rounds)+")", r.fn/r.sdk, r.requestKB, r.observed, r.responseKB)
	}
	for _, r := range rows {
		if r.kind != "Cluster" {
			continue
		}
		name := fmt.Sprintf("CPU per call <= 1.25x the raw floor's, %s Cluster", r.cloud)
		targets[name] = r.fn <= 1.25*r.raw
		fmt.Fprintf(b, "  %-48s %s\n", name, map[bool]string{true: "met", false: "MISSED"}[targets[name]])
	}
	b.WriteString("\n")
}

// spread is the lowest and highest of the ratios.
func spread(r []float64) string {
	if len(r) == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f-%.2f", slices.Min(r), slices.Max(r))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func table(b *strings.Builder, cloud string, size, response, observed int, fn, raw, sdk result) {
	fmt.Fprintf(b, "%s Cluster: converged request of %.1f KB, response of %.1f KB, %d observed composed resources\n", strings.ToUpper(cloud), float64(size)/1024, float64(response)/1024, observed)
	fmt.Fprintf(b, "  %-34s %12s %12s %12s %8s %8s\n", "", "function", "raw floor", "SDK floor", "x raw", "x SDK")
	row := func(name, a, r, s string, xr, xs float64) {
		fmt.Fprintf(b, "  %-34s %12s %12s %12s %7.2fx %7.2fx\n", name, a, r, s, xr, xs)
	}
	row("throughput, closed loop (req/s)", fmt.Sprintf("%.0f", fn.throughput), fmt.Sprintf("%.0f", raw.throughput), fmt.Sprintf("%.0f", sdk.throughput), fn.throughput/raw.throughput, fn.throughput/sdk.throughput)
	row("CPU s per 1,000 requests", fmt.Sprintf("%.3f", fn.cpuPer1000), fmt.Sprintf("%.3f", raw.cpuPer1000), fmt.Sprintf("%.3f", sdk.cpuPer1000), fn.cpuPer1000/raw.cpuPer1000, fn.cpuPer1000/sdk.cpuPer1000)
	for _, p := range []float64{50, 90, 99} {
		a, r, s := percentile(fn.openLat, p), percentile(raw.openLat, p), percentile(sdk.openLat, p)
		row(fmt.Sprintf("p%.0f latency, open loop", p), ms(a), ms(r), ms(s), float64(a)/float64(r), float64(a)/float64(s))
	}
	for _, p := range []float64{50, 99} {
		a, r, s := percentile(fn.closedLat, p), percentile(raw.closedLat, p), percentile(sdk.closedLat, p)
		row(fmt.Sprintf("p%.0f latency, closed loop", p), ms(a), ms(r), ms(s), float64(a)/float64(r), float64(a)/float64(s))
	}
	mib := func(r result) string { return fmt.Sprintf("%.1f MiB", float64(r.peakRSS)/(1<<20)) }
	row("peak RSS under load", mib(fn), mib(raw), mib(sdk), float64(fn.peakRSS)/float64(raw.peakRSS), float64(fn.peakRSS)/float64(sdk.peakRSS))
	row("exec to first response", ms(fn.startup), ms(raw.startup), ms(sdk.startup), float64(fn.startup)/float64(raw.startup), float64(fn.startup)/float64(sdk.startup))
	b.WriteString("\n")
}

// check compares the converged GCP Cluster's figures with the targets
// against the SDK floor.
func check(b *strings.Builder, fn, fl result) map[string]bool {
	t := map[string]bool{
		"CPU per call <= 1.25x the SDK floor's":        fn.cpuPer1000 <= 1.25*fl.cpuPer1000,
		"p99 at a fixed rate <= 2x the SDK floor's":    percentile(fn.openLat, 99) <= 2*percentile(fl.openLat, 99),
		"throughput at full speed >= 0.8x the SDK's":   fn.throughput >= 0.8*fl.throughput,
		"peak RSS under full-speed load <= 1.2x SDK's": float64(fn.peakRSS) <= 1.2*float64(fl.peakRSS),
		"exec to first response <= 25 ms":              fn.startup <= 25*time.Millisecond,
	}
	b.WriteString("targets (converged GCP Cluster, two pools, against the SDK floor):\n")
	for _, name := range slices.Sorted(maps.Keys(t)) {
		mark := "met"
		if !t[name] {
			mark = "MISSED"
		}
		fmt.Fprintf(b, "  %-48s %s\n", name, mark)
	}
	b.WriteString("\n")
	return t
}

// pools reports how CPU per call grows from 5 to 50 node pools.
func (c config) pools(b *strings.Builder, targets map[string]bool) error {
	cpu := map[int]float64{}
	size := map[int]int{}
	for _, n := range []int{5, 50} {
		req, err := c.examples.Pools(n)
		if err != nil {
			return err
		}
		wire, err := capture(c.out, fmt.Sprintf("gcp-%d-pools", n), req, bench.Run(req))
		if err != nil {
			return err
		}
		size[n] = len(wire)
		addr, argv := c.functionArgv()
		r, err := c.measure(argv, addr, wire, false)
		if err != nil {
			return err
		}
		cpu[n] = r.cpuPer1000
	}
	ratio := cpu[50] / cpu[5]
	fmt.Fprintf(b, "node pools (GCP, converged): 5 pools %.3f CPU s per 1,000 requests (%.0f KB request), 50 pools %.3f (%.0f KB): %.2fx for 10x the pools\n",
		cpu[5], float64(size[5])/1024, cpu[50], float64(size[50])/1024, ratio)
	targets["50 pools cost <= 12x 5 pools per call"] = ratio <= 12
	fmt.Fprintf(b, "  %-48s %s\n", "50 pools cost <= 12x 5 pools per call", map[bool]string{true: "met", false: "MISSED"}[ratio <= 12])
	return nil
}

// rss100 is the target of the concurrency section: peak RSS with 100
// concurrent AWS callers, under the function's default --max-concurrent-calls.
const rss100 = 256 << 20

// concurrency runs the converged AWS request with each count of concurrent
// callers, closed loop on a fresh process, and reports throughput, latency
// (which, past the function's bound, includes the wait for a place) and
// peak RSS.
func (c config) concurrency(b *strings.Builder, targets map[string]bool) error {
	if len(c.callers) == 0 {
		return nil
	}
	req, err := c.examples.Converged("aws")
	if err != nil {
		return fmt.Errorf("cannot capture the converged aws request: %w", err)
	}
	// The request as the AWS table above sends it: bench.Run leaves the
	// function's desired state in it, as a step after another would get it.
	rsp, err := proto.Marshal(bench.Run(req))
	if err != nil {
		return err
	}
	wire, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "concurrent callers (converged AWS request of %.1f KB, response of %.1f KB, closed loop for %s each on a fresh process, %d connection(s)):\n",
		float64(len(wire))/1024, float64(len(rsp))/1024, c.burst, c.conns)
	fmt.Fprintf(b, "  %8s %12s %12s %12s %14s %12s\n", "callers", "req/s", "p50", "p99", "CPU s/1,000", "peak RSS")
	for _, n := range c.callers {
		cc := c
		cc.clients, cc.closed = n, c.burst
		addr, argv := c.functionArgv()
		r, err := cc.measure(argv, addr, wire, false)
		if err != nil {
			return fmt.Errorf("%d concurrent callers: %w", n, err)
		}
		fmt.Fprintf(b, "  %8d %12.0f %12s %12s %14.3f %8.1f MiB\n", n, r.throughput, ms(percentile(r.closedLat, 50)), ms(percentile(r.closedLat, 99)), r.cpuPer1000, float64(r.peakRSS)/(1<<20))
		if n == 100 && len(c.flags) == 0 {
			name := "RSS at 100 concurrent AWS callers <= 256 MiB"
			targets[name] = r.peakRSS <= rss100
			fmt.Fprintf(b, "  RSS at 100 concurrent AWS callers: %.1f MiB\n  %-48s %s\n", float64(r.peakRSS)/(1<<20), name, map[bool]string{true: "met", false: "MISSED"}[targets[name]])
		}
	}
	b.WriteString("\n")
	return nil
}

// host describes the machine.
func host() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown machine"
	}
	n := strings.Count(string(b), "\nprocessor")
	model := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
			break
		}
	}
	return fmt.Sprintf("%d CPUs (%s)", n+1, model)
}
