package registry

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

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
func (k *ResourceKind) Plays(r DeletionRole) bool { return k.Roles&r != 0 }

// As returns the kind playing the supplied deletion roles.
func (k *ResourceKind) As(roles ...DeletionRole) *ResourceKind {
	for _, r := range roles {
		k.Roles |= r
	}
	return k
}

// NeedsUsage returns the rule by which a resource of kind by that depends
// on one of kind of gets a Usage, and false when their deletion order does
// not matter.
func NeedsUsage(by, of *ResourceKind) (UsageRule, bool) {
	for _, r := range UsageRules {
		if by.Plays(r.By) && of.Plays(r.Of) {
			return r, true
		}
	}
	return UsageRule{}, false
}

// withUsages inserts after each resource one Usage per dependency edge
// whose deletion order matters (NeedsUsage), so that Crossplane deletes
// those dependents before what they use. A Usage's name is generated from
// the two it joins; one that clashes with another composed resource's
// name is refused.
//
// A Usage names both its ends (resourceRef) and is rendered only once both
// exist; until then it is Pending, and the engine composes it later without
// holding anything for it. Named ends spare Crossplane's Usage controller
// resolving a selector, which lists every resource of that kind in the
// namespace (uncached) and retries while an end does not exist yet. The
// selectors stay, ignored by Crossplane beside a resourceRef, so that
// UsageEnds can read which composed resources a Usage joins.
func withUsages(ctx *Context, rs []*Rendered, byName map[string]*Rendered) ([]*Rendered, error) {
	out := make([]*Rendered, 0, 2*len(rs))
	uk := UsageKind(ctx.XR.Scope)
	usages := map[string]string{}
	for _, rd := range rs {
		out = append(out, rd)
		if rd.Retire != "" {
			continue
		}
		ends := make([]usageEnd, 0, len(rd.DependsOn)+len(rd.Uses))
		for _, d := range rd.DependsOn {
			of := byName[d]
			ends = append(ends, usageEnd{name: d, kind: of.Kind, selector: ctx.Selector(d), observed: ctx.Observed(d)})
		}
		for _, u := range rd.Uses {
			if _, clash := byName[u.Name]; clash {
				return nil, fmt.Errorf("generated names clash: %q, which composed resource %q uses in another XR, is the name of one of this XR's composed resources", u.Name, rd.Name)
			}
			ends = append(ends, usageEnd{name: u.Name, kind: u.Kind, selector: u.Selector, observed: u.Observed})
		}
		byRef := object.String(ctx.Observed(rd.Name), "metadata", "name")
		for _, of := range ends {
			if _, ok := NeedsUsage(rd.Kind, of.kind); !ok {
				continue
			}
			d := of.name
			name := UsageName(rd.Name, d)
			if clash, ok := byName[name]; ok {
				return nil, fmt.Errorf("generated names clash: the Usage that protects %q while %q uses it would be named %q, which is the name of the composed resource of %s; rename it (no pool name may make a resource name end in -uses-<resource>)", d, rd.Name, name, clash.Component)
			}
			if prev, ok := usages[name]; ok {
				return nil, fmt.Errorf("generated names clash: the Usages %s and %s would both be named %q; rename one of the resources they join", prev, rd.Name+" on "+d, name)
			}
			usages[name] = rd.Name + " on " + d
			u := &Rendered{
				Name:      name,
				Component: rd.Component,
				Condition: rd.Condition,
				Kind:      uk,
				UsageBy:   rd.Name,
			}
			ofRef := object.String(of.observed, "metadata", "name")
			if byRef == "" || ofRef == "" {
				u.Pending = fmt.Sprintf("waits until %s and %s exist, to name them", rd.Name, d)
				out = append(out, u)
				continue
			}
			u.Object = object.Object{
				"apiVersion": uk.APIVersion(ctx.XR.Scope),
				"kind":       uk.Kind,
				"metadata": map[string]any{
					"labels":      map[string]any{LabelCloud: ctx.Cloud.Name},
					"annotations": map[string]any{AnnotationComponent: rd.Component},
				},
				"spec": map[string]any{
					"replayDeletion": true,
					"of":             usageRef(ctx, of.kind, of.selector, ofRef),
					"by":             usageRef(ctx, rd.Kind, ctx.Selector(rd.Name), byRef),
				},
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// usageEnd is what a Usage protects: one of the XR's composed resources
// (selected by controller and labels) or a resource of another XR (by its
// labels), and its observed state (nil until it exists).
type usageEnd struct {
	name     string
	kind     *ResourceKind
	selector map[string]any
	observed *structpb.Struct
}

// usageRef is one end of a Usage: the resource named name, in the Usage's
// namespace, and the selector that would find it (which Crossplane ignores
// beside the name).
func usageRef(ctx *Context, k *ResourceKind, selector map[string]any, name string) map[string]any {
	return map[string]any{
		"apiVersion":       k.APIVersion(ctx.XR.Scope),
		"kind":             k.Name(ctx.XR.Scope),
		"resourceRef":      map[string]any{"name": name},
		"resourceSelector": selector,
	}
}

// UsageName is the composition-resource name of the Usage that protects of
// while by uses it.
func UsageName(by, of string) string { return by + "-uses-" + of }
