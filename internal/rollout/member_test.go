package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cluster is a Cluster XR of namespace team-a with labels, status.upgrade,
// node pool versions and conditions (type=status pairs).
func cluster(labels map[string]any, upgrade map[string]any, pools []string, conds ...[2]string) map[string]any {
	np := make([]any, 0, len(pools))
	for i, v := range pools {
		p := map[string]any{"name": string(rune('a' + i)), "ready": true}
		if v != "" {
			p["version"] = v
		}
		np = append(np, p)
	}
	cs := make([]any, 0, len(conds))
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c[0], "status": c[1], "reason": c[0] + c[1], "message": "says " + c[0]})
	}
	return map[string]any{
		"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "c", "namespace": "team-a", "labels": labels},
		"status":   map[string]any{"upgrade": upgrade, "nodePools": np, "conditions": cs},
	}
}

// staleReason is a Stale member's Reason.
const staleReason = "Crossplane has not reconciled its current spec yet (no Ready condition, or one of an older generation)"

// generation sets o's metadata.generation to gen and every condition's
// observedGeneration to observed.
func generation(o map[string]any, gen, observed int64) map[string]any {
	o["metadata"].(map[string]any)["generation"] = gen
	for _, c := range o["status"].(map[string]any)["conditions"].([]any) {
		c.(map[string]any)["observedGeneration"] = float64(observed)
	}
	return o
}

func TestMemberOf(t *testing.T) {
	labels := map[string]any{"cloud": "aws", Label: "staging"}
	up := map[string]any{"target": "1.31", "phase": "UpToDate", "controlPlane": "1.31"}
	cases := map[string]struct {
		reason string
		obj    map[string]any
		want   Member
	}{
		"UpToDate": {
			reason: "A Cluster whose control plane and pools run the target, Ready and Synced, runs and asks for it.",
			obj:    cluster(labels, up, []string{"1.31.4-eks.2", "1.31"}, [2]string{"Ready", "True"}, [2]string{"Synced", "True"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}, Ready: true},
		},
		"PoolBehind": {
			reason: "A pool that still runs the old minor: the Cluster runs the lowest, not the control plane's.",
			obj: cluster(labels, map[string]any{"target": "1.31", "controlPlane": "1.31"}, []string{"1.31", "v1.30.9"},
				[2]string{"Ready", "True"}, [2]string{"Synced", "True"}, [2]string{"Upgrading", "True"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.30"}, Asks: Target{Kubernetes: "1.31"}, Ready: true, Reason: "UpgradingTrue: says Upgrading"},
		},
		"TenMinors": {
			reason: "Minors compare as numbers: 1.9 is older than 1.10.",
			obj:    cluster(labels, map[string]any{"target": "1.10", "controlPlane": "1.10"}, []string{"1.9"}, [2]string{"Ready", "True"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.9"}, Asks: Target{Kubernetes: "1.10"}, Ready: true},
		},
		"PoolWithoutVersion": {
			reason: "A pool that reports no version yet is not counted.",
			obj:    cluster(labels, up, []string{""}, [2]string{"Ready", "True"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}, Ready: true},
		},
		"NothingRunsYet": {
			reason: "Without a control plane's version the Cluster runs nothing, whatever its pools say, and is not Ready.",
			obj:    cluster(map[string]any{"cloud": "gcp"}, map[string]any{"target": "1.31"}, []string{"1.30"}, [2]string{"Ready", "False"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "gcp",
				Asks: Target{Kubernetes: "1.31"}, Reason: "ReadyFalse: says Ready"},
		},
		"Refused": {
			reason: "Synced False is a failure (the function refused the change), and its words are the reason.",
			obj:    cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "False"}),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}, Ready: true, Failed: true, Reason: "SyncedFalse: says Synced"},
		},
		"ProviderRefused": {
			reason: "A condition of the Cluster False for ReconcileError is a failure: the provider cannot reconcile what the step asked, and no reconcile takes it further.",
			obj: func() map[string]any {
				o := cluster(labels, map[string]any{"target": "1.32", "controlPlane": "1.31"}, []string{"1.31"}, [2]string{"Ready", "True"}, [2]string{"Synced", "True"})
				st := o["status"].(map[string]any)
				st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": "ClusterReady", "status": "False", "reason": ReasonReconcileError, "message": "The provider cannot reconcile cluster: upgrade refused"})
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.32"}, Ready: true, Failed: true,
				Reason: "ClusterReady ReconcileError: The provider cannot reconcile cluster: upgrade refused"},
		},
		"Pinned": {
			reason: "An XR that pins spec.parameters.version is Pinned.",
			obj: func() map[string]any {
				o := cluster(labels, up, nil, [2]string{"Ready", "True"})
				o["spec"] = map[string]any{"parameters": map[string]any{"version": "1.31"}}
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}, Ready: true, Pinned: true},
		},
		"Charts": {
			reason: "status.charts are what the add-on releases run; the Cluster asks for the same.",
			obj: func() map[string]any {
				o := cluster(labels, up, nil, [2]string{"Ready", "True"})
				o["status"].(map[string]any)["charts"] = map[string]any{"cert-manager": "v1.19.1"}
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Ready: true,
				Runs: Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}},
				Asks: Target{Kubernetes: "1.31", Charts: map[string]string{"cert-manager": "v1.19.1"}}},
		},
		"LegacyClaim": {
			reason: "A legacy XCluster of a claim counts in its claim's namespace.",
			obj: map[string]any{"metadata": map[string]any{"name": "legacy-aws-5mqlz",
				"labels": map[string]any{"crossplane.io/claim-namespace": "team-b", Label: "staging"}}},
			want: Member{Name: "legacy-aws-5mqlz", Namespace: "team-b", Wave: "staging", Stale: true, Reason: staleReason},
		},
		"NoStatus": {
			reason: "A Cluster without status runs and asks for nothing, and is neither Ready nor failed: Crossplane has not reconciled it yet.",
			obj:    map[string]any{"metadata": map[string]any{"name": "new", "namespace": "team-b"}},
			want:   Member{Name: "new", Namespace: "team-b", Stale: true, Reason: staleReason},
		},
		"ReadyOfAnOlderGeneration": {
			reason: "A Ready condition observed at an older generation than the object's proves nothing: the Cluster is Stale, not Ready.",
			obj:    generation(cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "True"}), 3, 2),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Stale: true, Reason: staleReason,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"RefusedAtAnOlderGeneration": {
			reason: "Synced False of an older generation fails nothing: the new spec may have fixed it.",
			obj:    generation(cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "False"}), 5, 4),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Stale: true, Reason: staleReason,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"RefusedAtThisGeneration": {
			reason: "Synced False of the current generation is a failure though Ready is of an older one: a reconcile a Fatal refused writes Synced and leaves Ready as the last render set it.",
			obj: func() map[string]any {
				o := generation(cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "False"}), 5, 4)
				o["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["observedGeneration"] = float64(5)
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Stale: true, Failed: true, Reason: "SyncedFalse: says Synced",
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"CurrentGenerationAsFloat": {
			reason: "A required resource's numbers are float64 (a protobuf Struct): its generation is read all the same, and conditions at it count.",
			obj: func() map[string]any {
				o := generation(cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "True"}), 7, 7)
				o["metadata"].(map[string]any)["generation"] = 7.0
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Ready: true,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"CurrentGeneration": {
			reason: "Conditions observed at the object's generation count.",
			obj:    generation(cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Synced", "True"}), 7, 7),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Ready: true,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"Deleting": {
			reason: "A Cluster with a deletionTimestamp is Deleting.",
			obj: func() map[string]any {
				o := cluster(labels, up, nil, [2]string{"Ready", "True"})
				o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Ready: true, Deleting: true,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}},
		},
		"ReadySince": {
			reason: "ReadySince is the later of Ready's transition and the end of the last upgrade (Upgrading turning False).",
			obj: func() map[string]any {
				o := cluster(labels, up, nil, [2]string{"Ready", "True"}, [2]string{"Upgrading", "False"})
				cs := o["status"].(map[string]any)["conditions"].([]any)
				cs[0].(map[string]any)["lastTransitionTime"] = "2026-12-01T09:00:00Z"
				cs[1].(map[string]any)["lastTransitionTime"] = "2026-12-01T10:30:00Z"
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "aws", Wave: "staging", Ready: true,
				Runs: Target{Kubernetes: "1.31"}, Asks: Target{Kubernetes: "1.31"}, ReadySince: time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MemberOf(tc.obj)); diff != "" {
				t.Errorf("%s\nMemberOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMinor(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      string
		want   string
	}{
		"Minor":      {reason: "A minor is itself.", v: "1.31", want: "1.31"},
		"Patch":      {reason: "A patch names its minor.", v: "1.31.2", want: "1.31"},
		"V":          {reason: "A leading v is read.", v: "v1.30.1", want: "1.30"},
		"CloudBuild": {reason: "A cloud's build suffix is read past.", v: "1.29.8-gke.1211000", want: "1.29"},
		"EKSStyle":   {reason: "A minor with a suffix of its own.", v: "1.31-eks", want: "1.31"},
		"Empty":      {reason: "Nothing names no minor.", v: "", want: ""},
		"Major":      {reason: "A major alone names no minor.", v: "1", want: ""},
		"Garbage":    {reason: "Letters name no minor.", v: "latest", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Minor(tc.v); got != tc.want {
				t.Errorf("%s\nMinor(%q): want %q, got %q", tc.reason, tc.v, tc.want, got)
			}
		})
	}
}
