package azure

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// network renders the resource group, the virtual network and the node
// subnet (the first half of the network; pods use the overlay range).
func network(ctx *registry.Context, n platform.Network) ([]*registry.Resource, error) {
	nodes, err := platform.Subnet(n.CIDR, 1, 0)
	if err != nil {
		return nil, err
	}
	vnet := inGroup(ctx, true)
	vnet["addressSpace"] = []any{n.CIDR.String()}
	subnet := inGroup(ctx, false)
	subnet["virtualNetworkNameSelector"] = ctx.Selector(rNetwork)
	subnet["addressPrefixes"] = []any{nodes.String()}
	// Private nodes reach the internet only through the NAT gateway.
	subnet["defaultOutboundAccessEnabled"] = !n.Private
	return []*registry.Resource{
		{
			Name:         rResourceGroup,
			Kind:         resourceGroupKind,
			ExternalName: resourceGroupName(ctx),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"location": location(ctx),
				"tags":     tags(ctx),
			}}},
		},
		{
			Name:         rNetwork,
			Kind:         vnetKind,
			ExternalName: base(ctx) + "-vnet",
			Body:         object.Object{"spec": map[string]any{"forProvider": vnet}},
			DependsOn:    []string{rResourceGroup},
		},
		{
			Name:         rSubnet,
			Kind:         subnetKind,
			ExternalName: "nodes",
			Body:         object.Object{"spec": map[string]any{"forProvider": subnet}},
			DependsOn:    []string{rNetwork},
		},
	}, nil
}

// egress renders a NAT gateway with a static public IP for the node subnet.
// The public IP's association with the gateway is a kind of its own
// (NATGatewayPublicIPAssociation); environment key
// azure.natPublicIpAssociation: true composes it where the provider serves it.
func egress(ctx *registry.Context, _ platform.Egress) ([]*registry.Resource, error) {
	ip := inGroup(ctx, true)
	ip["allocationMethod"] = "Static"
	ip["sku"] = "Standard"
	nat := inGroup(ctx, true)
	nat["skuName"] = "Standard"
	nat["idleTimeoutInMinutes"] = 4
	out := []*registry.Resource{
		{
			Name:         rNATIP,
			Kind:         publicIPKind,
			ExternalName: base(ctx) + "-nat-ip",
			Body:         object.Object{"spec": map[string]any{"forProvider": ip}},
			DependsOn:    []string{rResourceGroup},
		},
		{
			Name:         rNAT,
			Kind:         natGatewayKind,
			ExternalName: base(ctx) + "-nat",
			Body:         object.Object{"spec": map[string]any{"forProvider": nat}},
			DependsOn:    []string{rResourceGroup},
		},
		{
			Name: rNATSubnet,
			Kind: natSubnetKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"natGatewayIdSelector": ctx.Selector(rNAT),
				"subnetIdSelector":     ctx.Selector(rSubnet),
			}}},
			DependsOn: []string{rNAT, rSubnet},
		},
	}
	if settingsOf(ctx.Env).NATPublicIPAssociation {
		out = append(out, &registry.Resource{
			Name: rNATIPAssoc,
			Kind: natIPKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"natGatewayIdSelector":      ctx.Selector(rNAT),
				"publicIpAddressIdSelector": ctx.Selector(rNATIP),
			}}},
			DependsOn: []string{rNAT, rNATIP},
		})
	}
	return out, nil
}
