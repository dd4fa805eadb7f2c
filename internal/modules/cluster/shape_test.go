package cluster_test

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// poolStatus checks a node pool's entry in the XR's status.nodePools: that
// it has (or lacks) a rotation.
func poolStatus(pool string, rotating bool) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		pools, _ := st["nodePools"].([]any)
		for _, p := range pools {
			e, _ := p.(map[string]any)
			if e["name"] != pool {
				continue
			}
			if _, ok := e["rotation"]; ok != rotating {
				t.Errorf("status.nodePools[%s] has a rotation: %v, want %v (%v)", pool, ok, rotating, e)
			}
			return
		}
		t.Errorf("status.nodePools has no pool %s: %v", pool, pools)
	}
}

// lacksField checks that a desired resource does not set a dotted path.
func lacksField(name, path string) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		d, ok := fntest.Desired(rsp)[name]
		if !ok {
			t.Fatalf("%s is not desired", name)
		}
		if v, ok := lookupAny(d, path); ok {
			t.Errorf("%s sets %s = %v", name, path, v)
		}
	}
}

// lookupAny reads a dotted path of an object.
func lookupAny(o fntest.Object, path string) (any, bool) {
	var cur any = map[string]any(o)
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// gpuGeneration checks a desired rotated generation of pool gpu with check.
func gpuGeneration(check func(gen string) fntest.Check) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		gen := nextGeneration(rsp.GetDesired().GetResources(), "gpu")
		if gen == "" {
			t.Fatalf("no new generation of pool gpu is desired")
		}
		check(gen)(t, rsp)
	}
}

// resolvedIn stands in for upjet's reference resolution, which the
// simulated providers do not do: every observed EKS node group has
// spec.forProvider.subnetIds, the IDs of the observed private subnets of
// the supplied zones (those it resolved its selector to when it was
// created). A node group keeps them: the selector is resolved once.
func resolvedIn(zones ...string) func(*fntest.World) {
	return func(w *fntest.World) {
		var ids []any
		for _, z := range zones {
			id, _ := lookupAny(w.Observed["subnet-private-"+z], "status.atProvider.id")
			ids = append(ids, id)
		}
		for name, o := range w.Observed {
			if isPool(name) && o["kind"] == "NodeGroup" {
				if _, ok := lookupAny(o, "spec.forProvider.subnetIds"); !ok {
					fntest.Set("spec.forProvider.subnetIds", ids)(o)
				}
			}
		}
	}
}

// subnetIDs are the observed IDs of the private subnets of the zones.
func subnetIDs(w **fntest.World, zones ...string) func() []any {
	return func() []any {
		var ids []any
		for _, z := range zones {
			id, _ := lookupAny((*w).Observed["subnet-private-"+z], "status.atProvider.id")
			ids = append(ids, id)
		}
		return ids
	}
}

// pcc is where a GKE cluster asks for private nodes and endpoint.
const pcc = "spec.forProvider.privateClusterConfig"

// gkePrivate is the private cluster config of the scenarios' GKE cluster
// (the environment's control plane range): a private one, with the
// private endpoint envPrivateEndpoint asks for; or one made public, whose
// nodes stay private on the range they run with and whose endpoint opens.
func gkePrivate(private bool) map[string]any {
	return map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": private, "masterIpv4CidrBlock": "172.16.0.0/28"}
}

// envPrivateEndpoint makes the API servers of private clusters private
// (environment key privateEndpoint).
var envPrivateEndpoint = fntest.EnvEdit("cluster-platform-baseline", "privateEndpoint", true)

// TestNetworkShapeAndCapacityType holds day-2 changes of a converged
// Cluster's network shape (private or public nodes, its zones) and of a
// pool's capacity type (Spot or regular) to what each cloud can do: the
// change is walked (rotated, or its egress kept until nothing uses it) or
// refused with a Fatal naming the XR's field; it never removes what the
// running nodes still use, nor drops a field the cloud keeps.
func TestNetworkShapeAndCapacityType(t *testing.T) {
	var w0 *fntest.World // the world of the scenario whose checks need it
	fourZones := fntest.EnvEdit("cluster-platform-cloud-aws", "aws.zones.us-east-1", []any{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"})
	scenarios := map[string]fntest.Scenario{
		"EKSZoneAddedRotatesNodeGroups": {
			Reason: "A zone added to the environment's aws.zones reaches the node groups, which resolved their subnet selector once, when they were created: once the new zone's subnets exist, each node group rotates (subnet_ids is ForceNew) into the subnets of every zone, one at a time; the cluster keeps its subnets (EKS keeps a control plane in the zones it was created in).",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "zone d added", World: func(w *fntest.World) {
					w0 = w
					resolvedIn("a", "b", "c")(w)
					fourZones(w)
				}, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					fntest.Desires("subnet-private-d", "subnet-public-d")(t, rsp)
					if gen := nextGeneration(rsp.GetDesired().GetResources(), "general"); gen != "" {
						t.Errorf("node group general rotates before the new zone's subnets exist: %s", gen)
					}
					lacksField("nodepool-general", "spec.forProvider.subnetIds")(t, rsp)
				}},
				{Name: "the new zone's subnets exist", World: resolvedIn("a", "b", "c"), Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					gen := nextGeneration(rsp.GetDesired().GetResources(), "general")
					if gen == "" {
						t.Fatalf("node group general does not rotate into the new zone")
					}
					fntest.Field(gen, "spec.forProvider.subnetIds", subnetIDs(&w0, "a", "b", "c", "d")())(t, rsp)
					keptAsObserved(w0, "nodepool-general")(t, rsp)
					keptAsObserved(w0, "nodepool-gpu")(t, rsp)
					fntest.ConditionMentions("Upgrading", "node pool general rotates (spec.forProvider.subnetIds")(t, rsp)
					lacksField("cluster", "spec.forProvider.vpcConfig.subnetIds")(t, rsp)
				}},
				{Name: "settled", Converge: true, Check: fntest.All(fntest.Lacks("nodepool-general", "nodepool-gpu"), fntest.Condition("Upgrading", "FALSE", "UpToDate"), fntest.IsReady(true))},
			},
		},
		"EKSPrivateToPublicKeepsEgress": {
			Reason: "Made public, EKS node groups rotate to the public subnets; the NAT gateway and the private route stay while a node group still runs behind them, and go with the last.",
			XR:     fntest.AWSXR(),
			Steps: []fntest.Step{converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Check: fntest.All(
					fntest.Desires("nat", "nat-eip", "private-route"), fntest.Held("private-dns-zone"),
					fntest.Warns("still run in the private subnets, behind the NAT gateway"),
					fntest.Condition("Upgrading", "TRUE", "NodePoolRotation"))},
				{Name: "general rotated", Check: fntest.All(fntest.Lacks("nodepool-general"), fntest.Desires("nodepool-gpu", "nat", "nat-eip", "private-route"))},
				{Name: "gpu rotates", Check: fntest.All(fntest.Desires("nodepool-gpu", "nat", "nat-eip", "private-route"), fntest.ConditionMentions("Upgrading", "node pool gpu rotates"))},
				{Name: "gpu rotated", Check: fntest.All(fntest.Lacks("nodepool-gpu"), fntest.Desires("nat", "nat-eip", "private-route"))},
				{Name: "nothing private: the egress goes", Removes: []string{"nat", "nat-eip", "private-route"}},
				{Name: "settled", Converge: true, Check: fntest.All(fntest.Lacks("nat", "nat-eip", "private-route", "nodepool-general", "nodepool-gpu"), fntest.Condition("Upgrading", "FALSE", "UpToDate"), fntest.IsReady(true))},
			},
		},
		"AKSPrivateToPublicKeepsEgress": {
			Reason: "Made public, an AKS cluster moves its outbound type to the load balancer in place; the NAT gateway and its subnet association stay until the cluster reports it, so that the nodes never lose their egress.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Hold: true, Check: fntest.All(
					fntest.Held("private-dns-zone", "private-dns-zone-link"),
					fntest.Field("cluster", "spec.forProvider.networkProfile.outboundType", "loadBalancer"),
					fntest.Desires("nat", "nat-public-ip", "nat-subnet-association"),
					fntest.Warns("still sends its outbound traffic through the NAT gateway"))},
				{Name: "cluster reports the load balancer", Removes: []string{"nat", "nat-public-ip", "nat-subnet-association"}, World: func(w *fntest.World) {
					observe("cluster", "spec.forProvider.networkProfile.outboundType", "loadBalancer")(w)
					observe("cluster", "status.atProvider.networkProfile.outboundType", "loadBalancer")(w)
				}, Check: fntest.Lacks("nat", "nat-public-ip", "nat-subnet-association")},
			},
		},
		"GKEPrivateToPublicOpensTheEndpoint": {
			Reason: "Made public, a GKE cluster that runs private nodes is walked, not refused: its private endpoint opens in place (enablePrivateEndpoint false), its nodes stay private on the control plane range they run with, and their Cloud NAT and router stay, a Warning says why; made private again, the endpoint closes in place.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.privateCluster", true)),
			Steps: []fntest.Step{
				{Name: "converge with a private endpoint", World: envPrivateEndpoint, Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Field("cluster", pcc, gkePrivate(true)))},
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Check: fntest.All(
					fntest.Field("cluster", pcc, gkePrivate(false)), fntest.Held("private-dns-zone"),
					fntest.Desires("nat", "router"),
					fntest.Warns("spec.parameters.privateCluster is false, but the GKE cluster keeps its private nodes"))},
				{Name: "settled", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Field("cluster", pcc, gkePrivate(false)), fntest.Desires("nat", "router"))},
				{Name: "private again", Spec: fntest.Edit("spec.parameters.privateCluster", true), Check: fntest.All(fntest.Field("cluster", pcc, gkePrivate(true)), fntest.Desires("nat", "router"))},
				{Name: "settled private", Converge: true, Check: fntest.All(fntest.IsReady(true), fntest.Desires("private-dns-zone"))},
			},
		},
		"GKEEnvironmentPublicKeepsPrivateNodes": {
			Reason: "The environment's privateCluster, which the XR does not set, is walked the same way: the nodes keep their private addresses and their NAT, named in a Warning with the environment's key.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "environment public", World: fntest.EnvEdit("cluster-platform-baseline", "privateCluster", false), Check: fntest.All(
					fntest.Field("cluster", pcc+".enablePrivateNodes", true),
					fntest.Field("cluster", pcc+".enablePrivateEndpoint", false),
					fntest.Desires("nat", "router", "private-dns-zone"),
					fntest.Warns("environment.privateCluster is false, but the GKE cluster keeps its private nodes"))},
			},
		},
		"GKEPublicToPrivateRefused": {
			Reason: "A public GKE cluster gets private nodes only with a control plane range, which GKE sets only at creation (ForceNew), and its running pools would keep public nodes: a Fatal naming the field.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.privateCluster", false)),
			Steps: []fntest.Step{converged,
				{Name: "private", Spec: fntest.Edit("spec.parameters.privateCluster", true),
					Fatal: `spec.parameters.privateCluster: Invalid value: true: GKE cluster "edge-2153p" runs public nodes`,
					Check: fntest.FatalHas("master_ipv4_cidr_block is ForceNew", "the running pools would keep their public nodes")},
			},
		},
		"GKEOverridesReachThePrivateClusterConfig": {
			Reason: "Overrides reach the same fields of a cluster made public: its endpoint, which GKE changes in place, is made private again; its control plane range, which GKE sets only at creation, is a Fatal naming the override, old and new.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.privateCluster", true)),
			Steps: []fntest.Step{converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Check: fntest.All(fntest.Field("cluster", pcc, gkePrivate(false)), fntest.Held("private-dns-zone"))},
				{Name: "endpoint overridden", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{
					"privateClusterConfig": map[string]any{"enablePrivateEndpoint": true}}}}}),
					Check: fntest.All(fntest.Field("cluster", pcc+".enablePrivateEndpoint", true), fntest.Field("cluster", pcc+".enablePrivateNodes", true))},
				{Name: "range overridden", Spec: fntest.Edit("spec.parameters.overrides", map[string]any{"cluster": map[string]any{"spec": map[string]any{"forProvider": map[string]any{
					"privateClusterConfig": map[string]any{"masterIpv4CidrBlock": "172.16.0.16/28"}}}}}),
					Fatal: "the override spec.parameters.overrides.cluster.spec.forProvider.privateClusterConfig.masterIpv4CidrBlock now gives \"172.16.0.16/28\"", Check: fntest.FatalHas(`spec.forProvider.privateClusterConfig.masterIpv4CidrBlock "172.16.0.0/28"`)},
			},
		},
		"AKSSpotToRegularRotates": {
			Reason: "AKS changes a pool's priority only by replacement (azurerm priority is ForceNew): a Spot pool made regular rotates to a new regular pool with surge settings, the Spot one kept as it is (no maxSurge, which AKS refuses on Spot pools) until the new one is Ready, and the status says it rotates.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "regular", Spec: fntest.Edit("spec.parameters.pools.gpu.spot", false), Check: fntest.All(
					gpuGeneration(func(gen string) fntest.Check {
						return fntest.All(lacksField(gen, "spec.forProvider.priority"), fntest.Field(gen, "spec.forProvider.upgradeSettings.maxSurge", "33%"))
					}),
					fntest.Field("nodepool-gpu", "spec.forProvider.priority", "Spot"),
					lacksField("nodepool-gpu", "spec.forProvider.upgradeSettings"),
					fntest.Condition("Upgrading", "TRUE", "NodePoolRotation"),
					fntest.ConditionMentions("Upgrading", `node pool gpu rotates (spec.forProvider.priority "Spot" -> "Regular")`),
					poolStatus("gpu", true))},
				{Name: "new one Ready", Removes: []string{"nodepool-gpu"}, Check: fntest.All(fntest.Lacks("nodepool-gpu"), poolStatus("gpu", true))},
				{Name: "settled", Converge: true, Check: fntest.All(fntest.Condition("Upgrading", "FALSE", "UpToDate"), poolStatus("gpu", false), fntest.IsReady(true))},
			},
		},
		"AKSRegularToSpotRotates": {
			Reason: "A regular AKS pool made Spot rotates to a Spot pool without surge settings.",
			XR:     fntest.AzureXR(),
			Steps: []fntest.Step{converged,
				{Name: "spot", Spec: fntest.Edit("spec.parameters.pools.general.spot", true), Hold: true, Check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
					gen := nextGeneration(rsp.GetDesired().GetResources(), "general")
					if gen == "" {
						t.Fatalf("no new generation of pool general is desired")
					}
					fntest.All(fntest.Field(gen, "spec.forProvider.priority", "Spot"), lacksField(gen, "spec.forProvider.upgradeSettings"),
						fntest.Field("nodepool-general", "spec.forProvider.upgradeSettings.maxSurge", "33%"),
						fntest.ConditionMentions("Upgrading", `spec.forProvider.priority "Regular" -> "Spot"`))(t, rsp)
				}},
			},
		},
	}
	fntest.RunAll(t, "network shape and capacity type scenarios", run, envs, scenarios)
}
