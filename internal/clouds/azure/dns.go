package azure

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// dnsZone renders a public Azure DNS zone, or a private DNS zone linked to
// the virtual network.
func dnsZone(ctx *registry.Context, z cluster.DNSZone) ([]*registry.Resource, error) {
	fp := inGroup(ctx, "")
	fp["tags"] = tags(ctx)
	if !z.Private {
		return []*registry.Resource{{
			Name:         rPublicZone,
			Kind:         dnsZoneKind,
			ExternalName: z.Domain,
			Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
			DependsOn:    []string{rResourceGroup},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				o.DNSNameServers = object.Strings(obs, "status", "atProvider", "nameServers")
			},
		}}, nil
	}
	link := inGroup(ctx, "")
	link["tags"] = tags(ctx)
	link["privateDnsZoneNameSelector"] = ctx.Selector(rPrivateZone)
	link["virtualNetworkIdSelector"] = ctx.Selector(rNetwork)
	link["registrationEnabled"] = false
	return []*registry.Resource{
		{
			Name:         rPrivateZone,
			Kind:         privateZoneKind,
			ExternalName: z.Domain,
			Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
			DependsOn:    []string{rResourceGroup},
		},
		{
			Name:         rPrivateZoneLink,
			Kind:         zoneLinkKind,
			ExternalName: base(ctx) + "-vnet",
			Body:         object.Object{"spec": map[string]any{"forProvider": link}},
			DependsOn:    []string{rPrivateZone, rNetwork},
		},
	}, nil
}
