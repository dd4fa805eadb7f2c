package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func TestBuildPools(t *testing.T) {
	cases := map[string]struct {
		reason string
		pools  []xr.Pool
		env    map[string]any
		want   []NodePool
		errs   []string
	}{
		"SizeAndExplicit": {
			reason: "A size class maps through the environment; an explicit machine type wins.",
			pools: []xr.Pool{
				{Key: "web", Name: "web", Size: "small", MinNodes: ptr[int64](2), MaxNodes: ptr[int64](5), Labels: map[string]string{"a": "b"}},
				{Key: "batch", Name: "batch", Size: "small", MachineType: "n2-highmem-8", MinNodes: ptr[int64](0), MaxNodes: ptr[int64](9), Spot: true, DiskSizeGB: ptr[int64](200)},
			},
			env: map[string]any{"sizes": gcpSizes},
			want: []NodePool{
				{Name: "batch", Key: "batch", MachineType: "n2-highmem-8", MinNodes: 0, MaxNodes: 9, Spot: true, DiskSizeGB: 200},
				{Name: "web", Key: "web", MachineType: "e2-standard-2", MinNodes: 2, MaxNodes: 5, DiskSizeGB: 100, Labels: map[string]string{"a": "b"}},
			},
		},
		"NodeDefaults": {
			reason: "Bounds, size and disk default from the environment's nodeDefaults; max is at least min.",
			pools:  []xr.Pool{{Key: "p", Name: "p", MinNodes: ptr[int64](7)}},
			env:    map[string]any{"sizes": gcpSizes, "nodeDefaults": map[string]any{"size": "small", "maxNodes": 4.0, "diskSizeGb": 50.0}},
			want:   []NodePool{{Name: "p", Key: "p", MachineType: "e2-standard-2", MinNodes: 7, MaxNodes: 7, DiskSizeGB: 50}},
		},
		"EnvironmentPools": {
			reason: "Without pools in the XR, the environment's pools apply.",
			env: map[string]any{"sizes": gcpSizes, "pools": map[string]any{
				"system": map[string]any{"size": "small", "minNodes": 1.0, "maxNodes": 2.0},
			}},
			want: []NodePool{{Name: "system", Key: "system", FromEnvironment: true, MachineType: "e2-standard-2", MinNodes: 1, MaxNodes: 2, DiskSizeGB: 100}},
		},
		"UnknownSize": {
			reason: "An unknown size class names the classes the environment maps.",
			pools:  []xr.Pool{{Key: "p", Name: "p", Size: "huge"}},
			env:    map[string]any{"sizes": gcpSizes},
			errs:   []string{`spec.parameters.pools[p].size: Unsupported value: "huge": supported values: "medium", "small"`},
		},
		"NoSizes": {
			reason: "An environment without size classes is named.",
			pools:  []xr.Pool{{Key: "p", Name: "p", Size: "small"}},
			errs:   []string{`spec.parameters.pools[p].size: Invalid value: "small": the environment defines no size classes (key sizes); set machineType or add sizes to the cloud's EnvironmentConfig`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, errs := Build(composite(xr.Parameters{Location: "x", Pools: tc.pools}), envcfg.New(tc.env), Traits{})
			if diff := cmp.Diff(tc.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s\nBuild(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if len(tc.errs) > 0 {
				return
			}
			if diff := cmp.Diff(tc.want, p.Pools, carried, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nBuild(...).Pools: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	cases := map[string]struct {
		reason            string
		pool              NodePool
		min, max, initial int64
	}{
		"Running":         {reason: "A running pool is composed with its bounds.", pool: NodePool{MinNodes: 2, MaxNodes: 5}, min: 2, max: 5, initial: 2},
		"Paused":          {reason: "A paused pool is held at its floor.", pool: NodePool{MinNodes: 2, MaxNodes: 5, Floor: ptr[int64](2)}, min: 2, max: 2, initial: 2},
		"PausedAtZero":    {reason: "A floor of zero keeps a maximum of one, which autoscalers require.", pool: NodePool{MinNodes: 0, MaxNodes: 5, Floor: ptr[int64](0)}, min: 0, max: 1, initial: 0},
		"Rotating":        {reason: "A new generation holds the nodes the old one runs.", pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 5, Generation: "bcdf"}, min: 5, max: 6, initial: 5},
		"RotatingPastMax": {reason: "Holding more nodes than the maximum raises the maximum.", pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 9, Generation: "bcdf"}, min: 9, max: 9, initial: 9},
		"RotatingPaused": {reason: "A budget's floor wins over the nodes a rotation keeps: the new generation is created within it.",
			pool: NodePool{MinNodes: 2, MaxNodes: 6, Keep: 5, Generation: "bcdf", Floor: ptr[int64](2)}, min: 2, max: 2, initial: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if gotMin, gotMax := tc.pool.Bounds(); gotMin != tc.min || gotMax != tc.max {
				t.Errorf("%s\nBounds() = (%d, %d), want (%d, %d)", tc.reason, gotMin, gotMax, tc.min, tc.max)
			}
			if got := tc.pool.Initial(); got != tc.initial {
				t.Errorf("%s\nInitial() = %d, want %d", tc.reason, got, tc.initial)
			}
		})
	}
}
