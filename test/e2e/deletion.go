package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Deletion as the providers and the clouds carry it out. A provider puts
// its finalizer on every managed resource it reconciles and removes it only
// once the cloud deleted the external resource; the cloud refuses to delete
// what is still in use, and the provider tries again (a requeue) until it
// is not. Crossplane deletes an XR's composed resources all at once (the
// garbage collector does), so the order in which they go is the order the
// clouds, the providers and the Usages impose. The simulator plays the
// clouds' part from deletionRules, the providers' from the finalizers, the
// retries and their hold on their ProviderConfigs. A managed resource
// whose management policies leave out Delete (a legacy deletionPolicy
// Orphan, a Terraform deletion_policy ABANDON) loses its finalizer without
// a call to the cloud: its external resource stays (deletions.kept), and
// still keeps what it is in from being deleted. One with its deletion
// protection on the cloud refuses until it is turned off.

const (
	// managedFinalizer is crossplane-runtime's finalizer on a managed
	// resource.
	managedFinalizer = "finalizer.managedresource.crossplane.io"
	// inUseFinalizer is crossplane-runtime's finalizer on a ProviderConfig,
	// removed once no ProviderConfigUsage (no managed resource) uses it.
	inUseFinalizer = "in-use.crossplane.io"
	// retryMin and retryJitter bound how long a provider waits before it
	// tries a refused delete again: 2 to 5 s.
	retryMin    = 2 * time.Second
	retryJitter = 3 * time.Second
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

// ref is a reference in a managed resource's spec.forProvider: by a
// selector's labels (and controller) or by name.
type ref struct {
	field      string
	labels     map[string]string
	controller bool
	name       string
}

// refsOf lists the references of a managed resource's spec.forProvider,
// but those to Secrets.
func refsOf(o object) []ref {
	var out []ref
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, v := range t {
				m, isMap := v.(map[string]any)
				switch {
				case strings.Contains(strings.ToLower(k), "secret"):
				case strings.HasSuffix(k, "Selector") && isMap:
					r := ref{field: k, labels: map[string]string{}}
					ml, _ := m["matchLabels"].(map[string]any)
					for lk, lv := range ml {
						r.labels[lk], _ = lv.(string)
					}
					r.controller, _ = m["matchControllerRef"].(bool)
					if len(r.labels) > 0 {
						out = append(out, r)
					}
				case strings.HasSuffix(k, "Ref") && isMap:
					if n, _ := m["name"].(string); n != "" {
						out = append(out, ref{field: k, name: n})
					}
				case strings.HasSuffix(k, "Refs"):
					l, _ := v.([]any)
					for _, e := range l {
						em, _ := e.(map[string]any)
						if n, _ := em["name"].(string); n != "" {
							out = append(out, ref{field: k, name: n})
						}
					}
				default:
					walk(v)
				}
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(at(o, "spec", "forProvider"))
	return out
}

// controllerOf is the UID of an object's controller.
func controllerOf(o object) string {
	refs, _ := at(o, "metadata", "ownerReferences").([]any)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		if m["controller"] == true {
			s, _ := m["uid"].(string)
			return s
		}
	}
	return ""
}

// resolves reports whether a reference of from selects to, as the
// provider's reference resolution would: by name, or by labels in the same
// namespace (matchControllerRef: of the same controller). A selector that
// names neither a controller nor a composite, of a cluster-scoped resource,
// selects among its own composite's.
func resolves(r ref, from, to object) bool {
	if str(from, "metadata", "namespace") != str(to, "metadata", "namespace") {
		return false
	}
	if r.name != "" {
		return str(to, "metadata", "name") == r.name
	}
	labels, _ := at(to, "metadata", "labels").(map[string]any)
	for k, v := range r.labels {
		if labels[k] != v {
			return false
		}
	}
	if r.controller {
		c := controllerOf(from)
		return c != "" && c == controllerOf(to)
	}
	if _, named := r.labels[xr.LabelComposite]; !named && str(from, "metadata", "namespace") == "" {
		return str(from, "metadata", "labels", xr.LabelComposite) == str(to, "metadata", "labels", xr.LabelComposite)
	}
	return true
}

// references reports whether from references any of to.
func references(from object, to []object) bool {
	for _, r := range refsOf(from) {
		for _, t := range to {
			if resolves(r, from, t) {
				return true
			}
		}
	}
	return false
}

// referenced are those of to that from references.
func referenced(from object, to []object) []object {
	var out []object
	for _, t := range to {
		if references(from, []object{t}) {
			out = append(out, t)
		}
	}
	return out
}

// deletions is the simulator's record of deletion: what the clouds deleted
// along with something else, and how often they refused and the providers
// held.
type deletions struct {
	mu sync.Mutex
	// gone are the UIDs of managed resources whose external resource the
	// cloud deleted with another.
	gone map[string]bool
	// refused counts refused deletes by kind; held, ProviderConfig
	// deletions held while in use, by provider; stuck, deletions that
	// failed for good, by kind.
	refused, held, stuck map[string]int
	// protected counts deletes refused for a deletion protection, by
	// kind; abandoned, the resources left in the cloud by their
	// management policies (their managed resource gone), by kind.
	protected, abandoned map[string]int
	// kept are the external resources abandoned, as their managed
	// resource was last, by extKey: they still take part in the cloud's
	// refusals (a range in a network keeps the network).
	kept map[string]object
	// lastTry is when a delete of an object was last tried, by key: a
	// provider requeues, it does not try again on its own status update.
	lastTry map[string]time.Time
	// reported are the stuck objects already reported.
	reported map[string]bool
}

func newDeletions() *deletions {
	return &deletions{gone: map[string]bool{}, refused: map[string]int{}, held: map[string]int{}, stuck: map[string]int{}, protected: map[string]int{}, abandoned: map[string]int{},
		kept: map[string]object{}, lastTry: map[string]time.Time{}, reported: map[string]bool{}}
}

// tally is a copy of the counts.
type tally struct{ refused, held, stuck, protected, abandoned map[string]int }

func (d *deletions) tally() tally {
	d.mu.Lock()
	defer d.mu.Unlock()
	return tally{maps.Clone(d.refused), maps.Clone(d.held), maps.Clone(d.stuck), maps.Clone(d.protected), maps.Clone(d.abandoned)}
}

// since is what was counted after t.
func (t tally) since(before tally) tally {
	sub := func(a, b map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range a {
			if v-b[k] > 0 {
				out[k] = v - b[k]
			}
		}
		return out
	}
	return tally{sub(t.refused, before.refused), sub(t.held, before.held), sub(t.stuck, before.stuck), sub(t.protected, before.protected), sub(t.abandoned, before.abandoned)}
}

// total sums counts.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// counts formats counts as "VPC 6, Role 5", most first.
func counts(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// String is the tally for a delete's line.
func (t tally) String() string {
	s := fmt.Sprintf("the cloud refused %d deletes", total(t.refused))
	if len(t.refused) > 0 {
		s += " (" + counts(t.refused) + ") and the providers retried"
	}
	if len(t.held) > 0 {
		s += fmt.Sprintf("; the providers held their ProviderConfigs %d times while in use (%s)", total(t.held), counts(t.held))
	}
	if len(t.abandoned) > 0 {
		s += fmt.Sprintf("; %d left in the cloud by their management policies (%s)", total(t.abandoned), counts(t.abandoned))
	}
	if len(t.protected) > 0 {
		s += fmt.Sprintf("; %d deletes refused for deletion protection (%s)", total(t.protected), counts(t.protected))
	}
	if len(t.stuck) > 0 {
		s += fmt.Sprintf("; %d deletes FAILED FOR GOOD (%s)", total(t.stuck), counts(t.stuck))
	}
	return s
}

// errRefused is a delete the cloud (or provider) refused, to be tried
// again retryMin to retryMin+retryJitter later: the handler retries it
// without printing it.
var errRefused = errors.New("refused")

// objKey names an object for the simulator's maps.
func objKey(o object) string {
	return o["apiVersion"].(string) + "/" + o["kind"].(string) + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
}

// hasFinalizer reports whether an object carries a finalizer.
func hasFinalizer(o object, f string) bool {
	l, _ := at(o, "metadata", "finalizers").([]any)
	return slices.Contains(l, any(f))
}

// setFinalizer adds or removes a finalizer, conditional on the object's
// resource version, reading it again on a conflict.
func (c *cloud) setFinalizer(o object, f string, add bool) error {
	av, kind, ns, name := o["apiVersion"].(string), o["kind"].(string), str(o, "metadata", "namespace"), str(o, "metadata", "name")
	for range 5 {
		if hasFinalizer(o, f) == add {
			return nil
		}
		l, _ := at(o, "metadata", "finalizers").([]any)
		next := []any{}
		for _, e := range l {
			if e != f {
				next = append(next, e)
			}
		}
		if add {
			next = append(next, f)
		}
		err := c.k.patch(av, kind, ns, name, object{"metadata": map[string]any{"finalizers": next, "resourceVersion": str(o, "metadata", "resourceVersion")}})
		if errors.Is(err, errNotFound) {
			return nil
		}
		if !errors.Is(err, errConflict) {
			return err
		}
		if o, err = c.k.get(av, kind, ns, name); errors.Is(err, errNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return fmt.Errorf("cannot update the finalizers of %s %s: conflicts", kind, name)
}

// kindsOf are the served managed resource kinds a holder's kind names, in
// the scope of o (namespaced, or cluster-scoped for a legacy XR's).
func (c *cloud) kindsOf(key string, o object) []kindRef {
	namespaced := str(o, "metadata", "namespace") != ""
	var out []kindRef
	for _, kr := range c.kinds {
		if strings.Contains(kr.apiVersion, ".m.") != namespaced {
			continue
		}
		k := kindKey(kr.apiVersion, kr.kind)
		if k == key || (key == "*" && cloudOfKey(k) == cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))) {
			out = append(out, kr)
		}
	}
	return out
}

// live lists the managed resources of a kind in o's scope whose external
// resource exists: in the API server (deleting or not), not deleted with
// another, not o.
func (c *cloud) live(key string, o object) ([]object, error) {
	var out []object
	for _, kr := range c.kindsOf(key, o) {
		items, err := c.listObjs(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), "")
		if err != nil {
			return nil, err
		}
		c.del.mu.Lock()
		for _, it := range items {
			if !c.del.gone[str(it, "metadata", "uid")] && str(it, "metadata", "uid") != str(o, "metadata", "uid") {
				out = append(out, it)
			}
		}
		c.del.mu.Unlock()
	}
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(c.del.kept)) {
		it := c.del.kept[k]
		if str(it, "metadata", "namespace") != str(o, "metadata", "namespace") || str(it, "metadata", "uid") == str(o, "metadata", "uid") {
			continue
		}
		ik := kindKey(it["apiVersion"].(string), it["kind"].(string))
		if ik == key || (key == "*" && cloudOfKey(ik) == cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))) {
			out = append(out, it)
		}
	}
	return out, nil
}

// extKey names a managed resource's external resource: its kind and
// external name.
func extKey(o object) string {
	return kindKey(o["apiVersion"].(string), o["kind"].(string)) + "/" + extName(o)
}

// extName is a managed resource's external name, or its name.
func extName(o object) string {
	if name := str(o, "metadata", "annotations", "crossplane.io/external-name"); name != "" {
		return name
	}
	return str(o, "metadata", "name")
}

// orphans reports whether deleting a managed resource leaves its external
// resource, as crossplane-runtime and the Terraform providers do: with
// management policies without Delete, a legacy deletionPolicy Orphan, or
// a Terraform deletion_policy ABANDON.
func orphans(o object) bool {
	if mp, ok := at(o, "spec", "managementPolicies").([]any); ok && len(mp) > 0 && !slices.Contains(mp, any("*")) && !slices.Contains(mp, any("Delete")) {
		return true
	}
	return str(o, "spec", "deletionPolicy") == "Orphan" || strings.EqualFold(str(o, "spec", "forProvider", "deletionPolicy"), "ABANDON")
}

// adopt forgets an abandoned external resource that a managed resource
// manages again (another XR composing the same, by external name).
func (c *cloud) adopt(o object) {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	delete(c.del.kept, extKey(o))
}

// abandonedReferencing returns the external resources left in the cloud
// that reference any of objs: what keeps them from being deleted.
func (c *cloud) abandonedReferencing(objs []object) []object {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	var out []object
	for _, k := range slices.Sorted(maps.Keys(c.del.kept)) {
		if references(c.del.kept[k], objs) {
			out = append(out, c.del.kept[k])
		}
	}
	return out
}

// holding returns a live resource that holds o, by a holder, or nil.
func (c *cloud) holding(o object, h holder) (object, error) {
	holders, err := c.live(h.kind, o)
	if err != nil || len(holders) == 0 {
		return nil, err
	}
	ends := []object{o}
	if h.at != "" {
		ats, err := c.live(h.at, o)
		if err != nil {
			return nil, err
		}
		if ends = referenced(o, ats); len(ends) == 0 {
			return nil, nil
		}
	}
	if h.via != "" {
		vias, err := c.live(h.via, o)
		if err != nil {
			return nil, err
		}
		var mids []object
		for _, v := range vias {
			if references(v, ends) {
				mids = append(mids, v)
			}
		}
		ends = mids
	}
	for _, hd := range holders {
		if references(hd, ends) {
			return hd, nil
		}
	}
	return nil, nil
}

// unmet returns why a resource's deletion fails for good, or "": what it
// needs is gone.
func (c *cloud) unmet(o object, r deletionRule) (string, error) {
	if why, err := c.missing(o, r.needs); why != "" || err != nil {
		return r.fails + " " + why, err
	}
	if r.connects {
		why, err := c.reach(o)
		if why != "" || err != nil {
			return r.fails + ": " + why, err
		}
	}
	return "", nil
}

// missing returns which of what o needs is gone, or "".
func (c *cloud) missing(o object, needs []need) (string, error) {
	for _, n := range needs {
		for _, rf := range refsOf(o) {
			if rf.field != n.field {
				continue
			}
			cands, err := c.live(n.kind, o)
			if err != nil {
				return "", err
			}
			found := false
			for _, cd := range cands {
				found = found || resolves(rf, o, cd)
			}
			if !found {
				return fmt.Sprintf("(the %s its %s selects is gone)", strings.SplitN(n.kind, " ", 2)[1], n.field), nil
			}
		}
	}
	return "", nil
}

// reach returns why a provider-helm or provider-sql resource's provider
// cannot connect, or "": its ProviderConfig is gone, or the Secret of its
// credentials, or what wrote that Secret (a cluster, a token, a server).
func (c *cloud) reach(o object) (string, error) {
	group := strings.Split(o["apiVersion"].(string), "/")[0]
	pcKind := str(o, "spec", "providerConfigRef", "kind")
	if pcKind == "" {
		pcKind = "ProviderConfig"
	}
	pcName := str(o, "spec", "providerConfigRef", "name")
	kr, ok := c.pcKinds[group+"/"+pcKind]
	if !ok || pcName == "" {
		return "", nil
	}
	ns := ""
	if strings.Contains(group, ".m.") && pcKind == "ProviderConfig" {
		ns = str(o, "metadata", "namespace")
	}
	pc, err := c.getObj(kr.apiVersion, kr.kind, ns, pcName)
	if errors.Is(err, errNotFound) {
		return fmt.Sprintf("its %s %s is gone", pcKind, pcName), nil
	}
	if err != nil {
		return "", err
	}
	sref, _ := at(pc, "spec", "credentials", "secretRef").(map[string]any)
	if sref == nil {
		sref, _ = at(pc, "spec", "credentials", "connectionSecretRef").(map[string]any)
	}
	name, _ := sref["name"].(string)
	sns, _ := sref["namespace"].(string)
	if sns == "" {
		sns = str(o, "metadata", "namespace")
	}
	if name == "" {
		return "", nil
	}
	sec, err := c.getObj("v1", "Secret", sns, name)
	if errors.Is(err, errNotFound) {
		return fmt.Sprintf("the credentials Secret %s/%s of its %s is gone", sns, name, pcKind), nil
	}
	if err != nil {
		return "", err
	}
	owners, _ := at(sec, "metadata", "ownerReferences").([]any)
	for _, ow := range owners {
		m, _ := ow.(map[string]any)
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		oname, _ := m["name"].(string)
		ons := sns
		if !strings.Contains(av, ".m.") {
			ons = ""
		}
		owner, err := c.getObj(av, kind, ons, oname)
		c.del.mu.Lock()
		gone := err == nil && c.del.gone[str(owner, "metadata", "uid")]
		c.del.mu.Unlock()
		if errors.Is(err, errNotFound) || gone {
			return fmt.Sprintf("the %s %s whose credentials Secret it reads is gone", kind, oname), nil
		}
		if err != nil {
			return "", err
		}
		if r, ok := ruleOf(kindKey(av, kind)); ok {
			if why, err := c.missing(owner, r.goodWhile); why != "" || err != nil {
				return fmt.Sprintf("the credentials the %s %s wrote are no good %s", kind, oname, why), err
			}
		}
	}
	return "", nil
}

// tried reports whether a delete of o was tried less than retryMin ago (a
// watch event of the object's own update since); else it records the try.
func (c *cloud) tried(o object) bool {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	k := objKey(o)
	if t, ok := c.del.lastTry[k]; ok && time.Since(t) < retryMin {
		return true
	}
	c.del.lastTry[k] = time.Now()
	return false
}

// deleteManaged is the provider deleting a managed resource whose
// deletion began: the cloud deletes it unless it refuses (then errRefused:
// tried again later), and the provider removes its finalizer.
func (c *cloud) deleteManaged(o object) error {
	if !hasFinalizer(o, managedFinalizer) {
		return nil
	}
	if c.tried(o) {
		return errRefused
	}
	out, why, err := c.decide(o)
	if err != nil {
		return err
	}
	if c.record(o, out) {
		fmt.Printf("cloud simulator: STUCK: %s %s/%s cannot be deleted: %s\n", o["kind"], str(o, "metadata", "namespace"), str(o, "metadata", "name"), why)
	}
	if out != deleted && out != orphaned {
		return c.refuse(o, why)
	}
	return c.setFinalizer(o, managedFinalizer, false)
}

// The outcomes of deleting a managed resource.
const (
	// deleted: the cloud deleted it (or had, with another).
	deleted = iota
	// orphaned: its management policies leave it in the cloud.
	orphaned
	// inUse: the cloud refused, while something uses it.
	inUse
	// protected: the cloud refused, for its deletion protection.
	protected
	// failed: it fails, and will fail: what it needs is gone.
	failed
)

// decide is what becomes of deleting o, and why.
func (c *cloud) decide(o object) (int, string, error) {
	if orphans(o) {
		return orphaned, "", nil
	}
	r, _ := ruleOf(kindKey(o["apiVersion"].(string), o["kind"].(string)))
	for _, p := range r.protectedBy {
		if on, _ := at(o, append([]string{"spec", "forProvider"}, p...)...).(bool); on {
			return protected, r.protects, nil
		}
	}
	why, forGood, err := c.verdict(o)
	switch {
	case err != nil:
		return 0, "", err
	case why == "":
		return deleted, "", nil
	case forGood:
		return failed, why, nil
	}
	return inUse, why, nil
}

// record counts an outcome, keeps what is orphaned as abandoned in the
// cloud, and reports whether the object failed for good for the first
// time.
func (c *cloud) record(o object, out int) bool {
	c.del.mu.Lock()
	defer c.del.mu.Unlock()
	kind := o["kind"].(string)
	switch out {
	case orphaned:
		if !c.del.gone[str(o, "metadata", "uid")] {
			c.del.kept[extKey(o)] = o
			c.del.abandoned[kind]++
		}
	case inUse:
		c.del.refused[kind]++
	case protected:
		c.del.protected[kind]++
	case failed:
		c.del.stuck[kind]++
		first := !c.del.reported[objKey(o)]
		c.del.reported[objKey(o)] = true
		return first
	}
	if out == deleted || out == orphaned {
		delete(c.del.lastTry, objKey(o))
	}
	return false
}

// verdict is the cloud's answer to deleting o: "" when it deletes it (and
// what goes with it, which it marks gone); else why not, and whether for
// good (what the deletion needs is gone) or until what uses it is gone.
func (c *cloud) verdict(o object) (why string, forGood bool, err error) {
	c.del.mu.Lock()
	gone := c.del.gone[str(o, "metadata", "uid")]
	c.del.mu.Unlock()
	if gone {
		return "", false, nil
	}
	r, _ := ruleOf(kindKey(o["apiVersion"].(string), o["kind"].(string)))
	if why, err := c.unmet(o, r); why != "" || err != nil {
		return why, true, err
	}
	for _, h := range r.heldBy {
		by, err := c.holding(o, h)
		if err != nil {
			return "", false, err
		}
		if by != nil {
			return fmt.Sprintf("%s: in use by %s %s", r.refuses, by["kind"], str(by, "metadata", "name")), false, nil
		}
	}
	return "", false, c.cascade(o, r)
}

// listObjs and getObj are the API server's list and get, or what a test
// puts in their place.
func (c *cloud) listObjs(apiVersion, kind, namespace, selector string) ([]object, error) {
	if c.fake != nil {
		return c.fake.list(apiVersion, kind, namespace, selector)
	}
	return c.k.list(apiVersion, kind, namespace, selector)
}

func (c *cloud) getObj(apiVersion, kind, namespace, name string) (object, error) {
	if c.fake != nil {
		return c.fake.get(apiVersion, kind, namespace, name)
	}
	return c.k.get(apiVersion, kind, namespace, name)
}

// store is what deletion's decisions read, the API server or a test's
// objects.
type store interface {
	list(apiVersion, kind, namespace, selector string) ([]object, error)
	get(apiVersion, kind, namespace, name string) (object, error)
}

// cascade marks what the cloud deletes along with o gone, and what goes
// with that.
func (c *cloud) cascade(o object, r deletionRule) error {
	for _, t := range r.takes {
		items, err := c.live(t, o)
		if err != nil {
			return err
		}
		for _, it := range items {
			if !references(it, []object{o}) {
				continue
			}
			c.del.mu.Lock()
			c.del.gone[str(it, "metadata", "uid")] = true
			if kept, ok := c.del.kept[extKey(it)]; ok && str(kept, "metadata", "uid") == str(it, "metadata", "uid") {
				delete(c.del.kept, extKey(it))
			}
			c.del.mu.Unlock()
			if tr, ok := ruleOf(kindKey(it["apiVersion"].(string), it["kind"].(string))); ok {
				if err := c.cascade(it, tr); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// refuse reports a refused delete on the resource as crossplane-runtime
// does (Synced False, "delete failed"; Ready False, Deleting) when it says
// something new, and returns errRefused.
func (c *cloud) refuse(o object, why string) error {
	msg := "delete failed: " + why
	if _, _, m := condition(o, "Synced"); m != msg {
		now := time.Now().UTC().Format(time.RFC3339)
		err := c.k.patchStatus(o["apiVersion"].(string), o["kind"].(string), str(o, "metadata", "namespace"), str(o, "metadata", "name"), map[string]any{"conditions": []any{
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": msg, "lastTransitionTime": now},
			map[string]any{"type": "Ready", "status": "False", "reason": "Deleting", "lastTransitionTime": now},
		}})
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
	}
	return errRefused
}

// providerConfig is provider-helm's or provider-sql's ProviderConfig
// reconciler, as crossplane-runtime's: it puts its finalizer on the
// ProviderConfig and, once its deletion began, removes it only when no
// ProviderConfigUsage and no managed resource of the provider references
// it any more.
func (c *cloud) providerConfig(o object) error {
	if str(o, "metadata", "deletionTimestamp") == "" {
		return c.setFinalizer(o, inUseFinalizer, true)
	}
	if !hasFinalizer(o, inUseFinalizer) {
		return nil
	}
	if c.tried(o) {
		return errRefused
	}
	users, err := c.configUsers(o)
	if err != nil {
		return err
	}
	if users > 0 {
		c.del.mu.Lock()
		c.del.held["provider-"+cloudOfKey(kindKey(o["apiVersion"].(string), o["kind"].(string)))]++
		c.del.mu.Unlock()
		return errRefused
	}
	return c.setFinalizer(o, inUseFinalizer, false)
}

// configUsers counts what uses a ProviderConfig: the provider's managed
// resources that reference it (spec.providerConfigRef), and its
// ProviderConfigUsages.
func (c *cloud) configUsers(pc object) (int, error) {
	group := strings.Split(pc["apiVersion"].(string), "/")[0]
	ns := str(pc, "metadata", "namespace")
	name := str(pc, "metadata", "name")
	n := 0
	for _, kr := range c.kinds {
		if strings.Split(kr.apiVersion, "/")[0] != group {
			continue
		}
		items, err := c.listObjs(kr.apiVersion, kr.kind, ns, "")
		if err != nil {
			return 0, err
		}
		for _, it := range items {
			kind := str(it, "spec", "providerConfigRef", "kind")
			if kind == "" {
				kind = "ProviderConfig"
			}
			if kind == pc["kind"] && str(it, "spec", "providerConfigRef", "name") == name {
				n++
			}
		}
	}
	if kr, ok := c.pcKinds[group+"/ProviderConfigUsage"]; ok {
		items, err := c.listObjs(kr.apiVersion, kr.kind, ns, "crossplane.io/provider-config="+name)
		if err != nil {
			return 0, err
		}
		n += len(items)
	}
	return n, nil
}
