package overlay

import (
	"testing"
)

// BenchmarkMerge merges a typical override into a rendered cluster.
func BenchmarkMerge(b *testing.B) {
	base := map[string]any{
		"apiVersion": "container.gcp.m.upbound.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"labels": map[string]any{"a": "b"}, "annotations": map[string]any{"c": "d"}},
		"spec": map[string]any{"forProvider": map[string]any{
			"location": "us-central1", "releaseChannel": map[string]any{"channel": "REGULAR"},
			"ipAllocationPolicy": map[string]any{"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"},
			"resourceLabels":     map[string]any{"cluster": "prod", "managed-by": "crossplane"},
		}},
	}
	over := map[string]any{"spec": map[string]any{"forProvider": map[string]any{
		"releaseChannel": map[string]any{"channel": "STABLE"}, "resourceLabels": map[string]any{"team": "platform"},
		"maintenancePolicy": map[string]any{"dailyMaintenanceWindow": map[string]any{"startTime": "03:00"}},
	}}}
	b.ReportAllocs()
	for b.Loop() {
		Merge(DeepCopy(base), over)
	}
}
