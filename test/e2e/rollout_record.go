package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// rolloutEvent is one watch event the API server sent of the rollout: of a
// Cluster XR, of its composed control plane, or of the environment.
type rolloutEvent struct {
	rv int64
	at time.Duration
	// of is the Cluster (namespace/name) an XR's or a control plane's
	// event is of; "" for the environment's.
	of string
	// xr is the XR's state, for an event of an XR.
	xr *rolloutState
	// cp is set for an event of a control plane: asked is the minor its
	// version field asks for, synced its Synced condition.
	cp            bool
	asked, synced string
	// env is set for an event of the EnvironmentConfig: version is its
	// version, approved the last wave's approvals.
	env      bool
	version  string
	approved []string
}

// resourceVersion is the resource version etcd wrote the event's object at.
func (e rolloutEvent) resourceVersion() int64 { return e.rv }

// rolloutRecord keeps the API server's watch events of the rollout's
// XRs, their control planes and their EnvironmentConfig.
type rolloutRecord struct{ eventLog[rolloutEvent] }

// rolloutWave is the wave of each rollout Cluster, by namespace/name.
var rolloutWave = func() map[string]string {
	out := map[string]string{}
	for _, c := range rolloutFleet {
		out[c.key()] = c.wave
	}
	return out
}()

// recordRollout watches the rollout until ctx ends; it returns once every
// watch has listed what it watches.
func (s *scenarios) recordRollout(ctx context.Context) (*rolloutRecord, error) {
	r := &rolloutRecord{eventLog[rolloutEvent]{start: time.Now()}}
	add := func(typ string, o object, e rolloutEvent) {
		if typ == "DELETED" {
			return
		}
		e.rv, _ = strconv.ParseInt(str(o, "metadata", "resourceVersion"), 10, 64)
		e.at = time.Since(r.start)
		r.add(e)
	}
	go s.k.watchEvents(ctx, clusterXR.apiVersion, clusterXR.kind, rollout.Label, func(typ string, o object) { //nolint:errcheck // ends with ctx
		st := rolloutStateOf(o)
		add(typ, o, rolloutEvent{of: str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name"), xr: &st})
	})
	names := make([]string, 0, len(rolloutFleet))
	for _, c := range rolloutFleet {
		names = append(names, c.name)
	}
	selector := xr.LabelComposite + " in (" + strings.Join(names, ",") + ")"
	for _, cp := range rolloutCP {
		go s.k.watchEvents(ctx, cp.kind.apiVersion, cp.kind.kind, selector, func(typ string, o object) { //nolint:errcheck // ends with ctx
			synced, _, _ := condition(o, "Synced")
			add(typ, o, rolloutEvent{
				of: str(o, "metadata", "namespace") + "/" + str(o, "metadata", "labels", xr.LabelComposite),
				cp: true, asked: rollout.Minor(str(o, cp.version...)), synced: synced,
			})
		})
	}
	go s.k.watchEvents(ctx, "apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "planeType=rollout", func(typ string, o object) { //nolint:errcheck // ends with ctx
		waves, _ := at(o, "data", "rollout", "waves").([]any)
		var approved []string
		if len(waves) > 0 {
			list, _ := waves[len(waves)-1].(map[string]any)["approved"].([]any)
			for _, a := range list {
				s, _ := a.(string)
				approved = append(approved, s)
			}
		}
		add(typ, o, rolloutEvent{env: true, version: str(o, "data", "version"), approved: approved})
	})
	_, err := s.waitFor("the rollout's watches to list", func() (bool, error) {
		xrs, cps, env := map[string]bool{}, map[string]bool{}, false
		for _, e := range r.sorted() {
			switch {
			case e.xr != nil:
				xrs[e.of] = true
			case e.cp:
				cps[e.of] = true
			case e.env:
				env = true
			}
		}
		return len(xrs) == len(rolloutFleet) && len(cps) == len(rolloutFleet) && env,
			fmt.Errorf("listed %d XRs, %d control planes, the environment: %t", len(xrs), len(cps), env)
	})
	return r, err
}

// movedAt is the first event of a Cluster of wave asking for to: its XR's
// status.upgrade.target, or its control plane's version field.
func (r *rolloutRecord) movedAt(wave, to string) (rolloutEvent, bool) {
	return r.first(func(e rolloutEvent) bool {
		return rolloutWave[e.of] == wave && ((e.xr != nil && e.xr.target == to) || (e.cp && e.asked == to))
	})
}

// doneAt is the first event of an XR after which every Cluster of wave
// reported running to on its control plane and every pool, and Ready.
func (r *rolloutRecord) doneAt(wave, to string) (rolloutEvent, bool) {
	last := map[string]rolloutState{}
	for _, e := range r.sorted() {
		if e.xr == nil {
			continue
		}
		last[e.of] = *e.xr
		if rolloutWave[e.of] != wave {
			continue
		}
		all := true
		for _, c := range rolloutFleet {
			all = all && (c.wave != wave || last[c.key()].done(to))
		}
		if all {
			return e, true
		}
	}
	return rolloutEvent{}, false
}

// gated is the first event of an XR of wave gated for reason, before the
// resource version before.
func (r *rolloutRecord) gated(wave, reason string, before int64) (rolloutEvent, bool) {
	return r.first(func(e rolloutEvent) bool {
		return e.xr != nil && rolloutWave[e.of] == wave && e.xr.gatedBy(reason) && e.rv < before
	})
}

// verify checks the round from from to to against the record, and returns
// its summary. No Cluster's status named a Cluster of another namespace.
// Every wave after the first was gated (Hold) until the wave before it was
// done, and asked for to only after; production, when broken
// is nil, only after its approval, and gated for Approval before it; when
// broken is set, production halted after broken's control plane failed
// and asked for to only once it was healed.
func (r *rolloutRecord) verify(from, to string, broken *rolloutCluster, halt string) (string, error) {
	raise, ok := r.first(func(e rolloutEvent) bool { return e.env && e.version == to })
	if !ok {
		return "", fmt.Errorf("the API server recorded no environment with version %s", to)
	}
	// Each Cluster is in a namespace of its own: its status may count the
	// others (status.rollout.hidden), never name them.
	if e, ok := r.first(func(e rolloutEvent) bool { return e.xr != nil && len(e.xr.foreign) > 0 }); ok {
		return "", fmt.Errorf("%s's status names Clusters of other namespaces, %v, at resource version %d: %s", e.of, e.xr.foreign, e.rv, e.xr)
	}
	gate := raise
	var times, order []string
	for i, w := range rolloutWaves {
		moved, ok := r.movedAt(w, to)
		if !ok {
			return "", fmt.Errorf("the API server recorded no Cluster of wave %s asking for %s", w, to)
		}
		done, ok := r.doneAt(w, to)
		if !ok {
			return "", fmt.Errorf("the API server recorded wave %s not all on %s and Ready", w, to)
		}
		if i > 0 {
			prev := rolloutWaves[i-1]
			if moved.rv <= gate.rv {
				return "", fmt.Errorf("%s (wave %s) asked for %s at resource version %d (%.1f s), before every Cluster of wave %s ran it and was Ready at %d (%.1f s)",
					moved.of, w, to, moved.rv, moved.at.Seconds(), prev, gate.rv, gate.at.Seconds())
			}
			held, ok := r.gated(w, "Hold", gate.rv)
			if !ok {
				return "", fmt.Errorf("no Cluster of wave %s was recorded with RolloutGated True for Hold before wave %s was done", w, prev)
			}
			order = append(order, fmt.Sprintf("%s held from rv %d, asked after %s's rv %d at rv %d", w, held.rv, prev, gate.rv, moved.rv))
		}
		start, note := gate, ""
		switch {
		case w == "production" && broken == nil:
			approved, ok := r.first(func(e rolloutEvent) bool { return e.env && slices.Contains(e.approved, to) })
			if !ok {
				return "", fmt.Errorf("the API server recorded no approval of %s", to)
			}
			asked, ok := r.gated(w, "Approval", approved.rv)
			if !ok {
				return "", fmt.Errorf("no Cluster of wave production was recorded with RolloutGated True for Approval before the approval of %s", to)
			}
			if moved.rv <= approved.rv {
				return "", fmt.Errorf("%s asked for %s at resource version %d (%.1f s), before its approval at %d (%.1f s)", moved.of, to, moved.rv, moved.at.Seconds(), approved.rv, approved.at.Seconds())
			}
			order = append(order, fmt.Sprintf("production gated for Approval from rv %d, approved at rv %d", asked.rv, approved.rv))
			if approved.rv > gate.rv {
				start, note = approved, fmt.Sprintf(" after its approval (held %.1f s for it)", approved.at.Seconds()-gate.at.Seconds())
			}
		case w == "staging" && broken != nil:
			failed, ok := r.first(func(e rolloutEvent) bool { return e.cp && e.of == broken.key() && e.synced == "False" && e.asked == to })
			if !ok {
				return "", fmt.Errorf("the API server recorded no failure of %s's control plane", broken.key())
			}
			healed, ok := r.first(func(e rolloutEvent) bool {
				return e.cp && e.of == broken.key() && e.synced == "True" && e.rv > failed.rv
			})
			if !ok {
				return "", fmt.Errorf("the API server recorded no recovery of %s's control plane", broken.key())
			}
			halted, ok := r.first(func(e rolloutEvent) bool {
				return e.xr != nil && rolloutWave[e.of] == "production" && e.xr.gatedBy("Halt") && e.rv > failed.rv
			})
			if !ok {
				return "", fmt.Errorf("no Cluster of wave production was recorded with RolloutGated True for Halt after %s failed", broken.key())
			}
			if prod, _ := r.movedAt("production", to); prod.rv <= healed.rv {
				return "", fmt.Errorf("%s asked for %s at resource version %d (%.1f s), before %s's failure was healed at %d (%.1f s)", prod.of, to, prod.rv, prod.at.Seconds(), broken.key(), healed.rv, healed.at.Seconds())
			}
			order = append(order, fmt.Sprintf("%s failed at rv %d, production halted at rv %d, healed at rv %d", broken.key(), failed.rv, halted.rv, healed.rv))
			note = fmt.Sprintf(" (%s failed for %.1f s)", broken.name, healed.at.Seconds()-failed.at.Seconds())
		}
		times = append(times, fmt.Sprintf("%s %.1f s%s", w, done.at.Seconds()-start.at.Seconds(), note))
		gate = done
	}
	what, said := fmt.Sprintf("%s -> %s", from, to), ""
	if broken != nil {
		what += fmt.Sprintf(" with %s failing", broken.key())
		said = fmt.Sprintf(", production halted with %s", halt)
	}
	fmt.Printf("  %s: %s, in %.1f s%s; from the API server's records: %s\n", what, strings.Join(times, ", "), gate.at.Seconds()-raise.at.Seconds(), said, strings.Join(order, "; "))
	return fmt.Sprintf("%s: %s", what, strings.Join(times, ", ")), nil
}
