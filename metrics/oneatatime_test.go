package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cand/internal/waitfor"
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

// Requests asked for alike that arrive while a gathering runs wait for the next
// one and share it: one more run of the handler answers them all, each with the
// whole answer.
func TestOneAtATimeShares(t *testing.T) {
	var calls atomic.Int32
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	h := newOneAtATime(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte{'0' + byte(n)})
	}))
	get := func(out **httptest.ResponseRecorder, wg *sync.WaitGroup) {
		defer wg.Done()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		*out = rec
	}
	var wg sync.WaitGroup
	var first *httptest.ResponseRecorder
	wg.Add(1)
	go get(&first, &wg)
	<-entered // the first gathering runs
	const n = 5
	later := make([]*httptest.ResponseRecorder, n)
	for i := range later {
		wg.Add(1)
		go get(&later[i], &wg)
	}
	var j int
	if !waitfor.Until(10*time.Second, func() bool {
		h.mu.Lock()
		j = h.joined
		h.mu.Unlock()
		return j == n-1
	}) {
		t.Fatalf("%d of %d later requests joined the next gathering", j, n-1)
	}
	close(release)
	wg.Wait()
	if c := calls.Load(); c != 2 {
		t.Fatalf("handler ran %d times for 1 + %d requests, want 2", c, n)
	}
	if first.Body.String() != "1" {
		t.Errorf("first request got %q, want its own gathering's \"1\"", first.Body.String())
	}
	for i, rec := range later {
		if rec.Code != http.StatusOK || rec.Body.String() != "2" || rec.Header().Get("Content-Type") != "text/plain" {
			t.Errorf("later request %d: %d %q %q, want 200 \"2\" text/plain", i, rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"))
		}
	}
}
