package preview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

func TestClusterOf(t *testing.T) {
	xr := func(pin string, status map[string]any) xpsim.Object {
		x := xpsim.Object{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "ml", "namespace": "team-ml", "labels": map[string]any{"cloud": "azure", rollout.Label: "staging"}},
			"spec":     map[string]any{"parameters": map[string]any{"version": pin}},
			"status":   status,
		}
		if pin == "" {
			x["spec"] = map[string]any{}
		}
		return x
	}
	status := func(cp, ready string, report map[string]any) map[string]any {
		st := map[string]any{"upgrade": map[string]any{"controlPlane": cp, "target": cp}, "conditions": []any{map[string]any{"type": "Ready", "status": ready}}}
		if report != nil {
			st["rollout"] = report
		}
		return st
	}
	member := func(runs string, ready bool) rollout.Member {
		return rollout.Member{Name: "ml", Namespace: "team-ml", Cloud: "azure", Wave: "staging", Ready: ready,
			Runs: rollout.Target{Kubernetes: runs}, Asks: rollout.Target{Kubernetes: runs}}
	}
	type args struct {
		x     xpsim.Object
		fatal string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *FleetCluster
	}{
		"Reports": {
			reason: "A Cluster is what its status says (rollout.MemberOf), and reports the target in status.rollout (rollout.WantsOf).",
			args:   args{x: xr("", status("1.33", "True", map[string]any{"target": "1.34", "charts": map[string]any{"cert-manager": "v1.19.1"}, "verdict": "Hold"}))},
			want: &FleetCluster{Member: member("1.33", true), Reports: true, Says: "Hold",
				Wants: rollout.Target{Kubernetes: "1.34", Charts: map[string]string{"cert-manager": "v1.19.1"}}},
		},
		"Pins": {
			reason: "A Cluster whose XR pins its version says so, and reports no target of the rollout's.",
			args:   args{x: xr("1.33", status("1.33", "True", map[string]any{"target": "1.34", "verdict": "Pinned"}))},
			want: func() *FleetCluster {
				m := member("1.33", true)
				m.Pinned = true
				return &FleetCluster{Member: m, Pins: "1.33", Says: "Pinned"}
			}(),
		},
		"Refused": {
			reason: "A Cluster a Fatal refused carries the Fatal's words.",
			args:   args{x: xr("", status("1.32", "False", nil)), fatal: "under the old environment: invalid"},
			want: &FleetCluster{Member: func() rollout.Member {
				m := member("1.32", false)
				return m
			}(), Refused: "under the old environment: invalid"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := clusterOf(tc.args.x, tc.args.fatal)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nclusterOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReported(t *testing.T) {
	xr := func(generation any, status map[string]any) xpsim.Object {
		meta := map[string]any{"name": "ml", "namespace": "team-ml"}
		if generation != nil {
			meta["generation"] = generation
		}
		x := xpsim.Object{"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster", "metadata": meta}
		if status != nil {
			x["status"] = status
		}
		return x
	}
	conds := func(cs ...map[string]any) map[string]any {
		out := []any{}
		for _, c := range cs {
			out = append(out, c)
		}
		return map[string]any{"conditions": out}
	}
	cond := func(typ, status, reason, message string, more ...any) map[string]any {
		c := map[string]any{"type": typ, "status": status, "reason": reason}
		if message != "" {
			c["message"] = message
		}
		for i := 0; i+1 < len(more); i += 2 {
			c[more[i].(string)] = more[i+1] //nolint:forcetypeassert // the test's own keys.
		}
		return c
	}
	// rendered is what crossplane render gives the XR: its Ready at the
	// render's fixed time, the function's status.
	rendered := func(generation any) xpsim.Object {
		x := xr(generation, conds(cond("Ready", "True", "Available", "", "lastTransitionTime", conditionTime)))
		x["status"].(map[string]any)["rollout"] = map[string]any{"target": "1.34"}
		return x
	}
	type args struct {
		file, stands, first xpsim.Object
		fatal               string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   xpsim.Object
	}{
		"FirstReconcile": {
			reason: "What the first reconcile renders, Synced True, with no time crossplane render made up.",
			args:   args{file: xr(nil, nil), stands: xr(nil, nil), first: rendered(nil)},
			want: func() xpsim.Object {
				x := xr(nil, conds(cond("Ready", "True", "Available", ""), cond("Synced", "True", "ReconcileSuccess", "")))
				x["status"].(map[string]any)["rollout"] = map[string]any{"target": "1.34"}
				return x
			}(),
		},
		"KubectlFile": {
			reason: "A file as kubectl prints it: the conditions are observed at its generation, and Ready keeps the time it turned Ready, its status unchanged.",
			args: args{
				file:   xr(int64(4), conds(cond("Ready", "True", "Available", "", "lastTransitionTime", "2026-11-30T10:00:00Z", "observedGeneration", int64(3)))),
				stands: xr(int64(4), nil), first: rendered(int64(4)),
			},
			want: func() xpsim.Object {
				x := xr(int64(4), conds(cond("Ready", "True", "Available", "", "lastTransitionTime", "2026-11-30T10:00:00Z", "observedGeneration", int64(4)),
					cond("Synced", "True", "ReconcileSuccess", "", "observedGeneration", int64(4))))
				x["status"].(map[string]any)["rollout"] = map[string]any{"target": "1.34"}
				return x
			}(),
		},
		"Refused": {
			reason: "A reconcile refused writes no status but Synced False, with the Fatal's words: the XR as it stood.",
			args: args{
				file:   xr(nil, nil),
				stands: xr(nil, conds(cond("Ready", "True", "Available", "", "lastTransitionTime", conditionTime))), fatal: "invalid",
			},
			want: xr(nil, conds(cond("Ready", "True", "Available", ""), cond("Synced", "False", "ReconcileError", "invalid"))),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := reported(tc.args.file, tc.args.stands, tc.args.first, tc.args.fatal)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nreported(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
