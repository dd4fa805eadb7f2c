package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpDelay is how long the simulated control plane takes to report a new
// version once asked for one (flag -cp-delay).
var cpDelay = 20 * time.Second

// dayTwoPools are the examples taken through dayTwo, with the pool they
// rotate and the size class it rotates to.
var dayTwoPools = map[string][2]string{"aws/cluster.yaml": {"default", "large"}}

// event is one watch event the API server sent of a composed resource.
type event struct {
	typ    string
	rv     int64
	at     time.Duration
	crname string
	// asked and runs are spec.forProvider.version and
	// status.atProvider.version; ready its Ready condition; deleting
	// whether its deletion started.
	asked, runs     string
	ready, deleting bool
}

// resourceVersion is the resource version etcd wrote the event's object at.
func (e event) resourceVersion() int64 { return e.rv }

// stamped is a watch event with the resource version of its object.
type stamped interface{ resourceVersion() int64 }

// eventLog keeps watch events, to be read in the order etcd wrote them
// (resource version).
type eventLog[E stamped] struct {
	mu     sync.Mutex
	start  time.Time
	events []E
}

// add keeps an event.
func (l *eventLog[E]) add(e E) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// sorted returns the events in the order etcd wrote them.
func (l *eventLog[E]) sorted() []E {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.events)
	slices.SortStableFunc(out, func(a, b E) int { return cmp.Compare(a.resourceVersion(), b.resourceVersion()) })
	return out
}

// first is the first event that matches, in etcd's order.
func (l *eventLog[E]) first(match func(E) bool) (E, bool) {
	for _, e := range l.sorted() {
		if match(e) {
			return e, true
		}
	}
	var none E
	return none, false
}

// recorder keeps the API server's watch events of some kinds of an XR's
// composed resources.
type recorder = eventLog[event]

// record watches the kinds until ctx ends.
func (s *scenarios) record(ctx context.Context, xrName string, kinds ...kindRef) *recorder {
	r := &recorder{start: time.Now()}
	for _, kr := range kinds {
		go s.k.watchEvents(ctx, kr.apiVersion, kr.kind, "crossplane.io/composite="+xrName, func(typ string, o object) { //nolint:errcheck // ends with ctx
			rv, _ := strconv.ParseInt(str(o, "metadata", "resourceVersion"), 10, 64)
			st, _, _ := condition(o, "Ready")
			e := event{
				typ: typ, rv: rv, at: time.Since(r.start),
				crname:   str(o, "metadata", "annotations", "crossplane.io/composition-resource-name"),
				asked:    str(o, "spec", "forProvider", "version"),
				runs:     str(o, "status", "atProvider", "version"),
				ready:    st == "True",
				deleting: typ == "DELETED" || str(o, "metadata", "deletionTimestamp") != "",
			}
			r.add(e)
		})
	}
	return r
}

// Kinds of an EKS Cluster's control plane and node groups, namespaced.
var (
	eksCluster   = kindRef{"eks.aws.m.upbound.io/v1beta1", "Cluster"}
	eksNodeGroup = kindRef{"eks.aws.m.upbound.io/v1beta1", "NodeGroup"}
)

// dayTwo takes a Ready EKS Cluster XR through its day-2 lifecycle on the
// real control plane, with the simulated provider reporting the control
// plane's new version only cpDelay after it was asked for:
//
//   - an upgrade from its version to the next minor: from the API server's
//     own records (the watch events of the cluster and its node groups,
//     ordered by resource version), no node group was asked for the new
//     version before the cluster reported running it;
//   - a rotation of pool rotate by a new size class: from the same records,
//     the old node group's deletion began only after the new one was
//     Ready.
//
// It returns the XR's composed resources by composition-resource name as
// they are afterwards.
func (s *scenarios) dayTwo(xr object, rotate, size string) (map[string]composedRef, error) {
	name, ns := str(xr, "metadata", "name"), str(xr, "metadata", "namespace")
	apiVersion, kind := xr["apiVersion"].(string), xr["kind"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := s.record(ctx, name, eksCluster, eksNodeGroup)
	time.Sleep(2 * time.Second) // the watches list first

	par := xr["spec"].(map[string]any)["parameters"].(map[string]any)
	from := par["version"].(string)
	minor, err := strconv.Atoi(strings.TrimPrefix(from, "1."))
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", from, err)
	}
	to := fmt.Sprintf("1.%d", minor+1)

	// The upgrade.
	par["version"] = to
	if err := s.k.apply(xr); err != nil {
		return nil, err
	}
	var live object
	took, err := s.waitFor("the upgrade to "+to, func() (bool, error) {
		live, err = s.k.get(apiVersion, kind, ns, name)
		if err != nil {
			return false, err
		}
		st, reason, msg := condition(live, "Upgrading")
		if st != "False" || reason != "UpToDate" || str(live, "status", "upgrade", "controlPlane") != to {
			return false, fmt.Errorf("condition Upgrading is %s/%s: %s", st, reason, msg)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	asked, ok := rec.first(func(e event) bool { return e.crname == "cluster" && e.asked == to })
	if !ok {
		return nil, fmt.Errorf("the API server recorded no cluster asked for %s", to)
	}
	reported, ok := rec.first(func(e event) bool { return e.crname == "cluster" && e.runs == to })
	if !ok {
		return nil, fmt.Errorf("the API server recorded no cluster running %s", to)
	}
	moved := map[string]event{}
	for _, e := range rec.sorted() {
		if strings.HasPrefix(e.crname, "nodepool-") && e.asked == to {
			if _, seen := moved[e.crname]; !seen {
				moved[e.crname] = e
			}
		}
	}
	if len(moved) == 0 {
		return nil, fmt.Errorf("no node group was asked for %s", to)
	}
	var after []string
	for _, crname := range slices.Sorted(maps.Keys(moved)) {
		e := moved[crname]
		if e.rv <= reported.rv {
			return nil, fmt.Errorf("node group %s was asked for %s at resource version %d (%.1f s), before the cluster reported running it at %d (%.1f s)",
				crname, to, e.rv, e.at.Seconds(), reported.rv, reported.at.Seconds())
		}
		after = append(after, fmt.Sprintf("%s at %.1f s", crname, e.at.Seconds()))
	}
	fmt.Printf("  %s: upgraded %s -> %s in %.1f s: the cluster asked for %s at %.1f s (rv %d), reported it at %.1f s (rv %d); node groups asked after it: %s\n",
		name, from, to, took.Seconds(), to, asked.at.Seconds(), asked.rv, reported.at.Seconds(), reported.rv, strings.Join(after, ", "))
	s.results = append(s.results, fmt.Sprintf("%-30s upgrade %s -> %s in %5.1f s, %d node groups after the control plane's report", name, from, to, took.Seconds(), len(moved)))

	// The rotation.
	old := "nodepool-" + rotate
	par["pools"].(map[string]any)[rotate].(map[string]any)["size"] = size
	if err := s.k.apply(xr); err != nil {
		return nil, err
	}
	var next string
	took, err = s.waitFor("pool "+rotate+" rotated", func() (bool, error) {
		live, err = s.k.get(apiVersion, kind, ns, name)
		if err != nil {
			return false, err
		}
		gone, _ := rec.first(func(e event) bool { return e.crname == old && e.typ == "DELETED" })
		ready, _ := rec.first(func(e event) bool { return strings.HasPrefix(e.crname, old+"-") && e.ready })
		next = ready.crname
		st, _, _ := condition(live, "Ready")
		up, reason, msg := condition(live, "Upgrading")
		return gone.typ != "" && next != "" && st == "True" && up == "False", fmt.Errorf("old deleted: %t, new Ready: %q, XR Ready %s, Upgrading %s/%s: %s", gone.typ != "", next, st, up, reason, msg)
	})
	if err != nil {
		return nil, err
	}
	newReady, _ := rec.first(func(e event) bool { return e.crname == next && e.ready })
	deleting, _ := rec.first(func(e event) bool { return e.crname == old && e.deleting })
	if deleting.rv <= newReady.rv {
		return nil, fmt.Errorf("node group %s began deleting at resource version %d (%.1f s), before %s was Ready at %d (%.1f s)", old, deleting.rv, deleting.at.Seconds(), next, newReady.rv, newReady.at.Seconds())
	}
	fmt.Printf("  %s: pool %s rotated to size %s in %.1f s: %s Ready at %.1f s (rv %d), then %s deleted from %.1f s (rv %d)\n",
		name, rotate, size, took.Seconds(), next, newReady.at.Seconds(), newReady.rv, old, deleting.at.Seconds(), deleting.rv)
	s.results = append(s.results, fmt.Sprintf("%-30s rotation of pool %s in %5.1f s, the old node group deleted after the new one was Ready", name, rotate, took.Seconds()))

	composed := map[string]composedRef{}
	for _, r := range resourceRefs(live) {
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			return nil, fmt.Errorf("composed %s %s: %w", r.kind, r.name, err)
		}
		composed[str(o, "metadata", "annotations", "crossplane.io/composition-resource-name")] = r
	}
	if _, ok := composed[old]; ok {
		return nil, fmt.Errorf("%s is still composed after the rotation", old)
	}
	return composed, nil
}
