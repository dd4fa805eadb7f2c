package registry

// A DeletionRole is what a kind is to the order in which Crossplane deletes
// an XR's composed resources. Crossplane deletes them all at once; a Usage
// holds one back until another is gone. Most orders do not matter: where
// the cloud refuses to delete a resource while something still uses it (a
// VPC with subnets, a role with attached policies, a zone with records),
// the provider retries until the user is gone. A Usage is rendered only
// for a dependency edge between the roles of usageRules, where deleting
// the used resource first leaves the user stuck or orphans something.
type DeletionRole uint8

// Deletion roles; a kind may play several.
const (
	// Access is a ProviderConfig that objects inside a cluster or a
	// database (Helm releases, provider-kubernetes Objects, SQL roles) are
	// reached through. Providers hold a ProviderConfig while it has users
	// (ProviderConfigUsages), so its users need no Usage on it.
	Access DeletionRole = 1 << iota
	// Credentials is what an Access reads its credentials from, or what
	// those credentials are only good for: a cluster, a cluster's token, a
	// database server.
	Credentials
	// Compute is a cluster or node pool that runs with a cloud identity.
	Compute
	// ComputeIdentity is such an identity or its grant: an IAM role or
	// policy attachment, a service account, a managed identity, a role
	// assignment.
	ComputeIdentity
	// Database is a database server on a private network peering.
	Database
	// Peering is the private network peering a database server lives on.
	Peering
)

// A UsageRule is an edge between roles whose order of deletion matters,
// with the failure its Usage prevents.
type UsageRule struct {
	By, Of DeletionRole
	// Prevents is what happens without the Usage.
	Prevents string
}

// UsageRules are the only edges that get a Usage.
var UsageRules = []UsageRule{
	{By: Access, Of: Credentials, Prevents: "the cluster (or database server) or its credentials deleted while the ProviderConfig's users still need them to be deleted: every Helm release, Object or SQL role inside is stuck on its finalizer for good, and the ProviderConfig with them"},
	{By: Credentials, Of: Credentials, Prevents: "the cluster deleted before the token it issues (EKS ClusterAuth): the ProviderConfig's kubeconfig stops working while the releases inside still need it"},
	{By: Compute, Of: ComputeIdentity, Prevents: "the identity a cluster or node pool runs with deleted first: EKS puts the node group or cluster in DELETE_FAILED (its role cannot terminate instances or release network interfaces), AKS cannot remove its load balancers from the network, and the nodes or load balancers are left behind"},
	{By: Database, Of: Peering, Prevents: "the private services connection removed while the Cloud SQL instance on it is still being deleted: the peering's deletion fails and its VPC is left with a half-removed producer network"},
}

// Plays reports whether the kind plays role r.
func (k *Kind) Plays(r DeletionRole) bool { return k.Roles&r != 0 }

// As returns the kind playing the supplied deletion roles.
func (k *Kind) As(roles ...DeletionRole) *Kind {
	for _, r := range roles {
		k.Roles |= r
	}
	return k
}

// NeedsUsage returns the rule by which a resource of kind by that depends
// on one of kind of gets a Usage, and false when their deletion order does
// not matter.
func NeedsUsage(by, of *Kind) (UsageRule, bool) {
	for _, r := range UsageRules {
		if by.Plays(r.By) && of.Plays(r.Of) {
			return r, true
		}
	}
	return UsageRule{}, false
}
