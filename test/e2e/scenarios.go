package main

import (
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules/database"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// scenarios drive XRs through a real Crossplane and check what it did
// against the API server.
type scenarios struct {
	k        *kube
	c        *cloud
	examples string
	timeout  time.Duration
	// results collects one line per scenario for the summary.
	results []string
	// refused counts the deletes the simulated cloud refused during the
	// XR deletes, by cloud.
	refused map[string]int
	// changes, when set, counts what changed in the fleet's XRs while
	// waitFleet follows them.
	changes *xrChanges
	// work is run.sh's work folder (pid files, start scripts) and metrics
	// the function's metrics endpoint; "" when not given.
	work, metrics string
	// env are EnvironmentConfigs, by name, that stand in for the
	// examples' of the same name when a fault applies the environment
	// again (dropEnvironment): what the fleet's rollout last applied.
	env map[string]object
}

// waitFor polls cond until it holds or the timeout passes.
func (s *scenarios) waitFor(what string, cond func() (bool, error)) (time.Duration, error) {
	start := time.Now()
	var last error
	for time.Since(start) < s.timeout {
		ok, err := cond()
		if ok {
			return time.Since(start), nil
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	return 0, fmt.Errorf("timed out after %s waiting for %s (last error: %w)", s.timeout, what, last)
}

// composedRef is a composed resource as the XR's resourceRefs list it.
type composedRef struct {
	apiVersion, kind, name string
}

// resourceRefs returns an XR's composed resources: spec.crossplane.resourceRefs
// of a v2 XR, spec.resourceRefs of a legacy one.
func resourceRefs(xr object) []composedRef {
	spec, _ := xr["spec"].(map[string]any)
	refs, _ := spec["resourceRefs"].([]any)
	if cp, ok := spec["crossplane"].(map[string]any); ok {
		refs, _ = cp["resourceRefs"].([]any)
	}
	out := make([]composedRef, 0, len(refs))
	for _, r := range refs {
		m := r.(map[string]any)
		n, _ := m["name"].(string)
		out = append(out, composedRef{m["apiVersion"].(string), m["kind"].(string), n})
	}
	return out
}

// expected converges the XR with the function in process, with the
// example environment, and returns the composition-resource names of the
// whole stack by kind: what the real control plane must end up with.
func (s *scenarios) expected(xr object) (map[string]string, error) {
	rsp, _, _, err := xpsim.Converge(bench.Run, xpsim.Request{
		XR:                 xr,
		EnvironmentConfigs: fntest.MustLoad(filepath.Join(s.examples, "envconfigs")),
		Spend:              fntest.MustLoad(filepath.Join(s.examples, "spend")),
	}, 30)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, o := range xpsim.Desired(rsp) {
		out[name] = o["kind"].(string)
	}
	return out, nil
}

// lifecycle creates an example XR and takes it through its life: Ready with
// the whole inventory, owned by the XR, with Usages, status and conditions;
// during, when set, while it is Ready; a pool resized in place; a pool
// removed, taking only its resources; the XR deleted, taking everything.
func (s *scenarios) lifecycle(example string, resize, remove string, minPath []string, during func() error) error {
	xr := fntest.MustLoad(filepath.Join(s.examples, example))[0]
	meta := xr["metadata"].(map[string]any)
	delete(meta, "creationTimestamp")
	name, ns := meta["name"].(string), str(xr, "metadata", "namespace")
	apiVersion, kind := xr["apiVersion"].(string), xr["kind"].(string)
	want, err := s.expected(overlay.DeepCopy(xr))
	if err != nil {
		return fmt.Errorf("cannot converge %s in process: %w", example, err)
	}

	if err := s.k.apply(xr); err != nil {
		return fmt.Errorf("cannot create %s: %w", example, err)
	}
	var live object
	readyIn, err := s.waitFor(example+" Ready", func() (bool, error) {
		live, err = s.k.get(apiVersion, kind, ns, name)
		if err != nil {
			return false, err
		}
		st, reason, msg := condition(live, "Ready")
		return st == "True", fmt.Errorf("condition Ready is %q (%s): %s", st, reason, msg)
	})
	if err != nil {
		return err
	}
	fmt.Printf("  %s: created -> Ready in %.1f s\n", example, readyIn.Seconds())

	composed, err := s.checkInventory(live, want)
	if err != nil {
		return err
	}
	if err := checkStatus(live); err != nil {
		return err
	}
	if during != nil {
		if err := during(); err != nil {
			return err
		}
	}

	spec := xr["spec"].(map[string]any)["parameters"].(map[string]any)
	if paused, _ := at(live, "status", "budget", "paused").(bool); paused {
		if err := s.unbudget(xr, ns, composed, maxPath[cloudOf(example)]); err != nil {
			return err
		}
	}

	// Resize a pool: its node pool is updated in place.
	pool := composed["nodepool-"+resize]
	p := spec["pools"].(map[string]any)[resize].(map[string]any)
	newMin := p["minNodes"].(float64) + 1
	p["minNodes"] = newMin
	p["maxNodes"] = p["maxNodes"].(float64) + 1
	if err := s.k.apply(xr); err != nil {
		return err
	}
	took, err := s.waitFor("nodepool-"+resize+" resized", func() (bool, error) {
		o, err := s.k.get(pool.apiVersion, pool.kind, ns, pool.name)
		if err != nil {
			return false, err
		}
		cur := at(o, minPath...)
		return cur == newMin, fmt.Errorf("%s = %v", strings.Join(minPath, "."), cur)
	})
	if err != nil {
		return err
	}
	fmt.Printf("  %s: pool %s resized in place (%s %s/%s) in %.1f s\n", example, resize, pool.kind, ns, pool.name, took.Seconds())

	// Day two: an upgrade and a rotation.
	if d2, ok := dayTwoPools[example]; ok {
		if composed, err = s.dayTwo(xr, d2[0], d2[1]); err != nil {
			return fmt.Errorf("%s: day two: %w", example, err)
		}
	}

	// Remove a pool: only its resources go.
	if remove != "" {
		delete(spec["pools"].(map[string]any), remove)
		if err := s.k.apply(xr); err != nil {
			return err
		}
		gone := map[string]bool{}
		for crname := range composed {
			if crname == "nodepool-"+remove || strings.HasPrefix(crname, "nodepool-"+remove+"-uses-") || strings.HasSuffix(crname, "-uses-nodepool-"+remove) {
				gone[crname] = true
			}
		}
		took, err := s.waitFor("pool "+remove+" removed", func() (bool, error) {
			for crname := range gone {
				r := composed[crname]
				if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); err == nil {
					return false, fmt.Errorf("%s still exists", crname)
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		for crname, r := range composed {
			if gone[crname] {
				continue
			}
			if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); err != nil {
				return fmt.Errorf("removing pool %s took %s (%s %s) with it: %w", remove, crname, r.kind, r.name, err)
			}
		}
		fmt.Printf("  %s: pool %s removed with its %d resources, the other %d kept, in %.1f s\n", example, remove, len(gone), len(composed)-len(gone), took.Seconds())
	}

	// Delete the XR: everything it composed goes, in the order the
	// clouds, the providers and the Usages impose.
	n := len(composed)
	line, summary, err := s.deleteXR(example, apiVersion, kind, ns, name, composed)
	if err != nil {
		return err
	}
	fmt.Printf("  %s: %s\n", example, line)
	s.results = append(s.results, fmt.Sprintf("%-30s Ready in %5.1f s, %3d composed resources, %s", example, readyIn.Seconds(), n, summary))
	return nil
}

// cloudOf is the cloud of an example, by its folder.
func cloudOf(example string) string { return strings.Split(example, "/")[0] }

// unbudget removes the budget of a Cluster its budget paused: every pool's
// node pool returns to its maximum, and only the budget's resources go.
func (s *scenarios) unbudget(xr object, ns string, composed map[string]composedRef, maxPath []string) error {
	spec := xr["spec"].(map[string]any)["parameters"].(map[string]any)
	pools := spec["pools"].(map[string]any)
	floors := map[string]any{}
	for name := range pools {
		r := composed["nodepool-"+name]
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			return err
		}
		floors[name] = at(o, maxPath...)
	}
	delete(spec, "budget")
	if err := s.k.apply(xr); err != nil {
		return err
	}
	took, err := s.waitFor("pools back at their maximum", func() (bool, error) {
		for name, p := range pools {
			r := composed["nodepool-"+name]
			o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
			if err != nil {
				return false, err
			}
			if got := at(o, maxPath...); got != p.(map[string]any)["maxNodes"] {
				return false, fmt.Errorf("nodepool-%s %s = %v", name, strings.Join(maxPath, "."), got)
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	var back []string
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		back = append(back, fmt.Sprintf("%s %v -> %v", name, floors[name], pools[name].(map[string]any)["maxNodes"]))
	}
	for crname := range composed {
		if crname == "budget" || strings.HasPrefix(crname, "budget-uses-") || strings.HasSuffix(crname, "-uses-budget") {
			delete(composed, crname)
		}
	}
	fmt.Printf("  %s: paused by its budget; budget removed from the spec, pools back at their maximum (%s) in %.1f s\n", str(xr, "metadata", "name"), strings.Join(back, ", "), took.Seconds())
	s.results = append(s.results, fmt.Sprintf("budget: %-28s %s node pools %s", "Cluster budget removed", str(xr, "metadata", "name"), strings.Join(back, ", ")))
	return nil
}

// checkInventory checks that the XR composed exactly the expected stack, in
// its namespace, each controlled by the XR, with a Usage for every edge. It
// returns the composed resources by composition-resource name.
func (s *scenarios) checkInventory(xr object, want map[string]string) (map[string]composedRef, error) {
	ns := str(xr, "metadata", "namespace")
	uid := str(xr, "metadata", "uid")
	got := map[string]composedRef{}
	kinds := map[string]string{}
	for _, r := range resourceRefs(xr) {
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			return nil, fmt.Errorf("composed %s %s: %w", r.kind, r.name, err)
		}
		crname := str(o, "metadata", "annotations", "crossplane.io/composition-resource-name")
		got[crname] = r
		kinds[crname] = r.kind
		if str(o, "metadata", "namespace") != ns {
			return nil, fmt.Errorf("%s is in namespace %q, not the XR's %q", crname, str(o, "metadata", "namespace"), ns)
		}
		owned := false
		refs, _ := o["metadata"].(map[string]any)["ownerReferences"].([]any)
		for _, ref := range refs {
			m := ref.(map[string]any)
			if m["uid"] == uid && m["controller"] == true {
				owned = true
			}
		}
		if !owned {
			return nil, fmt.Errorf("%s (%s %s) is not controlled by the XR", crname, r.kind, r.name)
		}
	}
	if missing, extra := diff(want, kinds); len(missing)+len(extra) > 0 {
		return nil, fmt.Errorf("composed stack differs from the function's converged inventory: missing %v, unexpected %v", missing, extra)
	}
	usages := 0
	for crname, k := range kinds {
		if strings.Contains(crname, "-uses-") {
			if k != "Usage" && k != "ClusterUsage" {
				return nil, fmt.Errorf("%s is a %s, not a Usage", crname, k)
			}
			usages++
		}
	}
	fmt.Printf("  %s: %d composed resources as expected, all controlled by the XR, %d Usages\n", str(xr, "metadata", "name"), len(got), usages)
	return got, nil
}

func diff(want, got map[string]string) (missing, extra []string) {
	for n, k := range want {
		if got[n] != k {
			missing = append(missing, n+" "+k)
		}
	}
	for n, k := range got {
		if want[n] != k {
			extra = append(extra, n+" "+k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// checkStatus checks the XR's status fields and custom conditions.
func checkStatus(xr object) error {
	st, _ := xr["status"].(map[string]any)
	for _, f := range []string{"clusterEndpoint", "oidcIssuer"} {
		if s, _ := st[f].(string); s == "" {
			return fmt.Errorf("status.%s is empty", f)
		}
	}
	if str(xr, "spec", "parameters", "domain") != "" {
		if ns, _ := st["dnsNameServers"].([]any); len(ns) == 0 {
			return fmt.Errorf("status.dnsNameServers is empty")
		}
	}
	pools, _ := st["nodePools"].([]any)
	for _, p := range pools {
		if p.(map[string]any)["ready"] != true {
			return fmt.Errorf("status.nodePools: %v not ready", p)
		}
	}
	for _, c := range []string{"NetworkReady", "ClusterReady", "NodePoolsReady", "AddonsReady", "DnsReady"} {
		if s, r, m := condition(xr, c); s != "True" {
			return fmt.Errorf("condition %s is %s (%s): %s", c, s, r, m)
		}
	}
	fmt.Printf("  %s: status endpoint %s, OIDC issuer, %d pools ready, conditions %s\n", str(xr, "metadata", "name"), st["clusterEndpoint"], len(pools),
		strings.Join(slices.Sorted(maps.Keys(map[string]bool{"NetworkReady": true, "ClusterReady": true, "NodePoolsReady": true, "AddonsReady": true, "DnsReady": true})), ", ")+" True")
	return nil
}

// onCluster creates an example XR of a module that runs on, or joins, the
// example Cluster of clusterCloud (which must be Ready; "" for none) and
// takes it through its life: Ready with exactly the stack the module's run
// converges to in process, owned by the XR, with the status fields it must
// fill; when change is set, a spec change whose removals (the names change
// returns) go, and only they; then deleted, taking everything it composed.
// The real Crossplane delivers the Cluster and its composed resources to
// the function by the selectors the XR asks with, which is what this
// proves beyond a render.
func (s *scenarios) onCluster(example, clusterCloud string, run xpsim.Runner, reader *clusterref.Reader, fields []string, verify func(live object) error, change func(xr object) []string) error {
	xr := fntest.MustLoad(filepath.Join(s.examples, example))[0]
	name, ns := str(xr, "metadata", "name"), str(xr, "metadata", "namespace")
	apiVersion, kind := xr["apiVersion"].(string), xr["kind"].(string)
	// Its deletion is to complete: what keeps it from that by design is
	// turned off.
	unprotected := unprotect(xr)
	req := xpsim.Request{XR: overlay.DeepCopy(xr), EnvironmentConfigs: fntest.MustLoad(filepath.Join(s.examples, "envconfigs"))}
	if clusterCloud != "" {
		extra, err := fntest.Required(s.examples, clusterCloud, xr, reader)
		if err != nil {
			return err
		}
		req.Extra = extra
	}
	rsp, _, _, err := xpsim.Converge(run, req, 30)
	if err != nil {
		return fmt.Errorf("cannot converge %s in process: %w", example, err)
	}
	want := map[string]string{}
	for crname, o := range xpsim.Desired(rsp) {
		want[crname] = o["kind"].(string)
	}

	if err := s.k.apply(xr); err != nil {
		return fmt.Errorf("cannot create %s: %w", example, err)
	}
	var live object
	readyIn, err := s.waitFor(example+" Ready", func() (bool, error) {
		live, err = s.k.get(apiVersion, kind, ns, name)
		if err != nil {
			return false, err
		}
		st, reason, msg := condition(live, "Ready")
		return st == "True", fmt.Errorf("condition Ready is %q (%s): %s", st, reason, msg)
	})
	if err != nil {
		return err
	}
	composed, err := s.checkInventory(live, want)
	if err != nil {
		return err
	}
	var got []string
	for _, f := range fields {
		v := str(live, "status", f)
		if v == "" {
			return fmt.Errorf("%s: status.%s is empty: %v", example, f, live["status"])
		}
		got = append(got, f+" "+v)
	}
	if unprotected != "" {
		got = append(got, unprotected)
	}
	fmt.Printf("  %s: created -> Ready in %.1f s, %d composed resources as expected; %s\n", example, readyIn.Seconds(), len(composed), strings.Join(got, ", "))
	if verify != nil {
		if err := verify(live); err != nil {
			return fmt.Errorf("%s: %w", example, err)
		}
	}

	if change != nil {
		gone := map[string]bool{}
		for _, r := range change(xr) {
			for crname := range composed {
				if crname == r || strings.HasPrefix(crname, r+"-uses-") || strings.HasSuffix(crname, "-uses-"+r) {
					gone[crname] = true
				}
			}
		}
		if err := s.k.apply(xr); err != nil {
			return err
		}
		took, err := s.waitFor(example+" spec change", func() (bool, error) {
			for crname := range gone {
				r := composed[crname]
				if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); err == nil {
					return false, fmt.Errorf("%s still exists", crname)
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		for crname, r := range composed {
			if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); err != nil && !gone[crname] {
				return fmt.Errorf("the spec change took %s (%s %s) with it: %w", crname, r.kind, r.name, err)
			}
		}
		fmt.Printf("  %s: the spec removed %d resources, the other %d kept, in %.1f s\n", example, len(gone), len(composed)-len(gone), took.Seconds())
	}

	n := len(composed)
	line, summary, err := s.deleteXR(example, apiVersion, kind, ns, name, composed)
	if err != nil {
		return err
	}
	fmt.Printf("  %s: %s\n", example, line)
	s.results = append(s.results, fmt.Sprintf("%-30s Ready in %5.1f s, %3d composed resources, %s", example, readyIn.Seconds(), n, summary))
	return nil
}

// unprotect turns off what keeps an example's deletion from completing by
// design, and says what it changed: a Database's deletion protection (on
// by default: AWS and GCP refuse to delete the instance, Azure's is left
// in the cloud), an AppEnvironment's deletionPolicy Orphan (its bucket
// left, its database protected).
func unprotect(x object) string {
	par, _ := at(x, "spec", "parameters").(map[string]any)
	switch x["kind"] {
	case "Database", "XDatabase":
		if on, set := par["deletionProtection"].(bool); on || !set {
			par["deletionProtection"] = false
			return "deletionProtection false (on by default)"
		}
	case "AppEnvironment", "XAppEnvironment":
		if par["deletionPolicy"] == "Orphan" {
			par["deletionPolicy"] = "Delete"
			return "deletionPolicy Delete (the example's is Orphan)"
		}
	}
	return ""
}

// appWorkload checks what an AppEnvironment put on its cluster, as
// provider-kubernetes applied it: the backend Deployment in the
// environment's namespace, available, reading the database's connection
// Secret through envFrom, and that Secret holding the database's host.
func (s *scenarios) appWorkload(live object) error {
	ns := str(live, "status", "namespace")
	d, err := s.k.get("apps/v1", "Deployment", ns, appenvironment.BackendName)
	if err != nil {
		return fmt.Errorf("the backend Deployment in namespace %s: %w", ns, err)
	}
	tmpl := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := tmpl["containers"].([]any)[0].(map[string]any)
	envFrom, _ := c["envFrom"].([]any)
	if len(envFrom) != 1 || str(envFrom[0].(map[string]any), "secretRef", "name") != appenvironment.ConnectionSecret {
		return fmt.Errorf("the backend's envFrom is %v, not the Secret %s", envFrom, appenvironment.ConnectionSecret)
	}
	sec, err := s.k.get("v1", "Secret", ns, appenvironment.ConnectionSecret)
	if err != nil {
		return fmt.Errorf("the connection Secret: %w", err)
	}
	host, _ := base64.StdEncoding.DecodeString(str(sec, "data", "DB_HOST"))
	if string(host) != str(live, "status", "databaseHost") || str(sec, "data", "DB_PASSWORD") == "" {
		return fmt.Errorf("the connection Secret has DB_HOST %q (want %q) and a password: %t", host, str(live, "status", "databaseHost"), str(sec, "data", "DB_PASSWORD") != "")
	}
	fmt.Printf("  %s: Deployment %s/%s available (%d/%d), envFrom Secret %s (DB_HOST %s, DB_PASSWORD set), ServiceAccount %s\n", str(live, "metadata", "name"), ns, appenvironment.BackendName,
		num(d, "status", "availableReplicas"), num(d, "spec", "replicas"), appenvironment.ConnectionSecret, host, tmpl["serviceAccountName"])
	return nil
}

// runDatabase and runEnvironment are what fn.go does for the database and
// environment modules.
func runDatabase(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	return runModule(database.Run, req)
}

func runEnvironment(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	return runModule(appenvironmentrun.Run, req)
}

func runModule(f response.Func, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.New(req, bench.Options.TTLConverging)
	if err := f(req, rsp, bench.Options); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp
}
