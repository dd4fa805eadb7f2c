package database

import (
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
	// Source says where Targets come from.
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
	s := Server{Exists: true, Asked: Major(e.Asked(obs)), Runs: Major(e.Runs(obs))}
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
		if u.Step != target {
			u.Steps, u.Waiting = []string{target}, "the server to report the version it runs"
		}
		return u, nil
	case Older(target, s.Runs):
		return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s, and a major version is never downgraded in place (the cloud refuses it; the data would need a dump and restore into a new Database); allowed: %s", s.Runs, strings.Join(e.allowed(s.Runs), ", ")))
	}
	from := s.Runs
	switch {
	case s.Asked != "" && Older(s.Runs, s.Asked) && s.Refusal == "":
		// A step under way: it goes on, whatever the target is now.
		u.Steps, u.Step = []string{s.Asked}, s.Asked
		u.Waiting = fmt.Sprintf("the server to report running PostgreSQL %s", s.Asked)
		from = s.Asked
	case s.Asked != "" && Older(s.Runs, s.Asked):
		// The cloud refused the step: nothing changed, and the owner may
		// take it back; asked again, it waits on the refusal.
		u.Waiting = fmt.Sprintf("the provider, which fails to apply PostgreSQL %s (%s)", s.Asked, s.Refusal)
	}
	for from != target && Older(from, target) {
		next := ""
		for _, t := range e.Targets[from] {
			if !Older(target, t) && (next == "" || Older(next, t)) {
				next = t
			}
		}
		if next == "" {
			return u, field.Invalid(path, target, fmt.Sprintf("the server runs PostgreSQL %s, which the cloud cannot upgrade to %s in place (%s); allowed: %s", s.Runs, target, e.Source, strings.Join(e.allowed(s.Runs), ", ")))
		}
		u.Steps = append(u.Steps, next)
		from = next
	}
	if len(u.Steps) == 0 {
		u.Waiting = ""
	}
	if len(u.Steps) > 0 {
		u.Step = u.Steps[0]
		if u.Waiting == "" {
			u.Waiting = fmt.Sprintf("the server to report running PostgreSQL %s", u.Step)
		}
	}
	return u, nil
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
	out := make([]string, 0, len(seen))
	for v := range seen {
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
