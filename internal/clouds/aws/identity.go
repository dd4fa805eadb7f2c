package aws

import (
	"fmt"

	"github.com/seed-6471616d/function-cluster-platform/internal/model/cluster"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
)

// maxRoleName is IAM's limit on role names.
const maxRoleName = 64

// role is an IAM role a service assumes, with its managed policies.
type role struct {
	name     string // composition-resource name
	suffix   string // of the IAM role name
	service  string // the principal that assumes it
	tag      bool   // whether the principal also needs sts:TagSession
	policies []policy
}

// policy is an AWS managed policy attached to a role.
type policy struct {
	short string // composition-resource name suffix
	name  string // policy name, with path
}

// roles are the platform's IAM roles: the EKS control plane, the nodes, and
// the EBS CSI driver (through EKS Pod Identity).
var roles = []role{
	{name: rClusterRole, suffix: "cluster", service: "eks.amazonaws.com", tag: true, policies: []policy{
		{"eks-cluster", "AmazonEKSClusterPolicy"},
	}},
	{name: rNodeRole, suffix: "nodes", service: "ec2.amazonaws.com", policies: []policy{
		{"eks-worker-node", "AmazonEKSWorkerNodePolicy"},
		{"eks-cni", "AmazonEKS_CNI_Policy"},
		{"ecr-read-only", "AmazonEC2ContainerRegistryReadOnly"},
	}},
	{name: rEBSRole, suffix: "ebs-csi", service: "pods.eks.amazonaws.com", tag: true, policies: []policy{
		{"ebs-csi-driver", "service-role/AmazonEBSCSIDriverPolicy"},
	}},
}

// attachmentName is the composition-resource name of a policy attachment.
func attachmentName(r role, p policy) string { return r.name + "-" + p.short }

// attachments lists the composition-resource names of a role's policy
// attachments, which whoever uses the role depends on.
func attachments(roleName string) []string {
	for _, r := range roles {
		if r.name != roleName {
			continue
		}
		out := make([]string, 0, len(r.policies))
		for _, p := range r.policies {
			out = append(out, attachmentName(r, p))
		}
		return out
	}
	return nil
}

// assumeRolePolicy lets a service assume a role; with tag, it may also tag
// its session (EKS and EKS Pod Identity need that).
func assumeRolePolicy(service string, tag bool) string {
	actions := `"sts:AssumeRole"`
	if tag {
		actions = `"sts:AssumeRole","sts:TagSession"`
	}
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":%q},"Action":[%s]}]}`, service, actions)
}

// identity renders the IAM roles and their policy attachments.
func identity(ctx *registry.Context, id cluster.Identity) ([]*registry.Resource, error) {
	var out []*registry.Resource
	for _, r := range roles {
		out = append(out, &registry.Resource{
			Name:         r.name,
			Kind:         roleKind,
			ExternalName: ctx.Join(maxRoleName, base(ctx), r.suffix),
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"assumeRolePolicy": assumeRolePolicy(r.service, r.tag),
				"description":      fmt.Sprintf("Role of %s for EKS cluster %s", r.service, base(ctx)),
				"tags":             tags(ctx, base(ctx)+"-"+r.suffix),
			}}},
		})
		for _, p := range r.policies {
			out = append(out, &registry.Resource{
				Name: attachmentName(r, p),
				Kind: policyAttachKind,
				Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
					"policyArn":    policyARN(id.Location, p.name),
					"roleSelector": ctx.Selector(r.name),
				}}},
				DependsOn: []string{r.name},
			})
		}
	}
	return out, nil
}
