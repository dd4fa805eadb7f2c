package fleet

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// IsCluster reports whether obj is a Cluster XR of either kind: a
// namespaced Cluster or a legacy XCluster (not a legacy claim, whose
// XCluster is the one ruled on).
func IsCluster(obj map[string]any) bool {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return av == xr.ClusterAPIVersion && kind == xr.ClusterKind || av == xr.LegacyClusterAPIVersion && kind == xr.LegacyClusterKind
}

// ConfigMaps are the ConfigMaps the controller would hold at now for the
// Clusters and XClusters among objects (IsCluster; the rest ignored) under
// the baseline EnvironmentConfigs among configs: one per Ruling of Rule,
// in the baseline's rollout.namespace, in name order. It is what
// `fleet rule` prints, for crossplane render --required-resources.
func ConfigMaps(configs, objects []map[string]any, now time.Time) ([]map[string]any, error) {
	b := BaselineOf(configs)
	var clusters []map[string]any
	for _, o := range objects {
		if !IsCluster(o) {
			continue
		}
		d, err := decoded(o)
		if err != nil {
			return nil, err
		}
		clusters = append(clusters, d)
	}
	rulings, err := Rule(b, clusters, now)
	if err != nil {
		return nil, err
	}
	ns := b.Settings.RulingNamespace()
	out := make([]map[string]any, 0, len(rulings))
	for _, r := range rulings {
		out = append(out, r.Object(ns))
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return cmp.Compare(nameOf(a), nameOf(b)) })
	return out, nil
}

// decoded is obj as client-go decodes it from the API server, its whole
// numbers int64 (a YAML file's are float64), as rollout.MemberOf reads
// metadata.generation.
func decoded(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", nameOf(obj), err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", nameOf(obj), err)
	}
	return u.Object, nil
}

// nameOf is an object's metadata.name.
func nameOf(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
