package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/seed-6471616d/function-cluster-platform/internal/rollout"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// ReleaseManager is the field manager of the controller's writes of an
// XR's release selection: the only field of an XR it writes, and how it
// tells its own selection from one someone else wrote (which pins the XR).
const ReleaseManager = "function-cluster-platform-release"

// CompositionRevisionResource are Crossplane's Composition revisions: the
// controller selects a release for an XR only where a revision of its kind
// carries the release's label, since an XR whose selector matches no
// revision is not rendered at all (Synced False, "no compatible
// CompositionRevisions found").
var CompositionRevisionResource = resourceOf("apiextensions.crossplane.io/v1", "compositionrevisions")

// RevisionSelector selects the Composition revisions of a release.
const RevisionSelector = rollout.LabelRelease

// MaxSelectionsPerPass bounds the XRs a pass writes: each write re-runs
// one XR in Crossplane. The first pass of a fleet that selects no release
// yet writes every XR's, a few hundred per second; the rest follow at the
// next passes.
const MaxSelectionsPerPass = 200

// A Kind is an XR kind a platform release moves, or the claim kind of a
// legacy one (ClaimKinds).
type Kind struct {
	// Resource is its API resource.
	Resource schema.GroupVersionResource
	// APIVersion and Kind name it.
	APIVersion string
	Kind       string
	// Namespaced is its scope: a Crossplane v2 namespaced XR, whose
	// Crossplane fields are under spec.crossplane, or a legacy
	// cluster-scoped one, whose are under spec.
	Namespaced bool
	// Claims is, of a claim kind, the legacy XR kind it claims; "" of an
	// XR kind. A claim is namespaced, but its Crossplane fields are under
	// spec, as its XR's.
	Claims string
}

// Selection is where an object of kind k selects its release
// (rollout.ReleaseSelection): under spec.crossplane on a namespaced XR,
// under spec on a legacy XR and on a claim.
func (k Kind) Selection() []string { return rollout.ReleaseSelection(k.Namespaced && k.Claims == "") }

// ReleaseKinds are the XR kinds of the platform, both scopes, whose
// selections a release's rollout writes; the Clusters and XClusters among
// them are the version rollout's too. WorkloadBudget is namespaced only.
// A legacy XR of a claim is moved through its claim (ClaimKinds).
var ReleaseKinds = []Kind{
	{Resource: ClusterResource, APIVersion: xr.ClusterAPIVersion, Kind: xr.ClusterKind, Namespaced: true},
	{Resource: XClusterResource, APIVersion: xr.LegacyClusterAPIVersion, Kind: xr.LegacyClusterKind},
	{Resource: resourceOf(xr.DatabaseAPIVersion, "databases"), APIVersion: xr.DatabaseAPIVersion, Kind: xr.DatabaseKind, Namespaced: true},
	{Resource: resourceOf(xr.LegacyDatabaseAPIVersion, "xdatabases"), APIVersion: xr.LegacyDatabaseAPIVersion, Kind: xr.LegacyDatabaseKind},
	{Resource: resourceOf(xr.AppEnvironmentAPIVersion, "appenvironments"), APIVersion: xr.AppEnvironmentAPIVersion, Kind: xr.AppEnvironmentKind, Namespaced: true},
	{Resource: resourceOf(xr.LegacyAppEnvironmentAPIVersion, "xappenvironments"), APIVersion: xr.LegacyAppEnvironmentAPIVersion, Kind: xr.LegacyAppEnvironmentKind},
	{Resource: resourceOf(xr.WorkloadBudgetAPIVersion, "workloadbudgets"), APIVersion: xr.WorkloadBudgetAPIVersion, Kind: xr.WorkloadBudgetKind, Namespaced: true},
}

// Owned reports whether the controller wrote the release selection of an
// XR or a claim (ClaimKinds): its managed fields (as SlimXR and SlimClaim
// keep them) hold an Apply of ReleaseManager that owns the selector's
// LabelRelease key.
func Owned(obj map[string]any) bool {
	var path []string
	for _, p := range append(selectionOf(obj), rollout.LabelRelease) {
		path = append(path, "f:"+p)
	}
	for _, e := range (&unstructured.Unstructured{Object: obj}).GetManagedFields() {
		if e.Manager != ReleaseManager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			continue
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(fields, path...); ok {
			return true
		}
	}
	return false
}

// selectionOf is where obj, an XR or a claim, selects its release
// (Kind.Selection).
func selectionOf(obj map[string]any) []string {
	u := unstructured.Unstructured{Object: obj}
	if k, ok := claimKind(u.GetAPIVersion(), u.GetKind()); ok {
		return k.Selection()
	}
	return rollout.ReleaseSelection(u.GetNamespace() != "")
}

// Selected is the release an XR's or a claim's selector selects, ""
// when none.
func Selected(obj map[string]any) string {
	sel, _, _ := unstructured.NestedStringMap(obj, selectionOf(obj)...)
	return sel[rollout.LabelRelease]
}

// SelectionPatch is the server-side apply patch that makes obj, an XR or a
// claim of kind k, select release: its apiVersion, kind, name, namespace
// and the resource version read, and the one key of its composition
// revision selector (Kind.Selection). The resource version makes the
// apply fail on a copy that is out of date, and never create an object
// that is gone.
func SelectionPatch(k Kind, obj map[string]any, release string) ([]byte, error) {
	read := unstructured.Unstructured{Object: obj}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": k.APIVersion, "kind": k.Kind}}
	u.SetName(read.GetName())
	u.SetNamespace(read.GetNamespace())
	u.SetResourceVersion(read.GetResourceVersion())
	if err := unstructured.SetNestedField(u.Object, map[string]any{rollout.LabelRelease: release}, k.Selection()...); err != nil {
		return nil, fmt.Errorf("cannot build the selection of %s %s: %w", k.Kind, read.GetName(), err)
	}
	return json.Marshal(u.Object)
}

// releases moves the fleet's XRs for the baseline's release, if it names
// one and every informer a release reads has listed: it decides every XR
// (rollout.Moves) and applies each selection that differs from the one it
// wrote, to the XR or, for a legacy XR of a claim, to its claim
// (rollout.Move.Claim), in the order Moves gives (the earliest wave
// first; the last first for a rollback), at most MaxSelectionsPerPass
// writes that succeed; and only where a Composition revision of the XR's
// Composition carries the release selected, since an XR whose selector
// matches no revision is not rendered at all (otherwise the XR keeps its
// selection, and the log says why). Release keys that are wrong move nothing, and say so once. Each
// XR's decision is logged when it changes. It returns when to pass again
// though nothing changes: the earliest end of a soak that holds an XR, the
// next interval when more wait their turn, or retryAfter when a write
// failed; zero: never.
func (c *Controller) releases(ctx context.Context, b Baseline, now time.Time) time.Time {
	rel := b.Settings.Release
	if rel == nil || !c.releaseSynced() {
		return time.Time{}
	}
	var all, claimed []map[string]any
	kinds := map[string]Kind{}
	for i, inf := range c.xrs {
		kinds[c.kinds[i].Kind] = c.kinds[i]
		all = append(all, objects(inf)...)
	}
	for _, inf := range c.claims {
		claimed = append(claimed, objects(inf)...)
	}
	claims := ClaimsOf(claimed)
	carried := ReleasesOf(objectsOf(c.revisions))
	moves, outside, err := ReleaseMoves(b, all, claimed, carried, now)
	if err != nil {
		if msg := err.Error(); msg != c.lastReleaseErr {
			c.lastReleaseErr = msg
			c.log.Error("cannot move the fleet to its release: the baseline's release keys are wrong; moving nothing until they are fixed", "error", msg)
		}
		return time.Time{}
	}
	c.lastReleaseErr = ""
	if outside != c.lastOutside {
		c.lastOutside = outside
		c.log.Info("XRs whose Composition has no revision of any release take no part in releases", "xrs", outside)
	}
	byRef := map[string]map[string]any{}
	for _, obj := range all {
		byRef[rollout.RefOf(obj).String()] = obj
	}
	missing := map[string]int{}
	var next time.Time
	later := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	written := 0
	decided := make(map[string]string, len(moves))
	for _, mv := range moves {
		later(mv.Decision.Until)
		ref := mv.Ref.String()
		decided[ref] = string(mv.Decision.Verdict) + ": " + mv.Decision.Message
		if c.decisions[ref] != decided[ref] {
			c.log.Info("release decision", "xr", ref, "verdict", string(mv.Decision.Verdict), "release", rel.Target, "why", mv.Decision.Message)
		}
		obj := byRef[ref]
		k, known := kinds[mv.Ref.Kind]
		// What is written: the XR's selector, or its claim's.
		sel := obj
		if known && mv.Claim != (rollout.Ref{}) {
			sel = claims.Of(obj)
			k, known = ClaimKindOf(mv.Ref.Kind)
		}
		if mv.Select == "" || !known || sel == nil || (Owned(sel) && Selected(sel) == mv.Select) {
			continue
		}
		composition := CompositionOf(obj)
		if !carried.Carries(composition, mv.Select) {
			missing[composition+"/"+mv.Select]++
			continue
		}
		if written == MaxSelectionsPerPass {
			later(now.Add(c.interval))
			break
		}
		if !c.leading.Load() {
			return next
		}
		patch, err := SelectionPatch(k, sel, mv.Select)
		if err == nil {
			u := unstructured.Unstructured{Object: sel}
			api := c.dyn.Resource(k.Resource).Namespace(u.GetNamespace())
			_, err = api.Patch(ctx, u.GetName(), types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: ReleaseManager, Force: ptr.To(true)})
		}
		attrs := []any{"xr", ref, "verdict", string(mv.Decision.Verdict), "release", mv.Select, "from", Selected(sel)}
		if mv.Claim != (rollout.Ref{}) {
			attrs = append(attrs, "claim", mv.Claim.String())
		}
		if err != nil {
			later(now.Add(retryAfter))
			c.log.Warn("cannot select a release", append(attrs, "error", err.Error())...)
			continue
		}
		written++
		c.log.Info("selected a release", attrs...)
	}
	c.decisions = decided
	if fmt.Sprint(missing) != c.lastMissing {
		c.lastMissing = fmt.Sprint(missing)
		for _, what := range slices.Sorted(maps.Keys(missing)) {
			c.log.Warn("no revision of the XRs' Composition carries the release: they keep their selection", "compositionAndRelease", what, "xrs", missing[what])
		}
	}
	return next
}

// Releases are the platform releases a Composition has a revision of, by
// Composition name: what Crossplane can select among for an XR of it (it
// selects among the revisions of the XR's Composition).
type Releases map[string]map[string]bool

// ReleasesOf reads Composition revisions (those RevisionSelector selects,
// as SlimRevision keeps them): each one's Composition
// (LabelCompositionName) carries its release (rollout.LabelRelease).
func ReleasesOf(revisions []*unstructured.Unstructured) Releases {
	out := Releases{}
	for _, u := range revisions {
		composition := u.GetLabels()[LabelCompositionName]
		if out[composition] == nil {
			out[composition] = map[string]bool{}
		}
		out[composition][u.GetLabels()[rollout.LabelRelease]] = true
	}
	return out
}

// Carries reports whether a revision of composition carries release.
func (r Releases) Carries(composition, release string) bool { return r[composition][release] }

// Released reports whether composition has a revision of any release.
func (r Releases) Released(composition string) bool { return len(r[composition]) > 0 }

// ReleaseMoves is the fleet controller's decision on the baseline's
// platform release at now (rollout.Moves, in the order it gives), over
// the XRs of xrs (of every kind, as maps, as SlimXR keeps them) whose
// Composition has a revision of some release (carried), a legacy XR of a
// claim decided on its claim among claims (of ClaimKinds, as SlimClaim
// keeps them; Claims.Of): an XR whose Composition is no release's
// (another team's, or one not cut yet) could never be moved, and would
// hold every later wave, and every rollback, for ever; outside counts
// those left out. None without release keys; keys that are wrong
// (rollout.Release.Validate) move nothing, and the error says why. The
// controller writes what it decides; the portal's fleet view shows it.
func ReleaseMoves(b Baseline, xrs, claims []map[string]any, carried Releases, now time.Time) (moves []rollout.Move, outside int, err error) {
	rel := b.Settings.Release
	if rel == nil {
		return nil, 0, nil
	}
	if errs := rel.Validate(field.NewPath("environment", "rollout"), b.Settings.Waves); len(errs) > 0 {
		return nil, 0, errs.ToAggregate()
	}
	in := make([]map[string]any, 0, len(xrs))
	for _, obj := range xrs {
		if !carried.Released(CompositionOf(obj)) {
			outside++
			continue
		}
		in = append(in, obj)
	}
	return rollout.Moves(b.Settings.Waves, *rel, in, ClaimsOf(claims).Of, Owned, now), outside, nil
}

// LabelCompositionName is the label Crossplane gives a Composition's
// revisions: the Composition's name.
const LabelCompositionName = "crossplane.io/composition-name"

// CompositionOf is the name of the Composition an XR's spec names
// (spec.crossplane.compositionRef on a namespaced XR, spec.compositionRef
// on a legacy cluster-scoped one), "" before Crossplane has chosen one.
func CompositionOf(obj map[string]any) string {
	namespaced := (&unstructured.Unstructured{Object: obj}).GetNamespace() != ""
	name, _, _ := unstructured.NestedString(obj, append(rollout.CrossplaneSpec(namespaced), "compositionRef", "name")...)
	return name
}

// SlimRevision keeps of a Composition revision its name, labels and the
// XR kind it composes (spec.compositeTypeRef): what ReleasesOf reads. It
// is an informer's transform (the controller's, and the portal's fleet
// view's).
func SlimRevision(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := Slimmed(u, []string{"spec", "compositeTypeRef"})
	out.SetLabels(u.GetLabels())
	return out, nil
}

// SlimXR keeps of an XR of kind k what a release's decision reads
// (KeepRelease) and what a Cluster's does (slimCluster): its labels,
// generation and deletion timestamp, the version a Cluster pins, and its
// status. It is an informer's transform (the controller's, and the
// portal's fleet view's).
func SlimXR(k Kind) cache.TransformFunc {
	slim := slimCluster(k.APIVersion, k.Kind)
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		o, err := slim(obj)
		if err != nil {
			return o, err
		}
		out := o.(*unstructured.Unstructured) //nolint:forcetypeassert // slimCluster slims an Unstructured into one.
		KeepRelease(out, u)
		return out, nil
	}
}

// KeepRelease copies onto out, what an informer keeps of XR u, what a
// release's decision reads of it (rollout.ReleaseMemberOf, Owned,
// CompositionOf) beyond a Cluster's: what keepSelector keeps (under
// spec.crossplane on a namespaced XR, under spec on a legacy one), the
// label crossplane.io/claim-name, and status.platformRelease. A field out
// has already is left as it is; out's own labels and annotations are
// kept.
func KeepRelease(out, u *unstructured.Unstructured) {
	keepSelector(out, u, rollout.CrossplaneSpec(u.GetNamespace() != ""))
	keep(out, u, "status", "platformRelease")
	if v, ok := u.GetLabels()[rollout.LabelClaimName]; ok {
		out.SetLabels(with(out.GetLabels(), rollout.LabelClaimName, v))
	}
}

// keepSelector copies onto out, what an informer keeps of u (an XR, or a
// claim), where it selects its release: its composition update policy,
// revision selector and Composition at spec (rollout.CrossplaneSpec), the
// managed fields entry of ReleaseManager, and the annotation
// crossplane.io/paused.
func keepSelector(out, u *unstructured.Unstructured, spec []string) {
	for _, f := range []string{"compositionUpdatePolicy", "compositionRevisionSelector", "compositionRef"} {
		keep(out, u, append(slices.Clone(spec), f)...)
	}
	var mine []metav1.ManagedFieldsEntry
	for _, e := range u.GetManagedFields() {
		if e.Manager == ReleaseManager {
			mine = append(mine, e)
		}
	}
	out.SetManagedFields(mine)
	if v, ok := u.GetAnnotations()[rollout.AnnotationPaused]; ok {
		out.SetAnnotations(with(out.GetAnnotations(), rollout.AnnotationPaused, v))
	}
}

// keep copies u's field at path onto out, unless out has it already.
func keep(out, u *unstructured.Unstructured, path ...string) {
	if _, ok, _ := unstructured.NestedFieldNoCopy(out.Object, path...); ok {
		return
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...); ok {
		_ = unstructured.SetNestedField(out.Object, v, path...) // out is a map of maps
	}
}

// with is m (a copy, or a new map when nil) with key k set to v.
func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
