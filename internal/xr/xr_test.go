package xr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

func xrWith(params map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "platform.example.org/v1alpha1",
		"kind":       "Cluster",
		"metadata": map[string]any{
			"name": "prod", "namespace": "platform",
			"labels": map[string]any{"cloud": "gcp", "planeId": "my-project-123"},
		},
		"spec": map[string]any{"parameters": params},
	}
}

func errStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestDecode(t *testing.T) {
	three, ten := int64(3), int64(10)
	type want struct {
		xr   *Cluster
		errs []string
	}
	cases := map[string]struct {
		reason string
		in     map[string]any
		want   want
	}{
		"Namespaced": {
			reason: "A namespaced XR decodes with its labels, parameters and scope.",
			in: xrWith(map[string]any{
				"location": "us-central1",
				"pools":    map[string]any{"Default_Pool": map[string]any{"size": "medium", "minNodes": 3.0, "maxNodes": 10.0}},
			}),
			want: want{xr: &Cluster{
				Composite: Composite{
					APIVersion: "platform.example.org/v1alpha1", Kind: "Cluster", Name: "prod", Namespace: "platform",
					Labels: map[string]string{"cloud": "gcp", "planeId": "my-project-123"},
					Scope:  Namespaced, Cloud: "gcp", PlaneID: "my-project-123", CloudName: "prod", BareName: "prod",
				},
				Parameters: Parameters{
					Location: "us-central1",
					Pools:    []Pool{{Key: "Default_Pool", Name: "default-pool", Size: "medium", MinNodes: &three, MaxNodes: &ten}},
				},
			}},
		},
		"ClaimName": {
			reason: "A claim's XR is named after the claim unless clusterName says otherwise.",
			in: map[string]any{
				"metadata": map[string]any{"name": "prod-x7k2p", "labels": map[string]any{"crossplane.io/claim-name": "prod"}},
				"spec":     map[string]any{"parameters": map[string]any{"location": "x"}},
			},
			want: want{xr: &Cluster{
				Composite: Composite{
					Name: "prod-x7k2p", Labels: map[string]string{"crossplane.io/claim-name": "prod"},
					Scope: ClusterScoped, CloudName: "prod", BareName: "prod",
				},
				Parameters: Parameters{Location: "x"},
			}},
		},
		"TypeErrors": {
			reason: "Every type error is reported with its field path.",
			in: xrWith(map[string]any{
				"location":       42.0,
				"privateCluster": "yes",
				"pools":          map[string]any{"a": map[string]any{"minNodes": 1.5, "taints": "none"}},
			}),
			want: want{errs: []string{
				"spec.parameters.location: Invalid value: \"42\": must be a string",
				"spec.parameters.privateCluster: Invalid value: \"\\\"yes\\\"\": must be a boolean",
				"spec.parameters.pools[a].minNodes: Invalid value: 1.5: must be an integer",
				"spec.parameters.pools[a].taints: Invalid value: \"\\\"none\\\"\": must be a list",
			}},
		},
		"TooManyPools": {
			reason: "More pools than the bound is one error naming the bound, not one per pool.",
			in: map[string]any{"spec": map[string]any{"parameters": map[string]any{"location": "x", "pools": func() map[string]any {
				m := map[string]any{}
				for i := range 10000 {
					m[fmt.Sprintf("p%d", i)] = map[string]any{"maxNodes": 1e15}
				}
				return m
			}()}}},
			want: want{errs: []string{"spec.parameters.pools: Too many: 10000: must have at most 50 items"}},
		},
		"UnknownField": {
			reason: "An unknown parameter is reported with the known ones.",
			in:     xrWith(map[string]any{"location": "x", "region": "y"}),
			want: want{errs: []string{
				"spec.parameters.region: Forbidden: unknown field; known fields are: location, version, domain, createDnsZones, privateCluster, network, pools, charts, budget, parentZone, maintenance, import, overrides, confirmRemovals",
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := Decode(mustStruct(tc.in))
			if diff := cmp.Diff(tc.want.errs, errStrings(errs), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecode(...) errors: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.want.xr == nil {
				return
			}
			if diff := cmp.Diff(tc.want.xr, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Composite{}, "Status")); diff != "" {
				t.Errorf("%s\nDecode(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	clouds := []string{"aws", "azure", "gcp"}
	cases := map[string]struct {
		reason string
		params map[string]any
		labels map[string]any
		want   []string
	}{
		"Valid": {
			reason: "A complete XR has no errors.",
			params: map[string]any{
				"location": "us-central1", "version": "1.33", "domain": "prod.example.com",
				"network": map[string]any{"cidr": "10.0.0.0/16"},
				"pools":   map[string]any{"default": map[string]any{"minNodes": 1.0, "maxNodes": 3.0, "taints": []any{map[string]any{"key": "a", "effect": "NoSchedule"}}}},
				"budget":  map[string]any{"limitUsd": 100.0, "period": "Monthly", "thresholds": []any{50.0}, "contacts": []any{"ops@example.com"}},
				"import":  map[string]any{"enabled": true, "mode": "manage", "resources": map[string]any{"cluster": "prod"}},
			},
		},
		"MissingCloudAndPlane": {
			reason: "cloud and planeId labels are required.",
			params: map[string]any{"location": "x"},
			labels: map[string]any{},
			want: []string{
				`metadata.labels[cloud]: Required value: the cloud label selects the cloud layer; supported values: "aws", "azure", "gcp"`,
				"metadata.labels[planeId]: Required value: the GCP project, AWS account or Azure subscription the resources live in",
			},
		},
		"BadVersionAndDomain": {
			reason: "version is a minor version; domain a multi-label DNS name.",
			params: map[string]any{"location": "x", "version": "1.33.2", "domain": "localhost"},
			want: []string{
				`spec.parameters.version: Invalid value: "1.33.2": must be a Kubernetes minor version such as "1.33"`,
				`spec.parameters.domain: Invalid value: "localhost": must have at least two labels, such as example.com`,
			},
		},
		"Pools": {
			reason: "Pool bounds, disk size, taint effects and duplicate names after normalisation are checked.",
			params: map[string]any{"location": "x", "pools": map[string]any{
				"Batch": map[string]any{"minNodes": -1.0, "maxNodes": 0.0, "diskSizeGb": 5.0},
				"batch": map[string]any{"taints": []any{map[string]any{"key": "a", "effect": "Sometimes"}}},
			}},
			want: []string{
				"spec.parameters.pools[Batch].minNodes: Invalid value: -1: must be between 0 and 1000",
				"spec.parameters.pools[Batch].maxNodes: Invalid value: 0: must be between 1 and 1000",
				"spec.parameters.pools[Batch].diskSizeGb: Invalid value: 5: must be between 20 and 65536",
				`spec.parameters.pools[batch]: Duplicate value: "pools \"Batch\" and \"batch\" both normalise to the name \"batch\""`,
				`spec.parameters.pools[batch].taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			},
		},
		"Bounds": {
			reason: "Node counts, labels, taints and budget notifications are bounded; a long value is named, not repeated; a pool name never makes a Usage's name.",
			params: map[string]any{"location": "x",
				"pools": map[string]any{
					"default-uses-cluster": map[string]any{"maxNodes": float64(1 << 53)},
					"big": map[string]any{
						"labels": map[string]any{"team": strings.Repeat("x", 3<<20)},
						"taints": []any{map[string]any{"key": "a", "value": "not a label value!", "effect": "NoSchedule"}},
					},
				},
				"budget":          map[string]any{"limitUsd": 10.0, "thresholds": []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0}},
				"confirmRemovals": []any{""},
			},
			want: []string{
				"spec.parameters.confirmRemovals[0]: Required value: a composition-resource name, such as nodepool-batch",
				`spec.parameters.pools[big].labels[team]: Invalid value: "` + strings.Repeat("x", 64) + `... (3145728 bytes)": must be no more than 63 bytes`,
				`spec.parameters.pools[big].taints[0].value: Invalid value: "not a label value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
				`spec.parameters.pools[default-uses-cluster]: Invalid value: "default-uses-cluster": a pool name must not contain "-uses-", which the names of Usages are made of`,
				"spec.parameters.pools[default-uses-cluster].maxNodes: Invalid value: 9007199254740992: must be between 1 and 1000",
				"spec.parameters.budget.thresholds: Too many: 11: must have at most 10 items",
			},
		},
		"CIDRs": {
			reason: "CIDRs must parse as IPv4 network addresses.",
			params: map[string]any{"location": "x", "network": map[string]any{"cidr": "10.0.0.0/33", "podsCidr": "fd00::/64", "servicesCidr": "10.1.2.3/16"}},
			want: []string{
				`spec.parameters.network.cidr: Invalid value: "10.0.0.0/33": must be an IPv4 CIDR block such as 10.0.0.0/16`,
				`spec.parameters.network.podsCidr: Invalid value: "fd00::/64": must be an IPv4 CIDR block`,
				`spec.parameters.network.servicesCidr: Invalid value: "10.1.2.3/16": must be a network address; did you mean 10.1.0.0/16?`,
			},
		},
		"ImportAndBudget": {
			reason: "Import modes and budget fields are enumerations and bounds.",
			params: map[string]any{
				"location": "x",
				"import":   map[string]any{"enabled": true, "mode": "adopt"},
				"budget":   map[string]any{"limitUsd": 0.0, "period": "Weekly", "enforcement": "strict", "thresholds": []any{0.0}, "contacts": []any{"ops"}, "spendRef": map[string]any{"kind": "ConfigMap"}},
			},
			want: []string{
				`spec.parameters.import.mode: Unsupported value: "adopt": supported values: "observe", "manage"`,
				"spec.parameters.import.resources: Required value: name at least one resource to import, keyed by composition-resource name",
				"spec.parameters.budget.limitUsd: Invalid value: 0: must be greater than zero",
				`spec.parameters.budget.period: Unsupported value: "Weekly": supported values: "Monthly", "Quarterly", "Annually"`,
				`spec.parameters.budget.enforcement: Unsupported value: "strict": supported values: "monitor-only", "enabled"`,
				"spec.parameters.budget.thresholds[0]: Invalid value: 0: must be a percentage greater than 0 and at most 1000",
				`spec.parameters.budget.contacts[0]: Invalid value: "ops": must be an e-mail address`,
				"spec.parameters.budget.spendRef.apiVersion: Required value: needed to read the month-to-date spend",
				"spec.parameters.budget.spendRef.name: Required value: needed to read the month-to-date spend",
				"spec.parameters.budget.spendRef.fieldPath: Required value: needed to read the month-to-date spend",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := xrWith(tc.params)
			if tc.labels != nil {
				in["metadata"].(map[string]any)["labels"] = tc.labels
			}
			x, errs := Decode(mustStruct(in))
			if len(errs) > 0 {
				t.Fatalf("Decode: %v", errs)
			}
			if diff := cmp.Diff(tc.want, errStrings(Validate(x, clouds)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
