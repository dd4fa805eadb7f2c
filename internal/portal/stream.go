package portal

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event types of an environment's stream.
const (
	EventSnapshot    = "snapshot"
	EventEnvironment = "environment"
	EventResource    = "resource"
	EventRemoved     = "removed"
	EventDeleted     = "deleted"
)

// stream is one environment's events.
type stream struct {
	epoch   string
	seq     uint64
	env     *Env
	rows    map[string]Resource
	events  []event
	changed chan struct{}
	subs    int
}

type event struct {
	seq   uint64
	frame []byte
}

// emit appends an event, keeping the last ring, and wakes the viewers.
func (st *stream) emit(ring int, typ string, data any) {
	st.seq++
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	st.events = append(st.events, event{seq: st.seq, frame: frame(st.epoch, st.seq, typ, b)})
	if len(st.events) > 2*ring {
		st.events = slices.Clone(st.events[len(st.events)-ring:])
	}
	close(st.changed)
	st.changed = make(chan struct{})
}

func frame(epoch string, seq uint64, typ string, data []byte) []byte {
	return fmt.Appendf(nil, "id: %s-%d\nevent: %s\ndata: %s\n\n", epoch, seq, typ, data)
}

// Subscription is one viewer's place in an environment's stream.
type Subscription struct {
	s      *space
	name   string
	st     *stream
	cursor uint64
	closed sync.Once
}

// Subscribe starts following an environment, watching its namespace
// first if nobody does yet. The caller must Close it.
func (h *Hub) Subscribe(ctx context.Context, ns, name string) (*Subscription, error) {
	s, err := h.space(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[name]
	if !ok {
		h.mu.Lock()
		h.streams++
		st = &stream{epoch: h.epoch + "." + strconv.FormatUint(h.streams, 10), rows: map[string]Resource{}, changed: make(chan struct{})}
		h.mu.Unlock()
		st.env, st.rows = s.compute(name)
		if st.rows == nil {
			st.rows = map[string]Resource{}
		}
		s.streams[name] = st
	}
	st.subs++
	return &Subscription{s: s, name: name, st: st}, nil
}

// Start returns what a viewer gets first: the events after lastID when it
// resumes one this stream still holds, else a snapshot of the whole state.
func (sub *Subscription) Start(lastID string) ([][]byte, <-chan struct{}) {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	sub.cursor = 0
	if epoch, seq, ok := parseID(lastID); ok && epoch == sub.st.epoch && seq <= sub.st.seq {
		sub.cursor = seq
		if frames, ok := sub.since(); ok {
			return frames, sub.st.changed
		}
	}
	return [][]byte{sub.snapshot()}, sub.st.changed
}

// Next returns the events since the last call (a snapshot when the viewer
// fell further behind than the stream keeps) and a channel closed when
// there are more.
func (sub *Subscription) Next() ([][]byte, <-chan struct{}) {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	frames, ok := sub.since()
	if !ok {
		return [][]byte{sub.snapshot()}, sub.st.changed
	}
	return frames, sub.st.changed
}

// since returns the kept events after the cursor, false when some of them
// are no longer kept. The space's lock is held.
func (sub *Subscription) since() ([][]byte, bool) {
	st := sub.st
	if sub.cursor == st.seq {
		return nil, true
	}
	ev := st.events[max(len(st.events)-sub.s.h.ring, 0):]
	if len(ev) == 0 || ev[0].seq > sub.cursor+1 {
		return nil, false
	}
	out := make([][]byte, 0, st.seq-sub.cursor)
	for _, e := range ev[sub.cursor+1-ev[0].seq:] {
		out = append(out, e.frame)
	}
	sub.cursor = st.seq
	return out, true
}

// snapshot is the stream's whole state as one event with the current ID.
// The space's lock is held.
func (sub *Subscription) snapshot() []byte {
	st := sub.st
	snap := Snapshot{Resources: make([]Resource, 0, len(st.rows))}
	if st.env != nil {
		snap.Environment = *st.env
	} else {
		snap.Environment = Env{EnvState: EnvState{Name: sub.name, Namespace: sub.s.ns, Ready: "Unknown", Synced: "Unknown",
			Message: "no such environment (yet)"}, Conditions: []Condition{}}
	}
	for _, id := range slices.Sorted(maps.Keys(st.rows)) {
		snap.Resources = append(snap.Resources, st.rows[id])
	}
	b, err := json.Marshal(snap)
	if err != nil {
		b = []byte(`{}`)
	}
	sub.cursor = st.seq
	return frame(st.epoch, st.seq, EventSnapshot, b)
}

// Close ends the subscription.
func (sub *Subscription) Close() {
	sub.closed.Do(func() {
		sub.s.mu.Lock()
		sub.st.subs--
		if sub.st.subs == 0 && sub.st.env == nil {
			delete(sub.s.streams, sub.name)
		}
		sub.s.mu.Unlock()
		sub.s.h.release(sub.s)
	})
}

// parseID splits an event ID "<epoch>-<seq>".
func parseID(id string) (string, uint64, bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	return id[:i], seq, err == nil
}

// takeStream counts one more open stream of user, false when it has as many
// as it may.
func (s *Server) takeStream(user string) bool {
	limit := s.Limits.withDefaults().StreamsPerUser
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit >= 0 && s.open[user] >= limit {
		return false
	}
	if s.open == nil {
		s.open = map[string]int{}
	}
	s.open[user]++
	return true
}

// releaseStream counts one stream of user less.
func (s *Server) releaseStream(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[user]--; s.open[user] <= 0 {
		delete(s.open, user)
	}
}

// openStream takes one of the user's event streams, answering 429 when
// it has as many open as it may, and lifts the request's deadlines: a
// stream lasts. The request has no body, and there is no deadline for
// the answer while the stream's watches start (each caller bounds that),
// then pump sets one for each write, so that a viewer that stops reading
// is let go. release gives the stream back.
func (s *Server) openStream(w http.ResponseWriter, u *User) (rc *http.ResponseController, release func(), ok bool) {
	if !s.takeStream(u.Name) {
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%s has %d event streams open, as many as a user may: close one first", u.Name, s.Limits.withDefaults().StreamsPerUser), nil)
		return nil, nil, false
	}
	rc = http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	return rc, func() { s.releaseStream(u.Name) }, true
}

// pump answers with an event stream: frames first, then, each time more
// is closed, what next returns, and a ping comment when idle, until the
// viewer leaves, a write fails or misses its deadline, or next returns no
// channel (the stream ends).
func (s *Server) pump(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, frames [][]byte, more <-chan struct{}, next func() ([][]byte, <-chan struct{})) {
	limits := s.Limits.withDefaults()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ping := time.NewTicker(s.Ping)
	defer ping.Stop()
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(limits.WriteTimeout))
		for _, f := range frames {
			if _, err := w.Write(f); err != nil { //nolint:gosec // server-sent event frames of JSON, served as text/event-stream, not HTML
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			frames = [][]byte{[]byte(": ping\n\n")}
		case <-more:
			if frames, more = next(); more == nil {
				return
			}
		}
	}
}
