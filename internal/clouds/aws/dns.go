package aws

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// dnsZone renders a Route53 hosted zone: public, or private and associated
// with the VPC.
func dnsZone(ctx *registry.Context, z cluster.DNSZone) ([]*registry.Resource, error) {
	fp := map[string]any{
		"name":         z.Domain,
		"comment":      "Zone of cluster " + base(ctx),
		"forceDestroy": false,
		"tags":         tags(ctx, base(ctx)+"-public"),
	}
	r := &registry.Resource{
		Name: rPublicZone,
		Kind: zoneKind,
		Body: object.Object{"spec": map[string]any{"forProvider": fp}},
		Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
			o.DNSNameServers = object.Strings(obs, "status", "atProvider", "nameServers")
		},
	}
	if z.Private {
		fp["vpc"] = []any{map[string]any{"vpcIdSelector": ctx.Selector(rNetwork), "vpcRegion": z.Location}}
		fp["tags"] = tags(ctx, base(ctx)+"-private")
		r.Name = rPrivateZone
		r.DependsOn = []string{rNetwork}
		r.Outputs = nil
	}
	return []*registry.Resource{r}, nil
}
