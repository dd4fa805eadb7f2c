package azure

import (
	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// identity renders the control plane's user-assigned identity and its
// Network Contributor role on the virtual network, which AKS needs to manage
// load balancers and routes in a network it does not own. A role assignment
// takes the identity's principal ID and the network's ID as plain values,
// so it is rendered once both are observed.
func identity(ctx *registry.Context, ident cluster.Identity) ([]*registry.Resource, error) {
	ra := &registry.Resource{
		Name:      rRoleAssignment,
		Kind:      roleAssignKind,
		DependsOn: []string{rIdentity, rNetwork},
	}
	principal := object.String(ctx.Observed(rIdentity), "status", "atProvider", "principalId")
	scope := object.String(ctx.Observed(rNetwork), "status", "atProvider", "id")
	switch {
	case principal == "":
		ra.Pending = "waits for the principal ID of " + rIdentity
	case scope == "":
		ra.Pending = "waits for the ID of " + rNetwork
	default:
		ra.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"principalId":                  principal,
			"principalType":                "ServicePrincipal",
			"scope":                        scope,
			"roleDefinitionName":           "Network Contributor",
			"skipServicePrincipalAadCheck": true,
			"description":                  "AKS control plane of " + base(ctx) + " manages its network",
		}}}
	}
	id := inGroup(ctx, ident.Location)
	id["name"] = base(ctx) + "-control-plane"
	return []*registry.Resource{
		{
			Name:         rIdentity,
			Kind:         identityKind,
			ExternalName: base(ctx) + "-control-plane",
			Body:         object.Object{"spec": map[string]any{"forProvider": id}},
			DependsOn:    []string{rResourceGroup},
		},
		ra,
	}, nil
}
