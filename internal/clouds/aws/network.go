package aws

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// network renders the VPC with an internet gateway, a public and a private
// subnet per availability zone, and their route tables: the public one
// routes to the internet gateway; the private one gets its default route
// from egress.
func network(ctx *registry.Context, n cluster.Network) ([]*registry.Resource, error) {
	reg := n.Location
	out := []*registry.Resource{
		{
			Name: rNetwork,
			Kind: vpcKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":             reg,
				"cidrBlock":          n.CIDR.String(),
				"enableDnsHostnames": true,
				"enableDnsSupport":   true,
				"tags":               tags(ctx, base(ctx)),
			}}},
		},
		{
			Name: rInternetGateway,
			Kind: igwKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":        reg,
				"vpcIdSelector": ctx.Selector(rNetwork),
				"tags":          tags(ctx, base(ctx)),
			}}},
			DependsOn: []string{rNetwork},
		},
		routeTable(ctx, reg, rPublicRouteTable, base(ctx)+"-public"),
		{
			Name: rPublicRoute,
			Kind: routeKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":               reg,
				"destinationCidrBlock": "0.0.0.0/0",
				"routeTableIdSelector": ctx.Selector(rPublicRouteTable),
				"gatewayIdSelector":    ctx.Selector(rInternetGateway),
			}}},
			DependsOn: []string{rPublicRouteTable, rInternetGateway},
		},
		routeTable(ctx, reg, rPrivateRT, base(ctx)+"-private"),
	}
	for i, zone := range zones(ctx.Env, reg) {
		z := zoneID(reg, zone)
		for _, t := range []struct {
			tier   string
			index  int
			table  string
			public bool
			role   string
		}{
			{tierPrivate, i, rPrivateRT, false, "kubernetes.io/role/internal-elb"},
			{tierPublic, i + 1<<subnetBits/2, rPublicRouteTable, true, "kubernetes.io/role/elb"},
		} {
			cidr, err := cluster.Subnet(n.CIDR, subnetBits, t.index)
			if err != nil {
				return nil, fmt.Errorf("cannot carve the %s subnet of zone %s: %w", t.tier, zone, err)
			}
			name := subnetName(t.tier, z)
			tg := tags(ctx, base(ctx)+"-"+t.tier+"-"+z)
			tg[t.role] = "1"
			tg["kubernetes.io/cluster/"+base(ctx)] = "shared"
			out = append(out,
				&registry.Resource{
					Name: name,
					Kind: subnetKind,
					Body: object.Object{
						"metadata": map[string]any{"labels": map[string]any{labelTier: t.tier}},
						"spec": map[string]any{"forProvider": map[string]any{
							"region":              reg,
							"availabilityZone":    zone,
							"cidrBlock":           cidr.String(),
							"vpcIdSelector":       ctx.Selector(rNetwork),
							"mapPublicIpOnLaunch": t.public,
							"tags":                tg,
						}},
					},
					DependsOn: []string{rNetwork},
				},
				&registry.Resource{
					Name: name + "-route-table",
					Kind: rtAssociationKind,
					Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
						"region":               reg,
						"subnetIdSelector":     ctx.Selector(name),
						"routeTableIdSelector": ctx.Selector(t.table),
					}}},
					DependsOn: []string{name, t.table},
				})
		}
	}
	return out, nil
}

func routeTable(ctx *registry.Context, region, name, tag string) *registry.Resource {
	return &registry.Resource{
		Name: name,
		Kind: routeTableKind,
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"region":        region,
			"vpcIdSelector": ctx.Selector(rNetwork),
			"tags":          tags(ctx, tag),
		}}},
		DependsOn: []string{rNetwork},
	}
}

// egress renders an Elastic IP and a NAT gateway in the first public subnet,
// and the private route table's default route through it.
func egress(ctx *registry.Context, e cluster.Egress) ([]*registry.Resource, error) {
	reg := e.Location
	first := subnetName(tierPublic, zoneID(reg, zones(ctx.Env, reg)[0]))
	return []*registry.Resource{
		{
			Name: rNATIP,
			Kind: eipKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region": reg,
				"domain": "vpc",
				"tags":   tags(ctx, base(ctx)+"-nat"),
			}}},
		},
		{
			Name: rNAT,
			Kind: natGatewayKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":               reg,
				"connectivityType":     "public",
				"allocationIdSelector": ctx.Selector(rNATIP),
				"subnetIdSelector":     ctx.Selector(first),
				"tags":                 tags(ctx, base(ctx)),
			}}},
			// A NAT gateway needs the internet gateway attached.
			DependsOn: []string{rNATIP, first, rInternetGateway},
		},
		{
			Name: rPrivateRoute,
			Kind: routeKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"region":               reg,
				"destinationCidrBlock": "0.0.0.0/0",
				"routeTableIdSelector": ctx.Selector(rPrivateRT),
				"natGatewayIdSelector": ctx.Selector(rNAT),
			}}},
			DependsOn: []string{rPrivateRT, rNAT},
		},
	}, nil
}

// egressInUse says which EKS node groups still run in the private subnets,
// behind the NAT gateway, while the cluster is made public: they rotate to
// the public subnets (aws_eks_node_group.subnet_ids is ForceNew), and the
// NAT gateway and the private route stay until the last of them is gone,
// so that none loses its egress meanwhile. "" when none does, or the
// cluster composes no NAT gateway.
func egressInUse(observed map[string]*structpb.Struct) string {
	if observed[rNAT] == nil {
		return ""
	}
	var private []string
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		obs := observed[name]
		if object.String(obs, "kind") != nodeGroupKind.Kind || !strings.HasPrefix(object.String(obs, "apiVersion"), "eks.aws.") {
			continue
		}
		if object.String(obs, "spec", "forProvider", "subnetIdSelector", "matchLabels", labelTier) == tierPrivate {
			private = append(private, name)
		}
	}
	if len(private) == 0 {
		return ""
	}
	return fmt.Sprintf("node group(s) %s still run in the private subnets, behind the NAT gateway", strings.Join(private, ", "))
}
