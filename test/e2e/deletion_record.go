package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

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
