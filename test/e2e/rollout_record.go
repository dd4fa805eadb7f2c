package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// rolloutEvent is one watch event the API server sent of the rollout: of a
// Cluster XR, of its composed control plane, of the fleet controller's
// ruling on it, or of the environment.
type rolloutEvent struct {
	rv int64
	at time.Duration
	// typ is the event's type: LISTED (what a list brought, which may be
	// an object written long before), ADDED or MODIFIED (a write).
	typ string
	// of is the Cluster (namespace/name) an XR's, a control plane's or a
	// ruling's event is of; "" for the environment's.
	of string
	// xr is the XR's state, for an event of an XR.
	xr *rolloutState
	// cp is set for an event of a control plane: asked is the minor its
	// version field asks for, synced its Synced condition.
	cp            bool
	asked, synced string
	// ruling is set for an event of a ruling: verdict and target are
	// its verdict and target, said its message.
	ruling                bool
	verdict, target, said string
	// env is set for an event of an EnvironmentConfig: version is the
	// version EnvironmentConfig's version ("" for the waves'), approved
	// the last wave's approvals and typo whether staging's namespaces are
	// misspelt (the waves').
	env      bool
	version  string
	approved []string
	typo     bool
}

// write reports whether the event is a write the watch saw happen, not
// an object a list brought.
func (e rolloutEvent) write() bool { return e.typ == "ADDED" || e.typ == "MODIFIED" }

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
		e.typ = typ
		r.add(e)
	}
	var listed atomic.Int64
	done := func() { listed.Add(1) }
	go s.k.watchResumed(ctx, clusterXR.apiVersion, clusterXR.kind, rollout.Label, func(typ string, o object) { //nolint:errcheck // ends with ctx
		st := rolloutStateOf(o)
		add(typ, o, rolloutEvent{of: str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name"), xr: &st})
	}, done)
	names := make([]string, 0, len(rolloutFleet))
	for _, c := range rolloutFleet {
		names = append(names, c.name)
	}
	selector := xr.LabelComposite + " in (" + strings.Join(names, ",") + ")"
	for _, cp := range rolloutCP {
		go s.k.watchResumed(ctx, cp.kind.apiVersion, cp.kind.kind, selector, func(typ string, o object) { //nolint:errcheck // ends with ctx
			synced, _, _ := condition(o, "Synced")
			add(typ, o, rolloutEvent{
				of: str(o, "metadata", "namespace") + "/" + str(o, "metadata", "labels", xr.LabelComposite),
				cp: true, asked: rollout.Minor(str(o, cp.version...)), synced: synced,
			})
		}, done)
	}
	// The rulings of the rollout's Clusters: their ConfigMaps name them
	// "Cluster <namespace>/<name>".
	go s.k.watchResumed(ctx, rollout.RulingAPIVersion, rollout.RulingKind, rollout.LabelRuling+"=true", func(typ string, o object) { //nolint:errcheck // ends with ctx
		_, of, _ := strings.Cut(str(o, "data", "cluster"), " ")
		if rolloutWave[of] == "" || str(o, "metadata", "namespace") != rollout.DefaultNamespace {
			return
		}
		add(typ, o, rolloutEvent{of: of, ruling: true, verdict: str(o, "data", "verdict"), target: str(o, "data", "target"), said: str(o, "data", "message")})
	}, done)
	go s.k.watchResumed(ctx, "apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", rolloutEnvLabel+"=true", func(typ string, o object) { //nolint:errcheck // ends with ctx
		waves, _ := at(o, "data", "rollout", "waves").([]any)
		e := rolloutEvent{env: true, version: str(o, "data", "version")}
		for i, w := range waves {
			wm, _ := w.(map[string]any)
			if i == len(waves)-1 {
				list, _ := wm["approved"].([]any)
				for _, a := range list {
					s, _ := a.(string)
					e.approved = append(e.approved, s)
				}
			}
			if wm["name"] == "staging" {
				ns, _ := wm["namespaces"].([]any)
				e.typo = slices.ContainsFunc(ns, func(n any) bool { s, _ := n.(string); return strings.HasPrefix(s, "rolout-") })
			}
		}
		add(typ, o, e)
	}, done)
	watches := int64(len(rolloutCP) + 3)
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
		return listed.Load() == watches && len(xrs) == len(rolloutFleet) && len(cps) == len(rolloutFleet) && env,
			fmt.Errorf("%d of %d watches listed: %d XRs, %d control planes, the environment: %t", listed.Load(), watches, len(xrs), len(cps), env)
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

// heldSaying checks that each Cluster keep selects was recorded held on
// to with a message that says says, before the resource version before;
// it names the first Cluster recorded without.
func (r *rolloutRecord) heldSaying(keep func(rolloutCluster) bool, to, says string, before int64) error {
	for _, c := range rolloutFleet {
		if !keep(c) {
			continue
		}
		if _, ok := r.first(func(e rolloutEvent) bool {
			return e.of == c.key() && e.xr != nil && e.xr.holds(to, says) && e.rv < before
		}); !ok {
			return fmt.Errorf("%s was not recorded holding %s saying %q before resource version %d", c.key(), to, says, before)
		}
	}
	return nil
}

// askedFirst is the first event of a Cluster keep selects asking for to:
// its XR's status.upgrade.target, or its control plane's version field.
func (r *rolloutRecord) askedFirst(keep func(rolloutCluster) bool, to string) (rolloutEvent, bool) {
	sel := map[string]bool{}
	for _, c := range rolloutFleet {
		sel[c.key()] = keep(c)
	}
	return r.first(func(e rolloutEvent) bool {
		return sel[e.of] && ((e.xr != nil && e.xr.target == to) || (e.cp && e.asked == to))
	})
}

// verify checks the round from from to to against the record, and returns
// its summary. No Cluster's status named another Cluster. Every wave
// after the first was gated (Hold, naming the wave before it) until the
// wave before it was done, and asked for to only after. With o.stopped,
// every Cluster held saying the fleet controller had not ruled, and none
// asked for to, until the controller's first ruling on to. With o.typo,
// staging and production held on the empty staging wave and asked for to
// only after the namespaces were fixed. Production, when o.broken is nil,
// moved only after its approval, and was gated for Approval before it;
// when o.broken is set, production halted after broken's control plane
// failed and asked for to only once it was healed.
func (r *rolloutRecord) verify(from, to string, o roundOpts, halt string) (string, error) {
	raise, ok := r.first(func(e rolloutEvent) bool { return e.env && e.version == to })
	if !ok {
		return "", fmt.Errorf("the API server recorded no environment with version %s", to)
	}
	// Each Cluster is in a namespace of its own: its status names waves,
	// never another Cluster.
	if e, ok := r.first(func(e rolloutEvent) bool { return e.xr != nil && len(e.xr.foreign) > 0 }); ok {
		return "", fmt.Errorf("%s's status names other Clusters, %v, at resource version %d: %s", e.of, e.xr.foreign, e.rv, e.xr)
	}
	all := func(rolloutCluster) bool { return true }
	gate := raise
	var times, order []string
	if o.stopped {
		resumed, ok := r.first(func(e rolloutEvent) bool { return e.ruling && e.target == to })
		if !ok {
			return "", fmt.Errorf("the API server recorded no ruling on %s", to)
		}
		if err := r.heldSaying(all, to, "has not ruled", resumed.rv); err != nil {
			return "", fmt.Errorf("with the fleet controller stopped: %w", err)
		}
		if e, ok := r.askedFirst(all, to); ok && e.rv <= resumed.rv {
			return "", fmt.Errorf("%s asked for %s at resource version %d (%.1f s), with the fleet controller stopped (its first ruling on %s at %d, %.1f s)", e.of, to, e.rv, e.at.Seconds(), to, resumed.rv, resumed.at.Seconds())
		}
		order = append(order, fmt.Sprintf("fleet controller stopped: all %d held from the raise at rv %d until its first ruling on %s at rv %d (%.1f s later)", len(rolloutFleet), raise.rv, to, resumed.rv, resumed.at.Seconds()-raise.at.Seconds()))
		gate = resumed
	}
	var fixed rolloutEvent
	if o.typo {
		if fixed, ok = r.first(func(e rolloutEvent) bool { return e.env && e.version == "" && !e.typo && e.rv > raise.rv }); !ok {
			return "", errors.New("the API server recorded no fix of staging's namespaces")
		}
		notCanary := func(c rolloutCluster) bool { return c.wave != "canary" }
		if err := r.heldSaying(notCanary, to, "wave staging has no Cluster that follows the environment", fixed.rv); err != nil {
			return "", fmt.Errorf("with staging's namespaces misspelt: %w", err)
		}
		if e, ok := r.askedFirst(notCanary, to); ok && e.rv <= fixed.rv {
			return "", fmt.Errorf("%s asked for %s at resource version %d (%.1f s), with staging's namespaces misspelt until %d (%.1f s)", e.of, to, e.rv, e.at.Seconds(), fixed.rv, fixed.at.Seconds())
		}
		order = append(order, fmt.Sprintf("staging's namespaces misspelt: staging and production held on the empty wave until the fix at rv %d", fixed.rv))
	}
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
			held, ok := r.first(func(e rolloutEvent) bool {
				return e.xr != nil && rolloutWave[e.of] == w && e.xr.holds(to, "wave "+prev) && e.rv < gate.rv
			})
			if !ok {
				return "", fmt.Errorf("no Cluster of wave %s was recorded with RolloutGated True for Hold on wave %s before wave %s was done", w, prev, prev)
			}
			order = append(order, fmt.Sprintf("%s held from rv %d (%q), asked after %s's rv %d at rv %d", w, held.rv, held.xr.message, prev, gate.rv, moved.rv))
		}
		start, note := gate, ""
		if w == "staging" && o.typo && fixed.rv > gate.rv {
			start, note = fixed, fmt.Sprintf(" after the fix of its namespaces (held %.1f s for it)", fixed.at.Seconds()-gate.at.Seconds())
		}
		switch {
		case w == "production" && o.broken == nil:
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
		case w == "staging" && o.broken != nil:
			broken := o.broken
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
			note += fmt.Sprintf(" (%s failed for %.1f s)", broken.name, healed.at.Seconds()-failed.at.Seconds())
		}
		times = append(times, fmt.Sprintf("%s %.1f s%s", w, done.at.Seconds()-start.at.Seconds(), note))
		gate = done
	}
	what, said := fmt.Sprintf("%s -> %s", from, to), ""
	switch {
	case o.stopped:
		what += " raised with the fleet controller stopped"
	case o.typo && o.broken != nil:
		what += fmt.Sprintf(" with staging's namespaces misspelt, then %s failing", o.broken.key())
	}
	if o.broken != nil {
		said = ", production halted with " + halt
	}
	fmt.Printf("  %s: %s, in %.1f s%s; from the API server's records: %s\n", what, strings.Join(times, ", "), gate.at.Seconds()-raise.at.Seconds(), said, strings.Join(order, "; "))
	return fmt.Sprintf("%s: %s", what, strings.Join(times, ", ")), nil
}
