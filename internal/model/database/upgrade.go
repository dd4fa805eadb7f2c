package database

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// An Engine is what a cloud says of its PostgreSQL servers for the
// module's day-2 rules: where the observed server reports what it runs,
// and which major versions the cloud upgrades a server to in place. Every
// cloud registers one (Engines.Register), from init.
type Engine struct {
	// Asked reads the major version the observed server's spec asks for;
	// Runs the one its provider reports the cloud runs ("" when it
	// reports none).
	Asked, Runs func(obs *structpb.Struct) string
	// StorageGB reads the storage, in GiB, the observed server's spec
	// asks for (0 when none).
	StorageGB func(obs *structpb.Struct) int64
	// Grown reads the storage, in GiB, the observed server has now, which
	// the cloud's auto-grow raises above what its spec asks (0 when it
	// reports none). nil where the provider itself keeps a grown size: its
	// diff ignores a spec below it.
	Grown func(obs *structpb.Struct) int64
	// Offered is the storage, in GiB, the cloud gives for a storageGb
	// (Flexible Server offers steps); nil gives what is asked.
	Offered func(gb int64) int64
	// Backups reports whether the observed server keeps automated
	// backups, which a major upgrade needs to be taken back.
	Backups func(obs *structpb.Struct) bool
	// Targets are, by running major version, the major versions the
	// cloud upgrades a server to in one step.
	Targets map[string][]string
	// Minors are, by the minor version a server runs ("14.7"), the minors
	// of later major versions the cloud upgrades it to in one step, where
	// a cloud takes a major upgrade only to such a minor (RDS's
	// ValidUpgradeTarget). Set, each step asks for the newest listed minor
	// of its major, a walk through a minor not listed is refused, and
	// Targets is not read. Nil where a major version alone is asked for.
	Minors map[string][]string
	// Source says where Targets or Minors come from.
	Source string
}

// Engines are the clouds' Engines, by cloud label.
var Engines = component.ByCloud[Engine]{}

// Server is what runs: the observed server, as its cloud's Engine reads
// it. The zero Server is a server not created yet.
type Server struct {
	// Exists is set once the server is observed.
	Exists bool
	// Asked is the major version its spec asks for; Runs the one it runs
	// ("" when its provider reports none yet).
	Asked, Runs string
	// AskedVersion and RunningVersion are the same in full, as the cloud
	// has them ("16.4" on RDS).
	AskedVersion, RunningVersion string
	// StorageGB is the storage its spec asks for (0 when none); GrownGB
	// the storage it has grown to by itself (0 when unknown, or where its
	// provider keeps it).
	StorageGB, GrownGB int64
	// Backups is set when it keeps automated backups.
	Backups bool
	// Refusal is why its provider fails to apply its spec (its Synced
	// condition False): a step the cloud refused is not under way.
	Refusal string
}

// Observe reads the observed server (nil when there is none) with the
// cloud's Engine.
func (e Engine) Observe(obs *structpb.Struct) Server {
	if obs == nil || e.Asked == nil {
		return Server{}
	}
	asked, runs := e.Asked(obs), e.Runs(obs)
	s := Server{Exists: true, Asked: Major(asked), Runs: Major(runs), AskedVersion: asked, RunningVersion: runs}
	if c, ok := object.FindCondition(obs, "Synced"); ok && c.Status == "False" {
		s.Refusal = c.Reason + ": " + c.Message
	}
	if e.StorageGB != nil {
		s.StorageGB = e.StorageGB(obs)
	}
	if e.Grown != nil {
		s.GrownGB = e.Grown(obs)
	}
	if e.Backups != nil {
		s.Backups = e.Backups(obs)
	}
	return s
}

// offered is the storage the cloud gives for gb.
func (e Engine) offered(gb int64) int64 {
	if e.Offered == nil {
		return gb
	}
	return e.Offered(gb)
}

// Upgrade is a server's walk from the major version it runs to the one
// the XR asks for, in the steps its cloud upgrades in place.
type Upgrade struct {
	// Target is the version the XR asks for; Running the one the server
	// runs; Step the one it is asked for now.
	Target, Running, Step string
	// Steps are the versions still to reach, in order, Step first; none
	// when the server runs the target.
	Steps []string
	// Version is the version to ask for now in full, where the cloud
	// needs a minor (Engine.Minors): the step's, or once the server runs
	// the target, the newer of what its spec asks and what it runs, so
	// that a render never asks for less than runs. "" asks for Step.
	Version string
	// Versions are the minors of Steps, one each, where the cloud needs
	// them; "" for a step whose minor is chosen once the one before it
	// runs.
	Versions []string
	// Kept is the version that keeps the server at the major version it
	// runs, where the cloud needs a minor: what its spec asks for, or what
	// runs when that is newer; "" for the major version alone. A step
	// that waits (for what the cloud needs first) asks for it.
	Kept string
	// Waiting says what the current step waits for.
	Waiting string
}

// Major reports whether the server is asked for a major version other
// than the one it runs.
func (u Upgrade) Major() bool { return u.Running != "" && u.Step != u.Running }

// Walk plans the server's version: the step to ask for now, and every step
// to the target. A server not created yet is created at the target. One
// that exists but reports no version keeps what it asks for (the walk
// waits for the report); a step under way is never taken back. A target
// below what runs, or one the cloud cannot reach from it, is an error
// naming path with the running version and the targets the cloud allows.
func (e Engine) Walk(target string, s Server, path *field.Path) (Upgrade, *field.Error) {
	u := Upgrade{Target: target, Running: s.Runs, Step: target}
	switch {
	case !s.Exists:
		return u, nil
	case s.Runs == "":
		// Nothing known runs yet: ask for nothing new.
		u.Step = s.Asked
		if u.Step == "" {
			u.Step = target
		}
		u.Version = e.minorOf(s.AskedVersion, u.Step)
		if u.Step != target {
			u.Steps, u.Waiting = []string{target}, "the server to report the version it runs"
			u.Versions = e.versions("")
		}
		return u, nil
	case Older(target, s.Runs):
		return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s, and a major version is never downgraded in place (the cloud refuses it; the data would need a dump and restore into a new Database); allowed: %s", s.Runs, strings.Join(e.allowedFrom(s), ", ")))
	}
	u.Kept = e.kept(s)
	from, fromVersion := s.Runs, s.RunningVersion
	switch {
	case s.Asked != "" && Older(s.Runs, s.Asked) && s.Refusal == "":
		// A step under way: it goes on, whatever the target is now.
		v := e.minorOf(s.AskedVersion, s.Asked)
		u.Steps, u.Step, u.Versions = []string{s.Asked}, s.Asked, e.versions(v)
		u.Waiting = fmt.Sprintf("the server to report running PostgreSQL %s", cmp.Or(v, s.Asked))
		from, fromVersion = s.Asked, v
	case s.Asked != "" && Older(s.Runs, s.Asked):
		// The cloud refused the step: nothing changed, and the owner may
		// take it back; asked again, it waits on the refusal.
		u.Waiting = fmt.Sprintf("the provider, which fails to apply PostgreSQL %s (%s)", cmp.Or(e.minorOf(s.AskedVersion, s.Asked), s.Asked), s.Refusal)
	}
	steps, versions, stop := e.walkFrom(from, fromVersion, target)
	switch {
	case stop.unlisted:
		return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s%s, and %s lists no major upgrade from %s: the cloud upgrades a minor only to the targets it lists, and which it lists for %s is not known here; walk the server to a minor that is listed first (listed of %s: %s; the cloud's automatic minor upgrades, or a minor upgrade in the cloud, move it), then raise %s; allowed now: %s",
			s.RunningVersion, stop.via(s.RunningVersion), e.Source, stop.at, stop.at, Major(stop.at), strings.Join(e.listed(Major(stop.at)), ", "), path, strings.Join(e.allowedFrom(s), ", ")))
	case stop.at != "" && e.Minors != nil:
		return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s%s, which the cloud cannot upgrade to %s in place (%s); allowed: %s", s.RunningVersion, stop.via(s.RunningVersion), target, e.Source, strings.Join(e.allowedFrom(s), ", ")))
	case stop.at != "":
		return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s, which the cloud cannot upgrade to %s in place (%s); allowed: %s", s.Runs, target, e.Source, strings.Join(e.allowedFrom(s), ", ")))
	}
	u.Steps = append(u.Steps, steps...)
	if e.Minors != nil {
		u.Versions = append(u.Versions, versions...)
	}
	if len(u.Steps) == 0 {
		u.Waiting, u.Version = "", u.Kept
		return u, nil
	}
	u.Step = u.Steps[0]
	if e.Minors != nil {
		u.Version = u.Versions[0]
	}
	if u.Waiting == "" {
		u.Waiting = fmt.Sprintf("the server to report running PostgreSQL %s", cmp.Or(u.Version, u.Step))
	}
	return u, nil
}

// stop is where a walk stops short of its target: at, the version the
// cloud does not upgrade from towards it ("" when the walk gets there);
// unlisted when at is a minor Engine.Minors has no row for.
type stop struct {
	at       string
	unlisted bool
}

// via says, for a message, how a walk from running reaches the version it
// stops at: "" when it stops at once.
func (s stop) via(running string) string {
	if s.at == "" || s.at == running {
		return ""
	}
	return ", from which the walk reaches " + s.at
}

// walkFrom plans the steps from major version from, whose minor is
// fromVersion ("" when unknown), to target: each the furthest major
// version the cloud reaches in one step; where the cloud needs minors
// (walkMinors), the newest listed minor of it from which the walk goes on
// to the target.
func (e Engine) walkFrom(from, fromVersion, target string) (steps, versions []string, st stop) {
	if e.Minors != nil {
		return e.walkMinors(from, fromVersion, target)
	}
	for Older(from, target) {
		next := ""
		for _, t := range e.Targets[from] {
			if !Older(target, t) && (next == "" || Older(next, t)) {
				next = t
			}
		}
		if next == "" {
			return steps, nil, stop{at: from}
		}
		steps, from = append(steps, next), next
	}
	return steps, nil, stop{}
}

// walkMinors is walkFrom where the cloud needs minors: of the minors the
// cloud lists for fromVersion up to the target's major, the newest (the
// furthest major first) from which the walk reaches the target. A step
// under way that asks for a major version alone leaves the rest to be
// planned once it runs. It stops where the first choice stops when none
// gets there.
func (e Engine) walkMinors(from, fromVersion, target string) (steps, versions []string, st stop) {
	switch {
	case !Older(from, target):
		return nil, nil, stop{}
	case fromVersion == "":
		return []string{target}, []string{""}, stop{}
	}
	targets, ok := e.Minors[fromVersion]
	if !ok {
		return nil, nil, stop{at: fromVersion, unlisted: true}
	}
	var next []string
	for _, t := range targets {
		if m := Major(t); Older(from, m) && !Older(target, m) {
			next = append(next, t)
		}
	}
	if len(next) == 0 {
		return nil, nil, stop{at: fromVersion}
	}
	slices.SortFunc(next, func(a, b string) int { return CompareVersions(b, a) })
	var first stop
	for i, t := range next {
		s, v, rest := e.walkMinors(Major(t), t, target)
		if rest.at == "" {
			return append([]string{Major(t)}, s...), append([]string{t}, v...), stop{}
		}
		if i == 0 {
			first = rest
		}
	}
	return nil, nil, first
}

// minorOf is v, a version a server asks for, when the cloud needs minors
// and v is a minor of major; else "".
func (e Engine) minorOf(v, major string) string {
	if e.Minors == nil || !strings.Contains(v, ".") || Major(v) != major {
		return ""
	}
	return v
}

// versions is Upgrade.Versions of one step of minor v, nil where the cloud
// needs no minors.
func (e Engine) versions(v string) []string {
	if e.Minors == nil {
		return nil
	}
	return []string{v}
}

// kept is the version to ask for of a server that runs the target, where
// the cloud needs minors: what its spec asks for when that is a minor of
// the major version it runs, or what runs when that is newer (the cloud's
// automatic minor upgrades), never less; "" (the major version alone)
// when its spec asks for no minor of it.
func (e Engine) kept(s Server) string {
	asked := e.minorOf(s.AskedVersion, s.Runs)
	if asked == "" {
		return ""
	}
	if r := e.minorOf(s.RunningVersion, s.Runs); r != "" && olderVersion(asked, r) {
		return r
	}
	return asked
}

// listed are the minors of major that Minors has a row for, oldest first.
func (e Engine) listed(major string) []string {
	var out []string
	for v := range e.Minors {
		if Major(v) == major {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, CompareVersions)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// allowedFrom are the versions an XR may ask for of server s: what it
// runs, and every version the walk reaches from it.
func (e Engine) allowedFrom(s Server) []string {
	if e.Minors == nil {
		return e.allowed(s.Runs)
	}
	seen := map[string]bool{s.Runs: true}
	for _, targets := range e.Minors {
		for _, t := range targets {
			if m := Major(t); !seen[m] && Older(s.Runs, m) {
				if _, _, st := e.walkFrom(s.Runs, s.RunningVersion, m); st.at == "" {
					seen[m] = true
				}
			}
		}
	}
	return sortedMajors(seen)
}

// allowed are the versions an XR may ask for of a server running run: what
// it runs, and every version the cloud reaches from it.
func (e Engine) allowed(run string) []string {
	seen := map[string]bool{run: true}
	queue := []string{run}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, t := range e.Targets[v] {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	return sortedMajors(seen)
}

// sortedMajors are the major versions of a set, oldest first.
func sortedMajors(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case Older(a, b):
			return -1
		case Older(b, a):
			return 1
		}
		return 0
	})
	return out
}

// CompareVersions orders versions such as "16.10" and "16.9" by their
// numbers, part by part (a part that is no number as text): -1, 0 or +1,
// as cmp.Compare.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		x, errX := strconv.Atoi(pa[i])
		y, errY := strconv.Atoi(pb[i])
		switch {
		case errX != nil || errY != nil:
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
		case x != y:
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// olderVersion reports whether version a is older than b.
func olderVersion(a, b string) bool { return CompareVersions(a, b) < 0 }

// Major is the major version of a PostgreSQL version as a cloud reports
// it: "16.4" (RDS), "POSTGRES_16" (Cloud SQL) and "16" (Flexible Server)
// are all "16".
func Major(v string) string {
	v = strings.TrimPrefix(v, "POSTGRES_")
	if i := strings.IndexAny(v, "._"); i >= 0 {
		v = v[:i]
	}
	return v
}

// Older orders major versions by number: whether a is older than b. One
// that is not a number sorts first.
func Older(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA != nil || errB != nil {
		return errA != nil && errB == nil || errA != nil && errB != nil && a < b
	}
	return x < y
}
