package azure

import (
	"cmp"
	"encoding/base64"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// connCA is the connection detail provider-upjet-azure writes the cluster
// CA certificate to.
const connCA = "kubeconfig.clustercacertificate"

// Spot node pools carry this label and taint; AKS sets them, so they are
// declared to keep the desired state in agreement with what AKS reports.
const (
	spotKey   = "kubernetes.azure.com/scalesetpriority"
	spotTaint = spotKey + "=spot:NoSchedule"
)

// outboundNATGateway is the outbound type of a private cluster's nodes:
// through the NAT gateway composed for them.
const outboundNATGateway = "userAssignedNATGateway"

// managedCluster renders the AKS cluster: a system node pool for critical add-ons,
// the control-plane identity, OIDC issuer and workload identity, Azure CNI
// overlay, egress through the NAT gateway when private, and its kubeconfig
// in the connection secret.
func managedCluster(ctx *registry.Context, c cluster.Cluster) ([]*registry.Resource, error) {
	n := c.Network
	sys := settingsOf(ctx.Env).SystemPool
	// validate made sure the system pool has a VM size.
	vmSize := systemVMSize(ctx.Env)
	outbound := "loadBalancer"
	deps := []string{rSubnet, rIdentity, rRoleAssignment}
	if c.Private {
		outbound = outboundNATGateway
		deps = append(deps, rNATSubnet)
	}
	fp := inGroup(ctx, c.Location)
	fp["dnsPrefix"] = base(ctx)
	if c.Version != "" {
		// None while the cluster exists but reports no version yet.
		fp["kubernetesVersion"] = c.Version
	}
	if w := c.Maintenance; w != nil {
		// The same weekly window for AKS's automatic patch upgrades of
		// the cluster and for its node image upgrades.
		fp["maintenanceWindowAutoUpgrade"] = maintenanceWindow(*w)
		fp["maintenanceWindowNodeOs"] = maintenanceWindow(*w)
	}
	fp["skuTier"] = cmp.Or(settingsOf(ctx.Env).SKUTier, defaultSKUTier)
	fp["automaticUpgradeChannel"] = "patch"
	fp["nodeOsUpgradeChannel"] = "NodeImage"
	fp["roleBasedAccessControlEnabled"] = true
	fp["oidcIssuerEnabled"] = true
	fp["workloadIdentityEnabled"] = true
	fp["privateClusterEnabled"] = c.PrivateEndpoint
	fp["identity"] = map[string]any{
		"type":                "UserAssigned",
		"identityIdsSelector": ctx.Selector(rIdentity),
	}
	dnp := map[string]any{
		"name":                      systemPoolName,
		"temporaryNameForRotation":  systemPoolName + "tmp",
		"vmSize":                    vmSize,
		"autoScalingEnabled":        true,
		"minCount":                  envcfg.Or(sys.MinNodes, defaultSystemMin),
		"maxCount":                  envcfg.Or(sys.MaxNodes, defaultSystemMax),
		"onlyCriticalAddonsEnabled": true,
		"vnetSubnetIdSelector":      ctx.Selector(rSubnet),
		"osDiskSizeGb":              64,
		"upgradeSettings":           map[string]any{"maxSurge": "10%"},
	}
	if v := c.PoolVersions[systemPoolName]; v != "" {
		dnp["orchestratorVersion"] = v
	}
	fp["defaultNodePool"] = dnp
	fp["networkProfile"] = map[string]any{
		"networkPlugin":     "azure",
		"networkPluginMode": "overlay",
		"networkDataPlane":  "cilium",
		"networkPolicy":     cmp.Or(settingsOf(ctx.Env).NetworkPolicy, defaultNetworkPolicy),
		"podCidr":           n.PodsCIDR.String(),
		"serviceCidr":       n.ServicesCIDR.String(),
		"dnsServiceIp":      cluster.HostAddress(n.ServicesCIDR, 10).String(),
		"loadBalancerSku":   "standard",
		"outboundType":      outbound,
	}
	private := c.PrivateEndpoint
	return []*registry.Resource{{
		Name:         rCluster,
		Kind:         clusterKind,
		ExternalName: base(ctx),
		Body: object.Object{"spec": map[string]any{
			"forProvider":                fp,
			"writeConnectionSecretToRef": ctx.ConnectionSecretRef(kube.KubeconfigSecretName(ctx)),
		}},
		DependsOn: deps,
		Outputs: func(obs *structpb.Struct, conn map[string][]byte, o *registry.Outputs) {
			o.Kubeconfig = conn[kube.KubeconfigKey]
			fqdn := object.String(obs, "status", "atProvider", "fqdn")
			if private {
				fqdn = object.String(obs, "status", "atProvider", "privateFqdn")
			}
			if fqdn != "" {
				o.ClusterEndpoint = "https://" + fqdn + ":443"
			}
			if ca := conn[connCA]; len(ca) > 0 {
				o.ClusterCA = base64.StdEncoding.EncodeToString(ca)
			}
			o.OIDCIssuer = object.String(obs, "status", "atProvider", "oidcIssuerUrl")
		},
	}}, nil
}

// maintenanceWindow is an AKS weekly maintenance window, in UTC.
func maintenanceWindow(w cluster.Maintenance) map[string]any {
	return map[string]any{
		"frequency": "Weekly",
		"interval":  1,
		"dayOfWeek": w.Day,
		"startTime": w.Start,
		"duration":  w.Hours,
		"utcOffset": "+00:00",
	}
}

// nodePool renders an autoscaled user node pool in the node subnet, at the
// lifecycle's version, surging a third of its nodes on an upgrade; spot
// pools are evicted by deletion at any price (AKS takes no surge settings
// for them). Its initial size is set only at creation so that the
// autoscaler owns the count.
func nodePool(ctx *registry.Context, p cluster.NodePool) ([]*registry.Resource, error) {
	minNodes, maxNodes := p.Bounds()
	labels := object.FromStringMap(p.Labels)
	taints := make([]any, 0, len(p.Taints)+1)
	for _, t := range p.Taints {
		taints = append(taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	fp := map[string]any{
		"kubernetesClusterIdSelector": ctx.Selector(rCluster),
		"vmSize":                      p.MachineType,
		"mode":                        "User",
		"autoScalingEnabled":          true,
		"minCount":                    minNodes,
		"maxCount":                    maxNodes,
		"vnetSubnetIdSelector":        ctx.Selector(rSubnet),
		"osDiskSizeGb":                p.DiskSizeGB,
		"tags":                        tags(ctx),
	}
	if p.Version != "" {
		fp["orchestratorVersion"] = p.Version
	}
	if !p.Spot {
		fp["upgradeSettings"] = map[string]any{"maxSurge": "33%"}
	}
	if p.Spot {
		fp["priority"] = "Spot"
		fp["evictionPolicy"] = "Delete"
		fp["spotMaxPrice"] = -1
		labels[spotKey] = "spot"
		taints = append(taints, spotTaint)
	}
	fp["nodeLabels"] = labels
	if len(taints) > 0 {
		fp["nodeTaints"] = taints
	}
	return []*registry.Resource{{
		Name:         cluster.NodePoolResource(p),
		Kind:         nodePoolKind,
		ExternalName: p.CloudName(poolCloudName(p.Name), maxPoolName, ""),
		Body: object.Object{"spec": map[string]any{
			"forProvider":  fp,
			"initProvider": map[string]any{"nodeCount": p.Initial()},
		}},
		DependsOn: []string{rCluster},
	}}, nil
}
