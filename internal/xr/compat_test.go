package xr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecodeCompat(t *testing.T) {
	three, ten, fifty := int64(3), int64(10), int64(50)
	withForProvider := func(params, fp map[string]any) map[string]any {
		o := xrWith(params)
		o["spec"].(map[string]any)["forProvider"] = fp
		return o
	}
	oldPool := map[string]any{
		"autoscaling": map[string]any{"minNodeCount": 3.0, "maxNodeCount": 10.0},
		"nodeConfig":  map[string]any{"machineType": "e2-standard-4", "diskSizeGb": 50.0},
	}
	type want struct {
		location    string
		pools       []Pool
		forProvider map[string]any
		renamed     []string
		errs        []string
	}
	cases := map[string]struct {
		reason string
		in     map[string]any
		want   want
	}{
		"OriginalShape": {
			reason: "The original claim's location and pools are read as parameters, each field recorded once, and leave nothing in the passthrough but what is the cluster's.",
			in:     withForProvider(map[string]any{"domain": "prod.example.com"}, map[string]any{"location": "us-central1", "pools": map[string]any{"default": oldPool}, "releaseChannel": map[string]any{"channel": "RAPID"}}),
			want: want{
				location:    "us-central1",
				pools:       []Pool{{Key: "default", Name: "default", MachineType: "e2-standard-4", MinNodes: &three, MaxNodes: &ten, DiskSizeGB: &fifty}},
				forProvider: map[string]any{"releaseChannel": map[string]any{"channel": "RAPID"}},
				renamed: []string{
					"spec.forProvider.location -> spec.parameters.location",
					"spec.forProvider.pools[default].autoscaling.minNodeCount -> spec.parameters.pools[default].minNodes",
					"spec.forProvider.pools[default].autoscaling.maxNodeCount -> spec.parameters.pools[default].maxNodes",
					"spec.forProvider.pools[default].nodeConfig.machineType -> spec.parameters.pools[default].machineType",
					"spec.forProvider.pools[default].nodeConfig.diskSizeGb -> spec.parameters.pools[default].diskSizeGb",
				},
			},
		},
		"SameLocationBothWays": {
			reason: "The same location in both places is fine, and still reported.",
			in:     withForProvider(map[string]any{"location": "us-central1"}, map[string]any{"location": "us-central1"}),
			want:   want{location: "us-central1", forProvider: map[string]any{}, renamed: []string{"spec.forProvider.location -> spec.parameters.location"}},
		},
		"LocationsDiffer": {
			reason: "Two different locations are an error naming the old field and the new one.",
			in:     withForProvider(map[string]any{"location": "europe-west1"}, map[string]any{"location": "us-central1"}),
			want: want{location: "europe-west1", forProvider: map[string]any{}, renamed: []string{"spec.forProvider.location -> spec.parameters.location"},
				errs: []string{`spec.forProvider.location: Invalid value: "us-central1": differs from spec.parameters.location ("europe-west1"); the original platform's field is read as that one: remove it`}},
		},
		"PoolsBothWays": {
			reason: "Pools in both places are refused: which one wins would be a guess.",
			in:     withForProvider(map[string]any{"location": "x", "pools": map[string]any{"a": map[string]any{}}}, map[string]any{"pools": map[string]any{"default": oldPool}}),
			want: want{location: "x", pools: []Pool{{Key: "a", Name: "a"}}, forProvider: map[string]any{},
				errs: []string{"spec.forProvider.pools: Forbidden: spec.parameters.pools is set too; the original platform's pools are read as spec.parameters.pools: keep one of them"}},
		},
		"UnknownOldPoolField": {
			reason: "A field of an old pool the function does not know is an error naming it, never silently dropped.",
			in:     withForProvider(map[string]any{"location": "x"}, map[string]any{"pools": map[string]any{"default": map[string]any{"nodeConfig": map[string]any{"imageType": "COS"}}}}),
			want: want{location: "x", pools: []Pool{{Key: "default", Name: "default"}}, forProvider: map[string]any{},
				errs: []string{"spec.forProvider.pools[default].nodeConfig.imageType: Forbidden: unknown field; known fields are: machineType, diskSizeGb, spot, labels"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x, errs := Decode(mustStruct(tc.in))
			if diff := cmp.Diff(tc.want.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecode(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			var renamed []string
			for _, r := range x.Renamed {
				renamed = append(renamed, r.Old+" -> "+r.New)
			}
			got := want{location: x.Parameters.Location, pools: x.Parameters.Pools, forProvider: x.ForProvider, renamed: renamed, errs: tc.want.errs}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecode(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
