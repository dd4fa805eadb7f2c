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
	if c.Private {
		fp["privateClusterConfig"] = map[string]any{
			"enablePrivateNodes":    true,
			"enablePrivateEndpoint": c.PrivateEndpoint,
			"masterIpv4CidrBlock":   cmp.Or(s.ControlPlaneCIDR, defaultControlPlaneCIDR),
		}
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

// checkPrivateNodes refuses to make a running GKE cluster's nodes public or
// private: spec.parameters.privateCluster (or the environment's
// privateCluster) against what the observed cluster runs.
//
// Private to public: terraform-provider-google v7.39.0 updates
// private_cluster_config.enable_private_nodes in place (not ForceNew:
// google/services/container/resource_container_cluster.go:2023-2029), but
// only as the cluster's default for new node pools
// (DesiredDefaultEnablePrivateNodes, :3736-3753); the running pools keep
// private nodes (google_container_node_pool.network_config.
// enable_private_nodes, resource_container_node_pool.go:550-555, updated
// pool by pool, :1918-1922). Dropping the block changes nothing at all:
// the provider late-initializes it again. Either way the nodes stay
// private while a public cluster no longer composes their egress (Cloud
// Router and NAT): they would lose it. Public to private needs the control
// plane's range, private_cluster_config.master_ipv4_cidr_block, which is
// ForceNew (:2030-2034): the provider would refuse the update forever. The
// function walks neither, so both are a Fatal naming the field.
func checkPrivateNodes(ctx *registry.Context, c cluster.Cluster) field.ErrorList {
	obs := ctx.Observed(rCluster)
	if obs == nil || ctx.XR.Deleting {
		return nil
	}
	running, known := privateNodes(obs)
	if !known || running == c.Private {
		return nil
	}
	path := c.PrivatePath
	if running {
		return field.ErrorList{field.Invalid(path, c.Private, fmt.Sprintf(
			"GKE cluster %q runs private nodes (privateClusterConfig.enablePrivateNodes true), and %s now asks for public ones: GKE changes in place only the default of new node pools, the running pools keep their private nodes, and they would lose their egress (the Cloud Router and NAT a public cluster does not compose); the function does not walk the pools across: restore true, or create a new Cluster",
			base(ctx), path))}
	}
	return field.ErrorList{field.Invalid(path, c.Private, fmt.Sprintf(
		"GKE cluster %q runs public nodes (no private cluster config), and %s now asks for private ones: they need the control plane's range privateClusterConfig.masterIpv4CidrBlock, which GKE sets only when it creates a cluster (google_container_cluster.private_cluster_config.master_ipv4_cidr_block is ForceNew): restore false, or create a new Cluster",
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
