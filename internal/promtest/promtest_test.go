package promtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A server started for a target has scraped it when Start returns, and Number
// returns the target's sample as the server stored it.
func TestStartScrapesAndNumberQueries(t *testing.T) {
	bin := Tool(t, "prometheus")
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, "# TYPE promtest_answer gauge\npromtest_answer{kind=\"test\"} 42.5\n")
	}))
	defer target.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Start(ctx, t, bin, target.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if up, err := s.Number(ctx, `up{job="cand"}`); err != nil || up != 1 {
		t.Fatalf(`up{job="cand"} = %g (%v), want 1 right after Start`, up, err)
	}
	if v, err := s.Number(ctx, `promtest_answer{kind="test"}`); err != nil || v != 42.5 {
		t.Fatalf("promtest_answer = %g (%v), want 42.5", v, err)
	}
}
