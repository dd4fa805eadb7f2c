package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The fleet: N mixed XRs (three clouds; Cluster, Database and
// AppEnvironment; v2 and legacy) applied at once to the same stack as the
// scenarios, then three faults. Every workload cluster is the one API
// server, so only the first Cluster has a domain (DNS and TLS): the
// others' ClusterIssuers would be one object.

// fleetPattern is one group of ten XRs: its clusters, then what runs on
// them ("on" indexes the group's cluster an XR's clusterRef names).
var fleetPattern = []struct {
	example string
	on      int
}{
	{"gcp/cluster.yaml", -1}, {"aws/cluster.yaml", -1}, {"azure/cluster.yaml", -1}, {"gcp/legacy.yaml", -1},
	{"gcp/database.yaml", 0}, {"aws/database.yaml", 1}, {"azure/appenvironment.yaml", 2},
	{"gcp/appenvironment.yaml", 0}, {"gcp/database-legacy.yaml", -1}, {"aws/appenvironment.yaml", 1},
}

// fleetXR is one XR of the fleet.
type fleetXR struct {
	apiVersion, kind, namespace, name string
	obj                               object
	readyAt                           time.Duration
}

// fleetXRs makes n XRs from the examples, each named apart.
func fleetXRs(examples string, n int) []*fleetXR {
	var out []*fleetXR
	for i := 0; len(out) < n; i++ {
		g, p := i/len(fleetPattern), fleetPattern[i%len(fleetPattern)]
		o := overlay.DeepCopy(fntest.MustLoad(filepath.Join(examples, p.example))[0])
		meta := o["metadata"].(map[string]any)
		// The examples of the three clouds share names: the suffix says
		// which cloud's and which group's.
		suffix := fmt.Sprintf("-%s%d", strings.Split(p.example, "/")[0], g)
		meta["name"] = meta["name"].(string) + suffix
		delete(meta, "creationTimestamp")
		if l, ok := meta["labels"].(map[string]any); ok {
			delete(l, "crossplane.io/claim-name")
			delete(l, "crossplane.io/claim-namespace")
		}
		spec := o["spec"].(map[string]any)
		delete(spec, "claimRef")
		if ref, ok := spec["writeConnectionSecretToRef"].(map[string]any); ok {
			ref["name"] = ref["name"].(string) + suffix
		}
		// One API server plays every cluster, so a ClusterIssuer named
		// letsencrypt would be one object for all of them, each cluster's
		// Object rewriting the others'; only the first cluster has DNS.
		if strings.HasSuffix(p.example, "/cluster.yaml") || p.example == "gcp/legacy.yaml" {
			if i > 0 {
				params := spec["parameters"].(map[string]any)
				delete(params, "domain")
				delete(params, "parentZone")
			}
		}
		// An AppEnvironment's Ingress and front end hosts must be under
		// its Cluster's domain: on the others it has none.
		if p.on >= 0 && (g > 0 || p.on > 0) && o["kind"] == "AppEnvironment" {
			delete(spec["parameters"].(map[string]any), "ingress")
			delete(spec["parameters"].(map[string]any), "frontend")
		}
		// A bucket is one environment's: a bucket the example names gets
		// the copy's suffix.
		if o["kind"] == "AppEnvironment" {
			for _, k := range []string{"bucket", "frontend"} {
				part, _ := spec["parameters"].(map[string]any)[k].(map[string]any)
				for _, f := range []string{"name", "bucketName"} {
					if n, ok := part[f].(string); ok {
						part[f] = n + suffix
					}
				}
			}
		}
		// An AppEnvironment that names its namespace (otherwise its own
		// name) would share it with its group-mates' on the one API server,
		// each labelling it as its own.
		if ns, ok := spec["parameters"].(map[string]any)["namespace"].(string); ok && o["kind"] == "AppEnvironment" {
			spec["parameters"].(map[string]any)["namespace"] = ns + suffix
		}
		if p.on >= 0 {
			c := fntest.MustLoad(filepath.Join(examples, fleetPattern[p.on].example))[0]
			on := fleetPattern[p.on].example
			spec["parameters"].(map[string]any)["clusterRef"].(map[string]any)["name"] = fmt.Sprintf("%s-%s%d", str(c, "metadata", "name"), strings.Split(on, "/")[0], g)
		}
		out = append(out, &fleetXR{o["apiVersion"].(string), o["kind"].(string), str(o, "metadata", "namespace"), meta["name"].(string), o, 0})
	}
	return out
}

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

// fleet applies n XRs at once, waits until all are Ready, measures, then
// (as o says) measures the fleet at rest, runs a rollout across its waves
// and injects the faults.
func (s *scenarios) fleet(c *cloud, n int, o fleetOpts) error {
	work, metrics, idle, faults := o.work, o.metrics, o.idle, o.faults
	xrs := fleetXRs(s.examples, n)
	var waves map[string]string
	if o.rollout {
		// The environment has the waves before the fleet exists, as a
		// platform would: each Cluster is created at its version, and
		// the rollout later moves them wave by wave.
		waves = withWaves(xrs)
		if err := s.applyFleetBaseline(fleetBaseline(s.examples, "", nil)); err != nil {
			return err
		}
		fmt.Printf("fleet: rollout waves in the baseline EnvironmentConfig; the Clusters follow the environment's version, %s\n", waveCounts(waves))
	}
	r0, err := s.readStack(work, metrics)
	if err != nil {
		return err
	}
	before, calls0, work0 := r0.procs, r0.calls, r0.work
	s.dumpMetrics(work, "before")
	busy0, cores, err := machineBusy()
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(xrs))
	sem := make(chan struct{}, 8)
	for _, x := range xrs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.k.apply(x.obj); err != nil {
				errs <- fmt.Errorf("cannot create %s %s: %w", x.kind, x.name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("fleet: %d XRs applied in %.1f s\n", len(xrs), time.Since(start).Seconds())
	s.changes = &xrChanges{start: start}
	allReady, err := s.waitFleet(xrs, start, "Ready")
	changes := s.changes
	s.changes = nil
	trace := filepath.Join(work, "fleet-conditions.txt")
	if err != nil {
		// The trace says most about a fleet that did not get Ready.
		return errors.Join(err, changes.writeTrace(trace))
	}
	// Everything measured is read at once, from the apply until all are
	// Ready; counting what was composed comes after.
	elapsed := time.Since(start)
	r1, err := s.readStack(work, metrics)
	if err != nil {
		return err
	}
	after, calls, work1 := r1.procs, r1.calls, r1.work
	p50, p99 := r1.p50, r1.p99
	busy1, _, err := machineBusy()
	if err != nil {
		return err
	}
	s.dumpMetrics(work, "ready")
	readies := make([]float64, 0, len(xrs))
	for _, x := range xrs {
		readies = append(readies, x.readyAt.Seconds())
	}
	slices.Sort(readies)
	composed, err := s.composedUIDs(c)
	if err != nil {
		return err
	}
	fmt.Printf("\nFLEET N=%d: all Ready in %.0f s (p50 %.0f s, p90 %.0f s per XR); %d composed resources; %d nested XRs\n",
		n, allReady.Seconds(), readies[len(readies)/2], readies[len(readies)*9/10], composed.resources, composed.xrs-len(xrs))
	fmt.Printf("  RunFunction: %.0f calls (%.1f per XR, nested ones included in the calls), p50 %s, p99 %s\n",
		calls-calls0, (calls-calls0)/float64(composed.xrs), p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond))
	var total float64
	for _, p := range stackProcs {
		total += after[p.name].cpu - before[p.name].cpu
	}
	// Per XR applied (the nested XRs they compose count with their
	// parent): what each asks the control plane to hold, and the API
	// server's CPU it costs until all are Ready.
	apiserver := after["kube-apiserver"].cpu - before["kube-apiserver"].cpu
	fmt.Printf("  per XR applied: %.1f composed resources (%.1f of them Usages), kube-apiserver %.2f CPU s, Crossplane core %.2f CPU s\n",
		float64(composed.resources)/float64(n), float64(composed.usages)/float64(n), apiserver/float64(n),
		(after["crossplane"].cpu-before["crossplane"].cpu)/float64(n))
	fmt.Printf("  %-24s %10s %7s %10s\n", "process", "CPU s", "share", "peak RSS")
	for _, p := range stackProcs {
		d := after[p.name].cpu - before[p.name].cpu
		fmt.Printf("  %-24s %10.1f %6.1f%% %7.0f MB\n", p.name, d, 100*d/total, after[p.name].peakMB)
	}
	capacity := float64(cores) * elapsed.Seconds()
	fmt.Printf("  %-24s %10.1f %6.1f%% of %d cores' %.0f s (the stack's processes are part of it)\n", "machine busy", busy1-busy0,
		100*(busy1-busy0)/capacity, cores, capacity)
	topRequests(work0, work1, 10)
	changes.print()
	if err := changes.writeTrace(trace); err != nil {
		return err
	}
	if idle > 0 {
		var waited float64
		for _, r := range readies {
			waited += elapsed.Seconds() - r
		}
		if err := s.atRest(c, xrs, work, metrics, idle, o.restXPArgs, apiserver/float64(n), waited/float64(len(readies))); err != nil {
			return err
		}
	}
	if o.rollout {
		if err := s.fleetRollout(xrs, waves, n, apiserver/float64(n), o); err != nil {
			return fmt.Errorf("the rollout across the waves: %w", err)
		}
		// The rollout moved what the fleet composes (node groups of a
		// new version, say): the faults count from what it is now.
		if composed, err = s.composedUIDs(c); err != nil {
			return err
		}
	}
	if !faults {
		fmt.Println("fleet: no faults injected (-faults=false)")
		return nil
	}

	// The faults: none may lose a composed resource, and the fleet
	// converges again after each.
	// Each fault returns how many XRs were not Synced at its worst: the
	// reconciles it broke.
	for _, f := range []struct {
		name   string
		inject func() (int, error)
	}{
		{"kill -9 the function mid-reconcile, restart it 10 s later", func() (int, error) {
			return s.restart(work, "function", syscall.SIGKILL, 10*time.Second, xrs)
		}},
		{"restart Crossplane core mid-reconcile", func() (int, error) { return s.restart(work, "crossplane", syscall.SIGTERM, 0, xrs) }},
		{"drop the EnvironmentConfigs for a minute", func() (int, error) { return s.dropEnvironment(time.Minute, xrs) }},
	} {
		t0 := time.Now()
		hit, err := f.inject()
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		again, err := s.waitFleet(xrs, t0, "Synced", "Ready")
		if err != nil {
			return fmt.Errorf("after %q: %w", f.name, err)
		}
		now, err := s.composedUIDs(c)
		if err != nil {
			return err
		}
		lost := 0
		for uid := range composed.uids {
			if !now.uids[uid] {
				lost++
			}
		}
		fmt.Printf("  fault: %-58s %3d XRs not Synced during it; composed %d before, %d after, %d lost; all Synced and Ready %.0f s after it began\n",
			f.name, hit, composed.resources, now.resources, lost, again.Seconds())
		if lost > 0 {
			return fmt.Errorf("%q lost %d composed resources", f.name, lost)
		}
		composed = now
	}
	fmt.Println("FLEET PASSED")
	return nil
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

// touch annotates every XR, so that each reconciles at once.
func (s *scenarios) touch(xrs []*fleetXR) {
	for _, x := range xrs {
		_ = s.k.applyAs("e2e-touch", object{"apiVersion": x.apiVersion, "kind": x.kind, "metadata": map[string]any{
			"name": x.name, "namespace": x.namespace, "annotations": map[string]any{"e2e.example.org/touched": time.Now().Format(time.RFC3339Nano)},
		}})
	}
}

// restart makes the fleet reconcile, stops a process of the stack with sig
// while it does, waits, and starts it again with run.sh's start script.
func (s *scenarios) restart(work, name string, sig syscall.Signal, down time.Duration, xrs []*fleetXR) (int, error) {
	go s.touch(xrs)
	time.Sleep(2 * time.Second)
	b, err := os.ReadFile(filepath.Join(work, name+".pid")) //nolint:gosec // run.sh's pid files
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return 0, err
	}
	for range 100 {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(down)
	hit, err := s.notSynced(xrs)
	if err != nil {
		return 0, err
	}
	out, err := exec.Command(filepath.Join(work, "start-"+name+".sh")).CombinedOutput() //nolint:gosec // run.sh's start script
	if err != nil {
		return 0, fmt.Errorf("cannot start %s again: %w: %s", name, err, out)
	}
	return hit, nil
}

// notSynced counts the XRs whose Synced condition is not True.
func (s *scenarios) notSynced(xrs []*fleetXR) (int, error) {
	n := 0
	for _, x := range xrs {
		o, err := s.k.get(x.apiVersion, x.kind, x.namespace, x.name)
		if err != nil {
			return 0, err
		}
		if st, _, _ := condition(o, "Synced"); st != "True" {
			n++
		}
	}
	return n, nil
}

// dropEnvironment deletes the example EnvironmentConfigs, waits, and
// applies them again: each as the fleet last applied it (s.env), or as
// the examples have it.
func (s *scenarios) dropEnvironment(d time.Duration, xrs []*fleetXR) (int, error) {
	configs := fntest.MustLoad(filepath.Join(s.examples, "envconfigs"))
	for i, o := range configs {
		if e, ok := s.env[str(o, "metadata", "name")]; ok {
			configs[i] = e
		}
	}
	for _, o := range configs {
		if err := s.k.delete(o["apiVersion"].(string), o["kind"].(string), "", str(o, "metadata", "name")); err != nil {
			return 0, err
		}
	}
	time.Sleep(d)
	hit, err := s.notSynced(xrs)
	if err != nil {
		return 0, err
	}
	for _, o := range configs {
		if err := s.k.apply(o); err != nil {
			return 0, err
		}
	}
	return hit, nil
}

// waitFleet waits until every XR has the conditions True, recording when
// each first had them; it returns how long all took.
func (s *scenarios) waitFleet(xrs []*fleetXR, start time.Time, conds ...string) (time.Duration, error) {
	// One watch per kind, as an informer: a list, then what changes. A
	// list of every XR every few seconds would cost the API server more
	// the larger the fleet (N XRs listed N-proportional times) and so
	// measure the driver, not the stack.
	type key struct{ apiVersion, kind, namespace, name string }
	var mu sync.Mutex
	met := map[key]bool{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kinds := map[[2]string]bool{}
	// Read once, here: the watches outlive this call by an instant.
	changes := s.changes
	for _, x := range xrs {
		x.readyAt = 0
		k := [2]string{x.apiVersion, x.kind}
		if kinds[k] {
			continue
		}
		kinds[k] = true
		go s.k.watchEvents(ctx, x.apiVersion, x.kind, "", func(typ string, o object) { //nolint:errcheck // ends with ctx
			all := typ != "DELETED"
			for _, c := range conds {
				st, _, _ := condition(o, c)
				all = all && st == "True"
			}
			mu.Lock()
			met[key{x.apiVersion, x.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name")}] = all
			mu.Unlock()
			if changes != nil {
				changes.observe(typ, o)
			}
		})
	}
	last := time.Now()
	for {
		left := 0
		mu.Lock()
		for _, x := range xrs {
			if x.readyAt == 0 && met[key{x.apiVersion, x.kind, x.namespace, x.name}] {
				x.readyAt = time.Since(start)
			}
			if x.readyAt == 0 {
				left++
			}
		}
		mu.Unlock()
		if left == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > s.timeout {
			return 0, fmt.Errorf("%d of %d XRs not %s after %s", left, len(xrs), strings.Join(conds, " and "), s.timeout)
		}
		if time.Since(last) > 30*time.Second {
			fmt.Printf("fleet: %d of %d XRs %s after %.0f s\n", len(xrs)-left, len(xrs), strings.Join(conds, " and "), time.Since(start).Seconds())
			last = time.Now()
		}
		time.Sleep(time.Second)
	}
}

// composedSet is what the fleet composed: resources by UID, and XRs.
type composedSet struct {
	uids      map[string]bool
	resources int
	// usages is how many of the resources are Usages or ClusterUsages.
	usages int
	xrs    int
}

// composedUIDs counts what the fleet composed. A loaded API server may not
// answer one of its lists in time, and a count must be whole, so a failed
// count is taken again, up to five times, 10 s apart.
func (s *scenarios) composedUIDs(c *cloud) (composedSet, error) {
	var err error
	for range 5 {
		var out composedSet
		if out, err = s.composedOnce(c); err == nil {
			return out, nil
		}
		fmt.Printf("fleet: cannot count the composed resources, again in 10 s: %v\n", err)
		time.Sleep(10 * time.Second)
	}
	return composedSet{}, fmt.Errorf("cannot count the composed resources: %w", err)
}

// composedOnce lists every resource Crossplane labels with a composite:
// the providers' managed resources, Objects, Usages and nested XRs.
func (s *scenarios) composedOnce(c *cloud) (composedSet, error) {
	out := composedSet{uids: map[string]bool{}}
	kinds := append(slices.Clone(c.kinds), []kindRef{
		{"kubernetes.m.crossplane.io/v1alpha1", "Object"}, {"kubernetes.crossplane.io/v1alpha2", "Object"},
		{"kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig"}, {"kubernetes.crossplane.io/v1alpha1", "ProviderConfig"},
		{"helm.m.crossplane.io/v1beta1", "ProviderConfig"}, {"helm.crossplane.io/v1beta1", "ProviderConfig"},
		{"protection.crossplane.io/v1beta1", "Usage"}, {"protection.crossplane.io/v1beta1", "ClusterUsage"},
		{"platform.example.org/v1alpha1", "Database"}, {"platform.example.org/v1alpha1", "WorkloadBudget"},
		{"legacy.platform.example.org/v1alpha1", "XDatabase"},
	}...)
	for _, k := range kinds {
		items, err := s.k.list(k.apiVersion, k.kind, "", xr.LabelComposite)
		if err != nil {
			return out, err
		}
		for _, o := range items {
			out.uids[str(o, "metadata", "uid")] = true
			out.resources++
			if k.kind == "Usage" || k.kind == "ClusterUsage" {
				out.usages++
			}
		}
	}
	for _, k := range []kindRef{
		{"platform.example.org/v1alpha1", "Cluster"}, {"platform.example.org/v1alpha1", "Database"}, {"platform.example.org/v1alpha1", "AppEnvironment"},
		{"platform.example.org/v1alpha1", "WorkloadBudget"}, {"legacy.platform.example.org/v1alpha1", "XCluster"}, {"legacy.platform.example.org/v1alpha1", "XDatabase"},
	} {
		items, err := s.k.list(k.apiVersion, k.kind, "", "")
		if err != nil {
			return out, err
		}
		out.xrs += len(items)
	}
	return out, nil
}

// xrChanges counts, from the watch events of the fleet's top-level XRs,
// how often each was written while converging and which of its fields
// each write changed (two levels deep: status.conditions,
// metadata.annotations, spec.crossplane, ...): a write re-runs the XR
// and every XR that requires it.
type xrChanges struct {
	mu     sync.Mutex
	start  time.Time
	last   map[string]object
	writes map[string]int
	fields map[string]map[string]int
	// back counts, by kind, the writes that put a condition back to what
	// it was before the write before (A, B, A): Crossplane applied the
	// conditions of a copy of the XR older than the last it wrote, or the
	// write after that undid it. earlier holds, by XR and condition type,
	// the value the last change replaced.
	back    map[string]int
	earlier map[string]map[string]string
	// traced are the first tracedPerKind XRs of each kind seen, whose
	// every change of a condition or of the generation goes to trace.
	traced map[string]bool
	kinds  map[string]int
	trace  []string
}

// tracedPerKind is how many XRs of each kind the fleet's trace follows.
const tracedPerKind = 3

// observe records one watch event of an XR.
func (c *xrChanges) observe(typ string, o object) {
	kind, _ := o["kind"].(string)
	key := kind + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last, c.writes, c.fields = map[string]object{}, map[string]int{}, map[string]map[string]int{}
		c.back, c.earlier, c.traced, c.kinds = map[string]int{}, map[string]map[string]string{}, map[string]bool{}, map[string]int{}
	}
	prev, seen := c.last[key]
	c.last[key] = o
	if !seen && c.kinds[kind] < tracedPerKind {
		c.kinds[kind]++
		c.traced[key] = true
	}
	if typ != "MODIFIED" || !seen {
		return
	}
	c.writes[kind]++
	if c.fields[kind] == nil {
		c.fields[kind] = map[string]int{}
	}
	changed := changedFields(prev, o)
	for _, f := range changed {
		c.fields[kind][f]++
	}
	if c.putBack(key, prev, o) {
		c.back[kind]++
	}
	if c.traced[key] {
		c.trace = append(c.trace, traceLines(time.Since(c.start), key, changed, o)...)
	}
}

// putBack reports whether the write from prev to o put one of the XR's
// conditions back to the value it had before prev, and records what this
// write replaced. A condition's value is all of it but its
// lastTransitionTime.
func (c *xrChanges) putBack(key string, prev, o object) bool {
	a, b := conditionValues(prev), conditionValues(o)
	if c.earlier[key] == nil {
		c.earlier[key] = map[string]string{}
	}
	back := false
	for t, v := range b {
		if v == a[t] {
			continue
		}
		if e, ok := c.earlier[key][t]; ok && e == v {
			back = true
		}
		c.earlier[key][t] = a[t]
	}
	return back
}

// conditionValues are o's conditions by type, each as its fields but
// lastTransitionTime.
func conditionValues(o object) map[string]string {
	out := map[string]string{}
	l, _ := at(o, "status", "conditions").([]any)
	for _, c := range l {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		out[t] = fmt.Sprint(m["status"], "|", m["reason"], "|", m["message"], "|", m["observedGeneration"])
	}
	return out
}

// traceLines says, for the trace, what a write of the XR o changed: each
// condition as it now is, and the generation.
func traceLines(since time.Duration, key string, changed []string, o object) []string {
	conds := map[string]map[string]any{}
	l, _ := at(o, "status", "conditions").([]any)
	for _, c := range l {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		conds[t] = m
	}
	var out []string
	for _, f := range changed {
		what := f
		if t, ok := strings.CutPrefix(f, "status.conditions["); ok {
			t = strings.TrimSuffix(t, "]")
			m := conds[t]
			what = fmt.Sprintf("[%s] %v %v (generation %v/%v): %v", t, m["status"], m["reason"], m["observedGeneration"], at(o, "metadata", "generation"), m["message"])
		}
		out = append(out, fmt.Sprintf("%7.1f s %s %s", since.Seconds(), key, what))
	}
	return out
}

// writeTrace writes the trace to path, grouped by XR.
func (c *xrChanges) writeTrace(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := slices.Clone(c.trace)
	slices.SortStableFunc(lines, func(a, b string) int { return cmp.Compare(strings.Fields(a)[2], strings.Fields(b)[2]) })
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("cannot write the fleet's trace: %w", err)
	}
	fmt.Printf("  the conditions of %d XRs as they changed: %s\n", len(c.traced), path)
	return nil
}

// changedFields lists the fields two levels deep in which b differs from
// a, leaving out what every write changes (resourceVersion, managedFields),
// and the conditions by type.
func changedFields(a, b object) []string {
	var out []string
	for _, top := range []string{"metadata", "spec", "status"} {
		am, _ := a[top].(map[string]any)
		bm, _ := b[top].(map[string]any)
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			if top == "metadata" && (k == "resourceVersion" || k == "managedFields") {
				continue
			}
			if reflect.DeepEqual(am[k], bm[k]) {
				continue
			}
			if top == "status" && k == "conditions" {
				out = append(out, changedConditions(am[k], bm[k])...)
				continue
			}
			out = append(out, top+"."+k)
		}
	}
	return out
}

// changedConditions lists the types of the conditions that differ
// between a and b other than in their lastTransitionTime, each as
// status.conditions[Type].
func changedConditions(a, b any) []string {
	byType := func(v any) map[string]map[string]any {
		out := map[string]map[string]any{}
		l, _ := v.([]any)
		for _, c := range l {
			m, _ := c.(map[string]any)
			t, _ := m["type"].(string)
			m = maps.Clone(m)
			delete(m, "lastTransitionTime")
			out[t] = m
		}
		return out
	}
	am, bm := byType(a), byType(b)
	var out []string
	for t := range bm {
		if !reflect.DeepEqual(am[t], bm[t]) {
			out = append(out, "status.conditions["+t+"]")
		}
	}
	for t := range am {
		if _, ok := bm[t]; !ok {
			out = append(out, "status.conditions["+t+"]")
		}
	}
	return out
}

// print says, per kind, the writes per XR applied of that kind and the
// fields they changed most often.
func (c *xrChanges) print() {
	c.mu.Lock()
	defer c.mu.Unlock()
	perKind := map[string]int{}
	for key := range c.last {
		kind, _, _ := strings.Cut(key, "/")
		perKind[kind]++
	}
	for _, kind := range slices.Sorted(maps.Keys(c.writes)) {
		xrs := float64(perKind[kind])
		fields := c.fields[kind]
		names := slices.SortedFunc(maps.Keys(fields), func(a, b string) int { return cmp.Or(cmp.Compare(fields[b], fields[a]), cmp.Compare(a, b)) })
		var top []string
		for _, f := range names[:min(8, len(names))] {
			top = append(top, fmt.Sprintf("%s %.1f", f, float64(fields[f])/xrs))
		}
		fmt.Printf("  writes per %s until all Ready: %.1f (%.1f of them put a condition back to its value before the last); fields they changed, per XR: %s\n",
			kind, float64(c.writes[kind])/xrs, float64(c.back[kind])/xrs, strings.Join(top, ", "))
	}
}
