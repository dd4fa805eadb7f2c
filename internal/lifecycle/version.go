// Package lifecycle holds the function's day-2 decisions, free of any cloud
// and of I/O: from the requested Kubernetes version, the versions the
// control plane and the node pools run and the environment's supported
// window, the next step of an upgrade (one minor at a time, control plane
// first, pools after, never ahead, never down); and from the desired and
// observed fields of a composed resource, whether a change is made in place,
// by rotating a node pool, or refused. Nothing here reads a clock or the
// network: the same inputs decide the same step.
package lifecycle

import (
	"fmt"
	"strconv"
	"strings"
)

// Minor is a Kubernetes minor version, such as 1.33. The zero Minor means
// "unknown" or "none".
type Minor struct {
	Major, Minor int
}

// Kubernetes is at major version 1, and its minors have at most three
// digits (the XR's spec.parameters.version allows no more). A plan walks
// from one minor to the next, so these bounds are what keeps every walk
// short: ParseMinor refuses anything outside them, and no loop here runs
// from one major to another.
const (
	major    = 1
	maxMinor = 999
)

// ParseMinor reads the minor version of a version string as the clouds
// write it: "1.33", "1.33.5", "v1.33.5", "1.33.5-gke.1200000",
// "1.33.5-eks-1a2b3c". It reports false for anything else, and for a
// version outside Kubernetes 1.0 to 1.999.
func ParseMinor(s string) (Minor, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return Minor{}, false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil || maj != major {
		return Minor{}, false
	}
	minor := parts[1]
	if i := strings.IndexAny(minor, "-+"); i >= 0 {
		minor = minor[:i]
	}
	mnr, err := strconv.Atoi(minor)
	if err != nil || mnr < 0 || mnr > maxMinor {
		return Minor{}, false
	}
	return Minor{Major: maj, Minor: mnr}, true
}

// walkable reports whether a walk from m to o, one minor at a time, ends:
// both are of one major and within Kubernetes's minors.
func walkable(m, o Minor) bool {
	return m.Major == o.Major && m.Minor >= 0 && m.Minor <= maxMinor && o.Minor >= 0 && o.Minor <= maxMinor
}

// MustParseMinor is ParseMinor for literals; it panics on a bad one.
func MustParseMinor(s string) Minor {
	m, ok := ParseMinor(s)
	if !ok {
		panic(fmt.Sprintf("not a Kubernetes minor version: %q", s))
	}
	return m
}

// IsZero reports whether the version is unknown.
func (m Minor) IsZero() bool { return m == Minor{} }

// String is "1.33", or "" for the zero Minor.
func (m Minor) String() string {
	if m.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%d", m.Major, m.Minor)
}

// Next is the following minor: 1.34 after 1.33.
func (m Minor) Next() Minor { return Minor{Major: m.Major, Minor: m.Minor + 1} }

// Less reports whether m is older than o.
func (m Minor) Less(o Minor) bool {
	if m.Major != o.Major {
		return m.Major < o.Major
	}
	return m.Minor < o.Minor
}

// Window is the range of minors the environment supports, both ends
// included; a zero end is open.
type Window struct {
	Min, Max Minor
}

// Contains reports whether m is within the window.
func (w Window) Contains(m Minor) bool {
	if !w.Min.IsZero() && m.Less(w.Min) {
		return false
	}
	return w.Max.IsZero() || !w.Max.Less(m)
}

// String is "1.31 to 1.35", with "any" for an open end.
func (w Window) String() string {
	lo, hi := w.Min.String(), w.Max.String()
	if lo == "" {
		lo = "any"
	}
	if hi == "" {
		hi = "any"
	}
	return lo + " to " + hi
}

// Targets lists the versions a cluster running from may be asked for: from
// itself (or the window's minimum, when that is newer) to the window's
// maximum. It is empty when the window is open above: any newer minor is
// allowed then.
func (w Window) Targets(from Minor) []string {
	if w.Max.IsZero() {
		return nil
	}
	lo := from
	if lo.IsZero() || (!w.Min.IsZero() && lo.Less(w.Min)) {
		lo = w.Min
	}
	if lo.IsZero() || !walkable(lo, w.Max) {
		return nil
	}
	var out []string
	for m := lo; !w.Max.Less(m); m = m.Next() {
		out = append(out, m.String())
	}
	return out
}
