package portal

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStreams measures the portal with 1,000 open streams on one
// namespace: the memory they hold, and the CPU and time for one change of
// a composed resource to reach every viewer. The viewers read in the same
// process, so the CPU counts both ends. Run with make bench-portal.
func BenchmarkStreams(b *testing.B) {
	const viewers = 1000
	w := newWorld(b,
		env("app", bucketGVK),
		composed(bucketGVK, "app-bucket-a", "app", "bucket", "False"),
	)
	w.srv.Limits.StreamsPerUser = -1 // one user opens all of them
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: viewers, MaxConnsPerHost: 0}}
	url := srv.URL + "/api/v1/namespaces/team-a/environments/app/events"

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan struct{}, viewers*4)
	var opened sync.WaitGroup
	for range viewers {
		opened.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+tokenAlice)
			rsp, err := client.Do(req)
			if err != nil {
				opened.Done()
				b.Errorf("cannot open a stream: %v", err)
				return
			}
			defer rsp.Body.Close() //nolint:errcheck // a stream's close has nothing to report.
			sc := bufio.NewScanner(rsp.Body)
			first := true
			for sc.Scan() {
				line := sc.Text()
				switch {
				case first && strings.HasPrefix(line, "event: "+EventSnapshot):
					first = false
					opened.Done()
				case strings.HasPrefix(line, "event: "+EventResource):
					events <- struct{}{}
				}
			}
		}()
	}
	opened.Wait()
	// Let the shared informer's first list settle before measuring.
	time.Sleep(200 * time.Millisecond)
	drain(events)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapInuse-before.HeapInuse) / (1 << 20)
	perStream := float64(runtime.NumGoroutine()-goroutines) / viewers

	cpu0 := cpuTime()
	b.ResetTimer()
	status := []string{"True", "False"}
	for i := range b.N {
		w.setReady(b, bucketGVR, "app-bucket-a", status[i%2])
		for range viewers {
			select {
			case <-events:
			case <-time.After(10 * time.Second):
				b.Fatalf("a change did not reach all %d viewers", viewers)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(heap, "heap-MiB")
	b.ReportMetric(perStream, "goroutines/stream")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/change")
	cancel()
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
