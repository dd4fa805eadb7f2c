package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// portalRedteam replays against the live portal, on the real API server,
// the attacks of issue 35 that show from outside it (make redteam-portal
// replays all of them against a fake API server): malformed bearer
// headers, the same bad token over and over and new ones from one address
// (counted in the API server's TokenReviews), streams asked by a
// cluster-wide user in namespaces that do not exist or cannot (counted in
// its open watches), names the function refuses, look-alike images,
// trailing data, and bodies trickled a byte at a time.
func (s *scenarios) portalRedteam(p *portalClient, alice, admin string) error {
	envs := envsPath(portalTenant, "")
	for _, auth := range []string{"Bearer  " + alice, "bearer " + alice, "Bearer ", "Bearer " + alice + " x", "Basic YWxpY2U6eA=="} {
		a, err := p.raw(http.MethodGet, envs, auth, nil)
		if err != nil {
			return err
		}
		if a.code != http.StatusUnauthorized {
			return fmt.Errorf("the header Authorization: %.12q…: want 401, got %s", auth, a)
		}
	}

	// One bad token 30 times costs one TokenReview; new ones from one
	// address are limited.
	before, err := s.apiserverMetric("apiserver_request_total", `resource="tokenreviews"`, `verb="POST"`)
	if err != nil {
		return err
	}
	bad := randomToken()
	for range 30 {
		if _, err := p.expect(http.StatusUnauthorized, "a bad token", http.MethodGet, envs, bad, nil); err != nil {
			return err
		}
	}
	after, err := s.apiserverMetric("apiserver_request_total", `resource="tokenreviews"`, `verb="POST"`)
	if err != nil {
		return err
	}
	if after-before > 1 {
		return fmt.Errorf("one bad token 30 times: the API server got %v TokenReviews, want 1", after-before)
	}
	limited, retry := 0, ""
	for range 40 {
		a, err := p.call(http.MethodGet, envs, randomToken(), nil)
		if err != nil {
			return err
		}
		if a.code == http.StatusTooManyRequests {
			limited++
			retry = a.header.Get("Retry-After")
		}
	}
	if limited == 0 || retry == "" {
		return fmt.Errorf("40 new bad tokens at once from one address: no 429 with Retry-After")
	}
	fmt.Printf("  portal: 401 for 5 malformed Authorization headers; one bad token 30 times: %v TokenReview; 40 new ones from one address: %d 429s (Retry-After %ss)\n",
		after-before, limited, retry)
	time.Sleep(5 * time.Second) // the address's bucket fills again for the scenarios after

	// A cluster-wide user (admin) asks for streams in namespaces that do
	// not exist or cannot: no watch starts.
	watches := func() (float64, error) {
		return s.apiserverMetric("apiserver_longrunning_requests", `resource="appenvironments"`, `verb="WATCH"`)
	}
	w0, err := watches()
	if err != nil {
		return err
	}
	codes := map[int]int{}
	for i := range 40 {
		ns := "nope-" + strconv.Itoa(i)
		if i%2 == 1 {
			ns = "evil." + ns
		}
		a, err := p.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/environments/x/events", admin, nil)
		if err != nil {
			return err
		}
		codes[a.code]++
	}
	time.Sleep(2 * time.Second)
	w1, err := watches()
	if err != nil {
		return err
	}
	if codes[http.StatusNotFound] != 20 || codes[http.StatusBadRequest] != 20 || w1 != w0 {
		return fmt.Errorf("40 streams in bogus namespaces: answers %v (want 20 404s, 20 400s), AppEnvironment watches on the API server %v -> %v", codes, w0, w1)
	}
	fmt.Printf("  portal: 40 streams asked by a cluster-wide user in namespaces that do not exist (20) or cannot (20): %v; AppEnvironment watches on the API server %v before and after\n", codes, w0)

	// Bodies the function would refuse, or that are not one object.
	for _, c := range []struct{ body, field string }{
		{`{"name":"9t-x","size":"small"}`, "name"},
		{`{"name":"123","size":"small"}`, "name"},
		{`{"name":"xn--pple-43d","size":"small"}`, "name"},
		{`{"name":"` + strings.Repeat("a", 41) + `","size":"small"}`, "name"},
		{`{"name":"img","size":"small","image":"ghcr.io/acme/../evil/x:1"}`, "image"},
		{`{"name":"img","size":"small","image":"ghcr.io/acme/x@evil.example.com/y:1"}`, "image"},
		{`{"name":"img","size":"small","image":"ghcr.io/acme-evil/x:1"}`, "image"},
		{`{"name":"ok","size":"small"}}`, "body"},
	} {
		a, err := p.expect(http.StatusBadRequest, "alice", http.MethodPost, envs, alice, []byte(c.body))
		if err != nil {
			return err
		}
		if got := a.problem().fields(); !slices.Equal(got, []string{c.field}) {
			return fmt.Errorf("%s: the 400 names %v, want %s: %s", c.body, got, c.field, a)
		}
	}
	if err := s.noEnvironments(portalTenant, "the hostile bodies"); err != nil {
		return err
	}
	fmt.Println("  portal: 400 naming name for 9t-x, 123, xn--pple-43d and 41 characters, image for 3 look-alikes, body for trailing data; nothing created")

	// Slowloris: bodies trickled a byte a second are let go within the
	// portal's body deadline (10 s).
	const conns, deadline = 20, 10 * time.Second
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []int
	var last time.Duration
	host := strings.TrimPrefix(p.base, "http://")
	for i := range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", host)
			if err != nil {
				mu.Lock()
				open = append(open, -i-1)
				mu.Unlock()
				return
			}
			defer c.Close() //nolint:errcheck // closing a test connection
			_, _ = io.WriteString(c, "POST "+envs+" HTTP/1.1\r\nHost: portal\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			closed := make(chan struct{})
			go func() {
				_ = c.SetReadDeadline(time.Now().Add(2 * deadline))
				_, _ = io.Copy(io.Discard, bufio.NewReader(c))
				close(closed)
			}()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-closed:
					mu.Lock()
					last = max(last, time.Since(start))
					mu.Unlock()
					return
				case <-tick.C:
					if time.Since(start) > deadline+5*time.Second {
						mu.Lock()
						open = append(open, i)
						mu.Unlock()
						return
					}
					_, _ = io.WriteString(c, "x")
				}
			}
		})
	}
	wg.Wait()
	if len(open) > 0 {
		return fmt.Errorf("%d of %d connections trickling a body still open %s after they started (the body deadline is %s)", len(open), conns, deadline+5*time.Second, deadline)
	}
	fmt.Printf("  portal: %d connections trickling a body a byte a second, unauthenticated: all let go, the last after %.1f s (body deadline %s)\n", conns, last.Seconds(), deadline)
	return nil
}

// raw makes one request with an Authorization header as it is given.
func (p *portalClient) raw(method, path, auth string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(body)) //nolint:noctx // bounded by the client's timeout
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", auth)
	rsp, err := p.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return answer{code: rsp.StatusCode, header: rsp.Header, body: b}, nil
}

// apiserverMetric sums the API server's samples of a metric whose labels
// include every one of labels (such as `verb="POST"`).
func (s *scenarios) apiserverMetric(name string, labels ...string) (float64, error) {
	b, err := s.k.metrics()
	if err != nil {
		return 0, err
	}
	sum := 0.0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		if slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(line, l) }) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("cannot read the metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}

// randomToken is a bearer token nobody has.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
