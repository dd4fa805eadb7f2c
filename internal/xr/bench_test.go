package xr

import (
	"testing"
)

// BenchmarkDecodeValidate decodes and validates a production-like XR.
func BenchmarkDecodeValidate(b *testing.B) {
	s := mustStruct(xrWith(map[string]any{
		"location": "us-central1", "version": "1.33", "domain": "prod.example.com",
		"network": map[string]any{"cidr": "10.0.0.0/16"},
		"pools": map[string]any{
			"default": map[string]any{"size": "medium", "minNodes": 3.0, "maxNodes": 10.0},
			"batch":   map[string]any{"machineType": "n2-highmem-8", "minNodes": 0.0, "maxNodes": 20.0, "spot": true, "taints": []any{map[string]any{"key": "w", "value": "b", "effect": "NoSchedule"}}},
		},
		"budget": map[string]any{"limitUsd": 5000.0, "thresholds": []any{50.0, 80.0, 100.0}, "contacts": []any{"ops@example.com"}},
	}))
	clouds := []string{"aws", "azure", "gcp"}
	b.ReportAllocs()
	for b.Loop() {
		x, errs := Decode(s)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		if errs := Validate(x, clouds); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
