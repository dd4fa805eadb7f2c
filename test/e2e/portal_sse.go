package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sseEvent is one event of a stream.
type sseEvent struct {
	id, typ string
	data    []byte
	epoch   string
	seq     uint64
}

// sseStream is an open event stream.
type sseStream struct {
	events chan sseEvent
	err    error // why the stream ended, once events is closed
	cancel context.CancelFunc
}

// streamError is a stream the portal refused.
type streamError struct{ a answer }

func (e *streamError) Error() string { return "the stream was refused: " + e.a.String() }

// stream opens an environment's event stream, resuming after lastID when
// it is set.
func (p *portalClient) stream(path, token, lastID string) (*sseStream, error) {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// No client timeout: the stream is open until cancel.
	rsp, err := (&http.Client{Transport: p.http.Transport}).Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	if rsp.StatusCode != http.StatusOK {
		defer rsp.Body.Close() //nolint:errcheck // read to the end
		b, _ := io.ReadAll(rsp.Body)
		cancel()
		return nil, &streamError{answer{code: rsp.StatusCode, header: rsp.Header, body: b}}
	}
	if ct := rsp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		_ = rsp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: Content-Type %q, not text/event-stream", path, ct)
	}
	st := &sseStream{events: make(chan sseEvent, 4096), cancel: cancel}
	go func() {
		defer rsp.Body.Close() //nolint:errcheck // a stream, read until it ends
		st.err = readSSE(rsp.Body, st.events)
		close(st.events)
	}()
	return st, nil
}

// close ends the stream and waits until its reader stopped.
func (st *sseStream) close() {
	st.cancel()
	for range st.events {
		// drain until the reader closes it
	}
}

// next returns the next event, false when none came within wait.
func (st *sseStream) next(wait time.Duration) (sseEvent, bool, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ev, ok := <-st.events:
		if !ok {
			return sseEvent{}, false, fmt.Errorf("the stream ended: %w", st.err)
		}
		return ev, true, nil
	case <-t.C:
		return sseEvent{}, false, nil
	}
}

// readSSE reads Server-Sent Events until the body ends.
func readSSE(body io.Reader, out chan<- sseEvent) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	ev := sseEvent{}
	var data [][]byte
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if ev.typ != "" || data != nil {
				ev.data = bytes.Join(data, []byte("\n"))
				i := strings.LastIndexByte(ev.id, '-')
				if i > 0 {
					ev.epoch = ev.id[:i]
					ev.seq, _ = strconv.ParseUint(ev.id[i+1:], 10, 64)
				}
				out <- ev
			}
			ev, data = sseEvent{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.typ = value
		case "data":
			data = append(data, []byte(value))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}
