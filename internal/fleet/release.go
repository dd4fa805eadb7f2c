package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

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

// A Kind is an XR kind a platform release moves.
type Kind struct {
	// Resource is its API resource; Namespaced its scope.
	Resource   schema.GroupVersionResource
	APIVersion string
	Kind       string
	Namespaced bool
}

// ReleaseKinds are the XR kinds of the platform, both scopes, whose
// selections a release's rollout writes; the Clusters and XClusters among
// them are the version rollout's too. WorkloadBudget is namespaced only.
var ReleaseKinds = []Kind{
	{ClusterResource, xr.ClusterAPIVersion, xr.ClusterKind, true},
	{XClusterResource, xr.LegacyClusterAPIVersion, xr.LegacyClusterKind, false},
	{resourceOf(xr.DatabaseAPIVersion, "databases"), xr.DatabaseAPIVersion, xr.DatabaseKind, true},
	{resourceOf(xr.LegacyDatabaseAPIVersion, "xdatabases"), xr.LegacyDatabaseAPIVersion, xr.LegacyDatabaseKind, false},
	{resourceOf(xr.AppEnvironmentAPIVersion, "appenvironments"), xr.AppEnvironmentAPIVersion, xr.AppEnvironmentKind, true},
	{resourceOf(xr.LegacyAppEnvironmentAPIVersion, "xappenvironments"), xr.LegacyAppEnvironmentAPIVersion, xr.LegacyAppEnvironmentKind, false},
	{resourceOf(xr.WorkloadBudgetAPIVersion, "workloadbudgets"), xr.WorkloadBudgetAPIVersion, xr.WorkloadBudgetKind, true},
}

// Owned reports whether the controller wrote an XR's release selection:
// its managed fields (as slimXR keeps them) hold an Apply of
// ReleaseManager that owns the selector's LabelRelease key.
func Owned(obj map[string]any) bool {
	u := unstructured.Unstructured{Object: obj}
	path := []string{"f:spec"}
	if u.GetNamespace() != "" {
		path = append(path, "f:crossplane")
	}
	path = append(path, "f:compositionRevisionSelector", "f:matchLabels", "f:"+rollout.LabelRelease)
	for _, e := range u.GetManagedFields() {
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

// selection is the release an XR's selector selects, "" when none.
func selection(obj map[string]any, namespaced bool) string {
	sel, _, _ := unstructured.NestedStringMap(obj, rollout.ReleaseSelection(namespaced)...)
	return sel[rollout.LabelRelease]
}

// SelectionPatch is the server-side apply patch that makes an XR select
// release: its apiVersion, kind, name and namespace, and the one key of its
// composition revision selector.
func SelectionPatch(apiVersion, kind, namespace, name, release string) ([]byte, error) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	u.SetNamespace(namespace)
	path := rollout.ReleaseSelection(namespace != "")
	if err := unstructured.SetNestedField(u.Object, map[string]any{rollout.LabelRelease: release}, path...); err != nil {
		return nil, fmt.Errorf("cannot build the selection of %s %s: %w", kind, name, err)
	}
	return json.Marshal(u.Object)
}

// releases moves the fleet's XRs for the baseline's release, if it names
// one: it decides every XR (rollout.Moves) and applies each selection that
// differs from the one it wrote, at most MaxSelectionsPerPass, and only
// where a Composition revision of the XR's kind carries the release
// selected (otherwise the XR keeps its selection, and the log says why). It returns
// when to pass again though nothing changes: the earliest end of a soak
// that holds an XR, or the next interval when a write failed or more wait
// their turn; zero: never.
func (c *Controller) releases(ctx context.Context, b Baseline, now time.Time) time.Time {
	rel := b.Settings.Release
	if rel == nil {
		return time.Time{}
	}
	var all []map[string]any
	kinds := map[string]Kind{}
	for i, inf := range c.xrs {
		k := c.kinds[i]
		kinds[k.Kind] = k
		all = append(all, objects(inf)...)
	}
	byRef := map[string]map[string]any{}
	for _, obj := range all {
		byRef[rollout.RefOf(obj).String()] = obj
	}
	// The releases each XR kind has a revision of.
	revisions := map[string]bool{}
	for _, u := range objectsOf(c.revisions) {
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "compositeTypeRef", "kind")
		revisions[kind+"/"+u.GetLabels()[rollout.LabelRelease]] = true
	}
	missing := map[string]int{}
	defer func() {
		for what, n := range missing {
			c.log.Warn("no Composition revision carries the release: its XRs keep their selection", "kindAndRelease", what, "xrs", n)
		}
	}()
	var next time.Time
	soon := now.Add(c.interval)
	written := 0
	for _, mv := range rollout.Moves(b.Settings.Waves, *rel, all, Owned, now) {
		if u := mv.Decision.Until; !u.IsZero() && (next.IsZero() || u.Before(next)) {
			next = u
		}
		obj := byRef[mv.Ref.String()]
		k, known := kinds[mv.Ref.Kind]
		if mv.Select == "" || !known || (Owned(obj) && selection(obj, k.Namespaced) == mv.Select) {
			continue
		}
		if !revisions[mv.Ref.Kind+"/"+mv.Select] {
			missing[mv.Ref.Kind+"/"+mv.Select]++
			continue
		}
		if written == MaxSelectionsPerPass {
			return soon
		}
		if !c.leading.Load() {
			return next
		}
		patch, err := SelectionPatch(k.APIVersion, k.Kind, mv.Ref.Namespace, mv.Ref.Name, mv.Select)
		if err == nil {
			api := c.dyn.Resource(k.Resource).Namespace(mv.Ref.Namespace)
			_, err = api.Patch(ctx, mv.Ref.Name, types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: ReleaseManager, Force: ptr(true)})
		}
		written++
		attrs := []any{"xr", mv.Ref.String(), "verdict", string(mv.Decision.Verdict), "release", mv.Select, "from", selection(obj, k.Namespaced), "why", mv.Decision.Message}
		if err != nil {
			if next.IsZero() || soon.Before(next) {
				next = soon
			}
			c.log.Warn("cannot select a release", append(attrs, "error", err.Error())...)
			continue
		}
		c.log.Info("selected a release", attrs...)
	}
	return next
}

func ptr[T any](v T) *T { return &v }

// slimRevision keeps of a Composition revision its name, labels and the
// XR kind it composes (spec.compositeTypeRef).
func slimRevision(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := Slimmed(u, []string{"spec", "compositeTypeRef"})
	out.SetLabels(u.GetLabels())
	return out, nil
}

// slimXR keeps of an XR of kind what a release's decision reads
// (rollout.ReleaseMemberOf, Owned) and what a Cluster's does (slimCluster):
// its labels, generation and deletion timestamp, the version a Cluster
// pins, its composition update policy and revision selector, the managed
// fields entry of ReleaseManager, and its status.
func slimXR(k Kind) cache.TransformFunc {
	slim := slimCluster(k.APIVersion, k.Kind)
	crossplane := []string{"spec"}
	if k.Namespaced {
		crossplane = append(crossplane, "crossplane")
	}
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		o, err := slim(obj)
		if err != nil {
			return o, err
		}
		out := o.(*unstructured.Unstructured)
		for _, f := range []string{"compositionUpdatePolicy", "compositionRevisionSelector"} {
			path := append(append([]string{}, crossplane...), f)
			if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...); ok {
				_ = unstructured.SetNestedField(out.Object, v, path...) // out is a map of maps
			}
		}
		var mine []metav1.ManagedFieldsEntry
		for _, e := range u.GetManagedFields() {
			if e.Manager == ReleaseManager {
				mine = append(mine, e)
			}
		}
		out.SetManagedFields(mine)
		return out, nil
	}
}
