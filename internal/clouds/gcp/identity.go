package gcp

import (
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// identity renders the node service account and its project roles
// (environment key gcp.nodeServiceAccountRoles).
func identity(ctx *registry.Context, _ cluster.Identity) ([]*registry.Resource, error) {
	out := []*registry.Resource{{
		Name:         rServiceAccount,
		Kind:         saKind,
		ExternalName: accountID(ctx),
		Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"project":     ctx.XR.PlaneID,
			"displayName": "GKE nodes of " + base(ctx),
			"description": "Node service account of GKE cluster " + base(ctx),
		}}},
	}}
	member := "serviceAccount:" + serviceAccountEmail(ctx)
	roles := settingsOf(ctx.Env).NodeRoles
	if roles == nil {
		roles = defaultNodeRoles
	}
	for _, role := range roles {
		out = append(out, &registry.Resource{
			Name: iamName(role),
			Kind: iamMemberKind,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"project": ctx.XR.PlaneID,
				"role":    role,
				"member":  member,
			}}},
			DependsOn: []string{rServiceAccount},
		})
	}
	return out, nil
}

// iamName is the composition-resource name of a role binding:
// roles/artifactregistry.reader becomes node-iam-artifactregistry-reader.
func iamName(role string) string {
	r := strings.ToLower(strings.TrimPrefix(role, "roles/"))
	r = strings.NewReplacer(".", "-", "/", "-", "_", "-").Replace(r)
	return rIAMPrefix + r
}
