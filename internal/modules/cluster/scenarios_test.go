package cluster_test

import (
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// spendUSD sets the month-to-date spend the budget's spend ConfigMap holds.
func spendUSD(v string) func(*fntest.World) {
	return func(w *fntest.World) { w.Spend = []fntest.Object{fntest.SpendConfigMap("team-edge", "spend", v)} }
}

// inUse marks an observed resource as Crossplane's Usage controller does
// while a Usage (of another XR) protects it, or unmarks it.
func inUse(name string, on bool) func(*fntest.World) {
	return func(w *fntest.World) {
		o := overlay.DeepCopy(w.Observed[name])
		meta := o["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		delete(labels, "crossplane.io/in-use")
		if on {
			labels["crossplane.io/in-use"] = "true"
		}
		w.Observed = maps.Clone(w.Observed)
		w.Observed[name] = o
	}
}

// noInUseLabel checks that a desired resource does not carry the label of
// Crossplane's Usage controller.
func noInUseLabel(name string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		labels, _ := fntest.Desired(rsp)[name]["metadata"].(map[string]any)["labels"].(map[string]any)
		if _, ok := labels["crossplane.io/in-use"]; ok {
			t.Errorf("%s is desired with the label crossplane.io/in-use, which only Crossplane's Usage controller sets", name)
		}
	}
}

// converged is the scenario prefix that brings the XR's stack up.
var converged = fntest.Step{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.TTL(ttlReady))}

// edgeGrant is the platform team's grant of the fixtures' namespace
// team-edge to import existing resources by name, and of its domain.
var edgeGrant = fntest.Grant("team-edge", []string{"edge.example.net", "*.edge.example.net"}, []string{"edge", "edge-two", "general", "existing-gke", "vpc-*", "Z0123456789"})

func TestScenarios(t *testing.T) {
	// firstWarning is the warning of the first step of WarningsReportedOnce,
	// which the second puts in the XR's status.
	var firstWarning string
	scenarios := map[string]fntest.Scenario{
		"FirstCreate": {
			Reason: "The first reconcile of a new XR composes only what needs nothing else, and says the XR is not ready. What the rest waits for is its own composed resources, whose changes re-run it, so the TTL is the ready one: the converging TTL is for what waits on another XR.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{{Name: "first reconcile", Hold: true, Check: fntest.All(
				fntest.Desires("network", "node-service-account", "public-dns-zone"),
				fntest.Lacks("subnet", "cluster", "nodepool-general", "release-cert-manager"),
				fntest.Condition("ClusterReady", "FALSE", "Waiting"), fntest.IsReady(false), fntest.TTL(ttlReady),
			)}},
		},
		"ConvergeStepByStep": {
			Reason: "Each reconcile composes what became possible; the stack converges and the TTL lengthens once ready.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				{Name: "network first", Check: fntest.Desires("network")},
				{Name: "subnet once the network is ready", Check: fntest.All(fntest.Desires("subnet", "router"), fntest.Lacks("cluster"))},
				{Name: "cluster once the subnet is ready", Check: fntest.All(fntest.Desires("cluster", "nat"), fntest.Lacks("nodepool-general"))},
				{Name: "pools once the cluster is ready", Check: fntest.All(fntest.Desires("nodepool-general", "nodepool-gpu"), fntest.Lacks("helm-provider-config"))},
				converged,
				{Name: "steady state", Check: fntest.All(fntest.IsReady(true), fntest.TTL(ttlReady), fntest.Condition("AddonsReady", "TRUE", "Available"))},
			},
		},
		"ConvergeAWS": {
			Reason: "An EKS stack converges.",
			XR:     fntest.AWSXR(),
			Steps:  []fntest.Step{converged},
		},
		"ConvergeAzure": {
			Reason: "An AKS stack converges; the role assignment waits for the identity's principal ID.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{
				{Name: "first", Hold: true, Check: fntest.All(fntest.Desires("resource-group"), fntest.Lacks("network-role-assignment"))},
				converged,
			},
		},
		"KubeconfigToClaimOwner": {
			Reason: "A claim's XR returns the kubeconfig, endpoint and CA as connection details, which Crossplane copies to the claim's Secret, and its status says so; nothing before the cluster writes one.",
			XR: fntest.GCPXR(fntest.Legacy, func(o fntest.Object) {
				o["metadata"].(map[string]any)["labels"].(map[string]any)["crossplane.io/claim-namespace"] = "team-edge"
			}),
			Steps: []fntest.Step{
				{Name: "first", Hold: true, Check: fntest.ConnectionKeys()},
				{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.ConnectionKeys("kubeconfig", "endpoint", "clusterCA"),
					fntest.Status("kubeconfigSecret", map[string]any{"namespace": "team-edge", "key": "kubeconfig", "via": "Claim"}))},
			},
		},
		"KubeconfigInNamespace": {
			Reason: "A namespaced XR has no connection details: its status names the kubeconfig Secret the managed resource writes in the XR's namespace.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{{Name: "converged", Converge: true, Check: fntest.All(fntest.ConnectionKeys(),
				fntest.Status("kubeconfigSecret", map[string]any{"name": "edge-kubeconfig", "namespace": "team-edge", "key": "kubeconfig", "via": "ManagedResource"}))}},
		},
		"EnvironmentLost": {
			Reason: "With the EnvironmentConfigs gone from context and requirements, the function asks for them and keeps everything.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "no environment", World: func(w *fntest.World) { w.Envs = nil }, Hold: true, Check: fntest.All(fntest.Requires, fntest.Desires("cluster", "nodepool-gpu", "release-cert-manager"))},
				{Name: "fetched, still none", World: func(w *fntest.World) { w.Envs = []fntest.Object{}; w.Fetched = true }, Fatal: "no EnvironmentConfig found"},
				{Name: "restored", World: func(w *fntest.World) { w.Envs = envs; w.Fetched = false }, Check: fntest.IsReady(true)},
			},
		},
		"EnvironmentKeyRemoved": {
			Reason: "A removed environment key with a default changes nothing; one without (the size classes) is a Fatal, not a deletion.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "monitoring key removed", World: fntest.EnvWithout("monitoring"), Check: fntest.Desires("release-kube-prometheus-stack")},
				{Name: "size classes removed", World: fntest.EnvWithout("sizes"), Fatal: "size classes"},
			},
		},
		"CloudLabelFlipped": {
			Reason: "Flipping the cloud label of a composed XR is a Fatal; flipping it back carries on.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "gcp to aws", Spec: fntest.Edit("metadata.labels.cloud", "aws"), Fatal: "cloud is immutable"},
				{Name: "gcp to azure", Spec: fntest.Edit("metadata.labels.cloud", "azure"), Fatal: "cloud is immutable"},
				{Name: "back to gcp", Spec: fntest.Edit("metadata.labels.cloud", "gcp"), Check: fntest.IsReady(true)},
			},
		},
		"LocationChanged": {
			Reason: "Moving a composed cluster to another region is refused: providers cannot move resources.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "new region", Spec: fntest.Edit("spec.parameters.location", "europe-west1"), Fatal: "can change only by replacing the cloud resource"},
				{Name: "restored", Spec: fntest.Edit("spec.parameters.location", "europe-west4"), Check: fntest.IsReady(true)},
			},
		},
		"ClusterNameChanged": {
			Reason: "A new clusterName label would rename every cloud resource: Fatal.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				fntest.Granted(converged, edgeGrant),
				{Name: "renamed", Spec: fntest.Edit("metadata.labels.clusterName", "edge-two"), Fatal: "cloud names are immutable"},
			},
		},
		"PoolAdded": {
			Reason: "A new pool is added; nothing else changes.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "add pool", Spec: fntest.Edit("spec.parameters.pools.web", map[string]any{"size": "medium", "minNodes": 1.0, "maxNodes": 2.0}), Check: fntest.Desires("nodepool-web")},
				fntest.ConvergeStep("pool comes up"),
			},
		},
		"PoolResized": {
			Reason: "A resized pool is updated in place.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "resize", Spec: fntest.Edit("spec.parameters.pools.general.maxNodes", 9.0), Check: fntest.All(
					fntest.Field("nodepool-general", "spec.forProvider.autoscaling.maxNodeCount", 9),
					fntest.Field("nodepool-general", "metadata.annotations.crossplane\\.io/external-name", nil),
				)},
			},
		},
		"PoolRemoved": {
			Reason: "Removing a pool removes that pool and its Usages only.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "remove gpu", Spec: fntest.Edit("spec.parameters.pools.gpu", nil), Removes: []string{"nodepool-gpu"}, Check: fntest.Desires("nodepool-general", "cluster")},
				fntest.ConvergeStep("settles"),
			},
		},
		"AWSPoolRemoved": {
			Reason: "On AWS, removing a pool removes its node group only; the add-ons that waited for it stay.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "remove gpu", Spec: fntest.Edit("spec.parameters.pools.gpu", nil), Removes: []string{"nodepool-gpu"}, Check: fntest.Desires("addon-coredns", "nodepool-general")},
			},
		},
		"UsagesOfAnEarlierVersion": {
			Reason: "An earlier version composed a Usage per dependency edge: upgraded, the function drops those whose deletion order does not matter, but not one that refused a deletion (removing it would replay the delete), and keeps the others.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "upgraded", Upgrade: true, World: func(w *fntest.World) {
					w.Observed = maps.Clone(w.Observed)
					for _, e := range [][2]string{{"subnet-private-a", "network"}, {"release-cert-manager", "helm-provider-config"}, {"subnet-private-b", "network"}} {
						w.Observed[e[0]+"-uses-"+e[1]] = earlierUsage(w.Observed["cluster-auth-uses-cluster"], e[0], e[1])
					}
					// Someone tried to delete the network and this Usage
					// refused it: removing it would replay that delete.
					meta := w.Observed["subnet-private-b-uses-network"]["metadata"].(map[string]any)
					meta["annotations"].(map[string]any)[registry.AnnotationDeletionAttempt] = "Background"
				}, Check: fntest.All(
					fntest.Lacks("subnet-private-a-uses-network", "release-cert-manager-uses-helm-provider-config"),
					fntest.Desires("subnet-private-b-uses-network"),
					fntest.Desires("cluster-auth-uses-cluster", "helm-provider-config-uses-cluster-auth", "nodepool-general-uses-node-role-eks-worker-node"),
					fntest.IsReady(true),
				)},
			},
		},
		"DomainRemoved": {
			Reason: "Removing the domain keeps the zones (with a warning) until createDnsZones is false.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "domain removed", Spec: fntest.Edit("spec.parameters.domain", nil), Check: fntest.All(fntest.Desires("public-dns-zone", "private-dns-zone"), fntest.Warns("holding composed resource \"public-dns-zone\""), fntest.Condition("RemovalsSettled", "FALSE", "AwaitingOwner"))},
				{Name: "zones off", Spec: fntest.Edit("spec.parameters.createDnsZones", false), Removes: []string{"public-dns-zone", "private-dns-zone",
					// What made the domain work goes with its zones.
					"dns-identity", "dns-zone-admin", "dns-zone-reader", "dns-workload-user-cert-manager", "dns-workload-user-external-dns",
					"cluster-issuer", "domain-certificate", "release-external-dns"},
					Check: fntest.All(fntest.Condition("DnsReady", "TRUE", "NotRequested"), fntest.Lacks("release-external-dns", "cluster-issuer"), fntest.Desires("release-cert-manager"))},
			},
		},
		"DNSChartDisabledBySpec": {
			Reason: "Disabling cert-manager in the XR removes its release, its binding to the DNS identity, the issuer and the certificate; external-dns and the identity stay. Disabling external-dns too removes the identity.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "cert-manager off", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"cert-manager": map[string]any{"disabled": true}}),
					Removes: []string{"release-cert-manager", "dns-pod-identity-cert-manager", "cluster-issuer", "domain-certificate"},
					Check:   fntest.All(fntest.Lacks("dns-pod-identity-cert-manager", "cluster-issuer"), fntest.Desires("dns-identity", "dns-pod-identity-external-dns", "release-external-dns"))},
				{Name: "external-dns off too", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"cert-manager": map[string]any{"disabled": true}, "external-dns": map[string]any{"disabled": true}}),
					Removes: []string{"release-external-dns", "dns-pod-identity-external-dns", "dns-identity", "dns-zone-access"},
					Check:   fntest.All(fntest.Lacks("dns-identity", "dns-zone-access"), fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld"))},
			},
		},
		"PrivateClusterToggled": {
			Reason: "Making an AKS cluster public removes the private zone, and the NAT gateway once the cluster reports the load balancer's outbound; making it private again brings them back. (GKE keeps its private nodes and their NAT: TestNetworkShapeAndCapacityType.)",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Check: fntest.All(fntest.Desires("cluster", "nodepool-gpu", "nat"), fntest.Held("private-dns-zone", "private-dns-zone-link"))},
				{Name: "the NAT gateway goes", Removes: []string{"nat", "nat-public-ip", "nat-subnet-association"}},
				fntest.ConvergeStep("settles"),
				{Name: "private again", Spec: fntest.Edit("spec.parameters.privateCluster", true), Check: fntest.Desires("nat")},
				fntest.ConvergeStep("settles"),
			},
		},
		"PrivateServicesToggled": {
			Reason: "On GCP, spec.parameters.network.privateServices composes the range and peering Cloud SQL needs in the cluster's network, named after the cluster's cloud name (as Databases on it named theirs before); setting it to false removes them, and nothing else.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "on", Spec: fntest.Edit("spec.parameters.network.privateServices", true), Check: fntest.All(
					fntest.Desires("private-services-range"), fntest.Lacks("private-services-connection"),
					func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
						t.Helper()
						o := fntest.Desired(rsp)["private-services-range"]
						if got := o["metadata"].(map[string]any)["annotations"].(map[string]any)["crossplane.io/external-name"]; got != "edge-2153p-db-psa" {
							t.Errorf("private-services-range is %v in the cloud, want edge-2153p-db-psa (named after the cluster's cloud name, which for a new Cluster of team-edge carries the namespace's tag)", got)
						}
					},
				)},
				{Name: "converged", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Condition("NetworkReady", "TRUE", "Available"),
					fntest.Field("private-services-connection", "spec.forProvider.updateOnCreationFail", true),
					fntest.Field("private-services-connection", "spec.forProvider.deletionPolicy", nil),
					fntest.Field("private-services-range", "spec.managementPolicies", nil))},
				{Name: "off", Spec: fntest.Edit("spec.parameters.network.privateServices", false), Removes: []string{"private-services-range", "private-services-connection"},
					Check: fntest.All(fntest.Desires("network", "cluster"), fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld"))},
			},
		},
		"PrivateServicesInUse": {
			Reason: "Private services access that a Database's Usage still protects is held when the spec turns it off, range and connection together (deleting them would only be refused, and fail every reconcile), confirmRemovals or not, with RemovalsSettled's reason InUseElsewhere (nothing for the owner to confirm); it goes once nothing uses it.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.network.privateServices", true)),
			Steps: []fntest.Step{
				converged,
				{Name: "off while in use", World: inUse("private-services-connection", true), Spec: fntest.Edit("spec.parameters.network.privateServices", false), Check: fntest.All(
					fntest.HeldInUse("private-services-range", "private-services-connection"),
					fntest.ConditionMentions("RemovalsSettled", "a Usage of another XR still protects it"),
					fntest.ConditionMentions("RemovalsSettled", `it goes with "private-services-connection"`),
					fntest.Warns("it goes once nothing uses it"), noInUseLabel("private-services-connection"),
				)},
				// The Usage controller's label stays; the XR never applies
				// it as its own.
				{Name: "confirmed while in use", World: inUse("private-services-connection", true), Spec: fntest.Edit("spec.parameters.confirmRemovals", []any{"private-services-connection", "private-services-range"}),
					Check: fntest.All(fntest.HeldInUse("private-services-range", "private-services-connection"), noInUseLabel("private-services-connection"))},
				{Name: "nothing uses it", World: inUse("private-services-connection", false), Removes: []string{"private-services-range", "private-services-connection"},
					Check: fntest.Condition("RemovalsSettled", "TRUE", "NothingHeld")},
			},
		},
		"PrivateServicesElsewhere": {
			Reason: "Private services access is Cloud SQL's: on AWS and Azure it is refused, naming the field.",
			XR:     fntest.AWSXR(fntest.Set("spec.parameters.network.privateServices", true)),
			Steps:  []fntest.Step{{Name: "first", Fatal: `spec.parameters.network.privateServices: Invalid value: true: private services access is for Cloud SQL on GCP; on cloud "aws"`}},
		},
		"AzurePrivateToggled": {
			Reason: "On Azure, making the cluster public removes the private zone, and the NAT gateway, its IP and association once the cluster no longer sends its outbound traffic through them.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Check: fntest.Held("private-dns-zone", "private-dns-zone-link")},
				{Name: "outbound through the load balancer", Removes: []string{"nat", "nat-public-ip", "nat-subnet-association"}},
			},
		},
		"ClusterNotReadyForOneCall": {
			Reason: "A cluster that turns not ready keeps all its dependents; the XR reports it, and its turning ready again re-runs the XR (the ready TTL).",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "cluster not ready", World: fntest.ObservedCondition("cluster", "Ready", "False", "upgrading"), Hold: true, Check: fntest.All(
					fntest.Desires("nodepool-general", "helm-provider-config", "release-ingress-nginx"),
					fntest.Condition("ClusterReady", "FALSE", "Creating"), fntest.IsReady(false), fntest.TTL(ttlReady),
				)},
				fntest.ConvergeStep("recovers"),
			},
		},
		"ClusterDisappearsForOneCall": {
			Reason: "A cluster missing from the observed state for one reconcile is desired again, and so is everything that depends on it.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "cluster gone", World: fntest.Vanish("cluster"), Hold: true, Check: fntest.Desires("cluster", "nodepool-general", "nodepool-gpu", "kubernetes-provider-config")},
				fntest.ConvergeStep("recovers"),
			},
		},
		"ProviderSyncedFalse": {
			Reason: "A provider that cannot reconcile is reported in the condition with its message; nothing is dropped.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "synced false", World: fntest.ObservedCondition("nodepool-gpu", "Synced", "False", "quota exceeded for GPUS_ALL_REGIONS"), Hold: true, Check: fntest.All(
					fntest.Condition("NodePoolsReady", "FALSE", "ReconcileError"), fntest.Desires("nodepool-gpu"),
				)},
			},
		},
		"OverrideBreaksRequiredField": {
			Reason: "An override that removes a required field is a Fatal; dropping it carries on.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "bad override", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{"location": nil}}}}), Fatal: "removes spec.forProvider.location"},
				{Name: "override removed", Spec: fntest.Edit("spec.parameters.overrides", nil), Check: fntest.IsReady(true)},
			},
		},
		"DuplicatePoolNames": {
			Reason: "Two pools that normalise to one name are a Fatal, never two resources fighting over one name.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "duplicate", Spec: fntest.Edit("spec.parameters.pools.General", map[string]any{"size": "small"}), Fatal: "both normalise to the name"},
			},
		},
		"XRDeleted": {
			Reason: "While the XR is being deleted nothing new is composed and nothing existing is dropped.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				{Name: "partly up", Hold: false, Check: fntest.Desires("network")},
				{Name: "deleting", World: func(w *fntest.World) { fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")(w.XR) }, Hold: true, Check: fntest.All(fntest.Desires("network"), fntest.Lacks("cluster"))},
			},
		},
		"ImportObserveManageRelease": {
			Reason: "An imported cluster is read-only, then managed without deletion, stays undeletable when import is off, and is released on request.",
			XR: fntest.GCPXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "mode": "observe", "resources": map[string]any{"cluster": "edge"},
			})),
			Steps: []fntest.Step{
				fntest.Granted(converged, edgeGrant),
				{Name: "observe", Check: fntest.Field("cluster", "spec.managementPolicies", []any{"Observe"})},
				{Name: "manage", Spec: fntest.Edit("spec.parameters.import.mode", "manage"), Check: fntest.Field("cluster", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})},
				{Name: "back to observe", Spec: fntest.Edit("spec.parameters.import.mode", "observe"), Check: fntest.Field("cluster", "spec.managementPolicies", []any{"Observe"})},
				{Name: "import off", Spec: fntest.Edit("spec.parameters.import", nil), Check: fntest.Field("cluster", "spec.managementPolicies", []any{"Observe", "Create", "Update", "LateInitialize"})},
				{Name: "released", Spec: fntest.Edit("spec.parameters.import", map[string]any{"release": true}), Check: fntest.Field("cluster", "spec.managementPolicies", nil)},
			},
		},
		"ImportOnly": {
			Reason: "import.only composes just the imported resources, on AWS too.",
			XR: fntest.AWSXR(fntest.Set("spec.parameters.import", map[string]any{
				"enabled": true, "only": true, "resources": map[string]any{"network": "vpc-0123456789abcdef0", "public-dns-zone": "Z0123456789"},
			})),
			Steps: []fntest.Step{
				{Name: "first", World: edgeGrant, Check: fntest.All(fntest.Desires("network", "public-dns-zone"), fntest.Lacks("cluster", "subnet-private-a"))},
				fntest.ConvergeStep("settles"),
			},
		},
		"EarlierStepPassedThrough": {
			Reason: "What an earlier pipeline step desires passes through every reconcile untouched.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				{Name: "with an earlier step", World: func(w *fntest.World) {
					w.Desired = map[string]fntest.Object{"audit-config": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "audit"}, "data": map[string]any{"level": "full"}}}
				}, Check: fntest.Field("audit-config", "data.level", "full")},
				converged,
				{Name: "still there", Check: fntest.Field("audit-config", "data.level", "full")},
			},
		},
		"ChartDisabled": {
			Reason: "Disabling a chart removes its release and nothing else.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "disable ingress", Spec: fntest.Edit("spec.parameters.charts", map[string]any{"ingress-nginx": map[string]any{"disabled": true}}), Removes: []string{"release-ingress-nginx"}},
			},
		},
		"EnvironmentRoleRemoved": {
			Reason: "A node role dropped from the environment (not the spec) is kept, with a warning.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "roles shrink", World: func(w *fntest.World) {
					var out []fntest.Object
					for _, e := range envs {
						e = overlay.DeepCopy(e)
						if g, ok := e["data"].(map[string]any)["gcp"].(map[string]any); ok {
							g["nodeServiceAccountRoles"] = []any{"roles/container.defaultNodeServiceAccount"}
						}
						out = append(out, e)
					}
					w.Envs = out
				}, Check: fntest.All(fntest.Desires("node-iam-artifactregistry-reader"), fntest.Warns("holding composed resource \"node-iam-artifactregistry-reader\""))},
			},
		},
		"WarningsReportedOnce": {
			Reason: "A warning that persists is an event once; the status lists it.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				{Name: "first", World: fntest.EnvEdit("cluster-platform-baseline", "overrides", map[string]any{"no-such-resource": map[string]any{}}), Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					if n := countWarnings(rsp); n != 1 {
						t.Errorf("got %d Warning results, want 1", n)
					}
					for _, r := range rsp.GetResults() {
						if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
							firstWarning = r.GetMessage()
						}
					}
					if !strings.HasPrefix(firstWarning, "environment overrides.no-such-resource matches no composed resource") {
						t.Errorf("warning %q does not name the override key", firstWarning)
					}
				}},
				{Name: "second, with the status of the first", World: func(w *fntest.World) {
					fntest.Set("status.warnings", []any{firstWarning})(w.XR)
				}, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					if n := countWarnings(rsp); n != 0 {
						t.Errorf("got %d Warning results for a warning the status already lists, want 0", n)
					}
				}},
			},
		},
		"BudgetPausedAndUnpaused": {
			Reason: "An exhausted budget with enforcement holds the pools at their floor without removing anything; spend back under the limit, the budget removed from the spec, or deleting the XR, releases them.",
			XR: fntest.AzureXR(fntest.Set("spec.parameters.budget", map[string]any{
				"limitUsd": 1000.0, "enforcement": "enabled",
				"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
			})),
			Steps: []fntest.Step{
				{Name: "converge within budget", World: spendUSD("100"), Converge: true, Check: fntest.Field("nodepool-general", "spec.forProvider.maxCount", 4)},
				{Name: "budget exhausted", World: spendUSD("1000"), Check: fntest.All(
					fntest.Field("nodepool-general", "spec.forProvider.maxCount", 2), fntest.Field("nodepool-general", "spec.forProvider.minCount", 2),
					fntest.Field("nodepool-gpu", "spec.forProvider.maxCount", 1), fntest.Field("nodepool-gpu", "spec.forProvider.minCount", 0),
					fntest.Condition("BudgetOK", "FALSE", "BudgetExhausted"),
				)},
				{Name: "spend back under", World: spendUSD("10"), Check: fntest.All(fntest.Field("nodepool-general", "spec.forProvider.maxCount", 4), fntest.Condition("BudgetOK", "TRUE", "WithinBudget"))},
				{Name: "exhausted again", World: spendUSD("5000"), Check: fntest.Field("nodepool-general", "spec.forProvider.maxCount", 2)},
				{Name: "budget removed from the spec", Spec: func(w *fntest.World) { fntest.Set("spec.parameters.budget", nil)(w.XR) }, Removes: []string{"budget"}, Check: fntest.Field("nodepool-general", "spec.forProvider.maxCount", 4)},
				{Name: "budget back, exhausted", Spec: func(w *fntest.World) {
					fntest.Set("spec.parameters.budget", map[string]any{
						"limitUsd": 1000.0, "enforcement": "enabled",
						"spendRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "spend", "fieldPath": "data.spentUsd"},
					})(w.XR)
				}, Check: fntest.Field("nodepool-general", "spec.forProvider.maxCount", 2)},
				{Name: "XR deleted", World: func(w *fntest.World) { fntest.Set("metadata.deletionTimestamp", "2026-11-21T10:00:00Z")(w.XR) }, Hold: true, Check: fntest.Field("nodepool-general", "spec.forProvider.maxCount", 4)},
			},
		},
		"EventsOnTransitionsOnly": {
			Reason: "Conditions that did not change emit no events.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{
				converged,
				{Name: "same conditions", World: func(w *fntest.World) {
					conds := []any{}
					for _, typ := range []string{"NetworkReady", "ClusterReady", "NodePoolsReady", "AddonsReady", "DnsReady"} {
						conds = append(conds, map[string]any{"type": typ, "status": "True", "reason": "Available"})
					}
					conds = append(conds, map[string]any{"type": "RemovalsSettled", "status": "True", "reason": "NothingHeld"},
						map[string]any{"type": "Upgrading", "status": "False", "reason": "UpToDate"})
					fntest.Set("status.conditions", conds)(w.XR)
				}, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					for _, r := range rsp.GetResults() {
						if r.GetSeverity() == fnv1.Severity_SEVERITY_NORMAL {
							t.Errorf("unexpected event on a steady state: %s", r.GetMessage())
						}
					}
				}},
			},
		},
	}
	fntest.RunAll(t, "scenarios", run, envs, scenarios)
}

func countWarnings(rsp *fnv1.RunFunctionResponse) int {
	n := 0
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			n++
		}
	}
	return n
}

// earlierUsage is a Usage an earlier version composed between by and of:
// a copy of one of the stack's Usages, its two ends replaced.
func earlierUsage(like fntest.Object, by, of string) fntest.Object {
	u := overlay.DeepCopy(like)
	spec := u["spec"].(map[string]any)
	for end, name := range map[string]string{"by": by, "of": of} {
		labels := spec[end].(map[string]any)["resourceSelector"].(map[string]any)["matchLabels"].(map[string]any)
		labels[registry.LabelResource] = name
	}
	return u
}
