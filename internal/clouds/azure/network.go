package azure

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// network renders the resource group, the virtual network and the node
// subnet (the first half of the network; pods use the overlay range).
func network(ctx *registry.Context, n cluster.Network) ([]*registry.Resource, error) {
	nodes, err := cluster.Subnet(n.CIDR, 1, 0)
	if err != nil {
		return nil, err
	}
	vnet := inGroup(ctx, n.Location)
	vnet["addressSpace"] = []any{n.CIDR.String()}
	subnet := inGroup(ctx, "")
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
				"location": n.Location,
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
func egress(ctx *registry.Context, e cluster.Egress) ([]*registry.Resource, error) {
	ip := inGroup(ctx, e.Location)
	ip["allocationMethod"] = "Static"
	ip["sku"] = "Standard"
	nat := inGroup(ctx, e.Location)
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

// egressInUse says whether the AKS cluster still sends its outbound traffic
// through the NAT gateway while it is made public: azurerm changes
// network_profile.outbound_type in place (kubernetes_cluster_resource.go:
// 1222-1233, update 2437-2447 at v4.80.0), and until the cluster reports
// loadBalancer, removing the gateway or its subnet association would cut
// the nodes' egress. "" once it does, or when no NAT gateway is composed.
func egressInUse(observed map[string]*structpb.Struct) string {
	cl := observed[rCluster]
	if observed[rNAT] == nil || cl == nil {
		return ""
	}
	out := object.String(cl, "status", "atProvider", "networkProfile", "outboundType")
	if out == "" {
		out = object.String(cl, "spec", "forProvider", "networkProfile", "outboundType")
	}
	if out != outboundNATGateway {
		return ""
	}
	return "the AKS cluster still sends its outbound traffic through the NAT gateway (networkProfile.outboundType " + outboundNATGateway + ")"
}
