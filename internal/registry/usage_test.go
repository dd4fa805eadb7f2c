package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNeedsUsage(t *testing.T) {
	var (
		providerConfig = &ResourceKind{Kind: "ProviderConfig", Roles: Access}
		release        = &ResourceKind{Kind: "Release"}
		object         = &ResourceKind{Kind: "Object"}
		cluster        = &ResourceKind{Kind: "Cluster", Roles: Compute | Credentials}
		clusterAuth    = &ResourceKind{Kind: "ClusterAuth", Roles: Credentials}
		nodeGroup      = &ResourceKind{Kind: "NodeGroup", Roles: Compute}
		attachment     = &ResourceKind{Kind: "RolePolicyAttachment", Roles: ComputeIdentity}
		role           = &ResourceKind{Kind: "Role", Roles: ComputeIdentity}
		subnet         = &ResourceKind{Kind: "Subnet"}
		vpc            = &ResourceKind{Kind: "VPC"}
		instance       = &ResourceKind{Kind: "DatabaseInstance", Roles: Database | Credentials}
		connection     = &ResourceKind{Kind: "Connection", Roles: Peering}
		podIdentity    = &ResourceKind{Kind: "PodIdentityAssociation"}
	)
	cases := map[string]struct {
		reason string
		by, of *ResourceKind
		want   bool
	}{
		"ReleaseOnProviderConfig": {reason: "Providers hold a ProviderConfig while it has users: no Usage.", by: release, of: providerConfig},
		"ObjectOnProviderConfig":  {reason: "Likewise for Objects.", by: object, of: providerConfig},
		"ObjectOnObject":          {reason: "Objects in one cluster go in any order: a namespace's deletion takes its contents.", by: object, of: object},
		"ProviderConfigOnCluster": {reason: "The cluster must outlive the ProviderConfig its releases are deleted through.", by: providerConfig, of: cluster, want: true},
		"ProviderConfigOnAuth":    {reason: "So must the token the ProviderConfig reads.", by: providerConfig, of: clusterAuth, want: true},
		"AuthOnCluster":           {reason: "And the cluster the token is for.", by: clusterAuth, of: cluster, want: true},
		"ProviderConfigOnPool":    {reason: "Releases are deleted through the API server, which needs no node: no Usage.", by: providerConfig, of: nodeGroup},
		"NodeGroupOnAttachment":   {reason: "EKS cannot delete a node group whose role lost its policies.", by: nodeGroup, of: attachment, want: true},
		"ClusterOnAttachment":     {reason: "Nor a cluster.", by: cluster, of: attachment, want: true},
		"PoolOnCluster":           {reason: "Deleting a cluster takes its pools; the pool's provider then finds it gone: no Usage.", by: nodeGroup, of: cluster},
		"AttachmentOnRole":        {reason: "IAM refuses to delete a role with attachments and the provider retries: no Usage.", by: attachment, of: role},
		"SubnetOnVPC":             {reason: "The cloud refuses to delete a VPC with subnets and the provider retries: no Usage.", by: subnet, of: vpc},
		"InstanceOnConnection":    {reason: "A database must go before the peering it lives on.", by: instance, of: connection, want: true},
		"PodIdentityOnRole":       {reason: "A workload's identity is not what a cluster runs with: no Usage.", by: podIdentity, of: role},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, got := NeedsUsage(tc.by, tc.of)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nNeedsUsage(%s, %s): -want, +got:\n%s", tc.reason, tc.by.Kind, tc.of.Kind, diff)
			}
			if got && r.Prevents == "" {
				t.Errorf("%s\nthe rule says nothing of the failure it prevents", tc.reason)
			}
		})
	}
}
