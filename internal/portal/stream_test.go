package portal

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// eventSeq is the sequence number of an event ID.
func eventSeq(t *testing.T, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	if err != nil {
		t.Fatalf("event ID %q: %v", id, err)
	}
	return n
}

func TestStream(t *testing.T) {
	w := newWorld(t,
		env("app", bucketGVK, objectGVK),
		composed(bucketGVK, "app-bucket-a", "app", "bucket", "False"),
		composed(objectGVK, "app-object-b", "app", "backend", "False"),
	)
	srv := httptest.NewServer(w.srv.Handler())
	defer srv.Close()
	url := srv.URL + "/api/v1/namespaces/team-a/environments/app/events"

	rsp, stop := openStream(t, url, "")
	ev := newSSEReader(rsp.Body)
	if rsp.StatusCode != http.StatusOK || rsp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET events: %d %s", rsp.StatusCode, rsp.Header.Get("Content-Type"))
	}
	first := ev.next(1)
	if len(first) != 1 || first[0].typ != EventSnapshot {
		t.Fatalf("the first event is a snapshot, got %+v", first)
	}
	snap := Snapshot{}
	if err := json.Unmarshal([]byte(first[0].data), &snap); err != nil {
		t.Fatal(err)
	}
	// The informers may not have listed the composed kinds yet: apply
	// events until both rows are known, then flip one.
	rows := map[string]Resource{}
	for _, r := range snap.Resources {
		rows[r.Name] = r
	}
	var last sseEvent
	until := func(what string, done func() bool) {
		t.Helper()
		for !done() {
			got := ev.next(1)
			if len(got) == 0 {
				t.Fatalf("no event came while waiting for %s; rows %+v", what, rows)
			}
			last = got[0]
			if last.typ == EventResource {
				r := Resource{}
				if err := json.Unmarshal([]byte(last.data), &r); err != nil {
					t.Fatal(err)
				}
				rows[r.Name] = r
			}
		}
	}
	until("both rows", func() bool { return rows["app-bucket-a"].Ready == "False" && rows["app-object-b"].Ready == "False" })
	w.setReady(t, bucketGVR, "app-bucket-a", "True")
	until("the bucket Ready", func() bool { return rows["app-bucket-a"].Ready == "True" })
	stop()
	if last.typ != EventResource || !strings.Contains(last.data, `"resource":"bucket"`) {
		t.Fatalf("a row turning ready is one resource event, got %+v", last)
	}

	// While nobody watches, two more changes happen: a viewer that
	// resumes gets exactly those, in order, with the next IDs.
	w.setReady(t, objectGVR, "app-object-b", "True")
	w.setReady(t, envGVR, "app", "True")
	time.Sleep(200 * time.Millisecond) // the informers deliver asynchronously
	rsp, stop = openStream(t, url, last.id)
	ev = newSSEReader(rsp.Body)
	resumed := ev.next(2)
	stop()
	if len(resumed) != 2 {
		t.Fatalf("a resumed stream replays the 2 events it missed, got %+v", resumed)
	}
	for i, ev := range resumed {
		if want := eventSeq(t, last.id) + 1 + i; eventSeq(t, ev.id) != want {
			t.Errorf("resumed event %d has ID %s, want sequence %d: no gap, no repeat", i, ev.id, want)
		}
	}
	// The two informers deliver independently, so either may come first.
	types := map[string]string{}
	for _, e := range resumed {
		types[e.typ] = e.data
	}
	if !strings.Contains(types[EventResource], `"name":"app-object-b","ready":"True"`) || !strings.Contains(types[EventEnvironment], `"ready":"True"`) {
		t.Errorf("resumed events: want the row and the environment turning Ready, got %+v", resumed)
	}

	// An ID from another process, or too old to replay, gets a snapshot.
	rsp, stop = openStream(t, url, "other.1-3")
	ev = newSSEReader(rsp.Body)
	again := ev.next(1)
	stop()
	if len(again) != 1 || again[0].typ != EventSnapshot || eventSeq(t, again[0].id) != eventSeq(t, resumed[1].id) {
		t.Errorf("an unknown ID gets a snapshot at the current ID %s, got %+v", resumed[1].id, again)
	}

	// Deleting the environment ends it with a deleted event.
	rsp, stop = openStream(t, url, resumed[1].id)
	ev = newSSEReader(rsp.Body)
	defer stop()
	if err := w.dyn.Resource(envGVR).Namespace("team-a").Delete(context.Background(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := ev.next(1)
	if len(gone) != 1 || gone[0].typ != EventDeleted {
		t.Errorf("a deleted environment sends deleted, got %+v", gone)
	}
}

func TestOneWatchPerKind(t *testing.T) {
	w := newWorld(t,
		env("app", bucketGVK),
		env("other", bucketGVK),
		composed(bucketGVK, "app-bucket-a", "app", "bucket", "False"),
	)
	var subs []*Subscription
	for i := range 50 {
		name := []string{"app", "other"}[i%2]
		sub, err := w.srv.Hub.Subscribe(context.Background(), "team-a", name)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	defer func() {
		for _, s := range subs {
			s.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	watches := map[string]int{}
	for _, a := range w.dyn.Actions() {
		if a.GetVerb() == "watch" {
			watches[a.GetResource().Resource]++
		}
	}
	if diff := cmp.Diff(map[string]int{"appenvironments": 1, "buckets": 1}, watches); diff != "" {
		t.Errorf("50 viewers of two environments share one watch per kind: -want, +got:\n%s", diff)
	}
}

func TestSlim(t *testing.T) {
	in := composed(bucketGVK, "b", "app", "bucket", "True")
	in.Object["spec"] = map[string]any{"forProvider": map[string]any{"location": "EU"}}
	in.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "crossplane"}})
	in.SetLabels(map[string]string{labelComposite: "app", "other": "x"})
	got, err := slim(in)
	if err != nil {
		t.Fatal(err)
	}
	want := composed(bucketGVK, "b", "app", "bucket", "True")
	if diff := cmp.Diff(want.Object, got.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("the cache keeps what a stream shows and nothing else: -want, +got:\n%s", diff)
	}
}
