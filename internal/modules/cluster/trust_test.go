package cluster_test

import (
	"fmt"
	"strings"
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

// fatalHas checks that the response is a Fatal naming every part.
func fatalHas(parts ...string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		msg := fntest.Fatal(rsp)
		for _, p := range parts {
			if !strings.Contains(msg, p) {
				t.Errorf("the Fatal does not name %q: %s", p, msg)
			}
		}
	}
}

// override sets spec.parameters.overrides.<name> to the supplied overlay.
func override(name string, ov map[string]any) func(*world) {
	return func(w *world) {
		par := w.xr["spec"].(map[string]any)["parameters"].(map[string]any)
		par["overrides"] = map[string]any{name: ov}
	}
}

// envOverride sets the baseline's overrides.<name> to the supplied overlay.
func envOverride(name string, ov map[string]any) func(*world) {
	return envEdit("cluster-platform-baseline", "overrides", map[string]any{name: ov})
}

func spec(fp map[string]any) map[string]any { return map[string]any{"spec": fp} }

func forProvider(fp map[string]any) map[string]any {
	return spec(map[string]any{"forProvider": fp})
}

func annotations(a map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": a}}
}

// held checks that the named resources are still desired, each named in a
// Warning and in the RemovalsSettled condition.
func held(names ...string) func(*testing.T, *fnv1.RunFunctionResponse) {
	checks := []func(*testing.T, *fnv1.RunFunctionResponse){desires(names...), condition("RemovalsSettled", "FALSE", "AwaitingOwner")}
	for _, n := range names {
		checks = append(checks, warns(fmt.Sprintf("holding composed resource %q", n)), conditionMentions("RemovalsSettled", n))
	}
	return all(checks...)
}

func conditionMentions(typ, part string) func(*testing.T, *fnv1.RunFunctionResponse) {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		for _, c := range rsp.GetConditions() {
			if c.GetType() == typ {
				if !strings.Contains(c.GetMessage(), part) {
					t.Errorf("condition %s does not mention %q: %s", typ, part, c.GetMessage())
				}
				return
			}
		}
		t.Errorf("no condition %s", typ)
	}
}

var importedCluster = fntest.Set("spec.parameters.import", map[string]any{
	"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "edge"},
})

func TestTrustBoundary(t *testing.T) {
	noPools := fntest.Set("spec.parameters.pools", nil)
	scenarios := map[string]scenario{
		// Removal authority: the environment never withdraws.
		"EnvironmentMakesClusterPublic": {
			reason: "A baseline privateCluster: false holds the NAT, router and private zone of every XR that leaves privateCluster to the environment; the owner's privateCluster: false removes them.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "baseline goes public", world: envEdit("cluster-platform-baseline", "privateCluster", false), check: all(
					held("router", "nat", "private-dns-zone"),
					conditionMentions("RemovalsSettled", "set spec.parameters.privateCluster to false"),
					func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
						t.Helper()
						for _, r := range rsp.GetResults() {
							if r.GetReason() == "ComposedResourceRemoved" {
								t.Errorf("an environment change reported a removal: %s", r.GetMessage())
							}
						}
					},
				)},
				converge("settles, still held"),
				{name: "the owner confirms", spec: edit("spec.parameters.privateCluster", false), removes: []string{"router", "nat", "private-dns-zone"}, check: condition("RemovalsSettled", "TRUE", "NothingHeld")},
			},
		},
		"EnvironmentRemovesDefaultPool": {
			reason: "A pool the baseline's pools no longer list is held for every XR that relied on them; confirmRemovals removes it.",
			xr:     fntest.GCPXR(noPools),
			steps: []step{
				converged,
				{name: "baseline renames its pool", world: envEdit("cluster-platform-baseline", "pools", map[string]any{"general": map[string]any{"size": "medium"}}), check: all(
					held("nodepool-default"), desires("nodepool-general"), conditionMentions("RemovalsSettled", "name the pools to keep in spec.parameters.pools"),
				)},
				converge("settles, still held"),
				{name: "the owner confirms by name", spec: edit("spec.parameters.confirmRemovals", []any{"nodepool-default"}), removes: []string{"nodepool-default"}},
			},
		},
		"EnvironmentDisablesChart": {
			reason: "A chart the environment disables, or monitoring switched off there, keeps its release until the XR disables it.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "catalog disables ingress-nginx", world: envEdit("cluster-platform-baseline", "charts.ingress-nginx.disabled", true), check: held("release-ingress-nginx")},
				{name: "monitoring off", world: envEdit("cluster-platform-baseline", "monitoring.enabled", false), check: held("release-ingress-nginx", "release-kube-prometheus-stack")},
				{name: "the owner disables ingress-nginx", spec: edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"disabled": true}}), removes: []string{"release-ingress-nginx"}, check: held("release-kube-prometheus-stack")},
			},
		},
		"PlaneTypeChanged": {
			reason: "The planeType label selects fleet-wide configs: a plane type whose configs would remove resources only holds them (pools of the layers merge, so the default pool stays and the new one is added).",
			xr:     fntest.GCPXR(noPools),
			steps: []step{
				converged,
				{name: "to a plane type with other pools", spec: edit("metadata.labels.planeType", "lab"), world: func(w *world) {
					w.envs = append(w.envs, fntest.Object{
						"apiVersion": envcfg.APIVersion, "kind": envcfg.Kind,
						"metadata": map[string]any{"name": "lab", "labels": map[string]any{envcfg.SelectorLabel: envcfg.SelectorValue, "planeType": "lab"}},
						"data":     map[string]any{"privateCluster": false, "pools": map[string]any{"tiny": map[string]any{"size": "small"}}},
					})
				}, check: all(held("nat", "router"), desires("nodepool-default", "nodepool-tiny"))},
			},
		},
		"EmptyContextEnvironment": {
			reason: "An empty environment in the pipeline context (function-environment-configs with minMatch: 0 matching nothing) is a Fatal, never a render from built-in defaults.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "empty context, no configs", world: func(w *world) {
					w.envs = nil
					w.context = fntest.Object{envcfg.ContextKey: map[string]any{"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment"}}
				}, fatal: "empty environment"},
			},
		},
		"EnvironmentLayerRemoved": {
			reason: "A missing baseline or cloud layer on an XR that composes resources is a Fatal, and so is a missing layer its last render used.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "cloud layer gone", world: envDrop("cluster-platform-cloud-gcp"), fatal: "no EnvironmentConfig labelled platform.example.org/environment=cluster-platform and cloud=gcp"},
				{name: "baseline gone too", world: envDrop("cluster-platform-baseline"), fatal: "baseline=default, cloud=gcp"},
				{name: "restored", world: func(w *world) { w.envs = envs }, check: ready(true)},
				{name: "plane-type layer gone after a render that used it", world: func(w *world) {
					fntest.Set("status.environment", map[string]any{"planeType": []any{"cluster-platform-planetype-production"}})(w.xr)
					envDrop("cluster-platform-planetype-production")(w)
				}, fatal: "planeType=production"},
			},
		},
		"EnvironmentWronglyTyped": {
			reason: "A wrongly typed environment value is a Fatal naming it, never silently read as the default.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "replicas as a word", world: envEdit("cluster-platform-planetype-production", "ingress.replicas", "three"), fatal: `environment.ingress.replicas: Invalid value: "three": must be an integer`},
				{name: "roles as a string", world: func(w *world) {
					envEdit("cluster-platform-planetype-production", "ingress.replicas", 3.0)(w)
					envEdit("cluster-platform-cloud-gcp", "gcp.nodeServiceAccountRoles", "roles/container.defaultNodeServiceAccount")(w)
				}, fatal: "environment.gcp.nodeServiceAccountRoles"},
			},
		},
		"PlaneTypeWithoutConfig": {
			reason: "A plane type that never had a config is a warning, not a Fatal: the layer is optional until a render used it.",
			xr:     fntest.GCPXR(fntest.Set("metadata.labels.planeType", "staging")),
			steps:  []step{converged, {name: "steady", check: warns("no EnvironmentConfig labelled planeType=staging")}},
		},

		// Two principals: what an XR's author may not override.
		"TenantOverridesImportedCluster": {
			reason: "On an imported, observe-only cluster an XR's overrides can neither widen the management policies nor drop the import marker.",
			xr:     fntest.GCPXR(importedCluster),
			steps: []step{
				converged,
				{name: "all policies", spec: override("cluster", spec(map[string]any{"managementPolicies": []any{"*"}})), fatal: "spec.parameters.overrides.cluster.spec.managementPolicies: Forbidden"},
				{name: "import marker removed", spec: override("cluster", annotations(map[string]any{"platform.example.org/import-mode": nil})), fatal: "spec.parameters.overrides.cluster.metadata.annotations[platform.example.org/import-mode]: Forbidden"},
				{name: "deletion policy", spec: override("cluster", spec(map[string]any{"deletionPolicy": "Delete"})), fatal: "spec.parameters.overrides.cluster.spec.deletionPolicy: Forbidden"},
			},
		},
		"TenantEscalates": {
			reason: "An XR's overrides cannot reach another account, redirect the kubeconfig, point a ProviderConfig at another namespace's Secret, change a chart's source or namespace, or adopt a resource by external name.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "another account", spec: override("network", spec(map[string]any{"providerConfigRef": map[string]any{"name": "other-team"}})), fatal: "spec.parameters.overrides.network.spec.providerConfigRef.name: Forbidden"},
				{name: "kubeconfig elsewhere", spec: override("cluster", spec(map[string]any{"writeConnectionSecretToRef": map[string]any{"name": "stolen"}})), fatal: "spec.parameters.overrides.cluster.spec.writeConnectionSecretToRef.name: Forbidden"},
				{name: "another namespace's Secret", spec: override("kubernetes-provider-config", spec(map[string]any{"credentials": map[string]any{"secretRef": map[string]any{"namespace": "team-b"}}})), fatal: "credentials.secretRef.namespace: Forbidden"},
				{name: "chart repository", spec: override("release-ingress-nginx", forProvider(map[string]any{"chart": map[string]any{"repository": "https://charts.evil.example.com"}})), fatal: "spec.parameters.overrides.release-ingress-nginx.spec.forProvider.chart.repository: Forbidden"},
				{name: "release namespace", spec: override("release-cert-manager", forProvider(map[string]any{"namespace": "kube-system"})), fatal: "spec.forProvider.namespace: Forbidden"},
				{name: "adopt a VPC", spec: override("network", annotations(map[string]any{"crossplane.io/external-name": "shared-vpc"})), fatal: "spec.parameters.overrides.network.metadata.annotations[crossplane.io/external-name]: Forbidden"},
				{name: "another tenant's network", spec: override("cluster", forProvider(map[string]any{"networkSelector": map[string]any{"matchLabels": map[string]any{"team": "b"}}})), fatal: "networkSelector.matchLabels.team: Forbidden"},
				{name: "node counts past the bounds", spec: override("nodepool-general", forProvider(map[string]any{"autoscaling": map[string]any{"maxNodeCount": 100000.0}})), fatal: "autoscaling.maxNodeCount: Forbidden"},
				{name: "passthrough reaches a reference", spec: edit("spec.forProvider", map[string]any{"subnetworkSelector": map[string]any{"matchLabels": map[string]any{"x": "y"}}}), fatal: "spec.forProvider.subnetworkSelector.matchLabels.x: Forbidden"},
				{name: "what an XR may do", spec: func(w *world) {
					edit("spec.forProvider", nil)(w)
					override("cluster", map[string]any{
						"metadata": map[string]any{"labels": map[string]any{"cost-center": "42"}},
						"spec":     map[string]any{"forProvider": map[string]any{"description": "edge cluster"}},
					})(w)
				}, check: all(field("cluster", "spec.forProvider.description", "edge cluster"), field("cluster", "metadata.labels.cost-center", "42"))},
			},
		},
		"EnvironmentCannotWeakenImport": {
			reason: "The platform team's overrides may set management policies on ordinary resources, but not on an imported one.",
			xr:     fntest.GCPXR(importedCluster),
			steps: []step{
				converged,
				{name: "orphan policy fleet-wide", world: envOverride("network", spec(map[string]any{"deletionPolicy": "Orphan"})), check: field("network", "spec.deletionPolicy", "Orphan")},
				{name: "on the imported cluster", world: envOverride("cluster", spec(map[string]any{"managementPolicies": []any{"*"}})), fatal: "environment.overrides.cluster.spec.managementPolicies: Forbidden"},
			},
		},
		"ImportKeyTypo": {
			reason: "An import key that names nothing is a Fatal naming the importable names, never a new resource beside the existing one.",
			xr: fntest.GCPXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "resources": map[string]any{"clustr": "existing-gke"},
			})),
			steps: []step{{name: "first", fatal: `spec.parameters.import.resources[clustr]: Invalid value: "clustr": names no managed resource this XR composes; importable names: cluster, nat, network`}},
		},
		"OverrideKeyTypo": {
			reason: "An XR's override key that names nothing is a Fatal: a typo is never silently ignored.",
			xr:     fntest.GCPXR(fntest.Set("spec.parameters.overrides", map[string]any{"clustr": map[string]any{}})),
			steps:  []step{{name: "first", fatal: "spec.parameters.overrides.clustr"}},
		},

		// Names cannot collide.
		"PoolNamedLikeAUsage": {
			reason: "A pool named default-uses-cluster would render the name of pool default's Usage.",
			xr: fntest.GCPXR(fntest.Set("spec.parameters.pools", map[string]any{
				"default": map[string]any{"size": "small"}, "default-uses-cluster": map[string]any{"size": "small"},
			})),
			steps: []step{{name: "first", fatal: `spec.parameters.pools[default-uses-cluster]: Invalid value: "default-uses-cluster": a pool name must not contain "-uses-"`}},
		},
		"AzurePoolsCollide": {
			reason: "Azure pools batch-1 and batch1 would both be AKS pool batch1.",
			xr: fntest.AzureXR(fntest.Set("spec.parameters.pools", map[string]any{
				"batch-1": map[string]any{"size": "small"}, "batch1": map[string]any{"size": "small"},
			})),
			steps: []step{{name: "first", fatal: `spec.parameters.pools[batch1]: Duplicate value`, check: fatalHas("batch-1", "would both be AKS node pool")}},
		},
		"EnvironmentPoolsValidated": {
			reason: "Pools from the environment pass the same validation as the XR's: AKS's 12-character and not-system rules, and the bounds.",
			xr:     fntest.AzureXR(noPools),
			steps: []step{
				{name: "system", world: envEdit("cluster-platform-baseline", "pools", map[string]any{"system": map[string]any{}}), fatal: `environment.pools[system]: Invalid value: "system": an AKS node pool name is at most 12`},
				{name: "too long", world: envEdit("cluster-platform-baseline", "pools", map[string]any{"averyverylongpool": map[string]any{}}), fatal: `environment.pools[averyverylongpool]`},
				{name: "unbounded", world: envEdit("cluster-platform-baseline", "pools", map[string]any{"big": map[string]any{"maxNodes": float64(1 << 53)}}), fatal: "environment.pools[big].maxNodes: Invalid value: 9007199254740992: must be between 1 and 1000"},
				{name: "typo", world: envEdit("cluster-platform-baseline", "pools", map[string]any{"big": map[string]any{"maxNode": 3.0}}), fatal: "environment.pools[big].maxNode: Forbidden: unknown field"},
			},
		},

		// Secrets only by reference, whoever writes them.
		"PlaintextThroughOverrides": {
			reason: "The plaintext check runs on the final desired state: overrides of either principal, numbers, name/value lists and clientSecret are caught.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "XR override of Helm values", spec: override("release-kube-prometheus-stack", forProvider(map[string]any{"values": map[string]any{"grafana": map[string]any{"adminPassword": "hunter2"}}})), fatal: "values.grafana.adminPassword"},
				{name: "a number", spec: func(w *world) {
					edit("spec.parameters.overrides", nil)(w)
					edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"auth": map[string]any{"password": 123456.0}}}})(w)
				}, fatal: "auth.password holds a plaintext credential"},
				{name: "a number again", spec: edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"auth": map[string]any{"password": 123456.0}}}}), fatal: "auth.password holds a plaintext credential"},
				{name: "an env list", spec: edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"values": map[string]any{"controller": map[string]any{"extraEnvs": []any{map[string]any{"name": "DB_PASSWORD", "value": "s3cret"}}}}}}), fatal: "controller.extraEnvs[0].value"},
				{name: "clientSecret", spec: edit("spec.parameters.charts", map[string]any{"cert-manager": map[string]any{"values": map[string]any{"dns": map[string]any{"clientSecret": "abc"}}}}), fatal: "dns.clientSecret"},
				{name: "back to clean", spec: edit("spec.parameters.charts", nil), check: ready(true)},
				{name: "the environment's overrides", world: envOverride("release-ingress-nginx", forProvider(map[string]any{"values": map[string]any{"apiToken": "t0k3n"}})), fatal: `composed resource "release-ingress-nginx" would hold a plaintext credential at spec.forProvider.values.apiToken`},
			},
		},

		// Immutability, from whichever input.
		"EnvironmentChangesCIDR": {
			reason: "An environment change of network.cidr would rewrite the existing subnet's range in place: a Fatal naming field, old and new value.",
			xr:     fntest.GCPXR(),
			steps: []step{
				converged,
				{name: "new cidr", world: envEdit("cluster-platform-baseline", "network.cidr", "10.8.0.0/16"), fatal: `composed resource "subnet" has spec.forProvider.ipCidrRange "10.0.0.0/16", which cannot change once it exists (the XR and its environment now give "10.8.0.0/16")`},
			},
		},
		"AWSZonesReordered": {
			reason: "A reordered AWS zone list would move the subnets' CIDRs: a Fatal.",
			xr:     fntest.AWSXR(),
			steps: []step{
				converged,
				{name: "reordered", world: envEdit("cluster-platform-cloud-aws", "aws.zones.us-east-1", []any{"us-east-1b", "us-east-1a", "us-east-1c"}), fatal: "spec.forProvider.cidrBlock"},
			},
		},
		"AzurePodRangeChanged": {
			reason: "AKS cannot change its pod range in place.",
			xr:     fntest.AzureXR(),
			steps: []step{
				converged,
				{name: "new pod range", spec: edit("spec.parameters.network", map[string]any{"podsCidr": "10.200.0.0/14"}), fatal: `spec.forProvider.networkProfile.podCidr "10.100.0.0/14"`},
			},
		},

		// Bounds and reporting.
		"AWSIgnoresPodRange": {
			reason: "AWS pods take VPC addresses: a network overlapping the environment's podsCidr is fine there.",
			xr:     fntest.AWSXR(fntest.Set("spec.parameters.network", map[string]any{"cidr": "10.100.0.0/16"})),
			steps:  []step{converged},
		},
		"EveryBadFieldAtOnce": {
			reason: "One Fatal names every bad field: an XR rule, a plan rule and a cloud rule together.",
			xr: fntest.AzureXR(fntest.Set("spec.parameters.pools", map[string]any{
				"a":                 map[string]any{"minNodes": 5.0, "maxNodes": 2.0},
				"b":                 map[string]any{"size": "huge"},
				"averyverylongpool": map[string]any{"size": "small"},
			})),
			steps: []step{{name: "first", fatal: "pools[a].minNodes", check: fatalHas("pools[a].minNodes", "pools[b].size", "pools[averyverylongpool]")}},
		},
		"TooManyPools": {
			reason: "An XR with thousands of pools is refused before anything is rendered, naming the limit.",
			xr: fntest.GCPXR(func(o fntest.Object) {
				pools := map[string]any{}
				for i := range 10000 {
					pools[fmt.Sprintf("p%d", i)] = map[string]any{"size": "small"}
				}
				fntest.Set("spec.parameters.pools", pools)(o)
			}),
			steps: []step{{name: "first", fatal: "spec.parameters.pools: Too many: 10000: must have at most 50 items"}},
		},
	}
	runAll(t, "trust-boundary scenarios", scenarios)
}
