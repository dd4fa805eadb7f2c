package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// The contract's shapes of an environment and a resource row.
type (
	streamCondition struct {
		Type   string `json:"type"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	streamEnv struct {
		Name       string            `json:"name"`
		Namespace  string            `json:"namespace"`
		Ready      string            `json:"ready"`
		Synced     string            `json:"synced"`
		Message    string            `json:"message"`
		Conditions []streamCondition `json:"conditions"`
	}
	streamRow struct {
		ID         string `json:"id"`
		Resource   string `json:"resource"`
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Name       string `json:"name"`
		Ready      string `json:"ready"`
		Synced     string `json:"synced"`
		Message    string `json:"message"`
	}
)

// envView is what a viewer of a stream knows of the environment: the
// events applied in order, as the page does. It checks each event's ID
// follows the one before.
type envView struct {
	env     streamEnv
	rows    map[string]streamRow
	deleted bool
	// epoch and last are the last event's ID.
	epoch string
	last  uint64
	// events counts every event applied, snapshots included; turned the
	// rows that turned Ready=True.
	events, snapshots int
	turned            map[string]bool
}

// apply applies an event. first is set for a connection's first event:
// a snapshot when fresh is set, else the event after the last one.
func (v *envView) apply(ev sseEvent, first, fresh bool) error {
	if ev.epoch == "" {
		return fmt.Errorf("event %s %q has no <epoch>-<seq> id", ev.typ, ev.id)
	}
	switch {
	case first && fresh:
		if ev.typ != "snapshot" {
			return fmt.Errorf("a new stream began with %s %s, not a snapshot", ev.typ, ev.id)
		}
	case first && ev.typ == "snapshot":
		return fmt.Errorf("resumed after %s-%d with a snapshot %s, not with the events after it", v.epoch, v.last, ev.id)
	case ev.epoch != v.epoch || ev.seq != v.last+1:
		return fmt.Errorf("event %s %s follows %s-%d: a gap or a repeat", ev.typ, ev.id, v.epoch, v.last)
	}
	v.epoch, v.last = ev.epoch, ev.seq
	v.events++
	switch ev.typ {
	case "snapshot":
		var s struct {
			Environment streamEnv   `json:"environment"`
			Resources   []streamRow `json:"resources"`
		}
		if err := json.Unmarshal(ev.data, &s); err != nil {
			return fmt.Errorf("snapshot %s: %w", ev.id, err)
		}
		v.snapshots++
		v.env, v.rows = s.Environment, map[string]streamRow{}
		for _, r := range s.Resources {
			v.rows[r.ID] = r
		}
	case "environment":
		if err := json.Unmarshal(ev.data, &v.env); err != nil {
			return fmt.Errorf("environment %s: %w", ev.id, err)
		}
	case "resource":
		r := streamRow{}
		if err := json.Unmarshal(ev.data, &r); err != nil {
			return fmt.Errorf("resource %s: %w", ev.id, err)
		}
		if r.Ready == "True" && v.rows[r.ID].Ready != "True" {
			v.turned[r.ID] = true
		}
		v.rows[r.ID] = r
	case "removed":
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.data, &r); err != nil {
			return fmt.Errorf("removed %s: %w", ev.id, err)
		}
		delete(v.rows, r.ID)
	case "deleted":
		v.deleted = true
	default:
		return fmt.Errorf("event %s has the unknown type %q", ev.id, ev.typ)
	}
	return nil
}

// ready reports whether the environment and every row are Ready.
func (v *envView) ready() bool {
	if v.env.Ready != "True" || len(v.rows) == 0 {
		return false
	}
	for _, r := range v.rows {
		if r.Ready != "True" {
			return false
		}
	}
	return true
}

// readyCount is how many rows are Ready.
func (v *envView) readyCount() int {
	n := 0
	for _, r := range v.rows {
		if r.Ready == "True" {
			n++
		}
	}
	return n
}

// statusOf is a condition's status as the portal shows it: Unknown when
// the object has no such condition.
func statusOf(o object, typ string) string {
	if s, _, _ := condition(o, typ); s != "" {
		return s
	}
	return "Unknown"
}

// matches compares the view with the API server's: the environment's
// Ready and Synced, its resource references, and each one's Ready and
// Synced.
func (s *scenarios) matches(v *envView, ns, name string) error {
	live, err := s.k.get(xrAPIVersion, "AppEnvironment", ns, name)
	if err != nil {
		return err
	}
	if got, want := v.env.Ready+"/"+v.env.Synced, statusOf(live, "Ready")+"/"+statusOf(live, "Synced"); got != want {
		return fmt.Errorf("the stream says Ready/Synced %s, the API server %s", got, want)
	}
	want := map[string]string{}
	for _, r := range resourceRefs(live) {
		group, _, _ := strings.Cut(r.apiVersion, "/")
		if !strings.Contains(r.apiVersion, "/") {
			group = ""
		}
		o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
		if err != nil {
			return fmt.Errorf("composed %s %s: %w", r.kind, r.name, err)
		}
		want[group+"/"+r.kind+"/"+r.name] = statusOf(o, "Ready") + "/" + statusOf(o, "Synced")
	}
	got := map[string]string{}
	for id, r := range v.rows {
		got[id] = r.Ready + "/" + r.Synced
	}
	if !maps.Equal(got, want) {
		missing, extra := diff(want, got)
		return fmt.Errorf("the stream has %d rows, the API server %d resources; the API server's not in the stream: %v, the stream's not in the API server: %v", len(got), len(want), missing, extra)
	}
	return nil
}
