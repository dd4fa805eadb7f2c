package fleet

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ClaimKinds are the claim kinds of the legacy XR kinds (their XRDs'
// claimNames, apis/*-legacy/definition.yaml), namespaced: a release moves
// a legacy XR of a claim by writing its claim's release selection, since
// Crossplane's claim syncer applies a claim's compositionRevisionSelector
// (and compositionUpdatePolicy, compositionRef) over its XR's, with force:
// crossplane v2.4.0 and v2.3.5,
// internal/controller/apiextensions/claim/syncer_ssa.go (Sync: the spec
// minus the fields unique to claims, keeping xcrd.PropagateSpecProps, at
// lines 139-160 of v2.4.0 and 126-147 of v2.3.5, applied with
// client.ForceOwnership as apiextensions.crossplane.io/claim at line 228
// and 215; the XR's selector is copied back only to a claim that has
// none, line 203 and 190), and syncer_csa.go likewise (lines 117-139 of
// v2.4.0). A controller that wrote the XR would fight the claim.
var ClaimKinds = []Kind{
	{Resource: resourceOf(xr.LegacyClusterAPIVersion, "clusters"), APIVersion: xr.LegacyClusterAPIVersion, Kind: "Cluster", Namespaced: true, Claims: xr.LegacyClusterKind},
	{Resource: resourceOf(xr.LegacyDatabaseAPIVersion, "databases"), APIVersion: xr.LegacyDatabaseAPIVersion, Kind: "Database", Namespaced: true, Claims: xr.LegacyDatabaseKind},
	{Resource: resourceOf(xr.LegacyAppEnvironmentAPIVersion, "appenvironments"), APIVersion: xr.LegacyAppEnvironmentAPIVersion, Kind: "AppEnvironment", Namespaced: true, Claims: xr.LegacyAppEnvironmentKind},
}

// claimKind is the claim kind (ClaimKinds) of apiVersion and kind; false
// for another kind.
func claimKind(apiVersion, kind string) (Kind, bool) {
	for _, k := range ClaimKinds {
		if k.APIVersion == apiVersion && k.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}

// ClaimKindOf is the claim kind (ClaimKinds) of legacy XR kind xrKind;
// false for a kind no claim claims.
func ClaimKindOf(xrKind string) (Kind, bool) {
	for _, k := range ClaimKinds {
		if k.Claims == xrKind {
			return k, true
		}
	}
	return Kind{}, false
}

// claimKey is a claim by the XR kind it claims, its namespace and name.
type claimKey struct{ xr, namespace, name string }

// Claims are the claims of legacy XRs (of ClaimKinds, as maps), by the XR
// kind each claims, its namespace and name.
type Claims map[claimKey]map[string]any

// ClaimsOf indexes claims (as SlimClaim keeps them); objects of another
// kind are left out.
func ClaimsOf(claims []map[string]any) Claims {
	out := make(Claims, len(claims))
	for _, obj := range claims {
		u := unstructured.Unstructured{Object: obj}
		if k, ok := claimKind(u.GetAPIVersion(), u.GetKind()); ok {
			out[claimKey{k.Claims, u.GetNamespace(), u.GetName()}] = obj
		}
	}
	return out
}

// Of is the claim of legacy XR obj: the claim its labels name (of the
// claim kind of its kind, in the namespace LabelClaimNamespace names, of
// the name LabelClaimName names) whose spec.resourceRef names it, the XR
// the claim syncer applies the claim's selector to; nil when there is
// none, or the claim is bound to another XR.
func (c Claims) Of(obj map[string]any) map[string]any {
	u := unstructured.Unstructured{Object: obj}
	labels := u.GetLabels()
	claim := c[claimKey{u.GetKind(), labels[rollout.LabelClaimNamespace], labels[rollout.LabelClaimName]}]
	ref, _, _ := unstructured.NestedStringMap(claim, "spec", "resourceRef")
	if claim == nil || ref["name"] != u.GetName() || (ref["kind"] != "" && ref["kind"] != u.GetKind()) {
		return nil
	}
	return claim
}

// SlimClaim keeps of a claim of kind k what a release's decision reads of
// it (rollout.ReleaseMemberOf, Owned, Claims.Of) and what the controller's
// write of its selection needs: its apiVersion, kind, name, namespace,
// resource version and deletion timestamp, the XR it is bound to
// (spec.resourceRef), and what keepSelector keeps. It is an informer's
// transform (the controller's, and the portal's fleet view's).
func SlimClaim(k Kind) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		out := Slimmed(u, []string{"spec", "resourceRef"})
		out.SetAPIVersion(k.APIVersion)
		out.SetKind(k.Kind)
		out.SetDeletionTimestamp(u.GetDeletionTimestamp())
		keepSelector(out, u, rollout.CrossplaneSpec(false)) // a claim's are under spec, as a legacy XR's
		return out, nil
	}
}
