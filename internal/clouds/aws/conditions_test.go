package aws

import (
	"testing"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
)

// TestConditions holds the AWS provider's conditions (conditions.go)
// against its generated tables, and each both ways: a change it makes in
// place, and one it replaces the resource for.
func TestConditions(t *testing.T) {
	type args = fntest.ConditionArgs
	const role = "aws_eks_cluster.compute_config.node_role_arn"
	auto := map[string]any{"computeConfig": map[string]any{"enabled": true, "nodePools": []any{"general-purpose"}, "nodeRoleArn": "arn:aws:iam::1:role/a"}}
	fntest.Conditions(t, generatedTables, conditions, map[string]fntest.ConditionCase{
		"TenancyToDefault":     {Reason: "A dedicated VPC made default is changed in place.", Args: args{Attribute: "aws_vpc.instance_tenancy", Old: "dedicated", New: "default"}},
		"TenancyToDedicated":   {Reason: "A default VPC made dedicated is replaced.", Args: args{Attribute: "aws_vpc.instance_tenancy", Old: "default", New: "dedicated"}, Want: true},
		"IPv6RangeChanged":     {Reason: "A subnet's IPv6 range changes in place when it did not assign IPv6 addresses on creation.", Args: args{Attribute: "aws_subnet.ipv6_cidr_block", Old: "2600:1f18::/64", New: "2600:1f18:0:1::/64"}},
		"IPv6RangeAssigning":   {Reason: "One that did is replaced.", Args: args{Attribute: "aws_subnet.ipv6_cidr_block", Old: "2600:1f18::/64", New: "2600:1f18:0:1::/64", Observed: map[string]any{"assignIpv6AddressOnCreation": true}}, Want: true},
		"EncryptionAdded":      {Reason: "Envelope encryption added is made in place.", Args: args{Attribute: "aws_eks_cluster.encryption_config", New: map[string]any{"resources": []any{"secrets"}}}},
		"EncryptionRemoved":    {Reason: "Removing it replaces the cluster.", Args: args{Attribute: "aws_eks_cluster.encryption_config", Old: map[string]any{"resources": []any{"secrets"}}, New: []any{}}, Want: true},
		"NodeRoleAdded":        {Reason: "An Auto Mode node role where none was is set in place.", Args: args{Attribute: role, Old: "", New: "arn:aws:iam::1:role/a", Observed: map[string]any{"computeConfig": map[string]any{"enabled": false}}, Desired: auto}},
		"NodeRoleUnsetAutoOff": {Reason: "Turning Auto Mode off with the role unset is made in place.", Args: args{Attribute: role, Old: "arn:aws:iam::1:role/a", New: "", Observed: auto, Desired: map[string]any{"computeConfig": map[string]any{"enabled": false, "nodePools": []any{}}}}},
		"NodeRoleChanged":      {Reason: "Another node role replaces the cluster.", Args: args{Attribute: role, Old: "arn:aws:iam::1:role/a", New: "arn:aws:iam::1:role/b", Observed: auto, Desired: map[string]any{"computeConfig": map[string]any{"nodeRoleArn": "arn:aws:iam::1:role/b"}}}, Want: true},
	})
}
