package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

func obj(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCompare(t *testing.T) {
	src := Source("terraform-provider-test v1")
	fields := []Field{
		src.Walk("version", "t.version", "f.go:1"),
		src.Rotate("instanceTypes", "aws_eks_node_group.instance_types", "f.go:2"),
		src.Refuse("region", "t.region", "f.go:3"),
		src.Cycle("defaultNodePool.vmSize", "t.default_node_pool.vm_size", "f.go:4"),
		src.Raise("storageMb", "t.storage_mb", "f.go:5"),
		src.Refuse("clusterNameSelector", "aws_eks_node_group.cluster_name", "f.go:6"),
		src.Rotate("priority", "azurerm_kubernetes_cluster_node_pool.priority", "f.go:7").Defaults("Regular"),
	}
	spec := func(fp map[string]any) map[string]any {
		return map[string]any{"spec": map[string]any{"forProvider": fp}}
	}
	observed := func(fp, at map[string]any, conds ...any) map[string]any {
		o := spec(fp)
		st := map[string]any{"atProvider": at}
		if len(conds) > 0 {
			st["conditions"] = conds
		}
		o["status"] = st
		return o
	}
	refusing := map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError",
		"message": `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "instance_types"`}
	cases := map[string]struct {
		reason   string
		desired  map[string]any
		observed map[string]any
		want     []string
		action   Action
	}{
		"Unchanged": {
			reason:   "What the resource asks for already is no change.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.large"}, "region": "eu-west-1"}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}, "region": "eu-west-1"}, map[string]any{"instanceTypes": []any{"m6i.large"}}),
		},
		"DefaultLeftOutRotates": {
			reason:   "A field left out asks for its provider's default: a Spot pool rendered without priority rotates to Regular instead of keeping Spot.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.large"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}, "priority": "Spot"}, map[string]any{"priority": "Spot"}),
			want:     []string{`spec.forProvider.priority "Spot" -> "Regular"`},
			action:   Rotate,
		},
		"DefaultLeftOutUnchanged": {
			reason:   "A field left out whose resource has the default, or has nothing, is no change.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.large"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}}, map[string]any{"instanceTypes": []any{"m6i.large"}}),
		},
		"DefaultIsTheOldValue": {
			reason:   "A field set where the resource has neither asked for nor reported it changes from the provider's default, not from nothing.",
			desired:  spec(map[string]any{"priority": "Spot"}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}}, map[string]any{"instanceTypes": []any{"m6i.large"}}),
			want:     []string{`spec.forProvider.priority "Regular" -> "Spot"`},
			action:   Rotate,
		},
		"DefaultSetExplicitly": {
			reason:   "A field set to its default where the resource has nothing is no change.",
			desired:  spec(map[string]any{"priority": "Regular"}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}}, map[string]any{"instanceTypes": []any{"m6i.large"}}),
		},
		"VersionNotCompared": {
			reason:   "A version moves in steps decided elsewhere; its change is not a replacement.",
			desired:  spec(map[string]any{"version": "1.34"}),
			observed: observed(map[string]any{"version": "1.33"}, nil),
		},
		"Rotate": {
			reason:   "A changed instance type rotates the pool.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}}, nil),
			want:     []string{`spec.forProvider.instanceTypes ["m6i.large"] -> ["m6i.xlarge"]`},
			action:   Rotate,
		},
		"RefuseWins": {
			reason:   "A refused change outranks a rotation.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}, "region": "us-east-1"}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.large"}, "region": "eu-west-1"}, nil),
			want:     []string{`spec.forProvider.instanceTypes ["m6i.large"] -> ["m6i.xlarge"]`, `spec.forProvider.region "eu-west-1" -> "us-east-1"`},
			action:   Refuse,
		},
		"Cycle": {
			reason:   "The provider cycles a default node pool itself.",
			desired:  spec(map[string]any{"defaultNodePool": map[string]any{"vmSize": "Standard_D4s_v5", "minCount": 1}}),
			observed: observed(map[string]any{"defaultNodePool": map[string]any{"vmSize": "Standard_D2s_v5", "minCount": 1}}, nil),
			want:     []string{`spec.forProvider.defaultNodePool.vmSize "Standard_D2s_v5" -> "Standard_D4s_v5"`},
			action:   Cycle,
		},
		"NewFieldAgainstReported": {
			reason:   "A field the spec never asked for is compared with what the provider reports.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{}, map[string]any{"instanceTypes": []any{"m6i.large"}}),
			want:     []string{`spec.forProvider.instanceTypes ["m6i.large"] -> ["m6i.xlarge"]`},
			action:   Rotate,
		},
		"AddedToReportedResource": {
			reason:   "A field neither the spec (late-initialized from the cloud) nor the provider's report holds is one the cloud resource does not have: setting it replaces the resource.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"region": "eu-west-1"}, map[string]any{"region": "eu-west-1"}),
			want:     []string{`spec.forProvider.instanceTypes (none) -> ["m6i.xlarge"]`},
			action:   Rotate,
		},
		"AddedBeforeAnyReport": {
			reason:   "Before the provider reports the resource, a field missing from the spec says nothing of the cloud resource.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{}, map[string]any{}),
		},
		"AddedInUnreportedObject": {
			reason:   "A field of an object the provider does not report at all is not known to be missing from the cloud resource.",
			desired:  spec(map[string]any{"defaultNodePool": map[string]any{"vmSize": "Standard_D4s_v5"}}),
			observed: observed(map[string]any{"region": "westeurope"}, map[string]any{"region": "westeurope"}),
		},
		"AddedSelector": {
			reason:   "A selector is resolved into another field and never reported: rendering one the spec lacks is no change from nothing.",
			desired:  spec(map[string]any{"clusterNameSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}),
			observed: observed(map[string]any{"clusterName": "edge"}, map[string]any{"clusterName": "edge"}),
		},
		"AddedEmpty": {
			reason:   "An empty list is left out of a provider's report: rendering one is no change from nothing.",
			desired:  spec(map[string]any{"instanceTypes": []any{}}),
			observed: observed(map[string]any{"region": "eu-west-1"}, map[string]any{"region": "eu-west-1"}),
		},
		"RefusedSelectorNotStuck": {
			reason:  "A refusal of the field a selector resolves does not make the selector stuck at \"(none)\": the selector is never reported.",
			desired: spec(map[string]any{"clusterNameSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}),
			observed: observed(map[string]any{"clusterNameSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}, map[string]any{"region": "eu-west-1"},
				map[string]any{"type": "Synced", "status": "False", "message": `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "cluster_name"`}),
		},
		"StuckOnAddedField": {
			reason:   "A field an earlier render added, which the cloud resource does not have and the provider refuses to set in place, is stuck.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}, map[string]any{"region": "eu-west-1"}, refusing),
			want:     []string{`spec.forProvider.instanceTypes (none) -> ["m6i.xlarge"]`},
			action:   Rotate,
		},
		"ReportedDiffersNotRefused": {
			reason:   "The provider reporting another value without refusing is not stuck (it may normalise it).",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}, map[string]any{"instanceTypes": []any{"M6I.XLARGE"}}),
		},
		"Stuck": {
			reason:   "An earlier in-place edit the provider refuses forever is found from what runs.",
			desired:  spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}, map[string]any{"instanceTypes": []any{"m6i.large"}}, refusing),
			want:     []string{`spec.forProvider.instanceTypes ["m6i.large"] -> ["m6i.xlarge"]`},
			action:   Rotate,
		},
		"OtherAttributeRefused": {
			reason:  "A refusal of another attribute does not make this one stuck (a provider may report it in another case).",
			desired: spec(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}),
			observed: observed(map[string]any{"instanceTypes": []any{"m6i.xlarge"}}, map[string]any{"instanceTypes": []any{"M6I.XLARGE"}},
				map[string]any{"type": "Synced", "status": "False", "message": `refuse to update the external resource because the following update requires replacing it: cannot change the value of the argument "launch_template"`}),
		},
		"RaiseUp": {
			reason:   "A value that may only grow grows in place.",
			desired:  spec(map[string]any{"storageMb": 65536}),
			observed: observed(map[string]any{"storageMb": 32768}, nil),
		},
		"RaiseDown": {
			reason:   "Shrinking it would replace the resource.",
			desired:  spec(map[string]any{"storageMb": 16384}),
			observed: observed(map[string]any{"storageMb": 32768}, nil),
			want:     []string{`spec.forProvider.storageMb 32768 -> 16384`},
			action:   Raise,
		},
		"OnlyRenderedKeys": {
			reason:   "Keys the provider late-initialized are not changes.",
			desired:  spec(map[string]any{"defaultNodePool": map[string]any{"vmSize": "Standard_D2s_v5"}}),
			observed: observed(map[string]any{"defaultNodePool": map[string]any{"vmSize": "Standard_D2s_v5", "osSku": "Ubuntu"}}, nil),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Compare(fields, tc.desired, obj(t, tc.observed))
			var got []string
			for _, c := range v.Changes {
				got = append(got, c.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCompare(...): -want, +got:\n%s", tc.reason, diff)
			}
			if v.Action() != tc.action {
				t.Errorf("%s\nAction() = %q, want %q", tc.reason, v.Action(), tc.action)
			}
		})
	}
}
