package fleet

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// claimFor is the claim named name in namespace ns of legacy XR u, which
// it labels as the claim's XR (LabelClaimName, LabelClaimNamespace): the
// claim's resourceRef names u, and its selector selects selected (none
// when ""), applied by manager. It has parameters and a status of its own,
// which the informers drop.
func claimFor(u *unstructured.Unstructured, ns, name, selected, manager string) *unstructured.Unstructured {
	k, ok := ClaimKindOf(u.GetKind())
	if !ok {
		panic("no claim kind of " + u.GetKind())
	}
	u.SetLabels(with(with(u.GetLabels(), rollout.LabelClaimName, name), rollout.LabelClaimNamespace, ns))
	spec := map[string]any{
		"parameters":  map[string]any{"location": "europe-west1"},
		"resourceRef": map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "name": u.GetName()},
	}
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.APIVersion, "kind": k.Kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "generation": int64(1)},
		"spec":     spec,
		"status":   map[string]any{"conditions": []any{}},
	}}
	if selected != "" {
		spec["compositionRevisionSelector"] = map[string]any{"matchLabels": map[string]any{rollout.LabelRelease: selected}}
		c.SetManagedFields(owning(k, manager))
	}
	return c
}

// TestClaimKinds checks ClaimKinds against the legacy XRDs
// (apis/*-legacy/definition.yaml): each XRD's claim kind, of its group and
// its served version, claims its XR kind.
func TestClaimKinds(t *testing.T) {
	files, err := filepath.Glob("../../apis/*-legacy/definition.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("cannot find the legacy XRDs: %v", err)
	}
	var want []Kind
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the repository's legacy XRDs, by a constant pattern
		if err != nil {
			t.Fatal(err)
		}
		var xrd struct {
			Spec struct {
				Group      string
				Names      struct{ Kind string }
				ClaimNames struct{ Kind, Plural string }
				Versions   []struct {
					Name   string
					Served bool
				}
			}
		}
		if err := yaml.Unmarshal(b, &xrd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range xrd.Spec.Versions {
			if v.Served {
				gv := schema.GroupVersion{Group: xrd.Spec.Group, Version: v.Name}
				want = append(want, Kind{Resource: gv.WithResource(xrd.Spec.ClaimNames.Plural), APIVersion: gv.String(), Kind: xrd.Spec.ClaimNames.Kind, Namespaced: true, Claims: xrd.Spec.Names.Kind})
			}
		}
	}
	sort := cmpopts.SortSlices(func(a, b Kind) bool { return a.Claims < b.Claims })
	if diff := cmp.Diff(want, ClaimKinds, sort); diff != "" {
		t.Errorf("ClaimKinds: -the legacy XRDs' claims, +got:\n%s", diff)
	}
}

// TestClaimsOf: the claim of a legacy XR is the one its labels name, of
// its kind's claim kind, bound to it.
func TestClaimsOf(t *testing.T) {
	xc := releaseXR(kindOf(xr.LegacyClusterKind), "team-a", "c-x1", "canary", "r1", true)
	bound := claimFor(xc, "team-a", "c", "", "")
	rebound := claimFor(releaseXR(kindOf(xr.LegacyClusterKind), "team-a", "c-x2", "canary", "r1", true), "team-a", "other", "", "")
	xdb := releaseXR(kindOf(xr.LegacyDatabaseKind), "team-a", "db-x1", "canary", "r1", true)
	claims := ClaimsOf([]map[string]any{bound.Object, rebound.Object, claimFor(xdb, "team-b", "db", "", "").Object})
	type args struct {
		claimName, claimNamespace, kind string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Bound": {
			reason: "The claim the XR's labels name, of its claim kind, whose resourceRef names the XR.",
			args:   args{claimName: "c", claimNamespace: "team-a", kind: xr.LegacyClusterKind},
			want:   "Cluster team-a/c",
		},
		"BoundToAnother": {
			reason: "A claim bound to another XR is not this XR's: Crossplane applies its selector to the other.",
			args:   args{claimName: "other", claimNamespace: "team-a", kind: xr.LegacyClusterKind},
		},
		"AnotherNamespace": {
			reason: "A claim of that name in another namespace is not the XR's.",
			args:   args{claimName: "c", claimNamespace: "team-b", kind: xr.LegacyClusterKind},
		},
		"AnotherKind": {
			reason: "A claim of another kind is not the XR's: an XDatabase's claim is a Database.",
			args:   args{claimName: "db", claimNamespace: "team-b", kind: xr.LegacyClusterKind},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := xc.DeepCopy()
			u.SetKind(tc.args.kind)
			u.SetLabels(map[string]string{rollout.LabelClaimName: tc.args.claimName, rollout.LabelClaimNamespace: tc.args.claimNamespace})
			got := ""
			if c := claims.Of(u.Object); c != nil {
				got = rollout.RefOf(c).String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nClaims.Of: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestControllerReleasesClaims walks a fleet of legacy XRs of claims, and
// a namespaced XR, through a platform release's rollout and its rollback,
// the controller against a fake API server: it writes each claim's
// selection (never a legacy XR's), in wave order, writes back a tenant's
// own selection on its claim, and writes nothing to a claim that pins its
// release nor for an XR whose claim is not found.
func TestControllerReleasesClaims(t *testing.T) {
	xcluster, xdb, xapp, database := kindOf(xr.LegacyClusterKind), kindOf(xr.LegacyDatabaseKind), kindOf(xr.LegacyAppEnvironmentKind), kindOf(xr.DatabaseKind)
	canary := releaseXR(xcluster, "team-a", "c-x1", "canary", "r1", true)
	staging := releaseXR(xdb, "team-b", "db-x1", "staging", "r1", true)
	pinned := releaseXR(xapp, "team-c", "app-x1", "production", "r1", true)
	pinnedClaim := claimFor(pinned, "team-c", "app", "", "")
	pinnedClaim.Object["spec"].(map[string]any)["compositionUpdatePolicy"] = "Manual"
	lost := releaseXR(xdb, "team-c", "lost-x1", "production", "r1", true)
	lost.SetLabels(with(lost.GetLabels(), rollout.LabelClaimName, "lost"))
	objs := []runtime.Object{
		releaseBaseline(map[string]any{"target": "r2", "from": "r1"}),
		canary, claimFor(canary, "team-a", "c", "", ""),
		// The staging claim's tenant selected r2 for itself.
		staging, claimFor(staging, "team-b", "db", "r2", "kubectl"),
		pinned, pinnedClaim, lost,
		releaseXR(database, "team-c", "ndb", "production", "r1", true),
	}
	var revisions []*unstructured.Unstructured
	for _, k := range []Kind{xcluster, xdb, xapp, database} {
		revisions = append(revisions, revision(k, "r1"), revision(k, "r2"))
	}
	cut := func(t *testing.T, dyn *fake) {
		t.Helper()
		for _, u := range revisions {
			if err := dyn.Tracker().Create(CompositionRevisionResource, u, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// renders makes Crossplane render legacy XR name of kind k with the
	// release its claim selects: the claim syncer applies the claim's
	// selector over the XR's, and the release renders it.
	renders := func(k Kind, name string) func(*testing.T, *fake) {
		return func(t *testing.T, dyn *fake) {
			t.Helper()
			obj, err := dyn.Tracker().Get(k.Resource, "", name)
			if err != nil {
				t.Fatal(err)
			}
			u := obj.(*unstructured.Unstructured).DeepCopy()
			ck, _ := ClaimKindOf(k.Kind)
			claim, err := dyn.Tracker().Get(ck.Resource, u.GetLabels()[rollout.LabelClaimNamespace], u.GetLabels()[rollout.LabelClaimName])
			if err != nil {
				t.Fatal(err)
			}
			sel, _, _ := unstructured.NestedStringMap(claim.(*unstructured.Unstructured).Object, ck.Selection()...)
			_ = unstructured.SetNestedStringMap(u.Object, sel, k.Selection()...)
			u.Object["status"].(map[string]any)["platformRelease"] = sel[rollout.LabelRelease]
			if err := dyn.Tracker().Update(k.Resource, u, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	rollback := func(t *testing.T, dyn *fake) {
		t.Helper()
		if err := dyn.Tracker().Update(EnvironmentConfigResource, releaseBaseline(map[string]any{"target": "r1", "from": "r2", "rollback": true}), ""); err != nil {
			t.Fatal(err)
		}
	}
	walkReleases(t, objs, []releaseStep{
		{
			reason: "No revision carries a release yet: nothing is written.",
		},
		{
			reason: "The releases are cut. The canary's claim selects r2; the staging claim's own r2 is written back to r1; the namespaced production Database is given r1; the claim whose update policy is Manual, and the XR whose claim is not found, are written nothing; no legacy XR is written.",
			then:   cut,
			want:   []string{"claim Cluster/team-a/c=r2", "claim Database/team-b/db=r1", "Database/team-c/ndb=r1"},
		},
		{
			reason: "Nothing changed: nothing is written (the claims' selections are the controller's).",
		},
		{
			reason: "Crossplane applies the canary claim's selector over its XR, which r2 renders Ready: staging's claim moves.",
			then:   renders(xcluster, "c-x1"),
			want:   []string{"claim Database/team-b/db=r2"},
		},
		{
			reason: "Staging's XR runs r2: production's namespaced Database moves; the pinned claim and the XR of no claim found are left alone.",
			then:   renders(xdb, "db-x1"),
			want:   []string{"Database/team-c/ndb=r2"},
		},
		{
			reason: "A rollback moves production first.",
			then:   rollback,
			want:   []string{"Database/team-c/ndb=r1"},
		},
		{
			reason: "Production selects r1: staging's claim moves back.",
			want:   []string{"claim Database/team-b/db=r1"},
		},
		{
			reason: "Staging's claim selects r1: the canary's claim moves back.",
			want:   []string{"claim Cluster/team-a/c=r1"},
		},
		{
			reason: "Nothing changed: nothing is written.",
		},
	})
}
