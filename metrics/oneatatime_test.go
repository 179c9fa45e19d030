package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent requests reach the handler one at a time, and each gets the
// handler's status, headers and body exactly.
func TestOneAtATimeSerialises(t *testing.T) {
	var in, most atomic.Int32
	release := make(chan struct{})
	h := newOneAtATime(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := in.Add(1)
		defer in.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		w.Header().Set("X-Scrape", r.URL.Query().Get("n"))
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("body " + r.URL.Query().Get("n")))
	}))
	const n = 8
	var wg sync.WaitGroup
	got := make([]*httptest.ResponseRecorder, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics?n="+string(rune('a'+i)), nil))
			got[i] = rec
		}()
	}
	for range n {
		release <- struct{}{} // one request at a time takes it
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d requests in the handler at once, want 1", most.Load())
	}
	for i, rec := range got {
		want := string(rune('a' + i))
		if rec.Code != http.StatusTeapot || rec.Header().Get("X-Scrape") != want || rec.Body.String() != "body "+want {
			t.Errorf("request %s: %d %q %q", want, rec.Code, rec.Header().Get("X-Scrape"), rec.Body.String())
		}
	}
}

// A request whose context ends while it waits for its turn leaves without
// reaching the handler.
func TestOneAtATimeWaiterLeaves(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int32
	h := newOneAtATime(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		close(entered)
		<-release
	}))
	first := make(chan struct{})
	go func() {
		defer close(first)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan struct{})
	go func() {
		defer close(left)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil).WithContext(ctx))
	}()
	cancel()
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting request did not leave when its context ended")
	}
	close(release)
	<-first
	if calls.Load() != 1 {
		t.Fatalf("handler called %d times, want 1", calls.Load())
	}
}
