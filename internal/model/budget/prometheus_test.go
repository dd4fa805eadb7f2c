package budget

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// settle calls Spend until the source has answered (or the test times out)
// and returns the answer.
func settle(t *testing.T, p *Prometheus, q PrometheusQuery) Spend {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		e := p.entries[q.URL+"\x00"+q.Query]
		done := e != nil && !e.fetching && !e.at.IsZero()
		p.mu.Unlock()
		if done {
			return p.Spend(q)
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the spend query never answered")
	return Spend{}
}

func TestPrometheus(t *testing.T) {
	vector := func(samples ...string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(samples, ",") + `]}}`
	}
	sample := func(mt, hours string) string {
		return fmt.Sprintf(`{"metric":{"label_node_kubernetes_io_instance_type":%q},"value":[1700000000,%q]}`, mt, hours)
	}
	prices := map[string]float64{"e2-standard-4": 0.134, "e2-standard-8": 0.268}
	cases := map[string]struct {
		reason string
		status int
		body   string
		want   Spend
	}{
		"Priced": {
			reason: "Node-hours per machine type times the price table is the spend.",
			status: http.StatusOK,
			body:   vector(sample("e2-standard-4", "1000"), sample("e2-standard-8", "500")),
			want:   Spend{USD: 268, Known: true},
		},
		"Empty": {
			reason: "No node-hours yet is a spend of zero.",
			status: http.StatusOK,
			body:   vector(),
			want:   Spend{Known: true},
		},
		"Unpriced": {
			reason: "A machine type the price table lacks makes the spend unknown, not zero: the source answered, so the agent is not unreachable.",
			status: http.StatusOK,
			body:   vector(sample("n2-highmem-8", "10")),
			want:   Spend{Warning: `reports 10 hours of machine type "n2-highmem-8"`},
		},
		"ServerError": {
			reason: "An error answer is an unreachable agent: fail open.",
			status: http.StatusServiceUnavailable,
			body:   "overloaded",
			want:   Spend{Unreachable: true, Warning: "failed (HTTP 503)"},
		},
		"QueryError": {
			reason: "A failed query is an unreachable agent.",
			status: http.StatusOK,
			body:   `{"status":"error","error":"parse error"}`,
			want:   Spend{Unreachable: true, Warning: "parse error"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var queries []string
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				queries = append(queries, r.URL.Query().Get("query"))
				mu.Unlock()
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			p := NewPrometheus()
			s := &Settings{}
			s.Prometheus.URL = srv.URL
			s.Prometheus.Query = `sum by (label_node_kubernetes_io_instance_type) (node_hours{cluster="$cluster"})`
			q, ok := s.Query("prod", "platform", "prod-x", prices)
			if !ok {
				t.Fatal("Query: not configured")
			}
			first := p.Spend(q)
			if first.Known || !first.Unreachable {
				t.Errorf("%s\nfirst Spend = %+v, want unknown and unreachable until the query answers", tc.reason, first)
			}
			got := settle(t, p, q)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Spend{}, "Warning"), cmpopts.EquateApprox(0, 0.001)); diff != "" {
				t.Errorf("%s\nSpend: -want, +got:\n%s", tc.reason, diff)
			}
			if !strings.Contains(got.Warning, tc.want.Warning) {
				t.Errorf("%s\nwarning %q does not contain %q", tc.reason, got.Warning, tc.want.Warning)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]string{`sum by (label_node_kubernetes_io_instance_type) (node_hours{cluster="prod"})`}, queries); diff != "" {
				t.Errorf("%s\nqueries sent (one, the cluster substituted): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPrometheusNeverBlocks holds the server's answer and checks that
// Spend answers meanwhile, that the strict timeout ends the query as
// unreachable, and that a cached answer is served until it is stale.
func TestPrometheusNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var calls int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"t":"a"},"value":[0,"10"]}]}}`))
	}))
	defer srv.Close()
	defer close(release)

	now := time.Unix(1700000000, 0)
	p := NewPrometheus()
	p.now = func() time.Time { return now }
	q := PrometheusQuery{URL: srv.URL, Query: "q", Label: "t", Prices: map[string]float64{"a": 2}, Timeout: 50 * time.Millisecond, CacheFor: time.Minute}

	// The first query hangs; Spend answers at once, again and again.
	for range 3 {
		if s := p.Spend(q); s.Known || !s.Unreachable {
			t.Fatalf("Spend while the query hangs = %+v, want unknown and unreachable", s)
		}
	}
	// The timeout ends it as unreachable.
	if s := settle(t, p, q); s.Known || !s.Unreachable || !strings.Contains(s.Warning, "deadline") {
		t.Errorf("after the timeout: %+v, want unreachable naming the deadline", s)
	}
	// Stale: the next Spend refreshes in the background; the answer is cached.
	now = now.Add(2 * time.Minute)
	p.Spend(q)
	if s := settle(t, p, q); !s.Known || s.USD != 20 {
		t.Errorf("after a refresh: %+v, want $20", s)
	}
	mu.Lock()
	before := calls
	mu.Unlock()
	for range 5 {
		p.Spend(q)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != before {
		t.Errorf("fresh answers were queried again: %d calls, want %d", calls, before)
	}
}
