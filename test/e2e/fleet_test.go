package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChangedFields(t *testing.T) {
	cond := func(typ, status, msg, at string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": msg, "lastTransitionTime": at}
	}
	type args struct {
		a, b object
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []string
	}{
		"OnlyBookkeeping": {
			reason: "A write that changed only the resourceVersion and managedFields changed no field.",
			args: args{
				a: object{"metadata": map[string]any{"resourceVersion": "1", "managedFields": []any{"a"}}},
				b: object{"metadata": map[string]any{"resourceVersion": "2", "managedFields": []any{"b"}}},
			},
		},
		"SpecAndStatus": {
			reason: "Fields are named two levels deep, from metadata, spec and status.",
			args: args{
				a: object{"metadata": map[string]any{"generation": 1}, "spec": map[string]any{"crossplane": map[string]any{"x": 1}}},
				b: object{"metadata": map[string]any{"generation": 2}, "spec": map[string]any{"crossplane": map[string]any{"x": 2}}, "status": map[string]any{"host": "h"}},
			},
			want: []string{"metadata.generation", "spec.crossplane", "status.host"},
		},
		"ConditionsByType": {
			reason: "A changed condition is named by its type; one whose lastTransitionTime alone changed, or that did not change, is not; one gone is.",
			args: args{
				a: object{"status": map[string]any{"conditions": []any{
					cond("Ready", "False", "Not ready yet: a", "t1"), cond("Synced", "True", "", "t1"), cond("Gone", "True", "", "t1"), cond("Same", "True", "", "t1"),
				}}},
				b: object{"status": map[string]any{"conditions": []any{
					cond("Ready", "False", "Not ready yet: b", "t1"), cond("Synced", "True", "", "t2"), cond("Same", "True", "", "t1"),
				}}},
			},
			want: []string{"status.conditions[Gone]", "status.conditions[Ready]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := changedFields(tc.args.a, tc.args.b)
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nchangedFields(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestXRChanges(t *testing.T) {
	xr := func(name string, gen, synced float64, msg string) object {
		return object{
			"kind":     "Cluster",
			"metadata": map[string]any{"namespace": "platform", "name": name, "generation": gen},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "observedGeneration": synced},
				map[string]any{"type": "ClusterReady", "status": "False", "reason": "Creating", "message": msg},
			}},
		}
	}
	type event struct {
		typ string
		o   object
	}
	type want struct {
		writes, back int
		trace        []string
	}
	cases := map[string]struct {
		reason string
		events []event
		want   want
	}{
		"Progress": {
			reason: "Writes whose conditions move forward count as writes, none of them putting one back; the first event of an XR is no write.",
			events: []event{
				{"ADDED", xr("a", 3, 3, "Not ready yet: cluster")},
				{"MODIFIED", xr("a", 4, 4, "Not ready yet: cluster")},
				{"MODIFIED", xr("a", 4, 4, "Not ready yet: nodepool")},
			},
			want: want{writes: 2, trace: []string{
				"0.0 s Cluster/platform/a metadata.generation",
				"0.0 s Cluster/platform/a [Synced] True ReconcileSuccess (generation 4/4): <nil>",
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/4): Not ready yet: nodepool",
			}},
		},
		"StaleCopy": {
			reason: "A write that takes Synced back to an older generation is traced with the older message it brought back; the write that undoes it puts Synced back to its value before, and counts.",
			events: []event{
				{"ADDED", xr("a", 5, 5, "Not ready yet: nodepool")},
				{"MODIFIED", xr("a", 5, 4, "Not ready yet: cluster")},
				{"MODIFIED", xr("a", 5, 5, "Not ready yet: nodepool")},
			},
			want: want{writes: 2, back: 1, trace: []string{
				"0.0 s Cluster/platform/a [Synced] True ReconcileSuccess (generation 4/5): <nil>",
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/5): Not ready yet: cluster",
				"0.0 s Cluster/platform/a [Synced] True ReconcileSuccess (generation 5/5): <nil>",
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/5): Not ready yet: nodepool",
			}},
		},
		"StaleMessageSameGeneration": {
			reason: "A stale copy of the same generation still shows, as a message put back, and so does the write that undoes it.",
			events: []event{
				{"ADDED", xr("a", 5, 5, "Not ready yet: cluster")},
				{"MODIFIED", xr("a", 5, 5, "Not ready yet: nodepool")},
				{"MODIFIED", xr("a", 5, 5, "Not ready yet: cluster")},
				{"MODIFIED", xr("a", 5, 5, "Not ready yet: nodepool")},
			},
			want: want{writes: 3, back: 2, trace: []string{
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/5): Not ready yet: cluster",
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/5): Not ready yet: nodepool",
				"0.0 s Cluster/platform/a [ClusterReady] False Creating (generation <nil>/5): Not ready yet: nodepool",
			}},
		},
		"UntracedBeyondThree": {
			reason: "Only the first tracedPerKind XRs of a kind are traced; the others' writes still count.",
			events: []event{
				{"ADDED", xr("a", 1, 1, "")}, {"ADDED", xr("b", 1, 1, "")}, {"ADDED", xr("c", 1, 1, "")}, {"ADDED", xr("d", 1, 1, "")},
				{"MODIFIED", xr("d", 1, 1, "Not ready yet: cluster")},
			},
			want: want{writes: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &xrChanges{start: time.Now().Add(time.Hour)}
			for _, e := range tc.events {
				c.observe(e.typ, e.o)
			}
			got := want{writes: c.writes["Cluster"], back: c.back["Cluster"]}
			for _, l := range c.trace {
				// The time since the start is negative here: drop it.
				_, rest, _ := strings.Cut(strings.TrimSpace(l), " s ")
				got.trace = append(got.trace, "0.0 s "+rest)
			}
			slices.Sort(got.trace)
			slices.Sort(tc.want.trace)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nobserve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
