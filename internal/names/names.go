// Package names derives cloud resource names that stay within a cloud's
// length limits without losing uniqueness.
package names

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// hashLen is the length of the hash suffix Shorten appends.
const hashLen = 6

// Shorten returns s when it fits in max characters. Otherwise it keeps a
// prefix of s and appends '-' and a short hash of the whole of s, so that two
// long names that share a prefix still differ.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	suffix := fmt.Sprintf("%08x", h.Sum32())[:hashLen]
	prefix := strings.TrimRight(s[:max-hashLen-1], "-_.")
	return prefix + "-" + suffix
}

// Join joins name parts with '-' and shortens the result to max.
func Join(max int, parts ...string) string {
	return Shorten(strings.Join(parts, "-"), max)
}

// Cut fits a name that takes no separator (an Azure storage account's)
// into max characters: a bare cloud name's is cut, as what runs was named;
// a tenant's (tenant true) keeps a prefix and a 50-bit hash of the whole,
// so that a name chosen to share another namespace's prefix is not cut to
// the same one.
func Cut(tenant bool, s string, max int) string {
	switch {
	case len(s) <= max:
		return s
	case !tenant:
		return s[:max]
	default:
		return s[:max-longHashLen] + hash(s, longHashLen)
	}
}

// JoinFor is Join for the names an XR derives from its cloud name: for a
// tenant's derived name (tenant true), a name too long keeps a prefix and a
// 50-bit hash of the whole, as Tenant does, since a prefix cut before the
// namespace's tag would leave only Shorten's 24-bit hash to keep two
// namespaces' names apart, which anyone can find a collision of by trying
// names; a bare name keeps Shorten's, which the names it runs with were
// made with.
func JoinFor(tenant bool, max int, parts ...string) string {
	s := strings.Join(parts, "-")
	if !tenant || len(s) <= max {
		return Shorten(s, max)
	}
	prefix := strings.TrimRight(s[:max-longHashLen-1], "-_.")
	return prefix + "-" + hash(s, longHashLen)
}

// Normalise lower-cases s and replaces every character outside [a-z0-9-]
// with '-', so that it can be part of a name on any cloud.
func Normalise(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	return string(b)
}
