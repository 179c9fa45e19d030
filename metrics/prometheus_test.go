package metrics

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cand/internal/promtest"
)

// TestRealPrometheus lets the Debian package's Prometheus server (v2.42) scrape the
// handler and asks it for quantiles, twice in parallel:
//
//   - classic: a default server. It negotiates OpenMetrics text and stores the
//     classic _bucket series; histogram_quantile interpolates within a classic
//     bucket.
//   - native: a server with --enable-feature=native-histograms. It negotiates
//     protobuf and stores the native histogram (2.42 then ignores the classic
//     buckets of the same metric); histogram_quantile interpolates within a
//     schema-3 bucket.
//
// Every scrape first records 90 × 10 µs and 10 × 100 µs into rx_end_to_end, so
// rates are never zero and p50 lies in the 10 µs bucket, p99 in the 100 µs one.
func TestRealPrometheus(t *testing.T) {
	prom := promtest.Tool(t, "prometheus")
	r := New("test")
	c := r.AddController("can0", "vcan0")
	metrics := r.Handler()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/metrics" {
			for i := range 100 {
				if i < 90 {
					c.RXEndToEnd.Observe(10_000)
				} else {
					c.RXEndToEnd.Observe(100_000)
				}
			}
		}
		metrics.ServeHTTP(w, req)
	}))
	defer target.Close()

	// Classic buckets holding 10 µs and 100 µs: (2^-17, 2^-16.5] and (2^-13.5, 2^-13] s.
	classic10, classic100 := [2]float64{math.Exp2(-17), math.Exp2(-16.5)}, [2]float64{math.Exp2(-13.5), math.Exp2(-13)}
	// Native schema-3 buckets -132 and -106: (2^(-133/8), 2^(-132/8)] and (2^(-107/8), 2^(-106/8)] s.
	native10, native100 := [2]float64{math.Exp2(-133.0 / 8), math.Exp2(-132.0 / 8)}, [2]float64{math.Exp2(-107.0 / 8), math.Exp2(-106.0 / 8)}

	const sel = `{controller="can0",interface="vcan0",stage="rx_end_to_end"}`
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		s, err := promtest.Start(ctx, t, prom, target.Listener.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		expectQuantile(ctx, t, s, `histogram_quantile(0.5, rate(cand_stage_latency_seconds_bucket`+sel+`[1m]))`, classic10)
		expectQuantile(ctx, t, s, `histogram_quantile(0.99, rate(cand_stage_latency_seconds_bucket`+sel+`[1m]))`, classic100)
	})
	wg.Go(func() {
		s, err := promtest.Start(ctx, t, prom, target.Listener.Addr().String(), "--enable-feature=native-histograms")
		if err != nil {
			t.Error(err)
			return
		}
		expectQuantile(ctx, t, s, `histogram_quantile(0.5, rate(cand_stage_latency_seconds`+sel+`[1m]))`, native10)
		expectQuantile(ctx, t, s, `histogram_quantile(0.99, rate(cand_stage_latency_seconds`+sel+`[1m]))`, native100)
	})
	wg.Wait()
}

// expectQuantile waits until query returns one number, then checks that it lies
// in the bucket (lo, hi].
func expectQuantile(ctx context.Context, t *testing.T, s *promtest.Server, query string, bucket [2]float64) {
	v, err := s.Number(ctx, query)
	switch {
	case err != nil:
		t.Error(err)
	case v > bucket[0] && v <= bucket[1]:
		t.Logf("%s = %g, in (%g, %g]", query, v, bucket[0], bucket[1])
	default:
		t.Errorf("%s = %g, want in (%g, %g]", query, v, bucket[0], bucket[1])
	}
}
