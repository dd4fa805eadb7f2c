package gcp

import (
	"cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"

	"google.golang.org/protobuf/types/known/structpb"
)

const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// cluster renders the GKE cluster: VPC-native, workload identity, private
// nodes when private, default node pool removed, kubeconfig written to the
// connection secret.
func cluster(ctx *registry.Context, c platform.Cluster) ([]*registry.Resource, error) {
	s := settingsOf(ctx.Env)
	fp := map[string]any{
		"project":               ctx.XR.PlaneID,
		"location":              c.Location,
		"minMasterVersion":      c.Version,
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
		"nodeConfig": map[string]any{
			"serviceAccountSelector": ctx.Selector(rServiceAccount),
			"oauthScopes":            []any{cloudPlatformScope},
		},
		"resourceLabels": map[string]any{"managed-by": "crossplane", "cluster": base(ctx)},
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
			"forProvider":                fp,
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

// nodePool renders a GKE node pool: autoscaled between its bounds (per zone
// for regional clusters), auto-repaired and upgraded, with workload identity
// through the GKE metadata server.
func nodePool(ctx *registry.Context, p platform.NodePool) ([]*registry.Resource, error) {
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
	if ctx.Plan.Cluster.Private {
		// Private nodes pull images through Cloud NAT.
		deps = append(deps, rNAT)
	}
	return []*registry.Resource{{
		Name:         registry.NodePoolResource(p.Name),
		Kind:         nodePoolKind,
		ExternalName: p.Name,
		Body: object.Object{"spec": map[string]any{
			"forProvider": map[string]any{
				"project":         ctx.XR.PlaneID,
				"location":        ctx.Plan.Cluster.Location,
				"clusterSelector": ctx.Selector(rCluster),
				"autoscaling":     map[string]any{"minNodeCount": minNodes, "maxNodeCount": maxNodes},
				"management":      map[string]any{"autoRepair": true, "autoUpgrade": true},
				"nodeConfig":      nc,
			},
			// The initial size matters only at creation; afterwards the
			// autoscaler owns the node count.
			"initProvider": map[string]any{"initialNodeCount": p.MinNodes},
		}},
		DependsOn: deps,
	}}, nil
}
