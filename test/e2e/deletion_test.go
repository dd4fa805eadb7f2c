package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/bench"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// The deletion model without a control plane: the example stacks as the
// function renders them (examples/*/observed), deleted all at once as the
// garbage collector does, with the Usages honoured as Crossplane's webhook
// does, every managed resource deleted as deletionRules say, and the
// providers holding their ProviderConfigs while in use. It shows, in a
// second, that every delete completes with the Usages we render, and what
// gets stuck for good without each of them.

// fakeStore is the API server's objects.
type fakeStore struct{ objs map[string]object }

func (f *fakeStore) list(apiVersion, kind, namespace, selector string) ([]object, error) {
	var out []object
	lk, lv, _ := strings.Cut(selector, "=")
	for _, k := range slices.Sorted(maps.Keys(f.objs)) {
		o := f.objs[k]
		if o["apiVersion"] != apiVersion || o["kind"] != kind || (namespace != "" && str(o, "metadata", "namespace") != namespace) {
			continue
		}
		if selector != "" && str(o, "metadata", "labels", lk) != lv {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

func (f *fakeStore) get(apiVersion, kind, namespace, name string) (object, error) {
	if o, ok := f.objs[apiVersion+"/"+kind+"/"+namespace+"/"+name]; ok {
		return o, nil
	}
	return nil, errNotFound
}

func (f *fakeStore) put(o object) { f.objs[objKey(o)] = o }

// stack is one example XR's rendered composed resources.
type stack struct {
	example, xrName, uid string
	keys                 []string
}

// render converges an example XR with the function in process, as the
// e2e's expected() and onCluster do, after mutate (when set); it returns
// the desired composed resources with their composition-resource names.
func render(t *testing.T, example string, mutate func(object) string) (object, []object) {
	t.Helper()
	examples := filepath.Join("..", "..", "examples")
	x := fntest.MustLoad(filepath.Join(examples, example))[0]
	if mutate != nil {
		mutate(x)
	}
	req := xpsim.Request{XR: overlay.DeepCopy(x), EnvironmentConfigs: fntest.MustLoad(filepath.Join(examples, "envconfigs"))}
	run := bench.Run
	var reader *clusterref.Reader
	switch x["kind"] {
	case "Database", "XDatabase":
		run, reader = runDatabase, clusterref.ForDatabase
	case "AppEnvironment", "XAppEnvironment":
		run, reader = runEnvironment, clusterref.ForAppEnvironment
	default:
		req.Spend = fntest.MustLoad(filepath.Join(examples, "spend"))
	}
	if reader != nil {
		extra, err := fntest.Required(examples, strings.Split(example, "/")[0], x, reader)
		if err != nil {
			t.Fatal(err)
		}
		req.Extra = extra
	}
	rsp, _, _, err := xpsim.Converge(run, req, 30)
	if err != nil {
		t.Fatalf("%s: %v", example, err)
	}
	var out []object
	desired := xpsim.Desired(rsp)
	for _, crname := range slices.Sorted(maps.Keys(desired)) {
		o := desired[crname]
		meta, _ := o["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			o["metadata"] = meta
		}
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann["crossplane.io/composition-resource-name"] = crname
		out = append(out, o)
	}
	return x, out
}

// load puts an example's stack, rendered (after mutate), in the store as
// Crossplane would have composed it: in the XR's namespace, controlled by
// and labelled with the XR, with the connection Secrets their providers
// write.
func (f *fakeStore) load(t *testing.T, example string, mutate func(object) string) stack {
	t.Helper()
	x, objs := render(t, example, mutate)
	ns, name := str(x, "metadata", "namespace"), str(x, "metadata", "name")
	st := stack{example: example, xrName: name, uid: "uid-" + name}
	for i, o := range objs {
		o = overlay.DeepCopy(o)
		meta := o["metadata"].(map[string]any)
		if strings.Contains(o["apiVersion"].(string), ".m.") || o["kind"] == "Usage" {
			meta["namespace"] = ns
		}
		if meta["name"] == nil {
			meta["name"] = fmt.Sprintf("%s-%d", name, i)
		}
		meta["uid"] = fmt.Sprintf("%s-%d", st.uid, i)
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels[xr.LabelComposite] = name
		meta["ownerReferences"] = []any{map[string]any{"uid": st.uid, "controller": true, "name": name}}
		f.put(o)
		st.keys = append(st.keys, objKey(o))
		if ref, ok := at(o, "spec", "writeConnectionSecretToRef").(map[string]any); ok {
			sns, _ := ref["namespace"].(string)
			if sns == "" {
				sns = str(o, "metadata", "namespace")
			}
			f.put(object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
				"name": ref["name"], "namespace": sns, "uid": "secret-" + meta["uid"].(string),
				"ownerReferences": []any{map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": meta["name"], "uid": meta["uid"]}},
			}})
		}
	}
	return st
}

// isConfig reports whether o is a ProviderConfig of provider-helm, -sql or
// -kubernetes.
func isConfig(o object) bool {
	return (o["kind"] == "ProviderConfig" || o["kind"] == "ClusterProviderConfig") && !strings.Contains(o["apiVersion"].(string), ".upbound.io")
}

// newFakeCloud is a simulator deciding on the store's objects.
func newFakeCloud(f *fakeStore) *cloud {
	c := &cloud{fake: f, del: newDeletions(), pcKinds: map[string]kindRef{}}
	seen := map[kindRef]bool{}
	for _, o := range f.objs {
		kr := kindRef{o["apiVersion"].(string), o["kind"].(string)}
		g := strings.Split(kr.apiVersion, "/")[0]
		switch {
		case isConfig(o):
			c.pcKinds[g+"/"+kr.kind] = kr
		case (providerGroup(g) || strings.HasPrefix(g, "kubernetes.")) && !seen[kr]:
			seen[kr] = true
			c.kinds = append(c.kinds, kr)
		}
	}
	return c
}

// usageEnd is the existing resource a Usage's by or of selects, as
// Crossplane resolves it: by labels in the Usage's namespace, and of the
// Usage's controller only with matchControllerRef (what another XR
// composed, such as its Cluster's private services connection, without).
func (f *fakeStore) usageEnd(u object, end string) object {
	e, _ := at(u, "spec", end).(map[string]any)
	ml, _ := at(e, "resourceSelector", "matchLabels").(map[string]any)
	own, _ := at(e, "resourceSelector", "matchControllerRef").(bool)
	items, _ := f.list(e["apiVersion"].(string), e["kind"].(string), str(u, "metadata", "namespace"), "")
	for _, o := range items {
		ok := !own || controllerOf(o) == controllerOf(u)
		for k, v := range ml {
			ok = ok && str(o, "metadata", "labels", k) == v
		}
		if ok {
			return o
		}
	}
	return nil
}

// outcome is how a delete went.
type outcome struct {
	rounds int
	left   []string
	stuck  map[string]string
}

// deleteStack deletes a stack's resources all at once and runs rounds of
// the providers' and Crossplane's reconciles until nothing changes:
// a Usage's of is not deleted while its by exists (the webhook, for every
// Usage, of any XR; the deletion is replayed once it is gone), a Usage
// goes once its by is gone,
// a ProviderConfig once nothing uses it, a managed resource once the cloud
// deletes it, a Secret with its owner.
func deleteStack(c *cloud, f *fakeStore, st stack, skip map[string]bool) outcome {
	out := outcome{stuck: map[string]string{}}
	remove := func(k string) {
		o := f.objs[k]
		delete(f.objs, k)
		for sk, s := range f.objs {
			if s["kind"] == "Secret" && controllerOrOwner(s) == str(o, "metadata", "uid") {
				delete(f.objs, sk)
			}
		}
	}
	isUsage := func(o object) bool { return o["kind"] == "Usage" || o["kind"] == "ClusterUsage" }
	// step tries each of keys once; it reports whether anything went.
	step := func(keys []string) bool {
		changed := false
		for _, k := range keys {
			o, ok := f.objs[k]
			if !ok {
				continue
			}
			if isUsage(o) {
				if skip[k] || f.usageEnd(o, "by") == nil {
					remove(k)
					changed = true
				}
				continue
			}
			blocked := false
			for uk, u := range f.objs {
				if !skip[uk] && isUsage(u) {
					if of := f.usageEnd(u, "of"); of != nil && objKey(of) == k && f.usageEnd(u, "by") != nil {
						blocked = true
					}
				}
			}
			if blocked {
				continue
			}
			switch {
			case isConfig(o):
				if n, _ := c.configUsers(o); n == 0 {
					remove(k)
					changed = true
				}
			case slices.Contains(c.kinds, kindRef{o["apiVersion"].(string), o["kind"].(string)}):
				res, why, err := c.decide(o)
				if err != nil {
					out.stuck[k] = err.Error()
					continue
				}
				c.record(o, res)
				switch res {
				case deleted, orphaned:
					remove(k)
					changed = true
				case failed, protected:
					out.stuck[o["kind"].(string)+" "+str(o, "metadata", "annotations", "crossplane.io/composition-resource-name")] = why
				}
			default:
				remove(k)
				changed = true
			}
		}
		return changed
	}
	// The worst case: in each round what is reached into (clusters,
	// servers) goes as far as it can before what is deleted through it
	// (and its ProviderConfig) is tried.
	var first, then []string
	for _, k := range st.keys {
		if c.reachesInto(f.objs[k]) == 0 {
			first = append(first, k)
		} else {
			then = append(then, k)
		}
	}
	for out.rounds = 1; out.rounds < 500; out.rounds++ {
		changed := false
		for step(first) {
			changed = true
		}
		if !step(then) && !changed {
			break
		}
	}
	for _, k := range st.keys {
		if o, ok := f.objs[k]; ok {
			out.left = append(out.left, o["kind"].(string)+" "+str(o, "metadata", "annotations", "crossplane.io/composition-resource-name"))
		}
	}
	return out
}

// reachesInto is 1 for what its provider deletes through a
// ProviderConfig's credentials, and for a ProviderConfig, else 0.
func (c *cloud) reachesInto(o object) int {
	if o == nil {
		return 0
	}
	if r, _ := ruleOf(kindKey(o["apiVersion"].(string), o["kind"].(string))); r.connects || isConfig(o) {
		return 1
	}
	return 0
}

// controllerOrOwner is the UID of an object's first owner.
func controllerOrOwner(o object) string {
	refs, _ := at(o, "metadata", "ownerReferences").([]any)
	if len(refs) == 0 {
		return ""
	}
	s, _ := refs[0].(map[string]any)["uid"].(string)
	return s
}

// deletes are the e2e's deletes, in its order: what runs on a cluster
// first.
var deletes = map[string][]string{
	"gcp":        {"gcp/database.yaml", "gcp/appenvironment.yaml", "gcp/cluster.yaml"},
	"aws":        {"aws/database.yaml", "aws/appenvironment.yaml", "aws/cluster.yaml"},
	"azure":      {"azure/database.yaml", "azure/appenvironment.yaml", "azure/cluster.yaml"},
	"gcp-legacy": {"gcp/database-legacy.yaml", "gcp/legacy.yaml"},
}

// deleteInOrder loads the stacks of the examples and deletes them in
// order, each once the one before is gone, as the e2e does. It returns
// each delete's outcome and the tally of it, and what earlier deletes left
// in the cloud (abandoned) in the way of a later one, which the cloud
// would refuse for good: the e2e fails on it.
func deleteInOrder(t *testing.T, examples []string, mutate func(object) string, skip func(stack) map[string]bool) ([]outcome, []tally, []string) {
	t.Helper()
	f := &fakeStore{objs: map[string]object{}}
	var stacks []stack
	for _, ex := range examples {
		stacks = append(stacks, f.load(t, ex, mutate))
	}
	c := newFakeCloud(f)
	var outs []outcome
	var tallies []tally
	var inWay []string
	for _, st := range stacks {
		var objs []object
		for _, k := range st.keys {
			objs = append(objs, f.objs[k])
		}
		for _, o := range c.abandonedReferencing(objs) {
			inWay = append(inWay, fmt.Sprintf("%s: %s %s", st.example, o["kind"], extName(o)))
		}
		before := c.del.tally()
		var sk map[string]bool
		if skip != nil {
			sk = skip(st)
		}
		outs = append(outs, deleteStack(c, f, st, sk))
		tallies = append(tallies, c.del.tally().since(before))
	}
	return outs, tallies, inWay
}

// TestDeletionCompletes deletes the example stacks as the e2e does (with
// what keeps a delete from completing by design turned off: unprotect):
// each completes, nothing is stuck, nothing an earlier delete abandoned is
// in the way of a later one, and the clouds refused deletes on each.
func TestDeletionCompletes(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(deletes)) {
		t.Run(name, func(t *testing.T) {
			outs, tallies, inWay := deleteInOrder(t, deletes[name], unprotect, nil)
			refused := 0
			for i, o := range outs {
				if len(o.left) > 0 || len(o.stuck) > 0 {
					t.Errorf("%s: left %v, stuck %v", deletes[name][i], o.left, o.stuck)
				}
				refused += total(tallies[i].refused)
				t.Logf("%s: %d rounds; %s", deletes[name][i], o.rounds, tallies[i])
			}
			for _, w := range inWay {
				t.Errorf("abandoned by an earlier delete in the way of %s, which the cloud refuses for good", w)
			}
			if refused == 0 {
				t.Errorf("the cloud refused nothing")
			}
		})
	}
}

// TestAsRendered deletes the example stacks as they are, deletion
// protection on: it reports what stays (by design, or not).
func TestAsRendered(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(deletes)) {
		outs, tallies, inWay := deleteInOrder(t, deletes[name], nil, nil)
		for i, o := range outs {
			t.Logf("%-26s %s; left %v; stuck %v", deletes[name][i], tallies[i], o.left, o.stuck)
		}
		for _, w := range inWay {
			t.Logf("abandoned in the way of %s", w)
		}
	}
}

// TestWithoutEachUsage deletes each stack without the Usages of one rule
// of registry.UsageRules at a time, and without each Usage alone, and
// reports what gets stuck for good: the Usages deletion depends on. One
// the model does without is not wrong (a Usage may prevent what the model
// does not simulate, or another Usage covers the same), but is reported.
func TestWithoutEachUsage(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(deletes)) {
		for i, ex := range deletes[name] {
			// Every stack, for the Usages of another XR's resources.
			probe := &fakeStore{objs: map[string]object{}}
			var st stack
			for _, other := range deletes[name] {
				if loaded := probe.load(t, other, unprotect); other == ex {
					st = loaded
				}
			}
			groups := map[string][]string{}
			for _, uk := range st.keys {
				u := probe.objs[uk]
				if u["kind"] != "Usage" && u["kind"] != "ClusterUsage" {
					continue
				}
				rule := usageRule(strings.Split(ex, "/")[0], probe.usageEnd(u, "by"), probe.usageEnd(u, "of"))
				groups["rule "+rule] = append(groups["rule "+rule], uk)
				groups[str(u, "metadata", "annotations", "crossplane.io/composition-resource-name")] = []string{uk}
			}
			for _, g := range slices.Sorted(maps.Keys(groups)) {
				// The same stacks render the same: skip the group's
				// Usages, by key, in the i-th.
				outs, _, _ := deleteInOrder(t, deletes[name][:i+1], unprotect, func(s stack) map[string]bool {
					if s.example != ex {
						return nil
					}
					skip := map[string]bool{}
					for _, uk := range groups[g] {
						skip[uk] = true
					}
					return skip
				})
				o := outs[i]
				what := fmt.Sprintf("%s (%d)", g, len(groups[g]))
				if len(o.stuck) == 0 && len(o.left) == 0 {
					t.Logf("%-26s without %-56s completes", ex, what)
					continue
				}
				var why []string
				for _, k := range slices.Sorted(maps.Keys(o.stuck)) {
					why = append(why, k+": "+o.stuck[k])
				}
				t.Logf("%-26s without %-56s STUCK: %s", ex, what, strings.Join(why, "; "))
			}
		}
	}
}

// TestClusterWaitsForItsDatabases deletes the GCP example Cluster while the
// example Database still runs on its network, then the Database: the
// Cluster's private services connection, its range and its network stay
// while the Database's Cloud SQL instance uses them, nothing fails for
// good, and once the Database is gone the Cluster's delete completes. The
// instance's Usage of the Cluster's connection holds it (Crossplane's
// webhook); without the Usage, the cloud's refusal to delete a connection
// that Cloud SQL uses holds it as well (the provider retries).
func TestClusterWaitsForItsDatabases(t *testing.T) {
	type want struct {
		waiting []string
		// refusesConnection says whether the cloud refused the
		// connection's delete: only what the Usage does not hold.
		refusesConnection bool
	}
	cases := map[string]struct {
		reason  string
		without bool
		want    want
	}{
		"WithTheUsage": {
			reason: "The Database's Usage keeps the Cluster's connection until the instance is gone.",
			want:   want{waiting: []string{"Connection private-services-connection", "GlobalAddress private-services-range", "Network network"}},
		},
		"WithoutTheUsage": {
			reason:  "Without it the cloud refuses to delete the connection while Cloud SQL uses it, and the provider retries.",
			without: true,
			want:    want{waiting: []string{"Connection private-services-connection", "GlobalAddress private-services-range", "Network network"}, refusesConnection: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeStore{objs: map[string]object{}}
			db := f.load(t, "gcp/database.yaml", unprotect)
			cluster := f.load(t, "gcp/cluster.yaml", unprotect)
			skip := map[string]bool{}
			if tc.without {
				for _, k := range db.keys {
					if f.objs[k]["kind"] == "Usage" {
						skip[k] = true
					}
				}
			}
			c := newFakeCloud(f)
			first := deleteStack(c, f, cluster, skip)
			slices.Sort(first.left)
			if diff := cmp.Diff(tc.want.waiting, first.left); diff != "" || len(first.stuck) > 0 {
				t.Errorf("%s\nthe Cluster's delete while the Database runs: waiting -want +got:\n%s\nstuck: %v", tc.reason, diff, first.stuck)
			}
			if got := c.del.tally().refused["Connection"] > 0; got != tc.want.refusesConnection {
				t.Errorf("%s\nthe cloud refused the connection's delete: %t, want %t", tc.reason, got, tc.want.refusesConnection)
			}
			if out := deleteStack(c, f, db, skip); len(out.left)+len(out.stuck) > 0 {
				t.Errorf("%s\nthe Database's delete: left %v, stuck %v", tc.reason, out.left, out.stuck)
			}
			if out := deleteStack(c, f, cluster, skip); len(out.left)+len(out.stuck) > 0 {
				t.Errorf("%s\nthe Cluster's delete once the Database is gone: left %v, stuck %v", tc.reason, out.left, out.stuck)
			}
			if len(c.del.kept) > 0 {
				t.Errorf("%s\nleft in the cloud: %v", tc.reason, slices.Sorted(maps.Keys(c.del.kept)))
			}
		})
	}
}
