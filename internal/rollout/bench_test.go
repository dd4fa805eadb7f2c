package rollout

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRulings rules on a whole fleet, as the fleet controller does at
// each pass: a quarter of it in canary and staging, running the target
// Ready, and the rest in production, each gated. Its cost per Cluster
// must not grow with the fleet (the earlier waves' proof is worked out
// once per wave and target, not once per Cluster).
func BenchmarkRulings(b *testing.B) {
	ws := []Wave{{Name: "canary", Namespaces: []string{"canary"}}, {Name: "staging"}, {Name: "production", RequiresApproval: true, Approved: []string{"1.34"}}}
	obj := func(ns, name, wave, runs string, gated bool) map[string]any {
		o := map[string]any{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": name, "namespace": ns, "generation": int64(3), "labels": map[string]any{Label: wave, LabelCloud: "gcp"}},
			"status": map[string]any{
				"upgrade":    map[string]any{"target": runs, "controlPlane": runs},
				"nodePools":  []any{map[string]any{"name": "default", "version": runs}},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(3), "lastTransitionTime": "2026-12-01T10:00:00Z"}, map[string]any{"type": "Synced", "status": "True", "observedGeneration": int64(3)}},
			},
		}
		if gated {
			o["status"].(map[string]any)["rollout"] = map[string]any{"wave": wave, "target": "1.34", "verdict": "Hold"}
		}
		return o
	}
	for _, n := range []int{100, 1000, 4000} {
		var fleet []map[string]any
		for i := range n {
			switch {
			case i < n/20:
				fleet = append(fleet, obj("canary", fmt.Sprintf("c%d", i), "canary", "1.34", false))
			case i < n/4:
				fleet = append(fleet, obj(fmt.Sprintf("team-%d", i%50), fmt.Sprintf("s%d", i), "staging", "1.34", false))
			default:
				fleet = append(fleet, obj(fmt.Sprintf("team-%d", i%50), fmt.Sprintf("p%d", i), "production", "1.33", true))
			}
		}
		b.Run(fmt.Sprintf("clusters-%d", n), func(b *testing.B) {
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			for b.Loop() {
				if r := Rulings(ws, fleet, now); len(r) != n-n/4 {
					b.Fatalf("%d rulings, want %d", len(r), n-n/4)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/cluster")
		})
	}
}
