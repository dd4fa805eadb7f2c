package appenvironment

import (
	"slices"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// An AppEnvironment's claims are the names no other environment beside it
// may share: its namespace on its Cluster, its hosts and its bucket names.
// Who owns a name is decided among the siblings (findSiblings), which the
// function reads as required resources. Crossplane v2.4 watches what a
// function requires, so every status change of an environment would re-run
// every other environment of its namespace and cloud: with K of them, K²
// reconciles while they converge, each re-applying all their composed
// resources. So an environment reads its siblings only until it holds its
// claims:
//
//   - a run whose checks pass writes the claims to status.claims.names;
//   - the next run whose checks pass with the same claims already there
//     checks once more (a sibling created in the same instant, which the
//     first run's cache had not seen yet, is seen by then) and sets
//     status.claims.confirmed;
//   - from then on, while the spec claims nothing it does not hold, the
//     environment no longer asks for its siblings. A new host or bucket
//     name, or a new Cluster, starts over.
//
// A name a sibling holds beats one it only asks for, whatever their ages: an
// environment that has a host is never displaced by an older one whose spec
// changed to it. Between two that both hold, or both only ask for, a name,
// the older wins, and among environments created at the same second the
// name decides (older). status is written by Crossplane for the function;
// siblings are of the XR's own namespace (for a claim, of its cloud), so a
// tenant allowed to write its XRs' status reaches only its own environments,
// and names global across namespaces are the environment's tenancy
// (checkTenancy), not the siblings'.

// claims is what status.claims says an environment holds.
type claims struct {
	names     []string
	confirmed bool
}

// heldClaims reads status.claims.
func heldClaims(x *xr.AppEnvironment) claims {
	return claims{
		names:     object.Strings(x.Status, "claims", "names"),
		confirmed: object.Get(x.Status, "claims", "confirmed").GetBoolValue(),
	}
}

// holds reports whether the environment holds key.
func (c claims) holds(key string) bool { return slices.Contains(c.names, key) }

// holdsAll reports whether the environment holds every one of keys.
func (c claims) holdsAll(keys []string) bool {
	for _, k := range keys {
		if !c.holds(k) {
			return false
		}
	}
	return true
}

// namespaceKey is the claim of x's namespace on its Cluster: the Cluster as
// sameCluster tells it apart (name, XR namespace, claim namespace).
func namespaceKey(x *xr.AppEnvironment) string {
	return "namespace=" + x.Labels[xr.LabelClaimNamespace] + "/" + x.Namespace + "/" + x.Parameters.ClusterRef.Name + "/" + x.AppNamespace()
}

// nameKey is the claim of a host or bucket name.
func nameKey(n claimed) string { return n.kind + "=" + n.value }

// claimKeys are x's claims, sorted: its namespace on its Cluster, its hosts
// and its bucket names (claimedNames).
func claimKeys(x *xr.AppEnvironment) []string {
	named := claimedNames(x)
	out := make([]string, 0, len(named)+1)
	out = append(out, namespaceKey(x))
	for _, n := range named {
		out = append(out, nameKey(n))
	}
	slices.Sort(out)
	return out
}

// settles reports whether the environment holds every one of keys,
// confirmed: it needs its siblings no more.
func (c claims) settles(keys []string) bool { return c.confirmed && c.holdsAll(keys) }

// ahead reports whether sibling s, not x, has key: the one that holds it,
// or, where both or neither do, the older.
func ahead(s, x *xr.AppEnvironment, key string) bool {
	sh, xh := heldClaims(s).holds(key), heldClaims(x).holds(key)
	if sh != xh {
		return sh
	}
	return older(s, x)
}

// claimsStatus is status.claims after a run whose ownership checks passed:
// the environment's claims, keys, confirmed once a run before this one
// (held) held them all.
func claimsStatus(keys []string, held claims) map[string]any {
	names := make([]any, len(keys))
	for i, k := range keys {
		names[i] = k
	}
	return map[string]any{"names": names, "confirmed": held.holdsAll(keys)}
}

// keptClaims is status.claims of a run that did not check ownership (its
// Cluster is not there yet): what the status held, unchanged.
func keptClaims(x *xr.AppEnvironment) (map[string]any, bool) {
	c := object.Get(x.Status, "claims").GetStructValue()
	if c == nil {
		return nil, false
	}
	return c.AsMap(), true
}
