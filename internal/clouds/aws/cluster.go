package aws

import (
	"cmp"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// EKS add-ons, in the order they are needed: networking before nodes join,
// the rest once nodes run.
const (
	addonVPCCNI      = "vpc-cni"
	addonKubeProxy   = "kube-proxy"
	addonPodIdentity = "eks-pod-identity-agent"
	addonCoreDNS     = "coredns"
	addonEBSCSI      = "aws-ebs-csi-driver"
)

func addonName(name string) string { return rAddonPrefix + name }

// managedCluster renders the EKS cluster, the ClusterAuth that writes its
// kubeconfig, the add-ons, EKS Pod Identity for the EBS CSI driver, and an
// access entry per admin principal of environment key aws.admins.
func managedCluster(ctx *registry.Context, c cluster.Cluster) ([]*registry.Resource, error) {
	reg := c.Location
	vpc := map[string]any{
		"subnetIdSelector":      tierSelector(tierPrivate),
		"endpointPrivateAccess": true,
		"endpointPublicAccess":  !c.PrivateEndpoint,
	}
	if cidrs := settingsOf(ctx.Env).APIAllowedCIDRs; len(cidrs) > 0 && !c.PrivateEndpoint {
		vpc["publicAccessCidrs"] = object.FromStrings(cidrs)
	}
	deps := append([]string{}, attachments(rClusterRole)...)
	for _, z := range zones(ctx.Env, reg) {
		deps = append(deps, subnetName(tierPrivate, zoneID(reg, z)))
	}
	if c.Maintenance != nil {
		ctx.Warn("spec.parameters.maintenance is not applied on AWS: EKS has no maintenance window; the control plane and node groups move only when spec.parameters.version does (EKS upgrades a control plane itself only at the end of its extended support)")
	}
	out := []*registry.Resource{
		{
			Name:         rCluster,
			Kind:         clusterKind,
			ExternalName: base(ctx),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":          reg,
				"roleArnSelector": ctx.Selector(rClusterRole),
				"vpcConfig":       vpc,
				"accessConfig": map[string]any{
					"authenticationMode": "API",
					// The provider's identity administers the cluster
					// through ClusterAuth.
					"bootstrapClusterCreatorAdminPermissions": true,
				},
				"kubernetesNetworkConfig": map[string]any{
					"ipFamily":        "ipv4",
					"serviceIpv4Cidr": c.Network.ServicesCIDR.String(),
				},
				// The add-ons below are managed resources of their own.
				"bootstrapSelfManagedAddons": false,
				"enabledClusterLogTypes":     []any{"api", "audit", "authenticator"},
				"tags":                       tags(ctx, base(ctx)),
			}}},
			DependsOn: deps,
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				at := object.Get(obs, "status", "atProvider").GetStructValue()
				o.ClusterEndpoint = object.String(at, "endpoint")
				o.ClusterCA = object.String(object.First(at, "certificateAuthority"), "data")
				o.OIDCIssuer = object.String(object.First(object.First(at, "identity"), "oidc"), "issuer")
			},
		},
		{
			Name: rClusterAuth,
			Kind: clusterAuthKind,
			Body: object.Object{"spec": map[string]any{
				"forProvider": map[string]any{
					"region":              reg,
					"clusterNameSelector": ctx.Selector(rCluster),
				},
				"writeConnectionSecretToRef": ctx.ConnectionSecretRef(kube.KubeconfigSecretName(ctx)),
			}},
			DependsOn: []string{rCluster},
			Outputs: func(_ *structpb.Struct, conn map[string][]byte, o *registry.Outputs) {
				o.Kubeconfig = conn[kube.KubeconfigKey]
			},
		},
	}

	if c.Version != "" {
		// None while the cluster exists but reports no version yet.
		out[0].Body["spec"].(map[string]any)["forProvider"].(map[string]any)["version"] = c.Version
	}

	pools := kube.NodePoolResources(ctx, c.Pools)
	for _, a := range []struct {
		name string
		deps []string
	}{
		{addonVPCCNI, []string{rCluster}},
		{addonKubeProxy, []string{rCluster}},
		{addonPodIdentity, []string{rCluster}},
		{addonCoreDNS, append([]string{rCluster}, pools...)},
		{addonEBSCSI, append([]string{rCluster, rEBSPodIdentity}, pools...)},
	} {
		fp := map[string]any{
			"region":                   reg,
			"addonName":                a.name,
			"clusterNameSelector":      ctx.Selector(rCluster),
			"resolveConflictsOnCreate": "OVERWRITE",
			"resolveConflictsOnUpdate": "OVERWRITE",
			"tags":                     tags(ctx, base(ctx)+"-"+a.name),
		}
		if v := addonVersion(ctx, c, a.name); v != "" {
			fp["addonVersion"] = v
		}
		out = append(out, &registry.Resource{
			Name:         addonName(a.name),
			Kind:         addonKind,
			ExternalName: a.name,
			Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
			DependsOn:    a.deps,
		})
	}

	out = append(out, &registry.Resource{
		Name: rEBSPodIdentity,
		Kind: podIdentityKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":              reg,
			"clusterNameSelector": ctx.Selector(rCluster),
			"namespace":           "kube-system",
			"serviceAccount":      "ebs-csi-controller-sa",
			"roleArnSelector":     ctx.Selector(rEBSRole),
			"tags":                tags(ctx, base(ctx)+"-ebs-csi"),
		}}},
		DependsOn: append([]string{rCluster, addonName(addonPodIdentity)}, attachments(rEBSRole)...),
	})

	for _, arn := range settingsOf(ctx.Env).Admins {
		out = append(out, &registry.Resource{
			Name: accessEntryName(arn),
			Kind: accessEntryKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":              reg,
				"clusterNameSelector": ctx.Selector(rCluster),
				"principalArn":        arn,
				"type":                "STANDARD",
				"kubernetesGroups":    []any{adminGroup},
				"tags":                tags(ctx, base(ctx)+"-admin"),
			}}},
			DependsOn: []string{rCluster},
		})
	}
	return out, nil
}

// addonVersion is the build of an EKS add-on for the minor the control
// plane runs: aws.addons.<name>.versions.<minor>; without a versions map,
// the one build aws.addons.<name>.version (which an add-on follows when it
// changes). An add-on moves to the build for a new minor only once the
// control plane runs it; an existing add-on whose build for that minor the
// environment does not map keeps the build it has, with a warning, rather
// than one made for another minor.
func addonVersion(ctx *registry.Context, c cluster.Cluster, name string) string {
	a := settingsOf(ctx.Env).Addons[name]
	if v := a.Versions[c.Running]; v != "" {
		return v
	}
	if len(a.Versions) == 0 && a.Version != "" {
		return a.Version
	}
	if have := object.String(ctx.Observed(addonName(name)), "spec", "forProvider", "addonVersion"); have != "" {
		ctx.Warn("EKS add-on %s stays at %s: the environment maps no build of it for Kubernetes %s (aws.addons.%s.versions.%q)", name, have, c.Running, name, c.Running)
		return have
	}
	if a.Version == "" {
		ctx.Env.Need(Name, envAddons, name, "versions", c.Running)
	}
	return a.Version
}

// accessEntryName names an admin principal's access entry after the last
// segment of its ARN: arn:aws:iam::1:role/platform-admins becomes
// access-entry-platform-admins.
func accessEntryName(arn string) string {
	seg := arn
	for i := len(arn) - 1; i >= 0; i-- {
		if arn[i] == '/' || arn[i] == ':' {
			seg = arn[i+1:]
			break
		}
	}
	return rAccessPrefix + names.Normalise(seg)
}

// maxNodeGroupName is EKS's limit on node group names.
const maxNodeGroupName = 63

// nodePool renders an EKS managed node group in the node subnets, scaled
// between its bounds, at the lifecycle's version; its initial size is set
// only at creation so that the cluster autoscaler owns the count.
func nodePool(ctx *registry.Context, p cluster.NodePool) ([]*registry.Resource, error) {
	minNodes, maxNodes := p.Bounds()
	capacity := "ON_DEMAND"
	if p.Spot {
		capacity = "SPOT"
	}
	fp := map[string]any{
		"region":              p.Location,
		"clusterNameSelector": ctx.Selector(rCluster),
		"nodeRoleArnSelector": ctx.Selector(rNodeRole),
		"version":             p.Version,
		"subnetIdSelector":    tierSelector(nodeTier(p.Private)),
		"instanceTypes":       []any{p.MachineType},
		"capacityType":        capacity,
		"amiType":             cmp.Or(settingsOf(ctx.Env).AMIType, defaultAMIType),
		"diskSize":            p.DiskSizeGB,
		"labels":              object.FromStringMap(p.Labels),
		"scalingConfig":       map[string]any{"minSize": minNodes, "maxSize": maxNodes},
		// An upgrade replaces one node at a time (EKS surges up to
		// twice the zones' count and drains honouring PDBs).
		"updateConfig": map[string]any{"maxUnavailable": 1},
		"tags":         tags(ctx, base(ctx)+"-"+p.Name),
	}
	if len(p.Taints) > 0 {
		taints := make([]any, 0, len(p.Taints))
		for _, t := range p.Taints {
			taints = append(taints, map[string]any{"key": t.Key, "value": t.Value, "effect": t.ConstantEffect()})
		}
		fp["taint"] = taints
	}
	deps := append([]string{rCluster, addonName(addonVPCCNI), addonName(addonKubeProxy)}, attachments(rNodeRole)...)
	if p.Private {
		// Private nodes pull images through the NAT gateway.
		deps = append(deps, rPrivateRoute)
	}
	if p.Version == "" {
		delete(fp, "version")
	}
	if ids := nodeSubnets(ctx, p); ids != nil {
		fp["subnetIds"] = ids
	}
	return []*registry.Resource{{
		Name:         cluster.NodePoolResource(p),
		Kind:         nodeGroupKind,
		ExternalName: p.CloudName(p.Name, maxNodeGroupName, "-"),
		Body: object.Object{"spec": map[string]any{
			"forProvider":  fp,
			"initProvider": map[string]any{"scalingConfig": map[string]any{"desiredSize": p.Initial()}},
		}},
		DependsOn: deps,
	}}, nil
}

// nodeSubnets are the IDs of the node subnets of the environment's zones
// (aws.zones.<region>) when a generation of the pool runs in other subnets,
// else nil. A node group's subnetIdSelector is resolved once, when it is
// created (crossplane-runtime resolves a selector only while the field is
// empty), so a zone added to or removed from the environment would never
// reach it: the group would stay in the zones it was created in, with no
// word of it. EKS changes a node group's subnets only by replacing it
// (aws_eks_node_group.subnet_ids is ForceNew, internal/service/eks/
// node_group.go:306-312 at terraform-provider-aws v6.34.0), so the pool
// rotates: its new generation is created with these IDs, beside the old
// one, which goes once the new one is Ready. Nil too until every subnet of
// the zones is observed with its ID (a new zone's subnets are created
// first), and for a pool none of whose generations reports its subnets.
//
// The cluster's own vpcConfig keeps the subnets it was created with: EKS
// updates a cluster's subnets in place (UpdateClusterConfig,
// internal/service/eks/cluster.go:479-484, 885-894 at v6.34.0), but only
// within the Availability Zones the cluster was created in (Amazon EKS
// User Guide, "View Amazon EKS networking requirements for VPC and
// subnets"): its control plane stays in its zones, which nodes in a new
// zone reach through the VPC.
func nodeSubnets(ctx *registry.Context, p cluster.NodePool) []any {
	reg := p.Location
	tier := nodeTier(p.Private)
	var want []string
	for _, z := range zones(ctx.Env, reg) {
		obs := ctx.Observed(subnetName(tier, zoneID(reg, z)))
		id := object.String(obs, "status", "atProvider", "id")
		if id == "" || !object.IsConditionTrue(obs, "Ready") {
			return nil
		}
		want = append(want, id)
	}
	for _, g := range ctx.Generations(cluster.PoolID(p.Name)) {
		obs := ctx.Observed(g)
		have := object.Strings(obs, "spec", "forProvider", "subnetIds")
		if len(have) == 0 {
			have = object.Strings(obs, "status", "atProvider", "subnetIds")
		}
		if len(have) > 0 && !sameSet(have, want) {
			return object.FromStrings(want)
		}
	}
	return nil
}

// sameSet reports whether two lists hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}
