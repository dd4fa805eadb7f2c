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
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Removes: []string{"private-dns-zone"}, Check: fntest.All(
					fntest.Desires("nat", "nat-eip", "private-route"),
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
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false), Removes: []string{"private-dns-zone", "private-dns-zone-link"}, Hold: true, Check: fntest.All(
					fntest.Field("cluster", "spec.forProvider.networkProfile.outboundType", "loadBalancer"),
					fntest.Desires("nat", "nat-public-ip", "nat-subnet-association"),
					fntest.Warns("still sends its outbound traffic through the NAT gateway"))},
				{Name: "cluster reports the load balancer", Removes: []string{"nat", "nat-public-ip", "nat-subnet-association", "private-dns-zone", "private-dns-zone-link"}, World: func(w *fntest.World) {
					observe("cluster", "spec.forProvider.networkProfile.outboundType", "loadBalancer")(w)
					observe("cluster", "status.atProvider.networkProfile.outboundType", "loadBalancer")(w)
				}, Check: fntest.Lacks("nat", "nat-public-ip", "nat-subnet-association")},
			},
		},
		"GKEPrivateToPublicRefused": {
			Reason: "GKE keeps a running pool's nodes private when the cluster is made public (only new pools' default changes in place): privateCluster true to false is a Fatal naming the field, not a removal of the nodes' Cloud NAT and router.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.privateCluster", true)),
			Steps: []fntest.Step{converged,
				{Name: "public", Spec: fntest.Edit("spec.parameters.privateCluster", false),
					Fatal: `spec.parameters.privateCluster: Invalid value: false: GKE cluster "edge-2153p" runs private nodes (privateClusterConfig.enablePrivateNodes true)`},
				{Name: "back", Spec: fntest.Edit("spec.parameters.privateCluster", true), Check: fntest.All(fntest.Desires("nat", "router"), fntest.IsReady(true))},
			},
		},
		"GKEPublicToPrivateRefused": {
			Reason: "A public GKE cluster gets private nodes only with a control plane range, which GKE sets only at creation (ForceNew): a Fatal naming the field.",
			XR:     fntest.GCPXR(fntest.Set("spec.parameters.privateCluster", false)),
			Steps: []fntest.Step{converged,
				{Name: "private", Spec: fntest.Edit("spec.parameters.privateCluster", true),
					Fatal: `spec.parameters.privateCluster: Invalid value: true: GKE cluster "edge-2153p" runs public nodes`},
			},
		},
		"GKEEnvironmentPrivateRefused": {
			Reason: "The environment's privateCluster, which the XR does not set, is refused the same way, naming the environment's key.",
			XR:     fntest.GCPXR(),
			Steps: []fntest.Step{converged,
				{Name: "environment public", World: fntest.EnvEdit("cluster-platform-baseline", "privateCluster", false),
					Fatal: `environment.privateCluster: Invalid value: false: GKE cluster "edge-2153p" runs private nodes`},
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
