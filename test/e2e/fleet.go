package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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
		fmt.Println("FLEET PASSED (no faults injected: -faults=false)")
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
