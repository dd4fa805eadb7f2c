package cluster_test

import (
	"fmt"

	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// The trust boundary, tried as a red team would: what the environment, the
// planeType label and an XR's author can make the function do to a
// converged stack. Every scenario runs under the suite's invariant (nothing
// observed leaves the desired state unless the step's spec change removed
// it, or the response is Fatal); the steps below that change only the
// world remove nothing.

// override sets spec.parameters.overrides.<name> to the supplied overlay,
// creating spec.parameters when the XR has none (the fuzzer's XRs may not).
func override(name string, ov map[string]any) func(*fntest.World) {
	return func(w *fntest.World) {
		fntest.Set("spec.parameters.overrides", map[string]any{name: ov})(w.XR)
	}
}

// envOverride sets the baseline's overrides.<name> to the supplied overlay.
func envOverride(name string, ov map[string]any) func(*fntest.World) {
	return fntest.EnvEdit("cluster-platform-baseline", "overrides", map[string]any{name: ov})
}

func spec(fp map[string]any) map[string]any { return map[string]any{"spec": fp} }

func forProvider(fp map[string]any) map[string]any {
	return spec(map[string]any{"forProvider": fp})
}

func annotations(a map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": a}}
}

var importedCluster = fntest.Set("spec.parameters.import", map[string]any{
	"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "edge"},
})

func TestTrustBoundary(t *testing.T) {
	noPools := fntest.Set("spec.parameters.pools", nil)
	scenarios := map[string]fntest.Scenario{
		// Removal authority: the environment never withdraws.
		"EnvironmentMakesClusterPublic": {
			Reason: "A baseline privateCluster: false holds the NAT gateway and the private zone of every XR that leaves privateCluster to the environment (on AKS, whose outbound type changes in place; GKE keeps its private nodes and their NAT); the owner's privateCluster: false removes the NAT, and the zone, which holds records, only when the owner names it.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "baseline goes public", World: fntest.EnvEdit("cluster-platform-baseline", "privateCluster", false), Check: fntest.All(
					fntest.Held("private-dns-zone", "private-dns-zone-link"), fntest.Desires("nat", "nat-public-ip", "nat-subnet-association"),
					fntest.ConditionMentions("RemovalsSettled", "the environment's privateCluster is false; to remove it, set spec.parameters.createDnsZones to false"),
					func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
						t.Helper()
						for _, r := range rsp.GetResults() {
							if r.GetReason() == "ComposedResourceRemoved" {
								t.Errorf("an environment change reported a removal: %s", r.GetMessage())
							}
						}
					},
				)},
				{Name: "settles, still held", Converge: true, Check: fntest.All(fntest.Held("nat", "nat-public-ip", "nat-subnet-association", "private-dns-zone"), fntest.Desires("private-dns-zone-link"))},
				{Name: "the owner confirms", Spec: fntest.Edit("spec.parameters.privateCluster", false), Removes: []string{"nat", "nat-public-ip", "nat-subnet-association"}, Check: fntest.All(
					fntest.Held("private-dns-zone", "private-dns-zone-link"), fntest.ConditionMentions("RemovalsSettled", "set spec.parameters.createDnsZones to false"))},
				{Name: "the owner names the zone", Spec: fntest.Edit("spec.parameters.confirmRemovals", []any{"private-dns-zone", "private-dns-zone-link"}), Removes: []string{"private-dns-zone", "private-dns-zone-link"}, Check: fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld")},
			},
		},
		"EnvironmentRemovesDefaultPool": {
			Reason: "A pool the baseline's pools no longer list is held for every XR that relied on them; confirmRemovals removes it.",
			XR:     fntest.GCPXR(noPools),
			Steps: []fntest.Step{
				converged,
				{Name: "baseline renames its pool", World: fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{"general": map[string]any{"size": "medium"}}), Check: fntest.All(
					fntest.Held("nodepool-default"), fntest.Desires("nodepool-general"), fntest.ConditionMentions("RemovalsSettled", "name the pools to keep in spec.parameters.pools"),
				)},
				fntest.ConvergeStep("settles, still held"),
				{Name: "the owner confirms by name", Spec: fntest.Edit("spec.parameters.confirmRemovals", []any{"nodepool-default"}), Removes: []string{"nodepool-default"}},
			},
		},
		"EnvironmentDisablesChart": {
			Reason: "A chart the environment disables, or monitoring switched off there, keeps its release until the XR disables it.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "catalog disables ingress-nginx", World: fntest.EnvEdit("cluster-platform-baseline", "charts.ingress-nginx.disabled", true), Check: fntest.Held("release-ingress-nginx")},
				{Name: "monitoring off", World: fntest.EnvEdit("cluster-platform-baseline", "monitoring.enabled", false), Check: fntest.Held("release-ingress-nginx", "release-kube-prometheus-stack")},
				{Name: "the owner disables ingress-nginx", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"disabled": true}}), Removes: []string{"release-ingress-nginx"}, Check: fntest.Held("release-kube-prometheus-stack")},
			},
		},
		"PlaneTypeChanged": {
			Reason: "The planeType label selects fleet-wide configs: a plane type whose configs would remove resources only holds them (pools of the layers merge, so the default pool stays and the new one is added).",
			XR:     fntest.AzureXR(noPools),
			Steps: []fntest.Step{
				converged,
				{Name: "to a plane type with other pools", Spec: fntest.Edit("metadata.labels.planeType", "lab"), World: func(w *fntest.World) {
					w.Envs = append(w.Envs, fntest.Object{
						"apiVersion": envcfg.APIVersion, "kind": envcfg.Kind,
						"metadata": map[string]any{"name": "lab", "labels": map[string]any{envcfg.SelectorLabel: envcfg.SelectorValue, "planeType": "lab"}},
						"data":     map[string]any{"privateCluster": false, "pools": map[string]any{"tiny": map[string]any{"size": "small"}}},
					})
				}, Check: fntest.All(fntest.Held("private-dns-zone", "private-dns-zone-link"), fntest.Desires("nat", "nodepool-default", "nodepool-tiny"))},
			},
		},
		"EmptyContextEnvironment": {
			Reason: "An empty environment in the pipeline context (function-environment-configs with minMatch: 0 matching nothing) is a Fatal, never a render from built-in defaults.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "empty context, no configs", World: func(w *fntest.World) {
					w.Envs = nil
					w.Context = fntest.Object{envcfg.ContextKey: map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}}
				}, Fatal: "empty environment"},
			},
		},
		"EnvironmentLayerRemoved": {
			Reason: "A missing baseline or cloud layer on an XR that composes resources is a Fatal, and so is a missing layer its last render used.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "cloud layer gone", World: fntest.EnvDrop("cluster-platform-cloud-gcp"), Fatal: "no EnvironmentConfig labelled platform.example.org/environment=cluster-platform and cloud=gcp"},
				{Name: "baseline gone too", World: fntest.EnvDrop("cluster-platform-baseline"), Fatal: "baseline=default, cloud=gcp"},
				{Name: "restored", World: func(w *fntest.World) { w.Envs = envs }, Check: fntest.IsReady(true)},
				{Name: "plane-type layer gone after a render that used it", World: func(w *fntest.World) {
					fntest.Set("status.environment", map[string]any{"planeType": []any{"cluster-platform-planetype-production"}})(w.XR)
					fntest.EnvDrop("cluster-platform-planetype-production")(w)
				}, Fatal: "planeType=production"},
			},
		},
		"EnvironmentWronglyTyped": {
			Reason: "A wrongly typed environment value is a Fatal naming it, never silently read as the default.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "replicas as a word", World: fntest.EnvEdit("cluster-platform-planetype-production", "ingress.replicas", "three"), Fatal: `environment.ingress.replicas: Invalid value: "three": must be an integer`},
				{Name: "roles as a string", World: func(w *fntest.World) {
					fntest.EnvEdit("cluster-platform-planetype-production", "ingress.replicas", 3.0)(w)
					fntest.EnvEdit("cluster-platform-cloud-gcp", "gcp.nodeServiceAccountRoles", "roles/container.defaultNodeServiceAccount")(w)
				}, Fatal: "environment.gcp.nodeServiceAccountRoles"},
			},
		},
		"PlaneTypeWithoutConfig": {
			Reason: "A plane type that never had a config is a warning, not a Fatal: the layer is optional until a render used it.",
			XR:     fntest.GCPXR(fntest.Set("metadata.labels.planeType", "staging")),
			Steps:  []fntest.Step{converged, {Name: "steady", Check: fntest.Warns("no EnvironmentConfig labelled planeType=staging")}},
		},

		// Versions move only through spec.parameters.version.
		"VersionOverridesRefused": {
			Reason: "Neither principal can move a version past the walk: the passthrough, an XR's override of a pool and the environment's overrides are refused, naming the field.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "passthrough", Spec: fntest.Edit("spec.forProvider", map[string]any{"version": "1.36"}), Fatal: "spec.forProvider.version: Forbidden: versions move only through spec.parameters.version"},
				{Name: "pool override", Spec: func(w *fntest.World) {
					fntest.Set("spec.forProvider", nil)(w.XR)
					override("nodepool-general", forProvider(map[string]any{"version": "1.36"}))(w)
				}, Fatal: "spec.parameters.overrides.nodepool-general.spec.forProvider.version: Forbidden"},
				{Name: "environment override", Spec: fntest.Edit("spec.parameters.overrides", nil),
					World: fntest.EnvEdit("cluster-platform-baseline", "overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"initProvider": map[string]any{"version": "1.36"}}}}),
					Fatal: "environment.overrides.cluster.spec.initProvider.version: Forbidden"},
			},
		},

		// Two principals: what an XR's author may not override.
		"TenantOverridesImportedCluster": {
			Reason: "On an imported, observe-only cluster an XR's overrides can neither widen the management policies nor drop the import marker.",
			XR:     fntest.GCPXR(importedCluster),
			Steps: []fntest.Step{
				fntest.Granted(converged, edgeGrant),
				{Name: "all policies", Spec: override("cluster", spec(map[string]any{"managementPolicies": []any{"*"}})), Fatal: "spec.parameters.overrides.cluster.spec.managementPolicies: Forbidden"},
				{Name: "import marker removed", Spec: override("cluster", annotations(map[string]any{"platform.example.org/import-mode": nil})), Fatal: "spec.parameters.overrides.cluster.metadata.annotations[platform.example.org/import-mode]: Forbidden"},
				{Name: "deletion policy", Spec: override("cluster", spec(map[string]any{"deletionPolicy": "Delete"})), Fatal: "spec.parameters.overrides.cluster.spec.deletionPolicy: Forbidden"},
			},
		},
		"TenantEscalates": {
			Reason: "An XR's overrides cannot reach another account, redirect the kubeconfig, point a ProviderConfig at another namespace's Secret, change a chart's source or namespace, or adopt a resource by external name.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "another account", Spec: override("network", spec(map[string]any{"providerConfigRef": map[string]any{"name": "other-team"}})), Fatal: "spec.parameters.overrides.network.spec.providerConfigRef.name: Forbidden"},
				{Name: "kubeconfig elsewhere", Spec: override("cluster", spec(map[string]any{"writeConnectionSecretToRef": map[string]any{"name": "stolen"}})), Fatal: "spec.parameters.overrides.cluster.spec.writeConnectionSecretToRef.name: Forbidden"},
				{Name: "another namespace's Secret", Spec: override("kubernetes-provider-config", spec(map[string]any{"credentials": map[string]any{"secretRef": map[string]any{"namespace": "team-b"}}})), Fatal: "credentials.secretRef.namespace: Forbidden"},
				{Name: "chart repository", Spec: override("release-ingress-nginx", forProvider(map[string]any{"chart": map[string]any{"repository": "https://charts.evil.example.com"}})), Fatal: "spec.parameters.overrides.release-ingress-nginx.spec.forProvider.chart.repository: Forbidden"},
				{Name: "release namespace", Spec: override("release-cert-manager", forProvider(map[string]any{"namespace": "kube-system"})), Fatal: "spec.forProvider.namespace: Forbidden"},
				{Name: "adopt a VPC", Spec: override("network", annotations(map[string]any{"crossplane.io/external-name": "shared-vpc"})), Fatal: "spec.parameters.overrides.network.metadata.annotations[crossplane.io/external-name]: Forbidden"},
				{Name: "another tenant's network", Spec: override("cluster", forProvider(map[string]any{"networkSelector": map[string]any{"matchLabels": map[string]any{"team": "b"}}})), Fatal: "networkSelector.matchLabels.team: Forbidden"},
				{Name: "node counts past the bounds", Spec: override("nodepool-general", forProvider(map[string]any{"autoscaling": map[string]any{"maxNodeCount": 100000.0}})), Fatal: "autoscaling.maxNodeCount: Forbidden"},
				{Name: "passthrough reaches a reference", Spec: fntest.Edit("spec.forProvider", map[string]any{"subnetworkSelector": map[string]any{"matchLabels": map[string]any{"x": "y"}}}), Fatal: "spec.forProvider.subnetworkSelector.matchLabels.x: Forbidden"},
				// description is ForceNew (google_container_cluster): an
				// override of it is refused, naming the override.
				{Name: "a replacement-only field", Spec: func(w *fntest.World) {
					fntest.Edit("spec.forProvider", nil)(w)
					override("cluster", forProvider(map[string]any{"description": "edge cluster"}))(w)
				}, Fatal: `the override spec.parameters.overrides.cluster.spec.forProvider.description now gives "edge cluster"`},
				{Name: "what an XR may do", Spec: func(w *fntest.World) {
					fntest.Edit("spec.forProvider", nil)(w)
					override("cluster", map[string]any{
						"metadata": map[string]any{"labels": map[string]any{"cost-center": "42"}},
						"spec":     map[string]any{"forProvider": map[string]any{"resourceLabels": map[string]any{"team": "edge"}}},
					})(w)
				}, Check: fntest.All(fntest.Field("cluster", "spec.forProvider.resourceLabels.team", "edge"), fntest.Field("cluster", "metadata.labels.cost-center", "42"))},
			},
		},
		"EnvironmentCannotWeakenImport": {
			Reason: "The platform team's overrides may set management policies on ordinary resources, but not on an imported one.",
			XR:     fntest.GCPXR(importedCluster),
			Steps: []fntest.Step{
				fntest.Granted(converged, edgeGrant),
				{Name: "orphan policy fleet-wide", World: envOverride("network", spec(map[string]any{"deletionPolicy": "Orphan"})), Check: fntest.Field("network", "spec.deletionPolicy", "Orphan")},
				{Name: "on the imported cluster", World: envOverride("cluster", spec(map[string]any{"managementPolicies": []any{"*"}})), Fatal: "environment.overrides.cluster.spec.managementPolicies: Forbidden"},
			},
		},
		"ImportKeyTypo": {
			Reason: "An import key that names nothing is a Fatal naming the importable names, never a new resource beside the existing one.",
			XR: fntest.GCPXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "resources": map[string]any{"clustr": "existing-gke"},
			})),
			Steps: []fntest.Step{{Name: "first", World: edgeGrant, Fatal: `spec.parameters.import.resources[clustr]: Invalid value: "clustr": names no managed resource this XR composes; importable names: cluster, cluster-issuer, dns-identity`}},
		},
		"OverrideKeyTypo": {
			Reason: "An XR's override key that names nothing is a Fatal: a typo is never silently ignored.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.overrides", map[string]any{"clustr": map[string]any{}})),
			Steps:  []fntest.Step{{Name: "first", Fatal: "spec.parameters.overrides.clustr"}},
		},

		// Names cannot collide.
		"PoolNamedLikeAUsage": {
			Reason: "A pool named default-uses-cluster would render the name of pool default's Usage.",
			XR: fntest.GCPXR(fntest.Set("spec.parameters.pools", map[string]any{
				"default": map[string]any{"size": "small"}, "default-uses-cluster": map[string]any{"size": "small"},
			})),
			Steps: []fntest.Step{{Name: "first", Fatal: `spec.parameters.pools[default-uses-cluster]: Invalid value: "default-uses-cluster": a pool name must not contain "-uses-"`}},
		},
		"AzurePoolsCollide": {
			Reason: "Azure pools batch-1 and batch1 would both be AKS pool batch1.",
			XR: fntest.AzureXR(fntest.Set("spec.parameters.pools", map[string]any{
				"batch-1": map[string]any{"size": "small"}, "batch1": map[string]any{"size": "small"},
			})),
			Steps: []fntest.Step{{Name: "first", Fatal: `spec.parameters.pools[batch1]: Duplicate value`, Check: fntest.FatalHas("batch-1", "would both be AKS node pool")}},
		},
		"EnvironmentPoolsValidated": {
			Reason: "Pools from the environment pass the same validation as the XR's: AKS's 12-character and not-system rules, and the bounds.",
			XR:     fntest.AzureXR(noPools),
			Steps: []fntest.Step{
				{Name: "system", World: fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{"system": map[string]any{}}), Fatal: `environment.pools[system]: Invalid value: "system": an AKS node pool name is at most 12`},
				{Name: "too long", World: fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{"averyverylongpool": map[string]any{}}), Fatal: `environment.pools[averyverylongpool]`},
				{Name: "unbounded", World: fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{"big": map[string]any{"maxNodes": float64(1 << 53)}}), Fatal: "environment.pools[big].maxNodes: Invalid value: 9007199254740992: must be between 1 and 1000"},
				{Name: "typo", World: fntest.EnvEdit("cluster-platform-baseline", "pools", map[string]any{"big": map[string]any{"maxNode": 3.0}}), Fatal: "environment.pools[big].maxNode: Forbidden: unknown field"},
			},
		},

		// Secrets only by reference, whoever writes them.
		"PlaintextThroughOverrides": {
			Reason: "The plaintext check runs on the final desired state: overrides of either principal, numbers, name/value lists and clientSecret are caught.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "XR override of Helm values", Spec: override("release-kube-prometheus-stack", forProvider(map[string]any{"values": map[string]any{"grafana": map[string]any{"adminPassword": "hunter2"}}})), Fatal: "values.grafana.adminPassword"},
				{Name: "a number", Spec: func(w *fntest.World) {
					fntest.Edit("spec.parameters.overrides", nil)(w)
					fntest.Edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"auth": map[string]any{"password": 123456.0}}}})(w)
				}, Fatal: "auth.password holds a plaintext credential"},
				{Name: "a number again", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"auth": map[string]any{"password": 123456.0}}}}), Fatal: "auth.password holds a plaintext credential"},
				{Name: "an env list", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"controller": map[string]any{"extraEnvs": []any{map[string]any{"name": "DB_PASSWORD", "value": "s3cret"}}}}}}), Fatal: "controller.extraEnvs[0].value"},
				{Name: "clientSecret", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"cert-manager": map[string]any{"values": map[string]any{"dns": map[string]any{"clientSecret": "abc"}}}}), Fatal: "dns.clientSecret"},
				{Name: "back to clean", Spec: fntest.Edit("spec.parameters.charts", nil), Check: fntest.IsReady(true)},
				{Name: "the environment's overrides", World: envOverride("release-ingress-nginx", forProvider(map[string]any{"values": map[string]any{"apiToken": "t0k3n"}})), Fatal: `composed resource "release-ingress-nginx" would hold a plaintext credential at spec.forProvider.values.apiToken`},
			},
		},

		// Immutability, from whichever input.
		"EnvironmentChangesCIDR": {
			Reason: "An environment change of network.cidr would rewrite the existing subnet's range in place: a Fatal naming field, old and new value.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "new cidr", World: fntest.EnvEdit("cluster-platform-baseline", "network.cidr", "10.8.0.0/16"), Fatal: `composed resource "subnet" has spec.forProvider.ipCidrRange "10.0.0.0/16", which its provider can change only by replacing the cloud resource (google_compute_subnetwork.ip_cidr_range`},
			},
		},
		"AWSZonesReordered": {
			Reason: "A reordered AWS zone list would move the subnets' CIDRs: a Fatal.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "reordered", World: fntest.EnvEdit("cluster-platform-cloud-aws", "aws.zones.us-east-1", []any{"us-east-1b", "us-east-1a", "us-east-1c"}), Fatal: "spec.forProvider.cidrBlock"},
			},
		},
		"AzurePodRangeChanged": {
			Reason: "AKS cannot change its pod range in place.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "new pod range", Spec: fntest.Edit("spec.parameters.network", map[string]any{"podsCidr": "10.200.0.0/14"}), Fatal: `spec.forProvider.networkProfile.podCidr "10.100.0.0/14"`},
			},
		},

		// Bounds and reporting.
		"AWSIgnoresPodRange": {
			Reason: "AWS pods take VPC addresses: a network overlapping the environment's podsCidr is fine there.",
			XR:     fntest.AWSXR(fntest.Set("spec.parameters.network", map[string]any{"cidr": "10.100.0.0/16"})),
			Steps:  []fntest.Step{converged},
		},
		"EveryBadFieldAtOnce": {
			Reason: "One Fatal names every bad field: an XR rule, a plan rule and a cloud rule together.",
			XR: fntest.AzureXR(fntest.Set("spec.parameters.pools", map[string]any{
				"a":                 map[string]any{"minNodes": 5.0, "maxNodes": 2.0},
				"b":                 map[string]any{"size": "huge"},
				"averyverylongpool": map[string]any{"size": "small"},
			})),
			Steps: []fntest.Step{{Name: "first", Fatal: "pools[a].minNodes", Check: fntest.FatalHas("pools[a].minNodes", "pools[b].size", "pools[averyverylongpool]")}},
		},
		"TooManyPools": {
			Reason: "An XR with thousands of pools is refused before anything is rendered, naming the limit.",
			XR: fntest.GCPXR(func(o fntest.Object) {
				pools := map[string]any{}
				for i := range 10000 {
					pools[fmt.Sprintf("p%d", i)] = map[string]any{"size": "small"}
				}
				fntest.Set("spec.parameters.pools", pools)(o)
			}),
			Steps: []fntest.Step{{Name: "first", Fatal: "spec.parameters.pools: Too many: 10000: must have at most 50 items"}},
		},
	}
	fntest.RunAll(t, "trust-boundary scenarios", run, envs, scenarios)
}
