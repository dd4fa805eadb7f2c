package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPolicy(t *testing.T) {
	managed := &ResourceKind{Kind: "Cluster", Provider: "gcp"}
	pool := (&ResourceKind{Kind: "NodePool", Provider: "gcp"}).WithGuarded(WhyNodeCounts, "spec.forProvider.autoscaling")
	release := (&ResourceKind{Kind: "Release", Provider: "helm", Opaque: []string{"spec.forProvider.values"}}).
		WithGuarded("chart sources", "spec.forProvider.chart", "spec.forProvider.namespace", "spec.forProvider.set")
	providerConfig := &ResourceKind{Kind: "ProviderConfig"}
	// Kinds whose reference fields come from their CRDs (references.go).
	nodeGroup := &ResourceKind{Kind: "NodeGroup", Namespaced: "eks.aws.m.upbound.io/v1beta1", Provider: "aws"}
	eks := &ResourceKind{Kind: "Cluster", Namespaced: "eks.aws.m.upbound.io/v1beta1", Cluster: "eks.aws.upbound.io/v1beta2", Provider: "aws"}
	gke := &ResourceKind{Kind: "Cluster", Namespaced: "container.gcp.m.upbound.io/v1beta1", Provider: "gcp"}

	type args struct {
		who      Principal
		kind     *ResourceKind
		imported bool
		overlay  map[string]any
		// rendered is the resource as the function rendered it.
		rendered map[string]any
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []string
	}{
		"TenantForProvider": {
			reason: "An XR's author configures forProvider and initProvider fields.",
			args: args{who: Tenant, kind: managed, overlay: map[string]any{"spec": map[string]any{
				"forProvider":  map[string]any{"description": "mine", "labels": map[string]any{"a": "b"}, "maintenancePolicy": nil},
				"initProvider": map[string]any{"initialNodeCount": 2.0},
			}}},
		},
		"TenantLabels": {
			reason: "An XR's author sets and removes labels and annotations outside the reserved domains.",
			args: args{who: Tenant, kind: managed, overlay: map[string]any{"metadata": map[string]any{
				"labels": map[string]any{"team": "edge", "app.example.com/tier": nil}, "annotations": map[string]any{"note": "x"},
			}}},
		},
		"TenantManagementPolicies": {
			reason: "Management and deletion policies, provider configs and connection-secret targets are the platform's.",
			args: args{who: Tenant, kind: managed, overlay: map[string]any{"spec": map[string]any{
				"managementPolicies":         []any{"*"},
				"deletionPolicy":             "Orphan",
				"providerConfigRef":          map[string]any{"name": "other-account"},
				"writeConnectionSecretToRef": map[string]any{"namespace": "team-b"},
			}}},
			want: []string{
				"o.spec.deletionPolicy: Forbidden: " + ruleTenant,
				"o.spec.managementPolicies: Forbidden: " + ruleTenant,
				"o.spec.providerConfigRef.name: Forbidden: " + ruleTenant,
				"o.spec.writeConnectionSecretToRef.namespace: Forbidden: " + ruleTenant,
			},
		},
		"TenantImportedResource": {
			reason: "On an imported resource, management policies are import's, whoever asks.",
			args:   args{who: Tenant, kind: managed, imported: true, overlay: map[string]any{"spec": map[string]any{"managementPolicies": []any{"*"}}}},
			want:   []string{"o.spec.managementPolicies: Forbidden: " + ruleImport},
		},
		"TenantReservedAnnotations": {
			reason: "External names, import markers and the function's bookkeeping are reserved; removing one is as forbidden as setting it.",
			args: args{who: Tenant, kind: managed, overlay: map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				"crossplane.io/external-name":      "existing-vpc",
				"platform.example.org/import-mode": nil,
			}, "labels": map[string]any{"platform.example.org/resource": "x"}}}},
			want: []string{
				"o.metadata.annotations[crossplane.io/external-name]: Forbidden: " + ruleReserved,
				"o.metadata.annotations[platform.example.org/import-mode]: Forbidden: " + ruleReserved,
				"o.metadata.labels[platform.example.org/resource]: Forbidden: " + ruleReserved,
			},
		},
		"TenantReplacesMetadata": {
			reason: "Replacing labels or annotations whole would drop reserved keys.",
			args:   args{who: Tenant, kind: managed, overlay: map[string]any{"metadata": map[string]any{"annotations": nil}}},
			want:   []string{"o.metadata.annotations: Forbidden: " + ruleMetadata},
		},
		"TenantCredentialsAndReferences": {
			reason: "Inside forProvider, credentials and references to other resources are the platform's, in lists too.",
			args: args{who: Tenant, kind: managed, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"networkSelector":       map[string]any{"matchLabels": map[string]any{"team": "b"}},
				"masterAuth":            map[string]any{"clientCertificateConfig": map[string]any{"issueClientCertificate": true}},
				"rootPasswordSecretRef": map[string]any{"name": "x"},
				"nodeConfig":            []any{map[string]any{"serviceAccountRef": map[string]any{"name": "other"}}},
			}}}},
			want: []string{
				"o.spec.forProvider.masterAuth.clientCertificateConfig.issueClientCertificate: Forbidden: " + ruleSecret,
				"o.spec.forProvider.networkSelector.matchLabels.team: Forbidden: " + ruleRefs,
				"o.spec.forProvider.nodeConfig[0].serviceAccountRef.name: Forbidden: " + ruleRefs,
				"o.spec.forProvider.rootPasswordSecretRef.name: Forbidden: " + ruleSecret,
			},
		},
		"TenantResolvedReferences": {
			reason: "A field that a reference beside it resolves is used instead of the reference: set by an XR's author it could put a node group into another tenant's cluster, with a role and subnets of their choosing.",
			args: args{who: Tenant, kind: nodeGroup, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"clusterName":   "team-b-cluster",
				"nodeRoleArn":   "arn:aws:iam::111122223333:role/OrganizationAdmin",
				"subnetIds":     []any{"subnet-0teamb"},
				"remoteAccess":  map[string]any{"sourceSecurityGroupIds": []any{"sg-1"}},
				"instanceTypes": []any{"m7i.large"},
				"labels":        map[string]any{"tier": "batch"},
			}, "initProvider": map[string]any{"subnetIds": []any{"subnet-0teamb"}}}}},
			want: []string{
				"o.spec.forProvider.clusterName: Forbidden: " + ruleRefs,
				"o.spec.forProvider.nodeRoleArn: Forbidden: " + ruleRefs,
				"o.spec.forProvider.remoteAccess.sourceSecurityGroupIds: Forbidden: " + ruleRefs,
				"o.spec.forProvider.subnetIds: Forbidden: " + ruleRefs,
				"o.spec.initProvider.subnetIds: Forbidden: " + ruleRefs,
			},
		},
		"TenantResolvedReferenceInList": {
			reason: "A reference field inside a list's items is found under the list, and replacing the list whole would replace the references the function wired in it.",
			args: args{who: Tenant, kind: eks, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"vpcConfig": []any{map[string]any{"subnetIds": []any{"subnet-0teamb"}, "endpointPublicAccess": true}},
			}}}, rendered: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"vpcConfig": []any{map[string]any{"subnetIdSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "endpointPublicAccess": false}},
			}}}},
			want: []string{
				"o.spec.forProvider.vpcConfig: Forbidden: " + ruleRefs,
				"o.spec.forProvider.vpcConfig[0].subnetIds: Forbidden: " + ruleRefs,
			},
		},
		"TenantListWithoutWiredReference": {
			reason: "A list that could hold a reference field, under which the function wires none, is the XR author's to replace, as long as its items set no such field.",
			args: args{who: Tenant, kind: eks, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"vpcConfig": []any{map[string]any{"endpointPublicAccess": true}},
			}}}, rendered: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"vpcConfig": []any{map[string]any{"endpointPublicAccess": false}},
			}}}},
		},
		"TenantResolvedNetwork": {
			reason: "A GKE cluster's network and subnetwork are references: another tenant's VPC is not the XR author's to name.",
			args: args{who: Tenant, kind: gke, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"network":        "projects/team-b/global/networks/team-b-vpc",
				"subnetwork":     "projects/team-b/regions/europe-west1/subnetworks/team-b",
				"nodeConfig":     map[string]any{"serviceAccount": "admin@team-b.iam.gserviceaccount.com", "machineType": "e2-standard-8"},
				"networkingMode": "VPC_NATIVE",
			}}}},
			want: []string{
				"o.spec.forProvider.network: Forbidden: " + ruleRefs,
				"o.spec.forProvider.nodeConfig.serviceAccount: Forbidden: " + ruleRefs,
				"o.spec.forProvider.subnetwork: Forbidden: " + ruleRefs,
			},
		},
		"TenantGuarded": {
			reason: "Paths a kind guards are refused with the kind's reason: node counts, chart sources, namespaces, values from Secrets.",
			args: args{who: Tenant, kind: release, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
				"chart":     map[string]any{"repository": "https://evil.example.com"},
				"namespace": "kube-system",
				"set":       []any{map[string]any{"name": "a", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "x"}}}},
			}}}},
			want: []string{
				"o.spec.forProvider.chart.repository: Forbidden: chart sources",
				"o.spec.forProvider.namespace: Forbidden: chart sources",
				"o.spec.forProvider.set: Forbidden: chart sources",
				"o.spec.forProvider.set[0].name: Forbidden: chart sources",
				"o.spec.forProvider.set[0].valueFrom.secretKeyRef.name: Forbidden: chart sources",
			},
		},
		"TenantNodeCounts": {
			reason: "Node counts come from the pools, where bounds and budget enforcement apply.",
			args:   args{who: Tenant, kind: pool, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"autoscaling": map[string]any{"maxNodeCount": 1e9}}}}},
			want:   []string{"o.spec.forProvider.autoscaling.maxNodeCount: Forbidden: " + WhyNodeCounts},
		},
		"TenantOpaqueValues": {
			reason: "Helm values are a payload, not provider fields: a key named like a reference is allowed (plaintext credentials are caught on the final state).",
			args:   args{who: Tenant, kind: release, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"values": map[string]any{"existingSecretRef": "grafana-admin", "replicaCount": 3.0}}}}},
		},
		"TenantProviderConfigForProvider": {
			reason: "A ProviderConfig has no forProvider: an XR's author cannot add one.",
			args:   args{who: Tenant, kind: providerConfig, overlay: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"chart": "x"}}}},
			want:   []string{"o.spec.forProvider.chart: Forbidden: " + ruleTenant},
		},
		"TenantProviderConfigSecret": {
			reason: "A Kubernetes ProviderConfig's credentials are outside forProvider: the platform's.",
			args:   args{who: Tenant, kind: providerConfig, overlay: map[string]any{"spec": map[string]any{"credentials": map[string]any{"secretRef": map[string]any{"namespace": "team-b"}}}}},
			want:   []string{"o.spec.credentials.secretRef.namespace: Forbidden: " + ruleTenant},
		},
		"PlatformManagementPolicies": {
			reason: "The platform team may set management and deletion policies and provider configs on ordinary resources.",
			args: args{who: Platform, kind: managed, overlay: map[string]any{"spec": map[string]any{
				"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"}, "deletionPolicy": "Orphan",
				"providerConfigRef": map[string]any{"name": "prod"}, "forProvider": map[string]any{"networkSelector": nil},
			}}},
		},
		"PlatformImported": {
			reason: "Not even the platform team weakens import protection.",
			args: args{who: Platform, kind: managed, imported: true, overlay: map[string]any{
				"spec":     map[string]any{"managementPolicies": []any{"*"}, "deletionPolicy": "Delete"},
				"metadata": map[string]any{"annotations": map[string]any{"platform.example.org/import-mode": nil}},
			}},
			want: []string{
				"o.metadata.annotations[platform.example.org/import-mode]: Forbidden: " + ruleReserved,
				"o.spec.deletionPolicy: Forbidden: " + ruleImport,
				"o.spec.managementPolicies: Forbidden: " + ruleImport,
			},
		},
		"PlatformReplacesImportedSpec": {
			reason: "Replacing an imported resource's spec whole would drop its management policies.",
			args:   args{who: Platform, kind: managed, imported: true, overlay: map[string]any{"spec": nil}},
			want:   []string{"o.spec: Forbidden: " + ruleImport},
		},
		"PlatformIdentity": {
			reason: "What a resource is, and its external name, are the function's for the platform team too.",
			args: args{who: Platform, kind: managed, overlay: map[string]any{"apiVersion": "x/v1", "metadata": map[string]any{
				"namespace": "other", "annotations": map[string]any{"crossplane.io/external-name": "adopted"},
			}}},
			want: []string{
				"o.apiVersion: Forbidden: " + ruleIdentity,
				"o.metadata.annotations[crossplane.io/external-name]: Forbidden: " + ruleReserved,
				"o.metadata.namespace: Forbidden: " + ruleIdentity,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rd := &Rendered{Name: "o", Kind: tc.args.kind, Object: tc.args.rendered}
			got := checkPolicy(field.NewPath("o"), 0, tc.args.who, rd, tc.args.imported, tc.args.overlay)
			if diff := cmp.Diff(tc.want, errStrings(got), cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("%s\ncheckPolicy(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReserved(t *testing.T) {
	cases := map[string]struct {
		key  string
		want bool
	}{
		"ExternalName":   {key: "crossplane.io/external-name", want: true},
		"Subdomain":      {key: "meta.crossplane.io/description", want: true},
		"Ours":           {key: "platform.example.org/import-mode", want: true},
		"Kubernetes":     {key: "app.kubernetes.io/name", want: true},
		"Plain":          {key: "team", want: false},
		"OtherDomain":    {key: "example.com/owner", want: false},
		"LookalikeLabel": {key: "notcrossplane.io/x", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Reserved(tc.key); got != tc.want {
				t.Errorf("Reserved(%q) = %t, want %t", tc.key, got, tc.want)
			}
		})
	}
}

func errStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
