package cluster_test

import (
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"

	"github.com/seed-6471616d/function-cluster-platform/internal/engine"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
)

// waveLabel is the wave label, written out here apart from the function's
// constant.
const waveLabel = "platform.example.org/wave"

// fleetCluster is a Cluster of the fleet as Crossplane delivers it: its
// wave and cloud labels, the minor its control plane and pool run (and
// its status.upgrade.target), its Ready condition, and more conditions
// (type, status, reason). Its status.charts are empty: it runs none of the
// environment's charts, so it proves and holds none (chartsOf sets them).
func fleetCluster(ns, name, cloud, wave, runs string, ready bool, conds ...[3]string) fntest.Object {
	cs := []any{
		map[string]any{"type": "Ready", "status": map[bool]string{true: "True", false: "False"}[ready], "reason": map[bool]string{true: "Available", false: "Unavailable"}[ready]},
		map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
	}
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": c[0] + " says " + c[2]})
	}
	labels := map[string]any{"cloud": cloud}
	if wave != "" {
		labels[waveLabel] = wave
	}
	return fntest.Object{
		"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"status": map[string]any{
			"upgrade":    map[string]any{"target": runs, "controlPlane": runs},
			"nodePools":  []any{map[string]any{"name": "general", "version": runs}},
			"conditions": cs,
			"charts":     map[string]any{},
		},
	}
}

// rolloutWaves are the environment's waves of these tests: canary counts
// only the namespace platform-canary; production waits for approval.
func rolloutWaves(production map[string]any) []any {
	p := map[string]any{"name": "production", "requiresApproval": true}
	for k, v := range production {
		p[k] = v
	}
	return []any{
		map[string]any{"name": "canary", "namespaces": []any{"platform-canary"}},
		map[string]any{"name": "staging"},
		p,
	}
}

// rolloutWorld is a converged EKS Cluster of wave production running
// 1.33, with the environment's version raised to 1.34: what the rollout
// decides for it.
func rolloutWorld(t testing.TB, wave string, production map[string]any) *fntest.World {
	t.Helper()
	x := fntest.AWSXR()
	if wave != "" {
		x["metadata"].(map[string]any)["labels"].(map[string]any)[waveLabel] = wave
	}
	w := &fntest.World{XR: x, Envs: envs, Observed: map[string]fntest.Object{}}
	fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", rolloutWaves(production))(w)
	rsp := converge(t, w)
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	// Crossplane writes the status the function desires, and the Ready
	// condition it derives from the composed resources: all Ready.
	conds, _ := st["conditions"].([]any)
	st["conditions"] = append(conds, map[string]any{"type": "Ready", "status": "True", "reason": "Available"})
	w.XR["status"] = st
	w.Observed = fntest.ObserveAll(rsp, w.Observed)
	fntest.EnvEdit("cluster-platform-baseline", "version", "1.34")(w)
	return w
}

// target134 is what the environment of rolloutWorld asks its Cluster for,
// as a ruling names it: Kubernetes 1.34 and the catalog's chart versions.
const target134 = "1.34+cert-manager=v1.19.1,external-dns=1.19.0,ingress-nginx=4.13.3,kube-prometheus-stack=79.5.0"

// rolloutStatus is status.rollout of a response.
func rolloutStatus(rsp *fnv1.RunFunctionResponse) map[string]any {
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	r, _ := st["rollout"].(map[string]any)
	return r
}

// TestRolloutGate holds a production Cluster at the version it runs while
// the earlier waves have not run the environment's new version Ready, and
// moves it once they have: read from what the function asks the EKS
// control plane for, the RolloutGated condition, status.rollout and the
// requirements it returns.
func TestRolloutGate(t *testing.T) {
	type want struct {
		asks      string // spec.forProvider.version of the control plane
		adopted   string // status.upgrade.target
		condition string // RolloutGated, "" for none
		rollout   map[string]any
		requires  []string
		gated     bool   // the gated TTL
		message   string // a part of status.rollout.message, "" for any
	}
	canaryDone := fleetCluster("platform-canary", "c1", "gcp", "canary", "1.34", true)
	stagingDone := []fntest.Object{
		fleetCluster("team-edge", "s1", "azure", "staging", "1.34", true),
		fleetCluster("team-other", "s2", "gcp", "staging", "1.34", true),
	}
	approved := map[string]any{"approved": []any{"1.34"}}
	// ruling is the one requirement of a gated Cluster: the fleet
	// controller's ruling on it.
	ruling := []string{requirementRuling}
	cases := map[string]struct {
		reason     string
		wave       string
		production map[string]any
		world      func(w *fntest.World)
		want       want
	}{
		"StagingBehind": {
			reason: "A staging Cluster still runs 1.33: production keeps 1.33 and names it; the other namespace's are counted, not named.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{
					"rollout-wave-canary": {canaryDone},
					"rollout-wave-staging": {
						fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true),
						fleetCluster("team-other", "s2", "gcp", "staging", "1.33", true),
					},
				}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"StagingNotReady": {
			reason: "A staging Cluster runs 1.34 but is not Ready while no change is under way: it failed, and production halts.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{
					"rollout-wave-canary":  {canaryDone},
					"rollout-wave-staging": {fleetCluster("team-edge", "s1", "azure", "staging", "1.34", false), stagingDone[1]},
				}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Halt", gated: true,
				requires: ruling,
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Halt",
					"failed": map[string]any{"name": "s1", "namespace": "team-edge", "cloud": "azure", "reason": "Unavailable"}}},
		},
		"StagingMidUpgrade": {
			reason: "A staging Cluster that adopted 1.34 and still runs 1.33 is under way, not failed: production holds.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				moving := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true, [3]string{"Upgrading", "True", "ControlPlaneUpgrade"})
				moving["status"].(map[string]any)["upgrade"].(map[string]any)["target"] = "1.34"
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {moving, stagingDone[1]}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"EarlierWavesDone": {
			reason: "Every earlier Cluster runs 1.34 and is Ready, and 1.34 is approved for production: it moves.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": stagingDone}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"NotApproved": {
			reason: "The earlier waves are done, but the environment has not approved 1.34 for production: it waits.",
			wave:   "production",
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": stagingDone}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Approval", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Approval"}},
		},
		"ApprovedAnotherTarget": {
			reason: "An approval of another version does not approve this one.",
			wave:   "production", production: map[string]any{"approved": []any{"1.33"}},
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": stagingDone}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Approval", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Approval"}},
		},
		"StagingFailed": {
			reason: "A staging Cluster whose provider cannot reconcile its upgrade halts production, which names it.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				failed := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true, [3]string{"ClusterReady", "False", "ReconcileError"})
				failed["status"].(map[string]any)["upgrade"].(map[string]any)["target"] = "1.34"
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {failed, stagingDone[1]}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Halt", gated: true,
				requires: ruling,
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Halt",
					"failed": map[string]any{"name": "s1", "namespace": "team-edge", "cloud": "azure", "reason": "ClusterReady ReconcileError"}}},
		},
		"OtherTenantFailed": {
			reason: "A failed staging Cluster of another namespace halts production too, but is not named.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				failed := fleetCluster("team-other", "s2", "gcp", "staging", "1.33", false)
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {stagingDone[0], failed}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Halt", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Halt"}},
		},
		"FleetNotDelivered": {
			reason: "Until Crossplane delivers the earlier waves' Clusters, the Cluster keeps its version and asks for them.",
			wave:   "production", production: approved,
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"NoRuling": {
			reason: "The fleet controller is not running (Crossplane delivers no ConfigMap): the Cluster keeps 1.33 and says the controller has not ruled. The gate fails closed.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{requirementRuling: {}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "the fleet controller has not ruled on this Cluster",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"RulingOnAnotherTarget": {
			reason: "The controller's ruling says Adopt, but for 1.33: it has not seen the Cluster ask for 1.34 yet, so the Cluster holds.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				r := rollout.Ruling{Cluster: rollout.RefOf(w.XR), Wave: "production", Target: "1.33", Verdict: rollout.Adopt, Message: "adopt"}
				w.Extra = map[string][]fntest.Object{requirementRuling: {r.Object("crossplane-system")}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "ruling (ConfigMap crossplane-system/cluster.team-edge.edge) is on 1.33;",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"ForgedRuling": {
			reason: "A ConfigMap at the ruling's name that the controller did not write (no ruling label) is not read: the Cluster holds.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				r := rollout.Ruling{Cluster: rollout.RefOf(w.XR), Wave: "production", Target: target134, Verdict: rollout.Adopt}.Object("crossplane-system")
				delete(r["metadata"].(map[string]any), "labels")
				w.Extra = map[string][]fntest.Object{requirementRuling: {r}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "the fleet controller did not write it",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"RulingOfAnotherWave": {
			reason: "The controller counts the Cluster in another wave than its own environment does (waves set in a cloud layer): it holds rather than trust either.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				r := rollout.Ruling{Cluster: rollout.RefOf(w.XR), Wave: "staging", Target: target134, Verdict: rollout.Adopt}
				w.Extra = map[string][]fntest.Object{requirementRuling: {r.Object("crossplane-system")}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "counts this Cluster in wave staging",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"EmptyEarlierWave": {
			reason: "The canary wave admits a namespace no Cluster is in (a typo): it proves nothing and production holds, naming the wave.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {fleetCluster("platform-canry", "c1", "gcp", "canary", "1.34", true)}, "rollout-wave-staging": stagingDone}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "wave canary has no Cluster that follows the environment",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"StagingReadyAtOlderGeneration": {
			reason: "A staging Cluster Ready on 1.34 at an older generation than its own proves nothing: production holds (and does not halt).",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				stale := fleetCluster("team-edge", "s1", "azure", "staging", "1.34", true)
				stale["metadata"].(map[string]any)["generation"] = 4.0
				for _, c := range stale["status"].(map[string]any)["conditions"].([]any) {
					c.(map[string]any)["observedGeneration"] = 3.0
				}
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {stale, stagingDone[1]}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true, requires: ruling,
				message: "until wave staging runs it and is Ready",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"StagingBeingDeleted": {
			reason: "A broken staging Cluster being deleted neither holds nor halts production while another staging Cluster runs 1.34 Ready.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				going := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", false, [3]string{"ClusterReady", "False", "ReconcileError"})
				going["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T11:00:00Z"
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {going, stagingDone[1]}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted", requires: ruling,
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"StaleOwnStatusAfterAdopting": {
			reason: "The Cluster adopted 1.34 (its control plane asks for it) but reads a stale copy of its own status (target 1.33) while staging has since failed: it keeps 1.34, never walks back to 1.33, and reads no ruling.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Observed = maps.Clone(w.Observed)
				cp := overlay.DeepCopy(w.Observed["cluster"])
				fntest.Set("spec.forProvider.version", "1.34")(cp)
				w.Observed["cluster"] = cp
				failed := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", false)
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {failed}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Keep"}},
		},
		"UnlabelledIsLastWave": {
			reason: "A Cluster without a wave label is in the last wave.",
			wave:   "", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"RushingTenant": {
			reason: "A tenant that labels its Cluster canary in a namespace the canary wave does not admit is in the last wave: it cannot rush.",
			wave:   "canary", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"HoldingBackOtherTenant": {
			reason: "A broken Cluster labelled staging in a namespace the staging wave does not admit counts in production: it cannot halt another tenant's production.",
			wave:   "production", production: map[string]any{"approved": []any{"1.34"}},
			world: func(w *fntest.World) {
				fntest.EnvEdit("cluster-platform-baseline", "rollout.waves", []any{
					map[string]any{"name": "canary", "namespaces": []any{"platform-canary"}},
					map[string]any{"name": "staging", "namespaces": []any{"team-edge"}},
					map[string]any{"name": "production", "requiresApproval": true, "approved": []any{"1.34"}},
				})(w)
				broken := fleetCluster("team-hostile", "evil", "aws", "staging", "1.33", false, [3]string{"ClusterReady", "False", "ReconcileError"})
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {stagingDone[0], broken}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"PinnedStagingNotCounted": {
			reason: "A staging Cluster that pins 1.33 follows its owner: production does not wait for it, and counts it.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				pinned := fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)
				pinned["spec"] = map[string]any{"parameters": map[string]any{"version": "1.33"}}
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": {pinned, stagingDone[1]}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"WaveFull": {
			reason: "Production moves one Cluster at a time (maxUnavailable 1) and another production Cluster is mid-upgrade: this one holds, reading every Cluster of the kind.",
			wave:   "production", production: map[string]any{"approved": []any{"1.34"}, "maxUnavailable": 1.0},
			world: func(w *fntest.World) {
				moving := fleetCluster("team-a", "p1", "gcp", "production", "1.33", true)
				moving["status"].(map[string]any)["upgrade"].(map[string]any)["target"] = "1.34"
				w.Extra = map[string][]fntest.Object{"rollout-fleet": {canaryDone, stagingDone[0], stagingDone[1], moving}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"WaveHasRoom": {
			reason: "The other production Cluster already runs 1.34 Ready: there is room, and this one moves.",
			wave:   "production", production: map[string]any{"approved": []any{"1.34"}, "maxUnavailable": 1.0},
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-fleet": {canaryDone, stagingDone[0], stagingDone[1], fleetCluster("team-a", "p1", "gcp", "production", "1.34", true)}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"LegacyStagingBehind": {
			reason: "A legacy XCluster of a claim counts in the same rollout, in its claim's namespace: a staging one behind holds production, counted, not named, since another team owns it.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				legacy := fleetCluster("", "legacy-aws-5mqlz", "aws", "staging", "1.33", true)
				legacy["apiVersion"], legacy["kind"] = "legacy.platform.example.org/v1alpha1", "XCluster"
				legacy["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/claim-namespace"] = "team-b"
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {canaryDone}, "rollout-wave-staging": stagingDone, "xrollout-wave-staging": {legacy}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "production", "target": "1.34", "verdict": "Hold"}},
		},
		"Pinned": {
			reason: "The owner's pin is not gated: the Cluster moves to it while staging is behind, and status says so.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				fntest.Set("spec.parameters.version", "1.34")(w.XR)
				w.Extra = map[string][]fntest.Object{"rollout-wave-staging": {fleetCluster("team-edge", "s1", "azure", "staging", "1.33", true)}}
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Pinned",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Pinned"}},
		},
		"AlreadyMoving": {
			reason: "A Cluster that adopted the target keeps moving to it whatever the fleet does; it reads no fleet.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				fntest.Set("status.upgrade.target", "1.34")(w.XR)
			},
			want: want{asks: "1.34", adopted: "1.34", condition: "FALSE/Adopted",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Keep"}},
		},
		"NewCluster": {
			reason: "A Cluster whose control plane does not exist yet is created at the target: nothing runs on it to protect.",
			wave:   "production", production: approved,
			world: func(w *fntest.World) {
				w.Observed = map[string]fntest.Object{}
				delete(w.XR, "status")
			},
			want: want{adopted: "1.34", condition: "FALSE/Adopted",
				rollout: map[string]any{"wave": "production", "target": "1.34", "verdict": "Adopt"}},
		},
		"NoWaves": {
			reason: "Without rollout.waves every Cluster adopts the environment's version at once, and nothing is said of a rollout.",
			wave:   "production", production: approved,
			world: fntest.EnvEdit("cluster-platform-baseline", "rollout", nil),
			want:  want{asks: "1.34", adopted: "1.34"},
		},
		"StagingWaitsForCanary": {
			reason: "A staging Cluster waits for canary alone, and reads no later wave.",
			wave:   "staging", production: approved,
			world: func(w *fntest.World) {
				w.Extra = map[string][]fntest.Object{"rollout-wave-canary": {fleetCluster("platform-canary", "c1", "gcp", "canary", "1.33", true)}}
			},
			want: want{asks: "1.33", adopted: "1.33", condition: "TRUE/Hold", gated: true,
				requires: ruling,
				rollout:  map[string]any{"wave": "staging", "target": "1.34", "verdict": "Hold"}},
		},
	}
	base := map[string]*fntest.World{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key := tc.wave + "/" + cmp.Diff(nil, tc.production)
			if base[key] == nil {
				base[key] = rolloutWorld(t, tc.wave, tc.production)
			}
			b := base[key]
			w := &fntest.World{XR: overlay.DeepCopy(b.XR), Envs: b.Envs, Observed: b.Observed}
			if tc.world != nil {
				tc.world(w)
			}
			rsp := call(t, w)
			if msg := fntest.Fatal(rsp); msg != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, msg)
			}
			got := want{
				asks:      get(fntest.Desired(rsp)["cluster"], "spec.forProvider.version"),
				adopted:   get(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status.upgrade.target"),
				condition: condition(rsp, "RolloutGated"),
				rollout:   rolloutStatus(rsp),
				gated:     rsp.GetMeta().GetTtl().AsDuration() == ttlGated,
			}
			for name := range rsp.GetRequirements().GetResources() {
				if strings.HasPrefix(name, "rollout-") {
					got.requires = append(got.requires, name)
				}
			}
			if msg, _ := got.rollout["message"].(string); tc.want.message != "" && strings.Contains(msg, tc.want.message) {
				got.message = tc.want.message
			} else if tc.want.message != "" {
				got.message = msg
			}
			if got.rollout != nil {
				delete(got.rollout, "message")
				delete(got.rollout, "charts") // TestRolloutCharts
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			// The same request renders the same bytes.
			again := call(t, w)
			if !proto.Equal(rsp, again) {
				t.Errorf("%s\nthe same request rendered twice differs", tc.reason)
			}
		})
	}
}

// TestReconcileErrorReason keeps the rollout's word for a provider's
// refusal the engine's.
func TestReconcileErrorReason(t *testing.T) {
	if rollout.ReasonReconcileError != engine.ReasonReconcileError {
		t.Errorf("rollout.ReasonReconcileError is %q, the engine sets %q", rollout.ReasonReconcileError, engine.ReasonReconcileError)
	}
}
