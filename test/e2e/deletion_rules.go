package main

import (
	"strings"
)

// A holder is what keeps a resource from being deleted: a live managed
// resource of kind (a kindKey; "*" any of the same cloud) that references
// it; with via, that references a resource of kind via that references it;
// with at, that references (directly, or via) the resource of kind at that
// it references too (both are in the same VPC, on the same network).
type holder struct{ kind, via, at string }

// A need is a reference a resource's deletion cannot do without: when what
// field selects is gone, the delete fails, and keeps failing.
type need struct{ field, kind string }

// A deletionRule is how a cloud (or a provider) deletes a kind.
type deletionRule struct {
	// kind is the kindKey ("ec2.aws VPC"); "group *" matches the group's
	// every kind.
	kind string
	// heldBy are what the cloud refuses its deletion for while they live;
	// refuses is what its API answers then.
	heldBy  []holder
	refuses string
	// takes are the kinds of the resources referencing it that the cloud
	// deletes with it: their own deletion later finds them gone.
	takes []string
	// needs are what its deletion fails without, for good; fails is why.
	needs []need
	// connects is set for the kinds whose provider reaches into a cluster
	// or a database server to delete them, through the ProviderConfig's
	// credentials: without those, their deletion fails for good.
	connects bool
	fails    string
	// goodWhile are what the credentials in its connection Secret are
	// good only while they exist (a token, while its cluster does).
	goodWhile []need
	// protectedBy are the paths of its deletion protection switches:
	// while one is true, the cloud (or the Terraform provider) refuses
	// its deletion; protects is what it answers.
	protectedBy [][]string
	protects    string
}

// deletionRules are the clouds' and providers' rules of deletion that the
// simulator enforces: one row per kind, which API refuses what (or fails
// without what), and what the cloud deletes along.
var deletionRules = []deletionRule{
	// ---- AWS
	// EC2 DeleteVpc: DependencyViolation, "The vpc has dependencies and
	// cannot be deleted": subnets, an attached internet gateway, route
	// tables but the main one, security groups but the default one.
	{kind: "ec2.aws VPC", heldBy: direct("ec2.aws Subnet", "ec2.aws InternetGateway", "ec2.aws RouteTable", "ec2.aws SecurityGroup"),
		refuses: "EC2 DeleteVpc: DependencyViolation: the VPC has dependencies"},
	// EC2 DeleteSubnet: DependencyViolation while network interfaces are in
	// it: a NAT gateway's, the EKS control plane's, the node group's
	// instances', an RDS instance's (through its DB subnet group).
	{kind: "ec2.aws Subnet", heldBy: []holder{{kind: "ec2.aws NATGateway"}, {kind: "eks.aws Cluster"}, {kind: "eks.aws NodeGroup"}, {kind: "rds.aws Instance", via: "rds.aws SubnetGroup"}},
		refuses: "EC2 DeleteSubnet: DependencyViolation: network interfaces are in use in the subnet"},
	// EC2 DetachInternetGateway (which deleting an attached gateway
	// starts with): DependencyViolation, "Network vpc-… has some mapped
	// public address(es)": a NAT gateway's Elastic IP in the VPC.
	{kind: "ec2.aws InternetGateway", heldBy: []holder{{kind: "ec2.aws NATGateway", via: "ec2.aws Subnet", at: "ec2.aws VPC"}},
		refuses: "EC2 DetachInternetGateway: DependencyViolation: the VPC has mapped public addresses"},
	// EC2 DeleteRouteTable: DependencyViolation while subnets are
	// associated with it; its routes go with it.
	{kind: "ec2.aws RouteTable", heldBy: direct("ec2.aws RouteTableAssociation"), takes: []string{"ec2.aws Route"},
		refuses: "EC2 DeleteRouteTable: DependencyViolation: subnets are associated with it"},
	// EC2 DeleteSecurityGroup: DependencyViolation, "resource sg-… has a
	// dependent object": an RDS instance's network interfaces; its rules go
	// with it.
	{kind: "ec2.aws SecurityGroup", heldBy: direct("rds.aws Instance"), takes: []string{"ec2.aws SecurityGroupIngressRule"},
		refuses: "EC2 DeleteSecurityGroup: DependencyViolation: the group has a dependent object"},
	// EC2 ReleaseAddress: InvalidIPAddress.InUse while a NAT gateway holds
	// the address.
	{kind: "ec2.aws EIP", heldBy: direct("ec2.aws NATGateway"), refuses: "EC2 ReleaseAddress: InvalidIPAddress.InUse"},
	// IAM DeleteRole: DeleteConflict, "Cannot delete entity, must detach
	// all policies first" (and delete its inline policies). The Terraform
	// provider removes the role from instance profiles itself, so a node
	// group does not hold its role: the Usages do.
	{kind: "iam.aws Role", heldBy: direct("iam.aws RolePolicyAttachment", "iam.aws RolePolicy"),
		refuses: "IAM DeleteRole: DeleteConflict: must detach all policies first"},
	// EKS DeleteCluster: ResourceInUseException while node groups are
	// attached (add-ons, access entries and pod identity associations EKS
	// deletes with the cluster); without its cluster role EKS cannot
	// release the control plane's network interfaces: DELETE_FAILED.
	{kind: "eks.aws Cluster", heldBy: direct("eks.aws NodeGroup"), takes: []string{"eks.aws Addon", "eks.aws AccessEntry", "eks.aws PodIdentityAssociation"},
		refuses: "EKS DeleteCluster: ResourceInUseException: the cluster has node groups attached",
		needs:   []need{{"roleArnSelector", "iam.aws Role"}}, fails: "EKS: the cluster is DELETE_FAILED: its role is gone, its network interfaces cannot be released"},
	// EKS DeleteNodegroup: without its node role EKS cannot terminate the
	// instances: DELETE_FAILED.
	{kind: "eks.aws NodeGroup", needs: []need{{"nodeRoleArnSelector", "iam.aws Role"}},
		fails: "EKS: the node group is DELETE_FAILED: its node role is gone, its instances cannot be terminated"},
	// An EKS token (ClusterAuth) is only good while its cluster exists.
	{kind: "eks.aws ClusterAuth", goodWhile: []need{{"clusterNameSelector", "eks.aws Cluster"}}},
	// Route 53 DeleteHostedZone: HostedZoneNotEmpty while it has records.
	{kind: "route53.aws Zone", heldBy: direct("route53.aws Record"), refuses: "Route 53 DeleteHostedZone: HostedZoneNotEmpty"},
	// RDS DeleteDBSubnetGroup: InvalidDBSubnetGroupStateFault while an
	// instance is in it.
	{kind: "rds.aws SubnetGroup", heldBy: direct("rds.aws Instance"), refuses: "RDS DeleteDBSubnetGroup: InvalidDBSubnetGroupStateFault: an instance uses it"},
	// RDS DeleteDBParameterGroup: InvalidDBParameterGroupState while an
	// instance uses it.
	// RDS DeleteDBInstance: InvalidParameterCombination, "Cannot delete
	// protected DB Instance, please disable deletion protection and try
	// again".
	{kind: "rds.aws Instance", protectedBy: [][]string{{"deletionProtection"}},
		protects: "RDS DeleteDBInstance: InvalidParameterCombination: Cannot delete protected DB Instance"},
	{kind: "rds.aws ParameterGroup", heldBy: direct("rds.aws Instance"), refuses: "RDS DeleteDBParameterGroup: InvalidDBParameterGroupState: an instance uses it"},
	// CloudFront DeleteOriginAccessControl: OriginAccessControlInUse while
	// a distribution uses it.
	{kind: "cloudfront.aws OriginAccessControl", heldBy: direct("cloudfront.aws Distribution"), refuses: "CloudFront DeleteOriginAccessControl: OriginAccessControlInUse"},
	// S3 DeleteBucket refuses only a bucket with objects (BucketNotEmpty;
	// ours hold none); its configurations go with it.
	{kind: "s3.aws Bucket", takes: []string{"s3.aws BucketPolicy", "s3.aws BucketPublicAccessBlock", "s3.aws BucketServerSideEncryptionConfiguration", "s3.aws BucketOwnershipControls"}},

	// ---- GCP
	// Compute networks.delete: resourceInUseByAnotherResource while
	// subnetworks, routers, addresses, a peering or a GKE cluster are in it.
	{kind: "compute.gcp Network", heldBy: direct("compute.gcp Subnetwork", "compute.gcp Router", "compute.gcp GlobalAddress", "servicenetworking.gcp Connection", "container.gcp Cluster"),
		refuses: "Compute networks.delete: resourceInUseByAnotherResource"},
	// Compute subnetworks.delete: resourceInUseByAnotherResource while the
	// GKE cluster's nodes are in it.
	{kind: "compute.gcp Subnetwork", heldBy: direct("container.gcp Cluster"), refuses: "Compute subnetworks.delete: resourceInUseByAnotherResource"},
	// A router's NAT is part of the router: it goes with it.
	{kind: "compute.gcp Router", takes: []string{"compute.gcp RouterNAT"}},
	// Compute globalAddresses.delete: resourceInUseByAnotherResource while
	// the private services connection allocates the range, or a forwarding
	// rule uses the address.
	{kind: "compute.gcp GlobalAddress", heldBy: direct("servicenetworking.gcp Connection", "compute.gcp GlobalForwardingRule"),
		refuses: "Compute globalAddresses.delete: resourceInUseByAnotherResource"},
	// Compute urlMaps / backendBuckets / backendServices.delete:
	// resourceInUseByAnotherResource while a proxy / URL map uses it.
	{kind: "compute.gcp URLMap", heldBy: direct("compute.gcp TargetHTTPProxy", "compute.gcp TargetHTTPSProxy"), refuses: "Compute urlMaps.delete: resourceInUseByAnotherResource"},
	{kind: "compute.gcp BackendBucket", heldBy: direct("compute.gcp URLMap"), refuses: "Compute backendBuckets.delete: resourceInUseByAnotherResource"},
	{kind: "compute.gcp BackendService", heldBy: direct("compute.gcp URLMap"), refuses: "Compute backendServices.delete: resourceInUseByAnotherResource"},
	// Service Networking connections.deleteConnection: "Failed to delete
	// connection; Producer services (e.g. CloudSQL …) are still using this
	// connection": a Cloud SQL instance on its network.
	{kind: "servicenetworking.gcp Connection", heldBy: []holder{{kind: "sql.gcp DatabaseInstance", at: "compute.gcp Network"}},
		refuses: "Service Networking deleteConnection: producer services (Cloud SQL) are still using this connection"},
	// GKE deletes a cluster's node pools with it. The Terraform provider
	// refuses to delete one with deletion_protection.
	{kind: "container.gcp Cluster", takes: []string{"container.gcp NodePool"}, protectedBy: [][]string{{"deletionProtection"}},
		protects: "google: Cannot destroy cluster because deletion_protection is set to true"},
	// Cloud DNS managedZones.delete: containerNotEmpty while it has record
	// sets.
	{kind: "dns.gcp ManagedZone", heldBy: direct("dns.gcp RecordSet"), refuses: "Cloud DNS managedZones.delete: containerNotEmpty"},
	// Cloud SQL deletes an instance's databases and users with it. The
	// Terraform provider refuses to delete one with deletion_protection,
	// Cloud SQL one with deletionProtectionEnabled.
	{kind: "sql.gcp DatabaseInstance", takes: []string{"sql.gcp Database", "sql.gcp User"},
		protectedBy: [][]string{{"deletionProtection"}, {"settings", "deletionProtectionEnabled"}},
		protects:    "google: failed to delete instance because deletion_protection is set to true / Cloud SQL: the instance is protected from deletion"},

	// ---- Azure
	// Azure deletes a resource group with everything in it, but
	// provider-upjet-azure configures azurerm with its default features,
	// whose resource_group.prevent_deletion_if_contains_resources is true:
	// the provider refuses while the group still contains resources.
	{kind: "azure ResourceGroup", heldBy: []holder{{kind: "*"}},
		refuses: "azurerm: deleting Resource Group: the Resource Group still contains Resources (prevent_deletion_if_contains_resources)"},
	// Azure deletes a virtual network with its subnets, unless one is in
	// use: InUseSubnetCannotBeDeleted (the AKS nodes, a delegated
	// PostgreSQL server).
	{kind: "network.azure VirtualNetwork", heldBy: []holder{
		{kind: "containerservice.azure KubernetesCluster", via: "network.azure Subnet"},
		{kind: "containerservice.azure KubernetesClusterNodePool", via: "network.azure Subnet"},
		{kind: "dbforpostgresql.azure FlexibleServer", via: "network.azure Subnet"},
	}, takes: []string{"network.azure Subnet"}, refuses: "Network virtualNetworks.delete: InUseSubnetCannotBeDeleted"},
	// Network subnets.delete: InUseSubnetCannotBeDeleted while the AKS
	// nodes or a delegated PostgreSQL server are in it; its NAT gateway
	// association goes with it.
	{kind: "network.azure Subnet", heldBy: direct("containerservice.azure KubernetesCluster", "containerservice.azure KubernetesClusterNodePool", "dbforpostgresql.azure FlexibleServer"),
		takes: []string{"network.azure SubnetNATGatewayAssociation"}, refuses: "Network subnets.delete: InUseSubnetCannotBeDeleted"},
	// Network natGateways.delete: refused while a subnet is associated
	// with the gateway.
	{kind: "network.azure NATGateway", heldBy: direct("network.azure SubnetNATGatewayAssociation"), refuses: "Network natGateways.delete: the NAT gateway is in use by a subnet"},
	// Private DNS privateZones.delete: refused while virtual network links
	// exist ("Can not delete resource while nested resources exist").
	{kind: "network.azure PrivateDNSZone", heldBy: direct("network.azure PrivateDNSZoneVirtualNetworkLink"),
		refuses: "Private DNS privateZones.delete: PreconditionFailed: nested resources (virtual network links) exist"},
	// Azure DNS deletes a zone's record sets with it.
	{kind: "network.azure DNSZone", takes: []string{"network.azure DNSCNAMERecord", "network.azure DNSTXTRecord", "network.azure DNSARecord", "network.azure DNSNSRecord"}},
	// AKS deletes a cluster's node pools with it; without its identity it
	// cannot remove its load balancers from the network.
	{kind: "containerservice.azure KubernetesCluster", takes: []string{"containerservice.azure KubernetesClusterNodePool"},
		needs: []need{{"identityIdsSelector", "managedidentity.azure UserAssignedIdentity"}}, fails: "AKS: the cluster's deletion fails: its identity is gone, its load balancers cannot be removed"},
	// A PostgreSQL flexible server's databases, an identity's federated
	// credentials, a storage account's containers go with them.
	{kind: "dbforpostgresql.azure FlexibleServer", takes: []string{"dbforpostgresql.azure FlexibleServerDatabase"}},
	{kind: "managedidentity.azure UserAssignedIdentity", takes: []string{"managedidentity.azure FederatedIdentityCredential"}},
	{kind: "storage.azure Account", takes: []string{"storage.azure Container"}},
	// Front Door deletes a profile's endpoints, origin groups and custom
	// domains with it, an endpoint's routes, an origin group's origins, a
	// custom domain's associations; it refuses an origin group or a custom
	// domain a route still uses.
	{kind: "cdn.azure FrontdoorProfile", takes: []string{"cdn.azure FrontdoorEndpoint", "cdn.azure FrontdoorOriginGroup", "cdn.azure FrontdoorCustomDomain"}},
	{kind: "cdn.azure FrontdoorEndpoint", takes: []string{"cdn.azure FrontdoorRoute"}},
	{kind: "cdn.azure FrontdoorOriginGroup", heldBy: direct("cdn.azure FrontdoorRoute"), takes: []string{"cdn.azure FrontdoorOrigin"}, refuses: "Front Door: the origin group is used by a route"},
	{kind: "cdn.azure FrontdoorCustomDomain", heldBy: direct("cdn.azure FrontdoorRoute"), takes: []string{"cdn.azure FrontdoorCustomDomainAssociation"}, refuses: "Front Door: the custom domain is associated with a route"},

	// ---- provider-helm and provider-sql
	// They uninstall a release, drop a database, through the
	// ProviderConfig's credentials: a kubeconfig or connection Secret,
	// good only while the cluster or server it came from exists.
	{kind: "helm *", connects: true, fails: "provider-helm cannot connect to uninstall the release"},
	{kind: "postgresql.sql *", connects: true, fails: "provider-sql cannot connect to drop it"},
	// provider-kubernetes likewise; it runs for real in the e2e, this row
	// serves the model of deletion_test.go.
	{kind: "kubernetes *", connects: true, fails: "provider-kubernetes cannot connect to delete the object"},
}

// direct are holders that reference the resource themselves.
func direct(kinds ...string) []holder {
	out := make([]holder, len(kinds))
	for i, k := range kinds {
		out[i] = holder{kind: k}
	}
	return out
}

// kindKey names a kind across its two scopes: its group without the
// provider's domain and the namespaced ".m", and its kind: "ec2.aws VPC",
// "azure ResourceGroup", "helm Release".
func kindKey(apiVersion, kind string) string {
	g := strings.Split(apiVersion, "/")[0]
	g = strings.TrimSuffix(strings.TrimSuffix(g, ".upbound.io"), ".crossplane.io")
	g = strings.TrimSuffix(g, ".m")
	return g + " " + kind
}

// cloudOfKey is the cloud (or provider) of a kindKey: "aws", "helm".
func cloudOfKey(key string) string {
	g, _, _ := strings.Cut(key, " ")
	return g[strings.LastIndexByte(g, '.')+1:]
}

// ruleOf is the deletion rule of a kind, if any.
func ruleOf(key string) (deletionRule, bool) {
	for _, r := range deletionRules {
		if r.kind == key {
			return r, true
		}
	}
	g, _, _ := strings.Cut(key, " ")
	for _, r := range deletionRules {
		if r.kind == g+" *" {
			return r, true
		}
	}
	return deletionRule{}, false
}
