package main

import (
	"encoding/base64"
	"errors"
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
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
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
	rsp, _, _, err := fntest.Converge(bench.Run, fntest.Request{
		XR:                 xr,
		EnvironmentConfigs: fntest.MustLoad(filepath.Join(s.examples, "envconfigs")),
		Spend:              fntest.MustLoad(filepath.Join(s.examples, "spend")),
	}, 30)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, o := range fntest.Desired(rsp) {
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

// deleteBound is how long an XR's deletion may take until everything it
// composed is gone.
const deleteBound = 3 * time.Minute

// deleteXR deletes an XR and waits, within deleteBound, until it and
// everything it composed are gone, and nothing labelled with it is left on
// a finalizer; it checks the order they went in (deletionOrder) and
// returns the line that says how long it took, what the simulated cloud
// refused meanwhile and the order.
func (s *scenarios) deleteXR(example, apiVersion, kind, ns, name string, composed map[string]composedRef) (line, summary string, err error) {
	// What a pool's removal or a spec change removed is gone already.
	snap := map[string]object{}
	for crname, r := range maps.Clone(composed) {
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if errors.Is(err, errNotFound) {
			delete(composed, crname)
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("composed %s (%s %s) before the delete: %w", crname, r.kind, r.name, err)
		}
		snap[crname] = o
	}
	// Nothing an earlier delete left in the cloud may be in the way of
	// this one: the cloud would refuse it for good (a range left in a
	// network keeps the network), and only an operator could finish it.
	if in := s.c.abandonedReferencing(slices.Collect(maps.Values(snap))); len(in) > 0 {
		var what []string
		for _, o := range in {
			what = append(what, fmt.Sprintf("%s %s (of %s)", o["kind"], extName(o), str(o, "metadata", "labels", xr.LabelComposite)))
		}
		return "", "", fmt.Errorf("%s: left in the cloud by earlier deletes, in the way of this one, which the cloud would refuse for good: %s", example, strings.Join(what, ", "))
	}
	before := s.c.del.tally()
	if err := s.k.delete(apiVersion, kind, ns, name); err != nil {
		return "", "", err
	}
	// Each poll round checks every composed resource that is left; what
	// it finds gone is recorded at the round's start, so that of two
	// resources gone in order the first is never recorded later.
	start := time.Now()
	goneAt := map[string]time.Duration{}
	for {
		round := time.Since(start)
		var left []string
		for crname, r := range composed {
			if _, ok := goneAt[crname]; ok {
				continue
			}
			if _, err := s.k.get(r.apiVersion, r.kind, ns, r.name); errors.Is(err, errNotFound) {
				goneAt[crname] = round
				continue
			}
			left = append(left, crname)
		}
		_, err := s.k.get(apiVersion, kind, ns, name)
		// Once they are, nothing labelled with the XR may be left: what
		// nested XRs composed goes after them.
		var stuck error
		if len(left) == 0 && errors.Is(err, errNotFound) {
			if stuck = s.leftovers(name, ns, false); stuck == nil {
				break
			}
		}
		if time.Since(start) > deleteBound {
			if stuck != nil {
				return "", "", fmt.Errorf("%s not deleted within %s: %w", example, deleteBound, s.leftovers(name, ns, true))
			}
			return "", "", fmt.Errorf("%s not deleted within %s: the XR gone: %t; %d composed resources left: %s", example, deleteBound, errors.Is(err, errNotFound), len(left), s.why(composed, left, ns))
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(start)
	if err := s.othersUsed(snap, ns); err != nil {
		return "", "", fmt.Errorf("%s: %w", example, err)
	}
	t := s.c.del.tally().since(before)
	if len(t.stuck) > 0 || len(t.protected) > 0 {
		return "", "", fmt.Errorf("%s: deletes failed for good meanwhile (%s), or were refused for deletion protection (%s)", example, counts(t.stuck), counts(t.protected))
	}
	s.refused[cloudOf(example)] += total(t.refused)
	order, err := deletionOrder(cloudOf(example), snap, goneAt)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", example, err)
	}
	line = fmt.Sprintf("deleted, all %d composed resources gone in %.1f s (bound %s); %s", len(composed), took.Seconds(), deleteBound, t)
	if order != "" {
		line += "; " + order
	}
	return line, fmt.Sprintf("deleted in %5.1f s; %s", took.Seconds(), t), nil
}

// othersUsed checks that what the XR's Usages held of other XRs (a
// Database's instance, its Cluster's private services connection) is still
// there once the XR is gone: a Usage keeps what it protects, it never
// takes it along.
func (s *scenarios) othersUsed(snap map[string]object, ns string) error {
	for _, uName := range slices.Sorted(maps.Keys(snap)) {
		u := snap[uName]
		if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
			continue
		}
		of, _ := at(u, "spec", "of").(map[string]any)
		if own, _ := at(of, "resourceSelector", "matchControllerRef").(bool); own {
			continue
		}
		ml, _ := at(of, "resourceSelector", "matchLabels").(map[string]any)
		var sel []string
		for _, k := range slices.Sorted(maps.Keys(ml)) {
			sel = append(sel, fmt.Sprintf("%s=%v", k, ml[k]))
		}
		items, err := s.k.list(of["apiVersion"].(string), of["kind"].(string), ns, strings.Join(sel, ","))
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fmt.Errorf("usage %s held a %s of another XR (%s), which is gone with this XR", uName, of["kind"], strings.Join(sel, ","))
		}
	}
	return nil
}

// why describes the composed resources left: their finalizers and why
// their provider says they are not deleted.
func (s *scenarios) why(composed map[string]composedRef, left []string, ns string) string {
	slices.Sort(left)
	var out []string
	for _, crname := range left {
		r := composed[crname]
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			out = append(out, fmt.Sprintf("%s (%s): %v", crname, r.kind, err))
			continue
		}
		_, _, msg := condition(o, "Synced")
		out = append(out, fmt.Sprintf("%s (%s %s, deleting: %t, finalizers %v, in use: %s): %s", crname, r.kind, r.name,
			str(o, "metadata", "deletionTimestamp") != "", at(o, "metadata", "finalizers"), str(o, "metadata", "labels", "crossplane.io/in-use"), msg))
	}
	return strings.Join(out, "; ")
}

// leftovers fails when anything labelled with the XR as its composite is
// left: a managed resource, a ProviderConfig, an Object or a Usage, of a
// nested XR too, on a finalizer; all, or the first kind found.
func (s *scenarios) leftovers(name, ns string, all bool) error {
	kinds := slices.Clone(s.c.kinds)
	for _, kr := range s.c.pcKinds {
		kinds = append(kinds, kr)
	}
	kinds = append(kinds, kindRef{"kubernetes.m.crossplane.io/v1alpha1", "Object"}, kindRef{"kubernetes.crossplane.io/v1alpha2", "Object"},
		kindRef{"kubernetes.m.crossplane.io/v1alpha1", "ProviderConfig"}, kindRef{"kubernetes.crossplane.io/v1alpha1", "ProviderConfig"},
		kindRef{"protection.crossplane.io/v1beta1", "Usage"}, kindRef{"protection.crossplane.io/v1beta1", "ClusterUsage"})
	var left []string
	for _, kr := range kinds {
		if strings.Contains(kr.apiVersion, ".m.") != (ns != "") && !strings.HasPrefix(kr.apiVersion, "protection.") {
			continue
		}
		items, err := s.k.list(kr.apiVersion, kr.kind, ns, xr.LabelComposite+"="+name)
		if err != nil {
			return err
		}
		for _, o := range items {
			_, _, msg := condition(o, "Synced")
			left = append(left, fmt.Sprintf("%s %s (of %s; finalizers %v): %s", kr.kind, str(o, "metadata", "name"), str(o, "metadata", "annotations", "crossplane.io/composition-resource-name"), at(o, "metadata", "finalizers"), msg))
		}
		if len(left) > 0 && !all {
			// One is enough to wait on.
			break
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	return nil
}

// roleNames name the deletion roles.
var roleNames = []struct {
	r    registry.DeletionRole
	name string
}{{registry.Access, "Access"}, {registry.Credentials, "Credentials"}, {registry.Compute, "Compute"}, {registry.ComputeIdentity, "ComputeIdentity"}, {registry.Database, "Database"}, {registry.Peering, "Peering"}}

// roleName names a set of deletion roles.
func roleName(r registry.DeletionRole) string {
	var out []string
	for _, n := range roleNames {
		if r&n.r != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, "+")
}

// usageRule names the rule of registry.UsageRules by which a composed
// resource uses another.
func usageRule(cloudName string, by, of object) string {
	c, ok := registry.Lookup(cloudName)
	if !ok {
		return "unlisted"
	}
	kb, ok1 := c.KindOf(by["apiVersion"].(string), by["kind"].(string))
	ko, ok2 := c.KindOf(of["apiVersion"].(string), of["kind"].(string))
	if !ok1 || !ok2 {
		return "unlisted"
	}
	r, ok := registry.NeedsUsage(kb, ko)
	if !ok {
		return "no rule"
	}
	return roleName(r.By) + " holds " + roleName(r.Of)
}

// usageEnd finds the composed resource a Usage's by or of names, by
// resource reference or selector, by composition-resource name.
func usageEnd(snap map[string]object, end map[string]any) string {
	av, _ := end["apiVersion"].(string)
	kind, _ := end["kind"].(string)
	name, _ := at(end, "resourceRef", "name").(string)
	ml, _ := at(end, "resourceSelector", "matchLabels").(map[string]any)
	for crname, o := range snap {
		if o["apiVersion"] != av || o["kind"] != kind {
			continue
		}
		if name != "" && str(o, "metadata", "name") == name {
			return crname
		}
		if name == "" && len(ml) > 0 {
			labels, _ := at(o, "metadata", "labels").(map[string]any)
			all := true
			for k, v := range ml {
				all = all && labels[k] == v
			}
			if all {
				return crname
			}
		}
	}
	return ""
}

// deletionOrder checks, from when each composed resource was found gone,
// what guarantees the order of deletion now: every managed resource of
// provider-kubernetes, provider-helm or provider-sql gone before the
// ProviderConfig it was reached through (the providers hold a
// ProviderConfig while resources use it); and every Usage's user gone no
// later than what it uses (the edges of registry.UsageRules, enforced by
// Crossplane's webhook).
func deletionOrder(cloudName string, snap map[string]object, goneAt map[string]time.Duration) (string, error) {
	var out []string
	for _, pcName := range slices.Sorted(maps.Keys(snap)) {
		pc := snap[pcName]
		if pc["kind"] != "ProviderConfig" && pc["kind"] != "ClusterProviderConfig" {
			continue
		}
		family := cloudOfKey(kindKey(pc["apiVersion"].(string), ""))
		var users []string
		kinds := map[string]bool{}
		for crname, o := range snap {
			ref := str(o, "spec", "providerConfigRef", "kind")
			if ref == "" {
				ref = "ProviderConfig"
			}
			if o["kind"] == pc["kind"] || cloudOfKey(kindKey(o["apiVersion"].(string), "")) != family ||
				ref != pc["kind"] || str(o, "spec", "providerConfigRef", "name") != str(pc, "metadata", "name") {
				continue
			}
			users = append(users, crname)
			kinds[o["kind"].(string)] = true
		}
		if len(users) == 0 {
			continue
		}
		var last time.Duration
		for _, u := range users {
			if goneAt[u] > goneAt[pcName] {
				return "", fmt.Errorf("%s (%s) went at %.1f s, after its ProviderConfig %s at %.1f s", u, snap[u]["kind"], goneAt[u].Seconds(), pcName, goneAt[pcName].Seconds())
			}
			last = max(last, goneAt[u])
		}
		what := "resources"
		if len(kinds) == 1 {
			what = slices.Collect(maps.Keys(kinds))[0] + "s"
		}
		out = append(out, fmt.Sprintf("%d %s gone by %.1f s, their %s ProviderConfig at %.1f s", len(users), what, last.Seconds(), family, goneAt[pcName].Seconds()))
	}
	type edges struct {
		n        int
		min, max time.Duration
	}
	rules := map[string]*edges{}
	across := map[string]int{}
	for _, uName := range slices.Sorted(maps.Keys(snap)) {
		u := snap[uName]
		if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
			continue
		}
		byEnd, _ := at(u, "spec", "by").(map[string]any)
		ofEnd, _ := at(u, "spec", "of").(map[string]any)
		by, of := usageEnd(snap, byEnd), usageEnd(snap, ofEnd)
		if own, _ := at(ofEnd, "resourceSelector", "matchControllerRef").(bool); by != "" && !own {
			// What it uses is another XR's (a Database's instance holds
			// its Cluster's private services connection), which outlives
			// this delete: the Usage orders that XR's delete, not this one.
			across[usageRule(cloudName, snap[by], object(ofEnd))]++
			continue
		}
		if by == "" || of == "" {
			return "", fmt.Errorf("usage %s: cannot find its user (%q) or what it uses (%q) among the composed resources", uName, by, of)
		}
		if goneAt[by] > goneAt[of] {
			return "", fmt.Errorf("usage %s did not hold: %s went at %.1f s, after %s it uses at %.1f s", uName, by, goneAt[by].Seconds(), of, goneAt[of].Seconds())
		}
		rule := usageRule(cloudName, snap[by], snap[of])
		gap := goneAt[of] - goneAt[by]
		e, ok := rules[rule]
		if !ok {
			e = &edges{min: gap, max: gap}
			rules[rule] = e
		}
		e.n++
		e.min, e.max = min(e.min, gap), max(e.max, gap)
	}
	var held []string
	for _, rule := range slices.Sorted(maps.Keys(rules)) {
		e := rules[rule]
		held = append(held, fmt.Sprintf("%s %d (what each uses gone %.1f to %.1f s after it)", rule, e.n, e.min.Seconds(), e.max.Seconds()))
	}
	if len(held) > 0 {
		out = append(out, "Usages held: "+strings.Join(held, ", "))
	}
	var others []string
	for _, rule := range slices.Sorted(maps.Keys(across)) {
		others = append(others, fmt.Sprintf("%s %d", rule, across[rule]))
	}
	if len(others) > 0 {
		out = append(out, "Usages of other XRs' resources, which stayed: "+strings.Join(others, ", "))
	}
	return strings.Join(out, "; "), nil
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
func (s *scenarios) onCluster(example, clusterCloud string, run fntest.Runner, reader *clusterref.Reader, fields []string, verify func(live object) error, change func(xr object) []string) error {
	xr := fntest.MustLoad(filepath.Join(s.examples, example))[0]
	name, ns := str(xr, "metadata", "name"), str(xr, "metadata", "namespace")
	apiVersion, kind := xr["apiVersion"].(string), xr["kind"].(string)
	// Its deletion is to complete: what keeps it from that by design is
	// turned off.
	unprotected := unprotect(xr)
	req := fntest.Request{XR: overlay.DeepCopy(xr), EnvironmentConfigs: fntest.MustLoad(filepath.Join(s.examples, "envconfigs"))}
	if clusterCloud != "" {
		extra, err := fntest.Required(s.examples, clusterCloud, xr, reader)
		if err != nil {
			return err
		}
		req.Extra = extra
	}
	rsp, _, _, err := fntest.Converge(run, req, 30)
	if err != nil {
		return fmt.Errorf("cannot converge %s in process: %w", example, err)
	}
	want := map[string]string{}
	for crname, o := range fntest.Desired(rsp) {
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
