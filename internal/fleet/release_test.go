package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ktesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// releaseBaseline is a baseline EnvironmentConfig with waves canary (of
// namespace team-a), staging and production (which requires no approval),
// and the release keys rel.
func releaseBaseline(rel map[string]any) *unstructured.Unstructured {
	b := baseline("", "staging", "production")
	b.Object["data"].(map[string]any)["rollout"].(map[string]any)["release"] = rel
	return b
}

// releaseXR is an XR of k named name (in namespace ns, or of a claim in ns
// for a legacy one) of wave, that a release rendered (status.platformRelease
// runs, none when ""), Ready and Synced as synced says, at its generation.
func releaseXR(k Kind, ns, name, wave, runs string, synced bool) *unstructured.Unstructured {
	u := member(xr.ClusterKind, ns, name, wave, "1.33", false)
	u.SetAPIVersion(k.APIVersion)
	u.SetKind(k.Kind)
	if !k.Namespaced {
		u.SetNamespace("")
		labels := u.GetLabels()
		labels[rollout.LabelClaimNamespace] = ns
		u.SetLabels(labels)
	}
	where := u.Object["spec"].(map[string]any)
	if k.Namespaced {
		where = where["crossplane"].(map[string]any)
	}
	where["compositionRef"] = map[string]any{"name": testComposition(k)}
	st := u.Object["status"].(map[string]any)
	if runs != "" {
		st["platformRelease"] = runs
	}
	if !synced {
		st["conditions"].([]any)[1].(map[string]any)["status"] = "False"
	}
	return u
}

// kindOf is the ReleaseKinds entry of kind.
func kindOf(kind string) Kind {
	for _, k := range ReleaseKinds {
		if k.Kind == kind {
			return k
		}
	}
	panic("no kind " + kind)
}

// testComposition is the name of the test's Composition of XR kind k.
func testComposition(k Kind) string { return k.Resource.Resource + "-platform" }

// revision is a revision of the test's Composition of XR kind k labelled
// with release.
func revision(k Kind, release string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%s", testComposition(k), release), "labels": map[string]any{
			rollout.LabelRelease: release, LabelCompositionName: testComposition(k),
		}},
		"spec": map[string]any{"compositeTypeRef": map[string]any{"apiVersion": k.APIVersion, "kind": k.Kind}, "revision": int64(1)},
	}}
}

// applySelections makes the fake answer an XR's or a claim's server-side
// apply of its release selection as an API server does: the selector's key
// is set, and the field manager owns it (an Apply entry of its managed
// fields).
func applySelections(dyn *fake) {
	for _, k := range slices.Concat(ReleaseKinds, ClaimKinds) {
		dyn.PrependReactor("patch", k.Resource.Resource, func(a ktesting.Action) (bool, runtime.Object, error) {
			p := a.(ktesting.PatchAction)
			if p.GetPatchType() != types.ApplyPatchType || a.GetResource() != k.Resource {
				return false, nil, nil
			}
			var applied map[string]any
			if err := json.Unmarshal(p.GetPatch(), &applied); err != nil {
				return true, nil, err
			}
			obj, err := dyn.Tracker().Get(k.Resource, p.GetNamespace(), p.GetName())
			if err != nil {
				return true, nil, err
			}
			u := obj.(*unstructured.Unstructured).DeepCopy()
			sel, _, _ := unstructured.NestedStringMap(applied, k.Selection()...)
			if err := unstructured.SetNestedStringMap(u.Object, sel, k.Selection()...); err != nil {
				return true, nil, err
			}
			u.SetManagedFields(owning(k, p.(interface{ GetPatchOptions() metav1.PatchOptions }).GetPatchOptions().FieldManager))
			return true, u, dyn.Tracker().Update(k.Resource, u, p.GetNamespace())
		})
	}
}

// owning are the managed fields of an object of kind k whose release
// selection manager applied.
func owning(k Kind, manager string) []metav1.ManagedFieldsEntry {
	fields := map[string]any{}
	var fpath []string
	for _, f := range append(k.Selection(), rollout.LabelRelease) {
		fpath = append(fpath, "f:"+f)
	}
	_ = unstructured.SetNestedField(fields, map[string]any{}, fpath...)
	raw, _ := json.Marshal(fields)
	return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: raw}}}
}

// selections are the XRs' and the claims' release selections a pass
// wrote among actions: kind/namespace/name=release ("claim " before a
// claim's), and whether each was a forced apply of ReleaseManager.
func selections(t *testing.T, actions []ktesting.Action) []string {
	t.Helper()
	var out []string
	for _, a := range actions {
		p, ok := a.(ktesting.PatchAction)
		if !ok || a.GetVerb() != "patch" {
			continue
		}
		o := p.(interface{ GetPatchOptions() metav1.PatchOptions }).GetPatchOptions()
		if p.GetPatchType() != types.ApplyPatchType || o.FieldManager != ReleaseManager || o.Force == nil || !*o.Force {
			t.Errorf("%s: a patch of type %s by %q (force %v), want a forced apply by %s", p.GetName(), p.GetPatchType(), o.FieldManager, o.Force, ReleaseManager)
		}
		var applied map[string]any
		if err := json.Unmarshal(p.GetPatch(), &applied); err != nil {
			t.Fatal(err)
		}
		// The patch holds the selection and nothing else of the spec.
		spec, _ := applied["spec"].(map[string]any)
		sel, _, _ := unstructured.NestedStringMap(applied, selectionOf(applied)...)
		if len(spec) != 1 || len(sel) != 1 {
			t.Errorf("%s: the patch writes %v of the spec, want the release selection alone", p.GetName(), spec)
		}
		what := ""
		if _, ok := claimKind(fmt.Sprint(applied["apiVersion"]), fmt.Sprint(applied["kind"])); ok {
			what = "claim "
		}
		out = append(out, fmt.Sprintf("%s%s/%s/%s=%s", what, applied["kind"], p.GetNamespace(), p.GetName(), sel[rollout.LabelRelease]))
	}
	return out
}

// A releaseStep is a step of a release's rollout against the fake API
// server: what changes (nothing when then is nil), and the selections the
// next pass writes.
type releaseStep struct {
	reason string
	then   func(*testing.T, *fake)
	want   []string
}

// walkReleases runs a leading controller against a fake API server holding
// objs (every kind served) through steps: after each step's change, once
// its informers hold what the fake holds, a pass writes the step's
// selections and nothing else. It returns the fake.
func walkReleases(t *testing.T, objs []runtime.Object, steps []releaseStep) *fake {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dyn := newFake(true, objs...)
	applySelections(dyn)
	c := New(dyn, Options{XClusters: true, Served: func(schema.GroupVersionResource) bool { return true }, Clock: clocktesting.NewFakeClock(t0.Add(time.Hour))})
	c.Lead(true)
	c.start(ctx)
	eventually(t, "the fleet's informers synced", c.synced)
	c.pass(ctx) // starts the rulings' informer
	for i, s := range steps {
		if s.then != nil {
			s.then(t, dyn)
		}
		eventually(t, "the informers hold what the API server holds", func() bool { return settled(c, dyn) })
		mark := len(dyn.Actions())
		c.pass(ctx)
		got := selections(t, dyn.Actions()[mark:])
		if diff := cmp.Diff(s.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d: %s\nselections: -want, +got:\n%s", i, s.reason, diff)
		}
	}
	return dyn
}

// TestControllerReleases walks a fleet of XRs of every kind through a
// platform release's rollout, the controller against a fake API server:
// each step changes what the XRs report (as Crossplane would once it
// renders them with the revision their selection selects) or the
// environment, and a pass writes the selections that change, and nothing
// else.
func TestControllerReleases(t *testing.T) {
	cluster, database, app, xdb, budget := kindOf(xr.ClusterKind), kindOf(xr.DatabaseKind), kindOf(xr.AppEnvironmentKind), kindOf(xr.LegacyDatabaseKind), kindOf(xr.WorkloadBudgetKind)
	forward := map[string]any{"target": "r2", "from": "r1"}
	pinned := releaseXR(budget, "team-d", "budget", "production", "r1", true)
	pinned.Object["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
	tenant := releaseXR(app, "team-d", "own", "canary", "r1", true)
	tenant.Object["spec"].(map[string]any)["crossplane"].(map[string]any)["compositionRevisionSelector"] = map[string]any{"matchLabels": map[string]any{rollout.LabelRelease: "r2"}}
	// Another team's Database in the staging wave, on a Composition that is
	// no release's: it takes no part (it could never be moved, and would
	// hold the canary's rollback for ever).
	foreign := releaseXR(database, "team-b", "foreign", "staging", "", true)
	foreign.Object["spec"].(map[string]any)["crossplane"].(map[string]any)["compositionRef"] = map[string]any{"name": "another-teams-databases"}
	objs := []runtime.Object{
		releaseBaseline(forward), foreign,
		releaseXR(cluster, "team-a", "c1", "canary", "r1", true),
		releaseXR(database, "team-b", "db", "staging", "r1", true),
		releaseXR(app, "team-c", "app", "production", "r1", true),
		releaseXR(xdb, "team-c", "x", "production", "r1", true),
		pinned, tenant,
	}
	create := func(us ...*unstructured.Unstructured) func(*testing.T, *fake) {
		return func(t *testing.T, dyn *fake) {
			t.Helper()
			for _, u := range us {
				if err := dyn.Tracker().Create(CompositionRevisionResource, u, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var revisions []*unstructured.Unstructured
	for _, k := range []Kind{cluster, database, app, xdb, budget} {
		for _, r := range []string{"r1", "r2"} {
			if k != database || r != "r2" {
				revisions = append(revisions, revision(k, r))
			}
		}
	}
	set := func(u *unstructured.Unstructured) func(*testing.T, *fake) {
		return func(t *testing.T, dyn *fake) {
			t.Helper()
			gvr := EnvironmentConfigResource
			if u.GetKind() != "EnvironmentConfig" {
				gvr = kindOf(u.GetKind()).Resource
				// What the controller selected stays: Crossplane rendered it.
				old, err := dyn.Tracker().Get(gvr, u.GetNamespace(), u.GetName())
				if err != nil {
					t.Fatal(err)
				}
				u = u.DeepCopy()
				u.Object["spec"] = old.(*unstructured.Unstructured).Object["spec"]
				u.SetManagedFields(old.(*unstructured.Unstructured).GetManagedFields())
			}
			if err := dyn.Tracker().Update(gvr, u, u.GetNamespace()); err != nil {
				t.Fatalf("cannot update %s: %v", u.GetName(), err)
			}
		}
	}
	steps := []releaseStep{
		{
			reason: "No revision of the XRs' Compositions carries either release: nothing is written, since an XR whose selector matches no revision is not rendered at all.",
		},
		{
			reason: "Once the releases' revisions exist, the canary moves to r2 and every other XR is given the release it runs, in wave order: the XR whose update policy is Manual is left alone; the one whose owner selected r2 for itself (in namespace team-d, which the canary wave does not admit) is written back to r1.",
			then:   create(revisions...),
			want:   []string{"Cluster/team-a/c1=r2", "Database/team-b/db=r1", "AppEnvironment/team-c/app=r1", "AppEnvironment/team-d/own=r1", "XDatabase//x=r1"},
		},
		{
			reason: "Nothing changed: nothing is written.",
		},
		{
			reason: "The canary runs r2, Ready and Synced: staging may move, but no revision of the Databases' Composition carries r2, so nothing is written.",
			then:   set(releaseXR(cluster, "team-a", "c1", "canary", "r2", true)),
		},
		{
			reason: "A revision of the Databases' Composition carries r2: staging moves.",
			then:   create(revision(database, "r2")),
			want:   []string{"Database/team-b/db=r2"},
		},
		{
			reason: "The new release cannot render staging's Database (Synced False): production halts, and nothing is written.",
			then:   set(releaseXR(database, "team-b", "db", "staging", "r1", false)),
		},
		{
			reason: "A rollback to r1: production selects r1 already, so staging moves back; the canary holds, since staging did not select r1 when the pass decided.",
			then:   set(releaseBaseline(map[string]any{"target": "r1", "from": "r2", "rollback": true})),
			want:   []string{"Database/team-b/db=r1"},
		},
		{
			reason: "Staging selects r1 now (rendered or not: a rollback is not held by what it undoes): the canary moves back.",
			want:   []string{"Cluster/team-a/c1=r1"},
		},
		{
			reason: "Nothing changed: nothing is written.",
		},
		{
			reason: "Release keys that are wrong (no from) move nothing.",
			then:   set(releaseBaseline(map[string]any{"target": "r2"})),
		},
	}
	dyn := walkReleases(t, objs, steps)
	// The pinned XR's spec is as it was.
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		if u.GetKind() == "EnvironmentConfig" || u.GetName() != "budget" {
			continue
		}
		got, err := dyn.Tracker().Get(kindOf(u.GetKind()).Resource, u.GetNamespace(), u.GetName())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(u.Object["spec"], got.(*unstructured.Unstructured).Object["spec"]); diff != "" {
			t.Errorf("%s: the controller changed a pinned XR's spec: -want, +got:\n%s", u.GetName(), diff)
		}
	}
}

// TestControllerRulesWithoutAReleaseKind: an XR kind or a claim kind the
// controller may not list (its ClusterRole not re-applied, say) holds a
// release's moves, never the version rollout's rulings.
func TestControllerRulesWithoutAReleaseKind(t *testing.T) {
	cases := map[string]struct {
		reason    string
		forbidden schema.GroupVersionResource
		// want are the selections the pass writes.
		want []string
	}{
		"EveryKind": {
			reason: "Every kind can be listed: the canary's Cluster moves.",
			want:   []string{"Cluster/team-a/rc=r2"},
		},
		"Databases": {
			reason:    "The namespaced Databases cannot be listed.",
			forbidden: kindOf(xr.DatabaseKind).Resource,
		},
		"DatabaseClaims": {
			reason:    "The legacy XDatabases' claims cannot be listed: the XDatabases of claims cannot be decided.",
			forbidden: ClaimKinds[1].Resource,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cluster := kindOf(xr.ClusterKind)
			// The fleet, its baseline with release keys, and a canary
			// Cluster that a release moves.
			objs := slices.Concat(fleet()[1:], []runtime.Object{releaseBaseline(map[string]any{"target": "r2", "from": "r1"}),
				releaseXR(cluster, "team-a", "rc", "canary", "r1", true), revision(cluster, "r1"), revision(cluster, "r2")})
			dyn := newFake(true, objs...)
			applySelections(dyn)
			dyn.PrependReactor("list", tc.forbidden.Resource, func(a ktesting.Action) (bool, runtime.Object, error) {
				return a.GetResource() == tc.forbidden, nil, errors.New("forbidden")
			})
			c := New(dyn, Options{XClusters: true, Served: func(schema.GroupVersionResource) bool { return true }, Clock: clocktesting.NewFakeClock(t0.Add(time.Hour))})
			c.Lead(true)
			c.start(ctx)
			eventually(t, "the informers of every kind but the one forbidden synced", func() bool {
				for i, inf := range slices.Concat(c.xrs, c.claims) {
					if k := slices.Concat(c.kinds, c.claimKinds)[i]; k.Resource != tc.forbidden && !inf.HasSynced() {
						return false
					}
				}
				return c.revisions.HasSynced() && c.synced()
			})
			mark := len(dyn.Actions())
			c.pass(ctx) // starts the rulings' informer
			eventually(t, "the rulings' informer synced", func() bool { return c.rulings != nil && c.rulings.HasSynced() })
			c.pass(ctx)
			if got := selections(t, dyn.Actions()[mark:]); !cmp.Equal(tc.want, got, cmpopts.EquateEmpty()) {
				t.Errorf("%s\nselections: -want, +got:\n%s", tc.reason, cmp.Diff(tc.want, got, cmpopts.EquateEmpty()))
			}
			want := map[string]string{"cluster.team-a.c1": "Adopt", "cluster.team-a.c2": "Adopt", "cluster.team-b.p1": "Hold", "xcluster.x1": "Hold"}
			if diff := cmp.Diff(want, verdicts(t, dyn)); diff != "" {
				t.Errorf("%s\nrulings: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestReleaseMoves: what the controller decides (and the portal's fleet
// view shows) of a release, from the XRs and the Composition revisions
// alone.
func TestReleaseMoves(t *testing.T) {
	cluster, database := kindOf(xr.ClusterKind), kindOf(xr.LegacyDatabaseKind)
	foreign := releaseXR(kindOf(xr.DatabaseKind), "team-b", "foreign", "staging", "r1", true)
	foreign.Object["spec"].(map[string]any)["crossplane"].(map[string]any)["compositionRef"] = map[string]any{"name": "another-teams-databases"}
	// The canary's XCluster of a claim, decided on its claim.
	xcluster := kindOf(xr.LegacyClusterKind)
	claimed := releaseXR(xcluster, "team-a", "c-x1", "canary", "r1", true)
	claims := []map[string]any{claimFor(claimed, "team-a", "c", "", "").Object}
	xrs := []map[string]any{
		releaseXR(cluster, "team-a", "c1", "canary", "r1", true).Object,
		releaseXR(database, "team-c", "x", "production", "r1", true).Object,
		foreign.Object, claimed.Object,
	}
	carried := ReleasesOf([]*unstructured.Unstructured{revision(cluster, "r1"), revision(cluster, "r2"), revision(database, "r1"), revision(xcluster, "r1")})
	type args struct {
		release map[string]any
	}
	type want struct {
		moves   []string
		outside int
		err     string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NoRelease": {
			reason: "Without release keys nothing is decided.",
			want:   want{},
		},
		"WrongKeys": {
			reason: "Keys that are wrong decide nothing, and say why.",
			args:   args{release: map[string]any{"target": "r2"}},
			want:   want{err: "environment.rollout.release.from: Required value: the release the fleet moves from: what an XR that selects no release yet is given while the waves hold it"},
		},
		"Forward": {
			reason: "The canary moves, its XCluster through its claim; production holds it; the Database of a Composition that is no release's takes no part and is counted.",
			args:   args{release: map[string]any{"target": "r2", "from": "r1"}},
			want:   want{moves: []string{"Cluster team-a/c1: Adopt r2", "XCluster team-a/c-x1 (claim Cluster team-a/c): Adopt r2", "XDatabase team-c/x: Hold r1"}, outside: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := BaselineOf([]map[string]any{baseline("", "staging", "production").Object})
			if tc.args.release != nil {
				b = BaselineOf([]map[string]any{releaseBaseline(tc.args.release).Object})
			}
			moves, outside, err := ReleaseMoves(b, xrs, claims, carried, t0.Add(time.Hour))
			got := want{outside: outside}
			if err != nil {
				got.err = err.Error()
			}
			for _, mv := range moves {
				via := ""
				if mv.Claim != (rollout.Ref{}) {
					via = " (claim " + mv.Claim.String() + ")"
				}
				got.moves = append(got.moves, fmt.Sprintf("%s %s/%s%s: %s %s", mv.Ref.Kind, mv.Member.Namespace, mv.Ref.Name, via, mv.Decision.Verdict, mv.Select))
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nReleaseMoves: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSlimXRKeepsMoves: what the informers keep of an XR (SlimXR) and of
// a claim (SlimClaim) decides a release as the whole XR and claim do, for
// every kind.
func TestSlimXRKeepsMoves(t *testing.T) {
	b := BaselineOf([]map[string]any{releaseBaseline(map[string]any{"target": "r2", "from": "r1"}).Object})
	var whole, slim, claims, slimClaims []map[string]any
	var revisions []*unstructured.Unstructured
	for i, k := range ReleaseKinds {
		u := releaseXR(k, "team-a", fmt.Sprintf("xr%d", i), "canary", "r1", true)
		switch i % 3 {
		case 0:
			u.SetAnnotations(map[string]string{rollout.AnnotationPaused: "true", "other": "x"})
		case 1:
			u.SetLabels(with(u.GetLabels(), rollout.LabelClaimName, "claim"))
		}
		if ck, ok := ClaimKindOf(k.Kind); ok {
			// Its claim: selecting r2 by the controller's hand, and each
			// of the three pinning it otherwise (Manual, paused) or not.
			c := claimFor(u, "team-a", fmt.Sprintf("claim%d", i), "r2", ReleaseManager)
			c.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"})
			switch i % 3 {
			case 0:
				c.Object["spec"].(map[string]any)["compositionUpdatePolicy"] = "Manual"
			case 2:
				c.SetAnnotations(map[string]string{rollout.AnnotationPaused: "true"})
			}
			claims = append(claims, c.Object)
			sc, err := SlimClaim(ck)(c)
			if err != nil {
				t.Fatal(err)
			}
			slimClaims = append(slimClaims, sc.(*unstructured.Unstructured).Object) //nolint:forcetypeassert // SlimClaim slims what it is given.
		}
		whole = append(whole, u.Object)
		s, err := SlimXR(k)(u)
		if err != nil {
			t.Fatal(err)
		}
		slim = append(slim, s.(*unstructured.Unstructured).Object) //nolint:forcetypeassert // SlimXR slims what it is given.
		revisions = append(revisions, revision(k, "r1"))
	}
	want, _, err := ReleaseMoves(b, whole, claims, ReleasesOf(revisions), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ReleaseMoves(b, slim, slimClaims, ReleasesOf(revisions), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(ReleaseKinds) {
		t.Errorf("ReleaseMoves decided %d XRs, want %d", len(want), len(ReleaseKinds))
	}
	var viaClaims []string
	for _, mv := range want {
		if mv.Claim != (rollout.Ref{}) {
			viaClaims = append(viaClaims, mv.Claim.String()+": "+string(mv.Decision.Verdict))
		}
	}
	if diff := cmp.Diff([]string{"AppEnvironment team-a/claim5: Pinned", "Cluster team-a/claim1: Keep", "Database team-a/claim3: Pinned"}, viaClaims); diff != "" {
		t.Errorf("the XRs decided on their claims: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the moves of the slimmed XRs and claims: -whole, +slim:\n%s", diff)
	}
}
