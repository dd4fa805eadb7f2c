package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// releaseState is what a release scenario XR says of its release.
type releaseState struct {
	// selects is the release its revision selector selects; revision the
	// Composition revision Crossplane renders it with; runs its
	// status.platformRelease.
	selects, revision, runs string
	// ready and synced are its conditions, current when their observed
	// generation is its generation.
	ready, synced, current bool
	// since is its PlatformRelease condition's transition.
	since time.Time
	// message is the Synced condition's message.
	message string
}

// releaseStateOf reads a release scenario XR: a namespaced Cluster, or the
// claim's XCluster, which says how it is composed at the top of its spec.
func releaseStateOf(o object) releaseState {
	spec := rollout.CrossplaneSpec(str(o, "metadata", "namespace") != "")
	st := releaseState{
		selects:  str(o, append(slices.Clone(spec), "compositionRevisionSelector", "matchLabels", rollout.LabelRelease)...),
		revision: str(o, append(slices.Clone(spec), "compositionRevisionRef", "name")...),
		runs:     str(o, "status", "platformRelease"),
		current:  true,
	}
	gen := at(o, "metadata", "generation")
	conds, _ := at(o, "status", "conditions").([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch m["type"] {
		case "Ready", "Synced":
			if og, ok := m["observedGeneration"]; ok && fmt.Sprint(og) != fmt.Sprint(gen) {
				st.current = false
			}
		}
	}
	r, _, _ := condition(o, "Ready")
	s, _, msg := condition(o, "Synced")
	st.ready, st.synced, st.message = r == "True", s == "True", msg
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "PlatformRelease" {
			st.since, _ = time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
		}
	}
	return st
}

// proves reports whether the XR runs rel on one of revs, Ready and Synced at
// its generation: what the earlier waves must show before a later one
// changes revision.
func (st releaseState) proves(rel string, revs map[string]string) bool {
	return st.runs == rel && revs[st.revision] == rel && st.ready && st.synced && st.current
}

func (st releaseState) String() string {
	return fmt.Sprintf("selects %q, revision %q, runs %q, Ready %t, Synced %t (%q), at its generation %t", st.selects, st.revision, st.runs, st.ready, st.synced, st.message, st.current)
}

// releaseEvent is a watch event of a release scenario XR.
type releaseEvent struct {
	rv int64
	at time.Time
	of string
	st releaseState
}

// resourceVersion is the resource version etcd wrote the event's object at.
func (e releaseEvent) resourceVersion() int64 { return e.rv }

// releaseRecord keeps the API server's watch events of the release
// scenario's XRs.
type releaseRecord struct{ eventLog[releaseEvent] }

// releaseKey is a release scenario XR's key: a namespaced Cluster's
// namespace/name, an XCluster's its claim's.
func releaseKey(o object) string {
	if ns := str(o, "metadata", "namespace"); ns != "" {
		return ns + "/" + str(o, "metadata", "name")
	}
	return str(o, "metadata", "labels", xr.LabelClaimNamespace) + "/" + str(o, "metadata", "labels", xr.LabelClaimName)
}

// recordRelease watches the release scenario's XRs, namespaced and the
// claim's, until ctx ends; it returns once both watches listed them all.
func (s *scenarios) recordRelease(ctx context.Context) (*releaseRecord, error) {
	r := &releaseRecord{eventLog[releaseEvent]{start: time.Now()}}
	listed := make(chan struct{}, 2)
	for _, k := range []kindRef{clusterXR, legacyXR} {
		go s.k.watchResumed(ctx, k.apiVersion, k.kind, releaseLabel+"=true", func(typ string, o object) { //nolint:errcheck // ends with ctx
			if typ != "ADDED" && typ != "MODIFIED" {
				return
			}
			var rv int64
			_, _ = fmt.Sscan(str(o, "metadata", "resourceVersion"), &rv)
			r.add(releaseEvent{rv: rv, at: time.Now(), of: releaseKey(o), st: releaseStateOf(o)})
		}, func() { listed <- struct{}{} })
	}
	timeout := time.After(s.timeout)
	for range 2 {
		select {
		case <-listed:
		case <-timeout:
			return nil, errors.New("the release scenario's watches did not list within the timeout")
		}
	}
	return r, nil
}

// releaseRevisions are the release Compositions' revisions: the release
// each carries, by name.
func (s *scenarios) releaseRevisions() (map[string]string, error) {
	out := map[string]string{}
	for _, c := range releaseCuts {
		items, err := s.k.list("apiextensions.crossplane.io/v1", "CompositionRevision", "", "crossplane.io/composition-name="+c.name)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			out[str(o, "metadata", "name")] = str(o, "metadata", "labels", rollout.LabelRelease)
		}
	}
	return out, nil
}

// releaseStates reads the release scenario's XRs, by releaseKey.
func (s *scenarios) releaseStates() (map[string]releaseState, error) {
	out := map[string]releaseState{}
	for _, k := range []kindRef{clusterXR, legacyXR} {
		items, err := s.k.list(k.apiVersion, k.kind, "", releaseLabel+"=true")
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			out[releaseKey(o)] = releaseStateOf(o)
		}
	}
	return out, nil
}

// claimXR is the XR of a claim of the release scenario.
func (s *scenarios) claimXR(c rolloutCluster) (object, error) {
	items, err := s.k.list(legacyXR.apiVersion, legacyXR.kind, "", xr.LabelClaimNamespace+"="+c.namespace+","+xr.LabelClaimName+"="+c.name)
	if err != nil {
		return nil, err
	}
	if len(items) != 1 {
		return nil, fmt.Errorf("%s: %d XClusters of the claim, want 1", c.key(), len(items))
	}
	return items[0], nil
}

// deleteClaim deletes a claim and waits until its XR and what it composed
// are gone.
func (s *scenarios) deleteClaim(c rolloutCluster) (time.Duration, error) {
	o, err := s.claimXR(c)
	if err != nil {
		return 0, err
	}
	var left []placedRef
	for _, r := range resourceRefs(o) {
		left = append(left, placedRef{r, ""})
	}
	if err := s.k.delete(claimKind.apiVersion, claimKind.kind, c.namespace, c.name); err != nil {
		return 0, err
	}
	x := placedRef{composedRef{legacyXR.apiVersion, legacyXR.kind, str(o, "metadata", "name")}, ""}
	return s.waitGone(c.key()+"'s claim gone", []placedRef{x}, left)
}

// waitRelease waits until every XR of the release scenario that keep
// selects holds cond, saying meanwhile which does not.
func (s *scenarios) waitRelease(what string, keep func(rolloutCluster) bool, cond func(releaseState, map[string]string) bool) (time.Duration, error) {
	return s.waitFor(what, func() (bool, error) {
		revs, err := s.releaseRevisions()
		if err != nil {
			return false, err
		}
		states, err := s.releaseStates()
		if err != nil {
			return false, err
		}
		for _, c := range releaseFleet {
			if keep(c) && !cond(states[c.key()], revs) {
				return false, fmt.Errorf("%s: %s", c.key(), states[c.key()])
			}
		}
		return true, nil
	})
}

// inWave keeps the XRs of the named waves (every XR with none).
func inWave(waves ...string) func(rolloutCluster) bool {
	return func(c rolloutCluster) bool { return len(waves) == 0 || slices.Contains(waves, c.wave) }
}

// releaseComposed are the UIDs of what the release scenario's XRs compose,
// by kind/namespace/name; it fails on one being deleted.
func (s *scenarios) releaseComposed() (map[string]string, error) {
	out := map[string]string{}
	for _, c := range releaseFleet {
		get, ns := func() (object, error) { return s.k.get(clusterXR.apiVersion, clusterXR.kind, c.namespace, c.name) }, c.namespace
		if c == releaseClaim {
			// A legacy XR composes cluster-scoped resources.
			get, ns = func() (object, error) { return s.claimXR(c) }, ""
		}
		o, err := get()
		if err != nil {
			return nil, err
		}
		for _, r := range resourceRefs(o) {
			co, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.key(), err)
			}
			if str(co, "metadata", "deletionTimestamp") != "" {
				return nil, fmt.Errorf("%s: its %s %s is being deleted", c.key(), r.kind, r.name)
			}
			out[r.kind+"/"+ns+"/"+r.name] = str(co, "metadata", "uid")
		}
	}
	return out, nil
}

// sameComposed checks that what the XRs compose is what they composed
// before: nothing deleted, replaced (a new UID) or added.
func sameComposed(step string, before, now map[string]string) error {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch uid, ok := now[k]; {
		case !ok:
			diffs = append(diffs, k+" gone")
		case uid != before[k]:
			diffs = append(diffs, k+" replaced")
		}
	}
	for k := range now {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, k+" new")
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s: what the XRs compose changed: %s", step, strings.Join(diffs, ", "))
	}
	return nil
}

// verifyWaves checks, from the records, that no XR of a wave changed to a
// revision of rel before every XR of the earlier waves ran rel Ready and
// Synced at its generation; staging not before the canary's soak had
// passed since the last canary XR first rendered rel; production not
// before approvedAt.
func (r *releaseRecord) verifyWaves(rel string, revs map[string]string, approvedAt time.Time) error {
	events := r.sorted()
	wave := map[string]string{}
	for _, c := range releaseFleet {
		wave[c.key()] = c.wave
	}
	for i, w := range rolloutWaves {
		moved, ok := -1, false
		for j, e := range events {
			if wave[e.of] == w && revs[e.st.revision] == rel {
				moved, ok = j, true
				break
			}
		}
		if !ok {
			return fmt.Errorf("no record of wave %s changing to a revision of %s", w, rel)
		}
		m := events[moved]
		for _, earlier := range rolloutWaves[:i] {
			var soakFrom time.Time
			for _, c := range releaseFleet {
				if c.wave != earlier {
					continue
				}
				proven := slices.IndexFunc(events[:moved], func(e releaseEvent) bool { return e.of == c.key() && e.st.proves(rel, revs) })
				if proven < 0 {
					return fmt.Errorf("%s of wave %s changed to revision %s (resource version %d) before %s of wave %s ran %s Ready and Synced at its generation", m.of, w, m.st.revision, m.rv, c.key(), earlier, rel)
				}
				if t := events[proven].st.since; t.After(soakFrom) {
					soakFrom = t
				}
			}
			// The condition's time has a resolution of a second.
			if earlier == "canary" && m.at.Before(soakFrom.Add(releaseSoak-time.Second)) {
				return fmt.Errorf("%s of wave %s changed revision at %s, within the canary's soak of %s from %s", m.of, w, m.at.Format(time.RFC3339), releaseSoak, soakFrom.Format(time.RFC3339))
			}
		}
		if w == "production" && m.at.Before(approvedAt) {
			return fmt.Errorf("%s changed to revision %s before production was approved", m.of, m.st.revision)
		}
	}
	return nil
}
