package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
)

func TestSettingsOriginalKeys(t *testing.T) {
	three, two, hundred := int64(3), int64(2), int64(100)
	type want struct {
		machineType string
		location    string
		replicas    *int64
		minNodes    *int64
		diskSizeGB  *int64
		warnings    []string
	}
	cases := map[string]struct {
		reason string
		data   map[string]any
		want   want
	}{
		"OriginalOnly": {
			reason: "The original platform's keys are read under their modern names, one warning each.",
			data:   map[string]any{"defaultMachineType": "e2-medium", "defaultRegion": "us-central1", "ingress_replicas": 3.0, "defaultNodeCount": 2.0, "defaultDiskSizeGb": 100.0},
			want: want{machineType: "e2-medium", location: "us-central1", replicas: &three, minNodes: &two, diskSizeGB: &hundred, warnings: []string{
				"environment key defaultMachineType is the original platform's; it is read as nodeDefaults.machineType: rename it",
				"environment key defaultDiskSizeGb is the original platform's; it is read as nodeDefaults.diskSizeGb: rename it",
				"environment key defaultNodeCount is the original platform's; it is read as nodeDefaults.minNodes: rename it",
				"environment key defaultRegion is the original platform's; it is read as location: rename it",
				"environment key ingress_replicas is the original platform's; it is read as ingress.replicas: rename it",
			}},
		},
		"ModernWins": {
			reason: "Where the modern key is set too, it wins, and the warning says the original one is ignored.",
			data:   map[string]any{"ingress_replicas": 3.0, "ingress": map[string]any{"replicas": 2.0}},
			want: want{replicas: &two, warnings: []string{
				"environment key ingress_replicas is the original platform's name of ingress.replicas, which is set too and wins: remove ingress_replicas",
			}},
		},
		"ModernOnly": {
			reason: "Modern keys alone warn of nothing.",
			data:   map[string]any{"location": "eu", "nodeDefaults": map[string]any{"machineType": "n2"}},
			want:   want{machineType: "n2", location: "eu"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := envcfg.New(tc.data)
			s := SettingsOf(env)
			// A second read decodes and warns nothing more.
			if again := SettingsOf(env); again != s || len(again.Renamed()) != len(tc.want.warnings) {
				t.Errorf("%s\na second SettingsOf decoded again or warned again: %q", tc.reason, again.Renamed())
			}
			got := want{machineType: s.NodeDefaults.MachineType, location: s.Location, replicas: s.Ingress.Replicas, minNodes: s.NodeDefaults.MinNodes, diskSizeGB: s.NodeDefaults.DiskSizeGB, warnings: s.Renamed()}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nSettingsOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
