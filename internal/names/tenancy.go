package names

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Tenancy of names. Buckets, storage accounts, service accounts, IAM roles,
// clusters, database servers, DNS zones and records, certificates and CDN
// endpoints have names that are global within a cloud project, account,
// subscription or DNS zone, and a provider adopts an existing cloud
// resource by its name. So an XR in one namespace must never render a name
// that another namespace's XR owns. Two rules make that so:
//
//   - Derived names carry the namespace: an XR of a tenant's namespace
//     derives its cloud names from Tenant(namespace, name), never from its
//     name alone, so that two namespaces' XRs of the same name differ.
//   - Chosen names are assigned: a host (an Ingress's, a front end's, a
//     Cluster's domain) and an explicit cloud name (a bucket's name, an
//     import's existing names, a Cluster's clusterName label) must be
//     assigned to the XR's namespace by the platform team (environment key
//     tenancy), never taken first-come.

// TagLen is the length of a namespace's tag (Tag).
const TagLen = 5

// MaxBase bounds the cloud name an XR derives its names from: the clouds'
// shortest limit on a name derived from it whole (a GKE, EKS or AKS
// cluster's, an AppEnvironment's).
const MaxBase = 40

// tagAlphabet is the tag's alphabet: lower-case letters and digits, as
// every cloud takes in a name (Crockford's base 32, lower-cased).
const tagAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// Tag is a short tag of a namespace, the same on every call: a digit,
// then TagLen-1 characters of its SHA-256 in [0-9a-z]. The digit sets a
// derived name apart from the bare names of a namespace whose XRs keep
// them (LooksDerived).
func Tag(namespace string) string {
	h := hash(namespace, TagLen)
	sum := sha256.Sum256([]byte(namespace))
	return string('0'+sum[31]%10) + h[1:]
}

// LooksDerived reports whether a bare name has the form of a derived one
// ("<name>-<digit><4 of [0-9a-z]>"): a namespace of bare names may not use
// it, or one of its XRs could take a tenant's derived names.
func LooksDerived(name string) bool {
	i := len(name) - TagLen - 1
	if i < 1 || name[i] != '-' || name[i+1] < '0' || name[i+1] > '9' {
		return false
	}
	for _, c := range name[i+2:] {
		if !strings.ContainsRune(tagAlphabet, c) {
			return false
		}
	}
	return true
}

// hash is n characters of tagAlphabet from the SHA-256 of s.
func hash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	out := make([]byte, n)
	for i := range out {
		// 5 bits a character, from consecutive bits of the sum.
		bit := i * 5
		v := (uint16(sum[bit/8])<<8 | uint16(sum[bit/8+1])) >> (11 - bit%8) & 31
		out[i] = tagAlphabet[v]
	}
	return string(out)
}

// longHashLen is the length of the hash that keeps a shortened tenant name
// apart from every other: 50 bits, which no one finds a collision of by
// trying names.
const longHashLen = 10

// Tenant is the cloud name an XR named name in namespace derives its cloud
// names from: "<name>-<Tag(namespace)>". When that is longer than max, it
// keeps a prefix of the name and appends a hash of namespace and name
// together, so that a long name still cannot be chosen to match another
// namespace's. name must be a valid cloud name (a letter first, then
// lower-case letters, digits and '-', not ending in '-').
func Tenant(namespace, name string, max int) string {
	s := name + "-" + Tag(namespace)
	if len(s) <= max {
		return s
	}
	prefix := strings.TrimRight(name[:max-longHashLen-1], "-")
	return prefix + "-" + hash(namespace+"/"+name, longHashLen)
}

// Tenancy is the platform team's assignment of hosts and cloud names to
// namespaces: environment key tenancy.
type Tenancy struct {
	// Namespaces are each namespace's grant, by namespace.
	Namespaces map[string]Grant `json:"namespaces"`
	// Default is the grant of every namespace without an entry of its
	// own; "{namespace}" in its patterns stands for the namespace (say,
	// hosts ["*.{namespace}.apps.example.com"]).
	Default *Grant `json:"default"`
}

// A Grant is what one namespace may use.
type Grant struct {
	// Hosts are the DNS names its XRs may use (an Ingress's or a front
	// end's host, a Cluster's domain): a host, or "*.<domain>" for every
	// name under the domain (not the domain itself).
	Hosts []string `json:"hosts"`
	// Names are the cloud names its XRs may choose (a bucket's name, an
	// import's existing resources, a Cluster's clusterName label): a name,
	// or a prefix followed by "*". Names that begin with the XR's own
	// derived name and '-' need no grant.
	Names []string `json:"names"`
	// BareNames says that its XRs derive their cloud names from their names alone,
	// without the namespace's tag, as before names had tenants. For the
	// platform team's own namespace, whose names it keeps apart itself.
	BareNames bool `json:"bareNames"`
}

// placeholder stands for the namespace in the Default grant's patterns.
const placeholder = "{namespace}"

// Of returns the grant of a namespace: its own, else the default with the
// namespace in place of "{namespace}", else nothing.
func (t *Tenancy) Of(namespace string) Grant {
	if t == nil {
		return Grant{}
	}
	if g, ok := t.Namespaces[namespace]; ok {
		return g
	}
	if t.Default == nil {
		return Grant{}
	}
	g := *t.Default
	g.Hosts = expand(g.Hosts, namespace)
	g.Names = expand(g.Names, namespace)
	return g
}

// expand puts the namespace in place of the placeholder.
func expand(patterns []string, namespace string) []string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = strings.ReplaceAll(p, placeholder, namespace)
	}
	return out
}

// Refusal says why a namespace may not use a host or a name, without
// naming any other namespace.
type Refusal int

// Refusals.
const (
	// Assigned: the namespace may use it.
	Assigned Refusal = iota
	// NotAssigned: no grant of the namespace covers it.
	NotAssigned
	// OtherNamespace: another namespace's grant covers it at least as
	// closely as the namespace's own.
	OtherNamespace
)

// Host says whether namespace may use host. The namespace whose grant
// covers the host most closely (an exact host before a wildcard, a longer
// domain before a shorter) owns it; a tie is nobody's.
func (t *Tenancy) Host(namespace, host string) Refusal {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return t.owner(namespace, host, func(g Grant) []string { return g.Hosts }, hostMatch)
}

// Name says whether namespace may choose the cloud name, as Host does for
// hosts: the closest grant owns it.
func (t *Tenancy) Name(namespace, name string) Refusal {
	return t.owner(namespace, name, func(g Grant) []string { return g.Names }, nameMatchAnyCloud)
}

// nameMatchAnyCloud is nameMatch of a name as it is written and as a cloud
// that drops '-' names it (an Azure storage account): legacy-a-zure is
// legacy-azure there.
func nameMatchAnyCloud(pattern, name string) int {
	return max(nameMatch(pattern, name), nameMatch(strings.ReplaceAll(pattern, "-", ""), strings.ReplaceAll(name, "-", "")))
}

// owner applies the closest-grant rule with the supplied patterns and
// matcher, which returns how closely a pattern covers a value (0: not).
func (t *Tenancy) owner(namespace, v string, patterns func(Grant) []string, match func(pattern, v string) int) Refusal {
	mine := closest(patterns(t.Of(namespace)), v, match)
	if mine == 0 {
		return NotAssigned
	}
	if t == nil {
		return Assigned
	}
	for _, ns := range slices.Sorted(maps.Keys(t.Namespaces)) {
		if ns != namespace && closest(patterns(t.Namespaces[ns]), v, match) >= mine {
			return OtherNamespace
		}
	}
	// The default grant of a namespace a templated pattern would give the
	// value to, when that namespace has no grant of its own.
	if t.Default != nil {
		for _, p := range patterns(*t.Default) {
			for _, ns := range templated(p, v) {
				if _, own := t.Namespaces[ns]; own || ns == namespace {
					continue
				}
				if match(strings.ReplaceAll(p, placeholder, ns), v) >= mine {
					return OtherNamespace
				}
			}
		}
	}
	return Assigned
}

// closest is how closely the closest of patterns covers v; 0 when none
// does.
func closest(patterns []string, v string, match func(pattern, v string) int) int {
	best := 0
	for _, p := range patterns {
		best = max(best, match(p, v))
	}
	return best
}

// hostMatch is how closely a host pattern covers a host: twice the labels
// of its domain, and one more for an exact host; 0 when it does not.
func hostMatch(pattern, host string) int {
	pattern = strings.TrimSuffix(strings.ToLower(pattern), ".")
	if d, ok := strings.CutPrefix(pattern, "*."); ok {
		if strings.HasSuffix(host, "."+d) {
			return 2 * (strings.Count(d, ".") + 1)
		}
		return 0
	}
	if pattern != "" && host == pattern {
		return 2*(strings.Count(pattern, ".")+1) + 1
	}
	return 0
}

// nameMatch is how closely a name pattern covers a name: the length of its
// prefix, and one more for an exact name; 0 when it does not.
func nameMatch(pattern, name string) int {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		if strings.HasPrefix(name, p) {
			return 2*len(p) + 1
		}
		return 0
	}
	if pattern != "" && name == pattern {
		return 2*len(pattern) + 2
	}
	return 0
}

// templated returns the namespaces a pattern with the placeholder could
// give v to: each part of v the placeholder could stand for, a DNS label.
// A host has at most one; a name prefix such as "{namespace}-*" may have
// several, since namespaces contain '-' too.
func templated(pattern, v string) []string {
	before, after, ok := strings.Cut(pattern, placeholder)
	if !ok {
		return nil
	}
	var out []string
	if strings.HasPrefix(pattern, "*.") {
		// "*.{namespace}.<domain>": the label before the domain.
		rest, ok := strings.CutSuffix(v, after)
		if !ok || before != "*." {
			return nil
		}
		if i := strings.LastIndex(rest, "."); i >= 0 {
			out = append(out, rest[i+1:])
		}
		return out
	}
	after = strings.TrimSuffix(after, "*")
	rest, ok := strings.CutPrefix(v, before)
	if !ok {
		return nil
	}
	for i := 1; i <= len(rest); i++ {
		if ns := rest[:i]; strings.HasPrefix(rest[i:], after) && !strings.Contains(ns, ".") {
			out = append(out, ns)
		}
	}
	return out
}

// Why is the message of a refusal of what (say `host "a.example.com"`) for
// namespace, saying where the platform team assigns it: key is the
// grant's list (hosts or names).
func (r Refusal) Why(what, namespace, key string) string {
	switch r {
	case NotAssigned:
		return fmt.Sprintf("%s is not assigned to namespace %q: hosts and chosen cloud names are global, so the platform team assigns them to namespaces (environment key tenancy.namespaces.%s.%s)", what, namespace, namespace, key)
	case OtherNamespace:
		return fmt.Sprintf("%s is assigned to another namespace: hosts and chosen cloud names are global, and one namespace's may not be used by another's XRs", what)
	default:
		return ""
	}
}
