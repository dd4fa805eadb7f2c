package portal

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed-6471616d/function-cluster-platform/internal/fleet"
	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// releaseWaves are the release's waves: canary counts only the platform
// team's XRs and soaks for an hour, staging team-a's and team-b's,
// production needs approval.
var releaseWaves = []any{
	map[string]any{"name": "canary", "namespaces": []any{"platform"}, "soak": "1h"},
	map[string]any{"name": "staging", "namespaces": []any{"team-a", "team-b"}},
	map[string]any{"name": "production", "requiresApproval": true},
}

// releaseEnv is the baseline EnvironmentConfig with releaseWaves (the
// production wave approving approved) and the release keys rel (none when
// nil).
func releaseEnv(rel map[string]any, approved ...any) *unstructured.Unstructured {
	waves := append([]any{}, releaseWaves...)
	if len(approved) > 0 {
		waves[2] = map[string]any{"name": "production", "requiresApproval": true, "approved": approved}
	}
	return withRelease(baselineConfig("cluster-platform-baseline", waves), rel)
}

// withRelease is the baseline EnvironmentConfig b with the release keys
// rel (none when nil).
func withRelease(b *unstructured.Unstructured, rel map[string]any) *unstructured.Unstructured {
	if rel != nil {
		_ = unstructured.SetNestedField(b.Object, rel, "data", "rollout", "release")
	}
	return b
}

// The release keys of a rollout to r2, and of its rollback.
var (
	toR2   = map[string]any{"target": "r2", "from": "r1"}
	backR1 = map[string]any{"target": "r1", "from": "r2", "rollback": true}
)

// releaseTime is when each XR's release first rendered it (its
// PlatformRelease condition's transition); the canary's soak ends an hour
// later.
const releaseTime = "2026-11-30T10:00:00Z"

// releaseXR is an XR of kind k named name (in namespace ns, or of a claim
// in ns for a legacy one: none when ns is ""), labelled with wave, at
// generation 3, of the test's Composition of its kind: it runs the
// release runs (status.platformRelease), its selector selects selects
// (written by the controller), Ready, and Synced as synced says.
// A Cluster is fleetCluster's, so that the version rollout sees it too.
func releaseXR(k fleet.Kind, ns, name, wave, runs, selects string, synced bool) *unstructured.Unstructured {
	u := fleetCluster(ns, name, "aws", wave, "1.33", "1.33", true)
	if k.Kind != xr.ClusterKind && k.Kind != xr.LegacyClusterKind {
		u.Object["spec"] = map[string]any{"parameters": map[string]any{}}
		unstructured.RemoveNestedField(u.Object, "status", "rollout")
		unstructured.RemoveNestedField(u.Object, "status", "upgrade")
	}
	u.SetAPIVersion(k.APIVersion)
	u.SetKind(k.Kind)
	if !k.Namespaced {
		u = legacy(u, ns, name)
		u.SetAPIVersion(k.APIVersion)
		u.SetKind(k.Kind)
	}
	crossplane := rollout.CrossplaneSpec(k.Namespaced)
	_ = unstructured.SetNestedField(u.Object, testComposition(k), append(crossplane, "compositionRef", "name")...)
	if selects != "" {
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{rollout.LabelRelease: selects}, rollout.ReleaseSelection(k.Namespaced)...)
		path := map[string]any{}
		p := []string{"f:spec"}
		if k.Namespaced {
			p = append(p, "f:crossplane")
		}
		_ = unstructured.SetNestedField(path, map[string]any{}, append(p, "f:compositionRevisionSelector", "f:matchLabels", "f:"+rollout.LabelRelease)...)
		raw, _ := json.Marshal(path)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: fleet.ReleaseManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}})
	}
	_ = unstructured.SetNestedField(u.Object, runs, "status", "platformRelease")
	conds := []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Available", "observedGeneration": int64(3), "lastTransitionTime": releaseTime},
		map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "observedGeneration": int64(3)},
		map[string]any{"type": "PlatformRelease", "status": "True", "reason": "Rendered", "message": "rendered by platform release " + runs, "lastTransitionTime": releaseTime},
	}
	if !synced {
		conds[1] = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "cannot compose resources: the release refused it", "observedGeneration": int64(3)}
	}
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	return u
}

// claimOf makes legacy XR u its claim's, named name in u's claim
// namespace, and returns the claim: bound to u (spec.resourceRef), it
// selects what u selects, by the controller's hand, and u's own selection
// is the claim syncer's copy.
func claimOf(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	k, ok := fleet.ClaimKindOf(u.GetKind())
	if !ok {
		panic("no claim kind of " + u.GetKind())
	}
	labels := u.GetLabels()
	labels[rollout.LabelClaimName] = name
	u.SetLabels(labels)
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.APIVersion, "kind": k.Kind,
		"metadata": map[string]any{"name": name, "namespace": labels[rollout.LabelClaimNamespace]},
		"spec":     map[string]any{"resourceRef": map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "name": u.GetName()}},
	}}
	if sel, ok, _ := unstructured.NestedFieldCopy(u.Object, "spec", "compositionRevisionSelector"); ok {
		_ = unstructured.SetNestedField(c.Object, sel, "spec", "compositionRevisionSelector")
	}
	c.SetManagedFields(u.GetManagedFields()) // a legacy XR's selection is under spec, as a claim's
	mf := u.GetManagedFields()
	for i := range mf {
		mf[i].Manager = "apiextensions.crossplane.io/claim"
	}
	u.SetManagedFields(mf)
	return c
}

// claimKindOf is the claim kind (fleet.ClaimKinds) of u; false when u is
// no claim.
func claimKindOf(u *unstructured.Unstructured) (fleet.Kind, bool) {
	i := slices.IndexFunc(fleet.ClaimKinds, func(k fleet.Kind) bool { return k.APIVersion == u.GetAPIVersion() && k.Kind == u.GetKind() })
	if i < 0 {
		return fleet.Kind{}, false
	}
	return fleet.ClaimKinds[i], true
}

// isClaim reports whether u is a claim (fleet.ClaimKinds).
func isClaim(u *unstructured.Unstructured) bool { _, ok := claimKindOf(u); return ok }

// releaseKind is the fleet.ReleaseKinds entry of kind.
func releaseKind(kind string) fleet.Kind {
	for _, k := range fleet.ReleaseKinds {
		if k.Kind == kind {
			return k
		}
	}
	panic("no kind " + kind)
}

// testComposition is the name of the test's Composition of XR kind k.
func testComposition(k fleet.Kind) string { return k.Resource.Resource + "-platform" }

// compositionRevision is a revision of the test's Composition of kind k
// labelled with release.
func compositionRevision(k fleet.Kind, release string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
		"metadata": map[string]any{"name": testComposition(k) + "-" + release, "labels": map[string]any{
			rollout.LabelRelease: release, fleet.LabelCompositionName: testComposition(k),
		}},
		"spec": map[string]any{"compositeTypeRef": map[string]any{"apiVersion": k.APIVersion, "kind": k.Kind}, "revision": int64(1)},
	}}
}

// releaseState says, per XR of releaseFleet by name, what it runs and
// selects and whether it is Ready and Synced: "r1" runs and selects r1,
// Ready; "r1>r2" runs r1 and selects r2; a trailing "!" is Synced False.
type releaseState map[string]string

// releaseFleet is a fleet of XRs of every kind in the three
// releaseWaves, the Composition revisions of r1 and r2 of each kind, and
// the baseline with the release keys rel (and approvals): each XR runs and
// selects what state says (r1 by default).
//
//   - canary: Cluster platform/canary-gke, Database platform/canary-db;
//   - staging: Cluster team-a/stg-eks, Database team-b/orders, XDatabase
//     orders-x7k2q of the claim team-b/orders (claimOf: its selection is
//     the claim's);
//   - production: AppEnvironment team-a/shop, XAppEnvironment shop-q9w2e
//     of a claim in team-c, WorkloadBudget team-c/budget (its update
//     policy Manual: pinned), XCluster ops-p4m8z of no claim, and
//     team-c's Database "foreign" of a Composition that is no release's
//     (it takes no part).
func releaseFleet(state releaseState, rel map[string]any, approved ...any) []runtime.Object {
	type one struct{ kind, ns, name, wave string }
	xrs := []one{
		{xr.ClusterKind, "platform", "canary-gke", "canary"}, {xr.DatabaseKind, "platform", "canary-db", "canary"},
		{xr.ClusterKind, "team-a", "stg-eks", "staging"}, {xr.DatabaseKind, "team-b", "orders", "staging"}, {xr.LegacyDatabaseKind, "team-b", "orders-x7k2q", "staging"},
		{xr.AppEnvironmentKind, "team-a", "shop", "production"}, {xr.LegacyAppEnvironmentKind, "team-c", "shop-q9w2e", "production"},
		{xr.WorkloadBudgetKind, "team-c", "budget", "production"}, {xr.LegacyClusterKind, "", "ops-p4m8z", "production"},
		{xr.DatabaseKind, "team-c", "foreign", "production"},
	}
	objs := []runtime.Object{namespace("platform"), namespace("team-c"), releaseEnv(rel, approved...)}
	for _, x := range xrs {
		s := state[x.name]
		if s == "" {
			s = "r1"
		}
		runs, selects, moving := strings.Cut(strings.TrimSuffix(s, "!"), ">")
		if !moving {
			selects = runs
		}
		k := releaseKind(x.kind)
		u := releaseXR(k, x.ns, x.name, x.wave, runs, selects, !strings.HasSuffix(s, "!"))
		switch x.name {
		case "budget":
			_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "crossplane", "compositionUpdatePolicy")
		case "foreign":
			_ = unstructured.SetNestedField(u.Object, "another-teams-databases", "spec", "crossplane", "compositionRef", "name")
		case "orders-x7k2q":
			objs = append(objs, claimOf(u, "orders"))
		}
		objs = append(objs, u)
	}
	for _, k := range fleet.ReleaseKinds {
		objs = append(objs, compositionRevision(k, "r1"), compositionRevision(k, "r2"))
	}
	return objs
}

// releaseSummary is what a test reads of a release view.
type releaseSummary struct {
	Heading string
	Message string
	Outside int
	Waves   []releaseWaveSummary
}

// releaseWaveSummary is a release wave: its gate, its counts, and its XRs
// as "Kind namespace/name runs>selects Verdict", and " (claim Kind
// namespace/name)" after an XR decided on its claim.
type releaseWaveSummary struct {
	Name     string
	Gate     string
	Failed   string
	WaitsFor []string
	Hidden   int
	Done     string
	Approved bool
	XRs      []string
}

func summarizeRelease(r *ReleaseView) *releaseSummary {
	if r == nil {
		return nil
	}
	out := &releaseSummary{Heading: fmt.Sprintf("%s from %s rollback=%v", r.Target, r.From, r.Rollback), Message: r.Message, Outside: r.Outside}
	for _, w := range r.Waves {
		s := releaseWaveSummary{
			Name: w.Name, Gate: strings.TrimSuffix(w.Gate.Verdict+" until "+w.Gate.Until, " until "), Failed: w.Gate.Failed, WaitsFor: w.Gate.WaitsFor,
			Hidden: w.Gate.Hidden, Done: fmt.Sprintf("%d/%d", w.Done, w.Total), Approved: w.Approved,
		}
		for _, x := range w.XRs {
			xr := fmt.Sprintf("%s %s/%s %s>%s %s", x.Kind, x.Namespace, x.Name, x.Runs, x.Selects, x.Verdict)
			if x.Claim != "" {
				xr += " (claim " + x.Claim + ")"
			}
			s.XRs = append(s.XRs, xr)
		}
		out.Waves = append(out.Waves, s)
	}
	return out
}

// controllerMoves are the fleet controller's moves (fleet.ReleaseMoves)
// on the XRs, claims and Composition revisions among objs, whole, under the
// baseline among them, at now, by "Kind namespace/name" (a legacy XR's
// claim's namespace): each its verdict and message; and, per wave in
// order, the verdict on the wave's first XR that has not moved yet (else
// on its first), as a gate is.
func controllerMoves(t *testing.T, objs []runtime.Object, now time.Time) (map[string]string, []string) {
	t.Helper()
	var configs, xrs, claims []map[string]any
	var revisions []*unstructured.Unstructured
	for _, o := range objs {
		u, _ := o.(*unstructured.Unstructured)
		switch _, isXR := kindOf(u); {
		case u.GetKind() == "EnvironmentConfig":
			configs = append(configs, u.Object)
		case u.GetKind() == "CompositionRevision":
			revisions = append(revisions, u)
		case isXR:
			xrs = append(xrs, u.Object)
		case isClaim(u):
			claims = append(claims, u.Object)
		}
	}
	b := fleet.BaselineOf(configs)
	moves, _, err := fleet.ReleaseMoves(b, xrs, claims, fleet.ReleasesOf(revisions), now)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	gates := make([]*rollout.Move, len(b.Settings.Waves))
	for i, mv := range moves {
		out[mv.Ref.Kind+" "+mv.Member.Namespace+"/"+mv.Ref.Name] = string(mv.Decision.Verdict) + ": " + mv.Decision.Message
		w := rollout.WaveOf(b.Settings.Waves, mv.Member)
		if g := gates[w]; !mv.Member.Pinned && (g == nil || (g.Decision.Verdict == rollout.Keep && mv.Decision.Verdict != rollout.Keep)) {
			gates[w] = &moves[i]
		}
	}
	var verdicts []string
	for _, g := range gates {
		if g != nil {
			verdicts = append(verdicts, string(g.Decision.Verdict))
		}
	}
	return out, verdicts
}

// TestFleetViewRelease shows a platform release in the fleet view: per
// wave, its gate and the XRs of every kind the user may see, each with
// the fleet controller's move on it (fleet.ReleaseMoves on the XRs as the
// API server holds them, not as the portal's informers slim them, at the
// portal's clock), through a rollout, a halt and a rollback.
func TestFleetViewRelease(t *testing.T) {
	noon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	type args struct {
		objs  []runtime.Object
		token string
		now   time.Time
		// refuse, when not nil, is how the API server answers the
		// portal's lists and watches of refused (the Databases when
		// empty).
		refuse  error
		refused schema.GroupVersionResource
	}
	canaryDone := releaseState{"canary-gke": "r2", "canary-db": "r2"}
	stagingDone := releaseState{"canary-gke": "r2", "canary-db": "r2", "stg-eks": "r2", "orders": "r2", "orders-x7k2q": "r2"}
	halted := releaseState{"canary-gke": "r2", "canary-db": "r2", "stg-eks": "r2", "orders": "r2!", "orders-x7k2q": "r1>r2"}
	// The rollback: production moved back (team-c's claim not yet), the
	// earlier waves run r2.
	rollingBack := releaseState{"canary-gke": "r2", "canary-db": "r2", "stg-eks": "r2", "orders": "r2", "orders-x7k2q": "r2", "shop": "r2>r1", "shop-q9w2e": "r2", "budget": "r2", "ops-p4m8z": "r1"}
	production := func(verdict string, shop, claim, ops string) []string {
		return []string{
			"AppEnvironment team-a/shop " + shop + " " + verdict, "WorkloadBudget team-c/budget " + claim + " Pinned",
			"XAppEnvironment team-c/shop-q9w2e " + claim + " " + verdict, "XCluster /ops-p4m8z " + ops + " " + verdict,
		}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   *releaseSummary
	}{
		"NoRelease": {
			reason: "A baseline without release keys shows no release.",
			args:   args{objs: releaseFleet(nil, nil), token: tokenPat, now: noon},
		},
		"WrongKeys": {
			reason: "Release keys that are wrong move nothing: the view says why, with no wave.",
			args:   args{objs: releaseFleet(nil, map[string]any{"target": "r2"}), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r2 from  rollback=false",
				Message: "The release keys are invalid, so nothing moves: environment.rollout.release.from: Required value: the release the fleet moves from: what an XR that selects no release yet is given while the waves hold it."},
		},
		"Start": {
			reason: "The release starts: the canary's XRs move, staging holds for them, production too; the pinned WorkloadBudget is not moved and counts for nothing; the Database of another team's Composition takes no part.",
			args:   args{objs: releaseFleet(nil, toR2), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Adopt", Done: "0/2", XRs: []string{"Cluster platform/canary-gke r1>r1 Adopt", "Database platform/canary-db r1>r1 Adopt"}},
				{Name: "staging", Gate: "Hold", WaitsFor: []string{"Cluster platform/canary-gke", "Database platform/canary-db"}, Done: "0/3",
					XRs: []string{"Cluster team-a/stg-eks r1>r1 Hold", "Database team-b/orders r1>r1 Hold", "XDatabase team-b/orders-x7k2q r1>r1 Hold (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Hold", WaitsFor: []string{"Cluster platform/canary-gke", "Database platform/canary-db", "Cluster team-a/stg-eks", "Database team-b/orders", "XDatabase team-b/orders-x7k2q"},
					Done: "0/3", XRs: production("Hold", "r1>r1", "r1>r1", "r1>r1")},
			}},
		},
		"Soaking": {
			reason: "The canary runs r2 since 10:00 and soaks for an hour: at 10:30 staging holds until 11:00.",
			args:   args{objs: releaseFleet(canaryDone, toR2), token: tokenPat, now: noon.Add(-90 * time.Minute)},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Keep", Done: "2/2", XRs: []string{"Cluster platform/canary-gke r2>r2 Keep", "Database platform/canary-db r2>r2 Keep"}},
				{Name: "staging", Gate: "Hold until 2026-11-30T11:00:00Z", Done: "0/3",
					XRs: []string{"Cluster team-a/stg-eks r1>r1 Hold", "Database team-b/orders r1>r1 Hold", "XDatabase team-b/orders-x7k2q r1>r1 Hold (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Hold", WaitsFor: []string{"Cluster team-a/stg-eks", "Database team-b/orders", "XDatabase team-b/orders-x7k2q"},
					Done: "0/3", XRs: production("Hold", "r1>r1", "r1>r1", "r1>r1")},
			}},
		},
		"Approval": {
			reason: "The earlier waves run r2 Ready: production waits for its approval of release=r2.",
			args:   args{objs: releaseFleet(stagingDone, toR2), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Keep", Done: "2/2", XRs: []string{"Cluster platform/canary-gke r2>r2 Keep", "Database platform/canary-db r2>r2 Keep"}},
				{Name: "staging", Gate: "Keep", Done: "3/3",
					XRs: []string{"Cluster team-a/stg-eks r2>r2 Keep", "Database team-b/orders r2>r2 Keep", "XDatabase team-b/orders-x7k2q r2>r2 Keep (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Approval", Done: "0/3", XRs: production("Approval", "r1>r1", "r1>r1", "r1>r1")},
			}},
		},
		"Approved": {
			reason: "Production's approvals list release=r2: it moves.",
			args:   args{objs: releaseFleet(stagingDone, toR2, "release=r2"), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Keep", Done: "2/2", XRs: []string{"Cluster platform/canary-gke r2>r2 Keep", "Database platform/canary-db r2>r2 Keep"}},
				{Name: "staging", Gate: "Keep", Done: "3/3",
					XRs: []string{"Cluster team-a/stg-eks r2>r2 Keep", "Database team-b/orders r2>r2 Keep", "XDatabase team-b/orders-x7k2q r2>r2 Keep (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Adopt", Done: "0/3", Approved: true, XRs: production("Adopt", "r1>r1", "r1>r1", "r1>r1")},
			}},
		},
		"HaltNamed": {
			reason: "r2 cannot render staging's Database (Synced False): production halts, and the platform team sees which XR failed.",
			args:   args{objs: releaseFleet(halted, toR2), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Keep", Done: "2/2", XRs: []string{"Cluster platform/canary-gke r2>r2 Keep", "Database platform/canary-db r2>r2 Keep"}},
				{Name: "staging", Gate: "Keep", Done: "1/3",
					XRs: []string{"Cluster team-a/stg-eks r2>r2 Keep", "Database team-b/orders r2>r2 Keep", "XDatabase team-b/orders-x7k2q r1>r2 Keep (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Halt", Failed: "Database team-b/orders", WaitsFor: []string{"Database team-b/orders", "XDatabase team-b/orders-x7k2q"},
					Done: "0/3", XRs: production("Halt", "r1>r1", "r1>r1", "r1>r1")},
			}},
		},
		"HaltNotNamed": {
			reason: "team-a's owner sees its own XRs alone: production's halt counts the XRs of team-b it waits for, and does not name the one that failed.",
			args:   args{objs: releaseFleet(halted, toR2), token: tokenAlice, now: noon},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Keep", Done: "0/0"},
				{Name: "staging", Gate: "Keep", Done: "1/1", XRs: []string{"Cluster team-a/stg-eks r2>r2 Keep"}},
				{Name: "production", Gate: "Halt", WaitsFor: []string{}, Hidden: 2, Done: "0/1", XRs: []string{"AppEnvironment team-a/shop r1>r1 Halt"}},
			}},
		},
		"Rollback": {
			reason: "A rollback to r1: production moves back first (team-c's claim's XR is written next), staging holds until it has, the canary until staging has; no approval, no soak.",
			args:   args{objs: releaseFleet(rollingBack, backR1), token: tokenPat, now: noon},
			want: &releaseSummary{Heading: "r1 from r2 rollback=true", Outside: 1, Waves: []releaseWaveSummary{
				{Name: "canary", Gate: "Hold", WaitsFor: []string{"XAppEnvironment team-c/shop-q9w2e"}, Done: "0/2",
					XRs: []string{"Cluster platform/canary-gke r2>r2 Hold", "Database platform/canary-db r2>r2 Hold"}},
				{Name: "staging", Gate: "Hold", WaitsFor: []string{"XAppEnvironment team-c/shop-q9w2e"}, Done: "0/3",
					XRs: []string{"Cluster team-a/stg-eks r2>r2 Hold", "Database team-b/orders r2>r2 Hold", "XDatabase team-b/orders-x7k2q r2>r2 Hold (claim Database team-b/orders)"}},
				{Name: "production", Gate: "Adopt", Done: "1/3", XRs: []string{
					"AppEnvironment team-a/shop r2>r1 Keep", "WorkloadBudget team-c/budget r2>r2 Pinned",
					"XAppEnvironment team-c/shop-q9w2e r2>r2 Adopt", "XCluster /ops-p4m8z r1>r1 Keep",
				}},
			}},
		},
		"DatabasesForbidden": {
			reason: "When the portal may not list Databases, the view shows the rest and says that the Databases are left out.",
			args: args{objs: releaseFleet(nil, toR2), token: tokenAlice, now: noon,
				refuse: apierrors.NewForbidden(releaseKind(xr.DatabaseKind).Resource.GroupResource(), "", errors.New("RBAC: access denied"))},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false",
				Message: "The portal cannot list some of the release's XRs, their claims or Composition revisions, so the gates and verdicts here leave them out (the fleet controller's own moves do not): databases.platform.example.org is forbidden: RBAC: access denied",
				Waves: []releaseWaveSummary{
					{Name: "canary", Gate: "Adopt", Done: "0/0"},
					{Name: "staging", Gate: "Hold", Hidden: 1, WaitsFor: []string{}, Done: "0/1", XRs: []string{"Cluster team-a/stg-eks r1>r1 Hold"}},
					{Name: "production", Gate: "Hold", Hidden: 2, WaitsFor: []string{"Cluster team-a/stg-eks"}, Done: "0/1", XRs: []string{"AppEnvironment team-a/shop r1>r1 Hold"}},
				}},
		},
		"ClaimsForbidden": {
			reason: "When the portal may not list the Database claims, the XDatabase of a claim is decided on no claim, as the controller decides one whose claim it cannot find: it holds, and the view says the claims are left out.",
			args: args{objs: releaseFleet(nil, toR2), token: tokenPat, now: noon,
				refuse: apierrors.NewForbidden(fleet.ClaimKinds[1].Resource.GroupResource(), "", errors.New("RBAC: access denied")), refused: fleet.ClaimKinds[1].Resource},
			want: &releaseSummary{Heading: "r2 from r1 rollback=false", Outside: 1,
				Message: "The portal cannot list some of the release's XRs, their claims or Composition revisions, so the gates and verdicts here leave them out (the fleet controller's own moves do not): databases.legacy.platform.example.org is forbidden: RBAC: access denied",
				Waves: []releaseWaveSummary{
					{Name: "canary", Gate: "Adopt", Done: "0/2", XRs: []string{"Cluster platform/canary-gke r1>r1 Adopt", "Database platform/canary-db r1>r1 Adopt"}},
					{Name: "staging", Gate: "Hold", WaitsFor: []string{"Cluster platform/canary-gke", "Database platform/canary-db"}, Done: "0/3",
						XRs: []string{"Cluster team-a/stg-eks r1>r1 Hold", "Database team-b/orders r1>r1 Hold", "XDatabase team-b/orders-x7k2q r1>r1 Hold"}},
					{Name: "production", Gate: "Hold", WaitsFor: []string{"Cluster platform/canary-gke", "Database platform/canary-db", "Cluster team-a/stg-eks", "Database team-b/orders", "XDatabase team-b/orders-x7k2q"},
						Done: "0/3", XRs: production("Hold", "r1>r1", "r1>r1", "r1>r1")},
				}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.args.objs...)
			if tc.args.refuse != nil {
				refused := tc.args.refused
				if refused.Empty() {
					refused = releaseKind(xr.DatabaseKind).Resource
				}
				w.srv.Fleet = NewFleet(refusing{Interface: w.dyn, gvr: refused, err: tc.args.refuse}, "test", slog.New(slog.DiscardHandler))
				t.Cleanup(w.srv.Fleet.Close)
			}
			w.srv.Fleet.now = func() time.Time { return tc.args.now }
			rec := w.do(t, http.MethodGet, "/api/v1/fleet", tc.args.token, "")
			var v FleetView
			if err := json.Unmarshal(rec.Body.Bytes(), &v); rec.Code != http.StatusOK || err != nil {
				t.Fatalf("GET /api/v1/fleet: %d %s (%v)", rec.Code, rec.Body, err)
			}
			if diff := cmp.Diff(tc.want, summarizeRelease(v.Release), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nthe release: -want, +got:\n%s\n%s", tc.reason, diff, rec.Body.String())
			}
			if v.Release == nil || tc.args.refuse != nil || v.Release.Message != "" {
				return
			}
			// The fleet controller's moves on the same objects, whole, at
			// the same time: every XR the view shows says its verdict and
			// message, and each gate the verdict on its wave's first XR
			// that has not moved (when the user may see everything).
			moves, gates := controllerMoves(t, tc.args.objs, tc.args.now)
			var shown []string
			for _, wv := range v.Release.Waves {
				shown = append(shown, wv.Gate.Verdict)
				for _, x := range wv.XRs {
					key := x.Kind + " " + x.Namespace + "/" + x.Name
					if got := x.Verdict + ": " + x.Message; got != moves[key] {
						t.Errorf("%s: the portal says %q, the fleet controller decides %q", key, got, moves[key])
					}
				}
			}
			if diff := cmp.Diff(gates, shown); tc.args.token == tokenPat && diff != "" {
				t.Errorf("the gates: -the controller's verdicts on each wave's first XR that has not moved, +the view's:\n%s", diff)
			}
		})
	}
}

// TestReleaseListAccess: what a user must be allowed to see an XR of each
// kind: list its kind in its namespace; a legacy XR of a claim, the
// namespaced kind in its claim's (as a legacy XCluster's always was); one
// of no claim, its own kind, cluster-scoped.
func TestReleaseListAccess(t *testing.T) {
	gr := func(k string) schema.GroupVersionResource { return releaseKind(k).Resource }
	cases := map[string]struct {
		reason string
		args   *unstructured.Unstructured
		want   Access
	}{
		"Cluster": {
			reason: "A Cluster: list Clusters in its namespace.",
			args:   releaseXR(releaseKind(xr.ClusterKind), "team-a", "c", "", "r1", "", true),
			want:   Access{Namespace: "team-a", Verb: "list", Group: clusterGVR.Group, Resource: clusterGVR.Resource},
		},
		"XClusterOfAClaim": {
			reason: "A legacy XCluster of a claim: list Clusters in its claim's namespace, as before.",
			args:   releaseXR(releaseKind(xr.LegacyClusterKind), "team-a", "c-x1", "", "r1", "", true),
			want:   Access{Namespace: "team-a", Verb: "list", Group: clusterGVR.Group, Resource: clusterGVR.Resource},
		},
		"XClusterOfNoClaim": {
			reason: "A legacy XCluster of no claim: list XClusters, cluster-scoped.",
			args:   releaseXR(releaseKind(xr.LegacyClusterKind), "", "c-x1", "", "r1", "", true),
			want:   Access{Verb: "list", Group: xclusterGVR.Group, Resource: xclusterGVR.Resource},
		},
		"XDatabaseOfAClaim": {
			reason: "A legacy XDatabase of a claim: list Databases in its claim's namespace.",
			args:   releaseXR(releaseKind(xr.LegacyDatabaseKind), "team-b", "db-x1", "", "r1", "", true),
			want:   Access{Namespace: "team-b", Verb: "list", Group: gr(xr.DatabaseKind).Group, Resource: gr(xr.DatabaseKind).Resource},
		},
		"XAppEnvironmentOfNoClaim": {
			reason: "A legacy XAppEnvironment of no claim: list XAppEnvironments, cluster-scoped.",
			args:   releaseXR(releaseKind(xr.LegacyAppEnvironmentKind), "", "app-x1", "", "r1", "", true),
			want:   Access{Verb: "list", Group: gr(xr.LegacyAppEnvironmentKind).Group, Resource: gr(xr.LegacyAppEnvironmentKind).Resource},
		},
		"WorkloadBudget": {
			reason: "A WorkloadBudget: list WorkloadBudgets in its namespace.",
			args:   releaseXR(releaseKind(xr.WorkloadBudgetKind), "team-c", "b", "", "r1", "", true),
			want:   Access{Namespace: "team-c", Verb: "list", Group: gr(xr.WorkloadBudgetKind).Group, Resource: gr(xr.WorkloadBudgetKind).Resource},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, listAccess(tc.args)); diff != "" {
				t.Errorf("%s\nlistAccess: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
