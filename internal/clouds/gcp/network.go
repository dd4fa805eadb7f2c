package gcp

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/platform"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// Secondary range names of the node subnetwork, used by the cluster's IP
// allocation policy.
const (
	podsRange     = "pods"
	servicesRange = "services"
)

// network renders a custom-mode VPC and the node subnetwork with secondary
// ranges for pods and services.
func network(ctx *registry.Context, n platform.Network) ([]*registry.Resource, error) {
	reg := region(ctx.Plan.Cluster.Location)
	return []*registry.Resource{
		{
			Name:         rNetwork,
			Kind:         networkKind,
			ExternalName: base(ctx),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":               ctx.XR.PlaneID,
				"autoCreateSubnetworks": false,
				"routingMode":           "REGIONAL",
				"description":           "Network of cluster " + base(ctx),
			}}},
		},
		{
			Name:         rSubnet,
			Kind:         subnetworkKind,
			ExternalName: base(ctx) + "-nodes",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":               ctx.XR.PlaneID,
				"region":                reg,
				"networkSelector":       ctx.Selector(rNetwork),
				"ipCidrRange":           n.CIDR.String(),
				"privateIpGoogleAccess": true,
				"secondaryIpRange": []any{
					map[string]any{"rangeName": podsRange, "ipCidrRange": n.PodsCIDR.String()},
					map[string]any{"rangeName": servicesRange, "ipCidrRange": n.ServicesCIDR.String()},
				},
			}}},
			DependsOn: []string{rNetwork},
		},
	}, nil
}

// egress renders a Cloud Router and Cloud NAT so that private nodes reach
// the internet.
func egress(ctx *registry.Context, _ platform.Egress) ([]*registry.Resource, error) {
	reg := region(ctx.Plan.Cluster.Location)
	return []*registry.Resource{
		{
			Name:         rRouter,
			Kind:         routerKind,
			ExternalName: base(ctx) + "-router",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":         ctx.XR.PlaneID,
				"region":          reg,
				"networkSelector": ctx.Selector(rNetwork),
			}}},
			DependsOn: []string{rNetwork},
		},
		{
			Name:         rNAT,
			Kind:         routerNATKind,
			ExternalName: base(ctx) + "-nat",
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project":                       ctx.XR.PlaneID,
				"region":                        reg,
				"routerSelector":                ctx.Selector(rRouter),
				"natIpAllocateOption":           "AUTO_ONLY",
				"sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
				"logConfig":                     map[string]any{"enable": true, "filter": "ERRORS_ONLY"},
			}}},
			DependsOn: []string{rRouter},
		},
	}, nil
}
