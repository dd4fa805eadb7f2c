package gcp

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// dnsZone renders a Cloud DNS managed zone: public, or private and visible
// only from the cluster's network.
func dnsZone(ctx *registry.Context, z cluster.DNSZone) ([]*registry.Resource, error) {
	fp := map[string]any{
		"project":     ctx.XR.PlaneID,
		"dnsName":     z.Domain + ".",
		"description": "Zone of cluster " + base(ctx),
		"visibility":  "public",
	}
	r := &registry.Resource{
		Name:         rPublicZone,
		Kind:         zoneKind,
		ExternalName: base(ctx) + "-public",
		Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
		Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
			o.DNSNameServers = object.Strings(obs, "status", "atProvider", "nameServers")
		},
	}
	if z.Private {
		fp["visibility"] = "private"
		fp["privateVisibilityConfig"] = map[string]any{
			"networks": []any{map[string]any{"networkUrlSelector": ctx.Selector(rNetwork)}},
		}
		r.Name = rPrivateZone
		r.ExternalName = base(ctx) + "-private"
		r.DependsOn = []string{rNetwork}
		r.Outputs = nil
	}
	return []*registry.Resource{r}, nil
}
