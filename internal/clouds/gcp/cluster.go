package gcp

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"

	"google.golang.org/protobuf/types/known/structpb"
)

const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// managedCluster renders the GKE cluster: VPC-native, workload identity, private
// nodes when private, default node pool removed, kubeconfig written to the
// connection secret.
func managedCluster(ctx *registry.Context, c cluster.Cluster) ([]*registry.Resource, error) {
	s := settingsOf(ctx.Env)
	fp := map[string]any{
		"project":               ctx.XR.PlaneID,
		"location":              c.Location,
		"releaseChannel":        map[string]any{"channel": cmp.Or(s.ReleaseChannel, defaultReleaseChannel)},
		"removeDefaultNodePool": true,
		"initialNodeCount":      1,
		"deletionProtection":    s.DeletionProtection,
		"networkingMode":        "VPC_NATIVE",
		"networkSelector":       ctx.Selector(rNetwork),
		"subnetworkSelector":    ctx.Selector(rSubnet),
		"ipAllocationPolicy": map[string]any{
			"clusterSecondaryRangeName":  podsRange,
			"servicesSecondaryRangeName": servicesRange,
		},
		"workloadIdentityConfig": map[string]any{"workloadPool": ctx.XR.PlaneID + ".svc.id.goog"},
		"resourceLabels":         map[string]any{"managed-by": "crossplane", "cluster": base(ctx)},
	}
	if c.Version != "" {
		// None while the cluster exists but reports no version yet.
		fp["minMasterVersion"] = c.Version
	}
	if w := c.Maintenance; w != nil {
		fp["maintenancePolicy"] = maintenancePolicy(*w)
	}
	if pcc := privateClusterConfig(ctx, c); pcc != nil {
		fp["privateClusterConfig"] = pcc
	}
	project, location, name := ctx.XR.PlaneID, c.Location, base(ctx)
	return []*registry.Resource{{
		Name:         rCluster,
		Kind:         clusterKind,
		ExternalName: name,
		Body: object.Object{"spec": map[string]any{
			"forProvider": fp,
			// The default node pool, removed once the cluster exists, runs
			// as the node service account. Its node_config replaces the
			// cluster in Terraform once the pool is gone (an empty block on
			// GKE), so it is set at creation only: upjet drops a diff of
			// initProvider alone.
			"initProvider": map[string]any{"nodeConfig": map[string]any{
				"serviceAccountSelector": ctx.Selector(rServiceAccount),
				"oauthScopes":            []any{cloudPlatformScope},
			}},
			"writeConnectionSecretToRef": ctx.ConnectionSecretRef(kube.KubeconfigSecretName(ctx)),
		}},
		DependsOn: []string{rNetwork, rSubnet, rServiceAccount},
		Outputs: func(obs *structpb.Struct, conn map[string][]byte, o *registry.Outputs) {
			o.Kubeconfig = conn[kube.KubeconfigKey]
			ep := object.String(obs, "status", "atProvider", "endpoint")
			if ep == "" {
				return
			}
			o.ClusterEndpoint = "https://" + ep
			o.ClusterCA = object.String(obs, "status", "atProvider", "masterAuth", "clusterCaCertificate")
			o.OIDCIssuer = "https://container.googleapis.com/v1/projects/" + project + "/locations/" + location + "/clusters/" + name
		},
	}}, nil
}

// privateClusterConfig is the GKE cluster's private cluster config, nil
// for a public cluster that runs public nodes. A private cluster has
// private nodes, its endpoint as the environment's privateEndpoint says,
// and the control plane's range.
//
// A cluster made public that runs private nodes is walked, not refused:
// its endpoint opens in place, its nodes stay private, behind the Cloud
// NAT the cluster module keeps for them (egressInUse). In
// terraform-provider-google v7.39.0 private_cluster_config.
// enable_private_endpoint is no ForceNew field and goes to GKE as
// DesiredControlPlaneEndpointsConfig (google/services/container/
// resource_container_cluster.go:2016-2022, update 3719-3734@v7.39.0),
// with master_authorized_networks_config as it runs (Optional and
// Computed, :1513-1520; no field of the XR sets it on GCP).
// enable_private_nodes stays true: false would only change the default of
// new node pools (DesiredDefaultEnablePrivateNodes, :3736-3752; in place
// since v7.13.0, ForceNew before), while the running pools keep private
// nodes (google_container_node_pool.network_config.enable_private_nodes,
// resource_container_node_pool.go:550-555@v7.39.0): new pools would get
// public nodes beside the private ones. master_ipv4_cidr_block is ForceNew
// (:2030-2038): it stays the range the cluster runs with.
func privateClusterConfig(ctx *registry.Context, c cluster.Cluster) map[string]any {
	if c.Private {
		return map[string]any{
			"enablePrivateNodes":    true,
			"enablePrivateEndpoint": c.PrivateEndpoint,
			"masterIpv4CidrBlock":   cmp.Or(settingsOf(ctx.Env).ControlPlaneCIDR, defaultControlPlaneCIDR),
		}
	}
	obs := ctx.Observed(rCluster)
	if running, _ := privateNodes(obs); !running {
		return nil
	}
	out := map[string]any{"enablePrivateNodes": true, "enablePrivateEndpoint": false}
	if cidr := observedControlPlaneCIDR(obs); cidr != "" {
		out["masterIpv4CidrBlock"] = cidr
	}
	return out
}

// observedControlPlaneCIDR is the control plane's range the observed GKE
// cluster runs with: what its provider reports, else what it asks for.
func observedControlPlaneCIDR(obs *structpb.Struct) string {
	return cmp.Or(object.String(obs, "status", "atProvider", "privateClusterConfig", "masterIpv4CidrBlock"),
		object.String(obs, "spec", "forProvider", "privateClusterConfig", "masterIpv4CidrBlock"))
}

// checkPrivateNodes refuses to make a running GKE cluster that runs public
// nodes private: spec.parameters.privateCluster (or the environment's
// privateCluster) against what the observed cluster runs. The other way is
// walked (privateClusterConfig).
//
// Of public to private, terraform-provider-google v7.39.0 changes in place
// only the cluster's default for new node pools
// (private_cluster_config.enable_private_nodes, google/services/container/
// resource_container_cluster.go:2023-2029, update 3736-3752@v7.39.0) and
// the endpoint (:3719-3734). The running pools keep their public nodes,
// which the function does not move, and the control plane's range of a
// private cluster, private_cluster_config.master_ipv4_cidr_block, is
// ForceNew (:2030-2038): GKE sets it only when it creates a cluster, and
// the provider would refuse the update forever. Doing the part GKE allows
// would leave the running nodes on the internet under an XR that asks for
// private ones, so the change is a Fatal naming the field.
func checkPrivateNodes(ctx *registry.Context, c cluster.Cluster) field.ErrorList {
	obs := ctx.Observed(rCluster)
	if obs == nil || ctx.XR.Deleting || !c.Private {
		return nil
	}
	running, known := privateNodes(obs)
	if !known || running {
		return nil
	}
	path := c.PrivatePath
	return field.ErrorList{field.Invalid(path, c.Private, fmt.Sprintf(
		"GKE cluster %q runs public nodes (no private cluster config), and %s now asks for private ones: GKE would change in place only the default of new node pools and the endpoint, the running pools would keep their public nodes, and a private cluster's control plane range, privateClusterConfig.masterIpv4CidrBlock, is set only when GKE creates a cluster (google_container_cluster.private_cluster_config.master_ipv4_cidr_block is ForceNew): restore false, or create a new Cluster",
		base(ctx), path))}
}

// privateNodes reports whether the observed GKE cluster runs private nodes:
// what the provider reports (status.atProvider.privateClusterConfig), else
// what the resource asks for. known is false while the cluster reports
// nothing and asks for nothing about it (an import not observed yet).
func privateNodes(obs *structpb.Struct) (private, known bool) {
	for _, at := range [][]string{{"status", "atProvider"}, {"spec", "forProvider"}} {
		if v := object.Get(obs, append(at, "privateClusterConfig", "enablePrivateNodes")...); v != nil {
			return v.GetBoolValue(), true
		}
	}
	// A public cluster has no private cluster config at all.
	return false, len(object.Get(obs, "status", "atProvider").GetStructValue().GetFields()) > 0
}

// maintenanceAnchor is the day a weekly maintenance window's recurrence
// starts from: any past date does (GKE repeats it on the RRULE's days),
// and a fixed one keeps the render the same on every call.
const maintenanceAnchor = "2025-01-06" // a Monday

// maintenancePolicy is GKE's recurring window for a weekly one: its start
// and end on the anchor date, repeated weekly on the window's day.
func maintenancePolicy(w cluster.Maintenance) map[string]any {
	start, _ := time.Parse("2006-01-02 15:04", maintenanceAnchor+" "+w.Start)
	end := start.Add(time.Duration(w.Hours) * time.Hour)
	return map[string]any{"recurringWindow": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"endTime":    end.Format(time.RFC3339),
		"recurrence": "FREQ=WEEKLY;BYDAY=" + strings.ToUpper(w.Day[:2]),
	}}
}

// onReleaseChannel reports whether the cluster is on a release channel, on
// which GKE upgrades the control plane and auto-upgrades the pools itself
// (auto-upgrade cannot be turned off there); releaseChannel UNSPECIFIED
// pins versions, which the function then walks.
func onReleaseChannel(env *envcfg.Env) bool {
	return cmp.Or(settingsOf(env).ReleaseChannel, defaultReleaseChannel) != unspecifiedChannel
}

// nodePool renders a GKE node pool: autoscaled between its bounds (per zone
// for regional clusters), auto-repaired, surge-upgraded one node at a time
// with no node unavailable, auto-upgraded on a release channel and at the
// lifecycle's version when versions are pinned, with workload identity
// through the GKE metadata server.
func nodePool(ctx *registry.Context, p cluster.NodePool) ([]*registry.Resource, error) {
	minNodes, maxNodes := p.Bounds()
	nc := map[string]any{
		"machineType":            p.MachineType,
		"spot":                   p.Spot,
		"diskSizeGb":             p.DiskSizeGB,
		"diskType":               "pd-balanced",
		"labels":                 object.FromStringMap(p.Labels),
		"serviceAccountSelector": ctx.Selector(rServiceAccount),
		"oauthScopes":            []any{cloudPlatformScope},
		"workloadMetadataConfig": map[string]any{"mode": "GKE_METADATA"},
		"shieldedInstanceConfig": map[string]any{"enableSecureBoot": true, "enableIntegrityMonitoring": true},
	}
	if len(p.Taints) > 0 {
		taints := make([]any, 0, len(p.Taints))
		for _, t := range p.Taints {
			taints = append(taints, map[string]any{"key": t.Key, "value": t.Value, "effect": t.ConstantEffect()})
		}
		nc["taint"] = taints
	}
	deps := []string{rCluster, rServiceAccount}
	if p.Private {
		// Private nodes pull images through Cloud NAT.
		deps = append(deps, rNAT)
	}
	fp := map[string]any{
		"project":         ctx.XR.PlaneID,
		"location":        p.Location,
		"clusterSelector": ctx.Selector(rCluster),
		"autoscaling":     map[string]any{"minNodeCount": minNodes, "maxNodeCount": maxNodes},
		"management":      map[string]any{"autoRepair": true, "autoUpgrade": onReleaseChannel(ctx.Env)},
		"upgradeSettings": map[string]any{"strategy": "SURGE", "maxSurge": 1, "maxUnavailable": 0},
		"nodeConfig":      nc,
	}
	if p.Version != "" {
		fp["version"] = p.Version
	}
	return []*registry.Resource{{
		Name:         cluster.NodePoolResource(p),
		Kind:         nodePoolKind,
		ExternalName: p.CloudName(p.Name, xr.MaxPoolNameLength, "-"),
		Body: object.Object{"spec": map[string]any{
			"forProvider": fp,
			// The initial size matters only at creation; afterwards the
			// autoscaler owns the node count.
			"initProvider": map[string]any{"initialNodeCount": p.Initial()},
		}},
		DependsOn: deps,
	}}, nil
}
