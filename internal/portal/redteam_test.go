package portal

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestRedteam replays, against a portal built by New and served over
// loopback, each attack a hostile tenant made on the live portal, and
// checks that it holds. The API server is a fake over HTTP (fakeAPI), so
// that the portal's own clients, rate limiters and watches are the real
// ones. make redteam-portal runs it (PORTAL_REDTEAM=1); it takes about
// 30 s.
func TestRedteam(t *testing.T) {
	if os.Getenv("PORTAL_REDTEAM") == "" {
		t.Skip("the portal's red team runs with make redteam-portal (PORTAL_REDTEAM=1)")
	}
	rt := newRedteam(t)
	t.Run("AnonymousToken", rt.anonymous)
	t.Run("BadTokenFlood", rt.flood)
	t.Run("Slowloris", rt.slowloris)
	t.Run("BogusNamespaces", rt.bogusNamespaces)
	t.Run("Images", rt.images)
	t.Run("Names", rt.names)
	t.Run("TrailingData", rt.trailing)
	t.Run("HandWrittenRefs", rt.handWrittenRefs)
	t.Run("Quota", rt.quota)
	t.Run("Fleet", rt.fleet)
	t.Run("FleetRelease", rt.fleetRelease)
}

// The red team's users, by token.
const (
	rtAlice  = "rt-alice-token"
	rtViewer = "rt-viewer-token" // may watch every namespace
	rtAnon   = "rt-anonymous"    // the API server reviews it as system:anonymous
	rtCarol  = "rt-carol-token"  // may list Clusters in team-c alone
	rtNobody = "rt-nobody-token" // may list nothing
)

// redteam is a portal, its fake API server and its address.
type redteam struct {
	api  *fakeAPI
	srv  *Server
	url  string
	addr string
}

func newRedteam(t *testing.T) *redteam {
	t.Helper()
	api := &fakeAPI{
		namespaces: map[string]bool{"team-a": true, "team-b": true, "crossplane-system": true},
		users: map[string]User{
			rtAlice:  {Name: "alice", Groups: []string{"team-a", "system:authenticated"}},
			rtViewer: {Name: "viewer", Groups: []string{"viewers", "system:authenticated"}},
			rtAnon:   {Name: userAnonymous, Groups: []string{groupUnauthenticated}},
			rtCarol:  {Name: "carol", Groups: []string{"team-c", "system:authenticated"}},
			rtNobody: {Name: "nobody", Groups: []string{"system:authenticated"}},
		},
		rbac:     map[string][]string{"alice": {"team-a", "team-b"}, "viewer": {"*"}, "carol": {"team-c"}},
		policies: map[string]string{"team-a": redteamPolicy, "team-b": strings.Replace(redteamPolicy, "- registry.acme.com\n", "- ghcr.io/ac-\n", 1)},
		envs:     map[string]map[string]map[string]any{},
		fleet:    redteamFleet(),
		watches:  map[string]int{},
		seen:     map[string]int{},
		review:   2 * time.Millisecond,
	}
	apiSrv := httptest.NewServer(api)
	t.Cleanup(apiSrv.Close)
	cfg := &rest.Config{Host: apiSrv.URL, BearerToken: "portal", QPS: 50, Burst: 100}
	srv, err := New(cfg, Options{
		PolicyNamespace: "crossplane-system", PolicyPrefix: "portal-policy-", TokenTTL: 30 * time.Second,
		Ring: 64, MaxBody: DefaultMaxBody, Ping: 300 * time.Millisecond, Clouds: []string{"aws", "azure", "gcp"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Grace: 500 * time.Millisecond,
		Limits: Limits{HeaderTimeout: time.Second, BodyTimeout: time.Second, WriteTimeout: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer("")
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close(); srv.Hub.Close(); srv.Fleet.Close() })
	return &redteam{api: api, srv: srv, url: "http://" + ln.Addr().String(), addr: ln.Addr().String()}
}

// redteamPolicy is team-a's policy; team-b's has a prefix that is not a
// whole path component.
const redteamPolicy = `cloud: gcp
planeId: acme-prod
cluster: shared
defaultImage: ghcr.io/acme/app:1.0
imagePrefixes:
- ghcr.io/acme/
- registry.acme.com
domain: apps.example.com
maxEnvironments: 3
sizes:
  small: {replicas: 1}
`

// call makes one request with an Authorization header ("" for none).
func (rt *redteam) call(t *testing.T, c *http.Client, method, path, auth, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rt.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if c == nil {
		c = http.DefaultClient
	}
	rsp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer rsp.Body.Close() //nolint:errcheck // a read body's close has nothing to report.
	b, _ := io.ReadAll(rsp.Body)
	return rsp.StatusCode, rsp.Header, string(b)
}

const rtEnvs = "/api/v1/namespaces/team-a/environments"

// anonymous: "Bearer  x" and a token the API server reviews as the
// anonymous user are 401s, and nothing is done as system:anonymous.
func (rt *redteam) anonymous(t *testing.T) {
	for _, auth := range []string{"Bearer  x", "Bearer " + rtAnon, "Bearer x y", "bearer x", "Bearer "} {
		if code, _, body := rt.call(t, nil, http.MethodGet, rtEnvs, auth, ""); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: want 401, got %d %s", auth, code, body)
		}
	}
	if n := rt.api.impersonated(userAnonymous); n != 0 {
		t.Errorf("the API server got %d requests as %s", n, userAnonymous)
	}
	t.Logf("malformed headers and the anonymous user: 401; 0 requests as %s", userAnonymous)
}

// flood: 200 clients, each from its own loopback address, send random
// tokens for 3 s while alice lists; her lists stay fast, and the
// TokenReviews stay within their own rate limit.
func (rt *redteam) flood(t *testing.T) {
	const clients, length = 200, 3 * time.Second
	alice := &http.Client{Transport: &http.Transport{}}
	if code, _, body := rt.call(t, alice, http.MethodGet, rtEnvs, "Bearer "+rtAlice, ""); code != http.StatusOK {
		t.Fatalf("alice's first list: %d %s", code, body)
	}
	before := rt.api.reviews.Load()
	ctx, cancel := context.WithTimeout(t.Context(), length)
	defer cancel()
	var codes sync.Map
	var wg sync.WaitGroup
	for i := range clients {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250), byte(2+i%250))}
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext}}
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rt.url+rtEnvs, nil)
				req.Header.Set("Authorization", "Bearer "+randomToken())
				if rsp, err := c.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, rsp.Body)
					_ = rsp.Body.Close()
					n, _ := codes.LoadOrStore(rsp.StatusCode, new(atomic.Int64))
					n.(*atomic.Int64).Add(1) //nolint:forcetypeassert // stored above.
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	var lat []time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		if code, _, body := rt.call(t, alice, http.MethodGet, rtEnvs, "Bearer "+rtAlice, ""); code != http.StatusOK {
			t.Errorf("alice's list during the flood: %d %s", code, body)
		}
		lat = append(lat, time.Since(start))
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	reviews := rt.api.reviews.Load() - before
	slices.Sort(lat)
	p50, p99, worst := lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	got := map[int]int64{}
	codes.Range(func(k, v any) bool { got[k.(int)] = v.(*atomic.Int64).Load(); return true }) //nolint:forcetypeassert // stored above.
	t.Logf("%d clients from %d addresses, %s: answers %v; %d TokenReviews (%.0f/s); alice's %d lists: p50 %s, p99 %s, max %s",
		clients, clients, length, got, reviews, float64(reviews)/length.Seconds(), len(lat), p50, p99, worst)
	if worst > time.Second || p99 > 300*time.Millisecond {
		t.Errorf("alice's lists during the flood: p99 %s, max %s; want under 300 ms and 1 s", p99, worst)
	}
	if limit := int64(DefaultReviewQPS*length.Seconds()) + DefaultReviewBurst + DefaultReviewsInFlight; reviews > limit {
		t.Errorf("%d TokenReviews in %s: want at most %d (their own rate limit)", reviews, length, limit)
	}
	if got[http.StatusTooManyRequests] == 0 {
		t.Error("no 429 during the flood")
	}

	// One address sending one bad token over and over costs one review;
	// new tokens from one address are limited to its bucket.
	before = rt.api.reviews.Load()
	one := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, 1)}}).DialContext}}
	for range 50 {
		rt.call(t, one, http.MethodGet, rtEnvs, "Bearer same-bad-token", "")
	}
	if n := rt.api.reviews.Load() - before; n != 1 {
		t.Errorf("50 requests with one bad token: want 1 TokenReview (the refusal is cached), got %d", n)
	}
	var limited atomic.Int64
	var retry atomic.Value
	var wg2 sync.WaitGroup
	for range DefaultReviewBurstPerAddress + 10 {
		wg2.Go(func() {
			code, h, body := rt.call(t, one, http.MethodGet, rtEnvs, "Bearer "+randomToken(), "")
			if code == http.StatusTooManyRequests && strings.Contains(body, "from this address") {
				limited.Add(1)
				retry.Store(h.Get("Retry-After"))
			}
		})
	}
	wg2.Wait()
	if limited.Load() < 9 || retry.Load() == "" {
		t.Errorf("%d new tokens at once from one address: want at least 9 429s with Retry-After, got %d (Retry-After %v)", DefaultReviewBurstPerAddress+10, limited.Load(), retry.Load())
	}
	t.Logf("one bad token 50 times: 1 TokenReview; %d new tokens at once from one address: %d 429s for the address, Retry-After %vs", DefaultReviewBurstPerAddress+10, limited.Load(), retry.Load())
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// slowloris: 100 connections trickle a body, 100 trickle headers; the
// portal lets each go within its deadline, while a stream opened at the
// same time keeps going past them.
func (rt *redteam) slowloris(t *testing.T) {
	const conns = 100
	opened := time.Now()
	stream, stop := rt.openStream(t, rtAlice, rtEnvs+"/slow/events")
	defer stop()
	type attack struct {
		name  string
		first string
		limit time.Duration
	}
	post := "POST " + rtEnvs + " HTTP/1.1\r\nHost: portal\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
	attacks := []attack{
		{name: "a trickled body, unauthenticated", first: post + "\r\n{", limit: time.Second},
		{name: "a trickled body, authenticated", first: post + "Authorization: Bearer " + rtAlice + "\r\n\r\n{", limit: time.Second},
		{name: "trickled headers", first: "GET /healthz HTTP/1.1\r\nHost: portal\r\n", limit: time.Second},
	}
	for _, a := range attacks {
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var open int
		var last time.Duration
		for range conns {
			wg.Go(func() {
				c, err := net.Dial("tcp", rt.addr)
				if err != nil {
					t.Errorf("%s: %v", a.name, err)
					return
				}
				defer c.Close() //nolint:errcheck // closing a test connection.
				_, _ = io.WriteString(c, a.first)
				closed := make(chan struct{})
				go func() {
					_ = c.SetReadDeadline(time.Now().Add(4 * a.limit))
					_, _ = io.Copy(io.Discard, c)
					close(closed)
				}()
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-closed:
						mu.Lock()
						last = max(last, time.Since(start))
						mu.Unlock()
						return
					case <-tick.C:
						if time.Since(start) > 3*a.limit {
							mu.Lock()
							open++
							mu.Unlock()
							return
						}
						_, _ = io.WriteString(c, "x")
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%d connections with %s, a byte every 200 ms: %d still open after %s; the last let go after %s", conns, a.name, open, 3*a.limit, last.Round(10*time.Millisecond))
		if open > 0 {
			t.Errorf("%s: %d of %d connections still open after %s (deadline %s)", a.name, open, conns, 3*a.limit, a.limit)
		}
	}
	// The stream opened before the attacks outlived every deadline: it
	// still gets its pings.
	pings := 0
	deadline := time.After(2 * time.Second)
	for pings < 2 {
		select {
		case line, ok := <-stream:
			if !ok {
				t.Fatal("the stream ended during the slowloris")
			}
			if line == ": ping" {
				pings++
			}
		case <-deadline:
			t.Fatalf("the stream got %d pings in 2 s after the attacks", pings)
		}
	}
	t.Logf("an event stream opened before the attacks still gets its pings %s later, past every deadline (header and body 1 s, write 2 s)", time.Since(opened).Round(100*time.Millisecond))
}

// openStream opens the event stream at path and returns its lines.
func (rt *redteam) openStream(t *testing.T, token, path string) (<-chan string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rt.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("cannot open the stream %s: %v", path, err)
	}
	if rsp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(rsp.Body)
		cancel()
		t.Fatalf("the stream %s: %d %s", path, rsp.StatusCode, b)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(rsp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, func() { cancel(); _ = rsp.Body.Close() }
}

// bogusNamespaces: a cluster-wide viewer opens streams in 300 namespaces
// that do not exist or cannot; no watch starts. In a namespace that
// exists, it may open StreamsPerUser; the watches stop a grace period
// after the last one closed.
func (rt *redteam) bogusNamespaces(t *testing.T) {
	codes := map[int]int{}
	for i := range 300 {
		ns := "nope-" + strconv.Itoa(i)
		if i%2 == 1 {
			ns = "evil." + ns
		}
		code, _, _ := rt.call(t, nil, http.MethodGet, "/api/v1/namespaces/"+ns+"/environments/x/events", "Bearer "+rtViewer, "")
		codes[code]++
	}
	spaces, informers := rt.srv.Hub.Watched()
	watches := rt.api.activeWatches()
	t.Logf("300 streams in namespaces that do not exist (150) or cannot (150, dotted): answers %v; %d namespaces watched, %d informers, %d watches open on the API server", codes, spaces, informers, watches)
	if codes[http.StatusNotFound] != 150 || codes[http.StatusBadRequest] != 150 {
		t.Errorf("want 150 404s and 150 400s, got %v", codes)
	}
	if spaces != 0 || informers != 0 || watches != 0 {
		t.Errorf("want nothing watched, got %d namespaces, %d informers, %d watches on the API server", spaces, informers, watches)
	}
	if n := rt.api.count("list nope-"); n != 0 {
		t.Errorf("the API server got %d lists in the bogus namespaces", n)
	}

	var stops []func()
	limited := 0
	for i := range DefaultStreamsPerUser + 5 {
		name := "env-" + strconv.Itoa(i)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, rt.url+"/api/v1/namespaces/team-a/environments/"+name+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+rtViewer)
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if rsp.StatusCode == http.StatusTooManyRequests {
			limited++
			_ = rsp.Body.Close()
			continue
		}
		stops = append(stops, func() { _ = rsp.Body.Close() })
	}
	spaces, informers = rt.srv.Hub.Watched()
	t.Logf("%d streams asked in team-a: %d open, %d refused (429); %d namespace watched, %d informers", DefaultStreamsPerUser+5, len(stops), limited, spaces, informers)
	if len(stops) != DefaultStreamsPerUser || limited != 5 {
		t.Errorf("want %d streams open and 5 refused, got %d and %d", DefaultStreamsPerUser, len(stops), limited)
	}
	for _, s := range stops {
		s()
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if spaces, _ = rt.srv.Hub.Watched(); spaces == 0 && rt.api.activeWatches() == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	watches = rt.api.activeWatches()
	t.Logf("the viewer closed them: after the grace period (500 ms here) %d namespaces watched, %d watches open on the API server", spaces, watches)
	if spaces != 0 || watches != 0 {
		t.Errorf("after the last viewer left and the grace period: want nothing watched, got %d namespaces and %d watches", spaces, watches)
	}
}

// images: references that only look like they are under a prefix are
// refused, and a policy with a prefix that is not a whole component is
// refused when it loads, naming the field.
func (rt *redteam) images(t *testing.T) {
	for _, image := range []string{
		"ghcr.io/acme/../evil/x:1", "ghcr.io/acme/x@evil.example.com/y:1", "registry.acme.com.evil.io/x:1",
		"ghcr.io/acme-evil/x:1", "ghcr.io/acmex:1",
	} {
		body := fmt.Sprintf(`{"name":"img","size":"small","image":%q}`, image)
		code, _, answer := rt.call(t, nil, http.MethodPost, rtEnvs, "Bearer "+rtAlice, body)
		if code != http.StatusBadRequest || !strings.Contains(answer, `"field":"image"`) {
			t.Errorf("image %s: want a 400 naming image, got %d %s", image, code, answer)
		}
	}
	if n := rt.api.created(); n != 0 {
		t.Errorf("%d environments created", n)
	}
	code, _, answer := rt.call(t, nil, http.MethodPost, "/api/v1/namespaces/team-b/environments", "Bearer "+rtAlice, `{"name":"img","size":"small"}`)
	if code != http.StatusInternalServerError || !strings.Contains(answer, `imagePrefixes[1]: \"ghcr.io/ac-\" is not a registry and whole path components`) {
		t.Errorf("a policy with the prefix ghcr.io/ac-: want a 500 naming imagePrefixes[1], got %d %s", code, answer)
	}
	t.Logf("5 look-alike images: 400 naming image, nothing created; a policy with prefix ghcr.io/ac-: %d %s", code, strings.TrimSpace(answer))
}

// names: names the function refuses are refused by the portal, as the
// field name.
func (rt *redteam) names(t *testing.T) {
	for _, name := range []string{"9t-x", "123", "xn--pple-43d", strings.Repeat("a", 41)} {
		code, _, answer := rt.call(t, nil, http.MethodPost, rtEnvs, "Bearer "+rtAlice, fmt.Sprintf(`{"name":%q,"size":"small"}`, name))
		p := Problem{}
		_ = json.Unmarshal([]byte(answer), &p)
		if code != http.StatusBadRequest || len(p.Fields) != 1 || p.Fields[0].Field != "name" {
			t.Errorf("name %s: want a 400 naming name, got %d %s", name, code, answer)
		}
	}
	if n := rt.api.created(); n != 0 {
		t.Errorf("%d environments created", n)
	}
	t.Log("9t-x, 123, xn--pple-43d and a 41-character name: 400 naming name; nothing created")
}

// trailing: data after the body's object is refused.
func (rt *redteam) trailing(t *testing.T) {
	for _, body := range []string{`{"name":"ok","size":"small"}}`, `{"name":"ok","size":"small"} {"name":"x"}`, `{"name":"ok","size":"small"}]`} {
		if code, _, answer := rt.call(t, nil, http.MethodPost, rtEnvs, "Bearer "+rtAlice, body); code != http.StatusBadRequest {
			t.Errorf("%s: want 400, got %d %s", body, code, answer)
		}
	}
	if n := rt.api.created(); n != 0 {
		t.Errorf("%d environments created", n)
	}
	t.Log("3 bodies with trailing data: 400; nothing created")
}

// handWrittenRefs: an environment whose resourceRefs a tenant wrote by
// hand (a Secret, a ConfigMap, a kind of its own) gets rows not watched;
// no list or watch of those kinds, no discovery of them.
func (rt *redteam) handWrittenRefs(t *testing.T) {
	rt.api.put("team-a", map[string]any{
		"apiVersion": envGroup + "/" + envVersion, "kind": envKind,
		"metadata": map[string]any{"name": "hostile", "namespace": "team-a"},
		"spec": map[string]any{"crossplane": map[string]any{"resourceRefs": []any{
			map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "db-connection-details"},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "kube-root-ca.crt"},
			map[string]any{"apiVersion": "evil.example.com/v1", "kind": "Thing", "name": "x"},
			map[string]any{"apiVersion": "storage.gcp.m.upbound.io/v1beta1", "kind": "Bucket", "name": "hostile-bucket"},
		}}},
	})
	defer rt.api.remove("team-a", "hostile")
	lines, stop := rt.openStream(t, rtAlice, rtEnvs+"/hostile/events")
	defer stop()
	var snap Snapshot
	for line := range lines {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if err := json.Unmarshal([]byte(data), &snap); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	rows := map[string]string{}
	for _, r := range snap.Resources {
		rows[r.Kind] = r.Message
	}
	for _, k := range []string{"Secret", "ConfigMap", "Thing"} {
		if rows[k] != NotWatched {
			t.Errorf("the row of the %s: want %q, got %q", k, NotWatched, rows[k])
		}
	}
	if rows["Bucket"] == NotWatched {
		t.Error("the row of the Bucket, a kind the platform composes, is not watched")
	}
	for _, k := range []string{"secrets", "team-a/configmaps", "evil.example.com"} {
		if n := rt.api.count(k); n != 0 {
			t.Errorf("the API server got %d requests for %s", n, k)
		}
	}
	_, informers := rt.srv.Hub.Watched()
	t.Logf("an environment referring to a Secret, a ConfigMap and a kind of the tenant's: rows %q; %d informers (environments, buckets); no request for those kinds", rows, informers)
	if informers != 2 {
		t.Errorf("want 2 informers (environments and buckets of team-a), got %d", informers)
	}
}

// quota: 10 creates at once under maxEnvironments 3 make 3; the rest are
// 403s that name the quota.
func (rt *redteam) quota(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	var refusal string
	for i := range 10 {
		wg.Go(func() {
			code, _, answer := rt.call(t, nil, http.MethodPost, rtEnvs, "Bearer "+rtAlice, fmt.Sprintf(`{"name":"quota-%d","size":"small"}`, i))
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			if code == http.StatusForbidden {
				refusal = answer
			}
		})
	}
	wg.Wait()
	t.Logf("10 creates at once under maxEnvironments 3: answers %v; %d environments; %s", codes, rt.api.created(), strings.TrimSpace(refusal))
	if codes[http.StatusAccepted] != 3 || codes[http.StatusForbidden] != 7 || rt.api.created() != 3 {
		t.Errorf("want 3 202s, 7 403s and 3 environments, got %v and %d", codes, rt.api.created())
	}
	if !strings.Contains(refusal, "maxEnvironments 3") {
		t.Errorf("the refusal does not name the quota: %s", refusal)
	}
}
