package daemon

import (
	"context"
	"testing"
	"time"

	"cand/internal/promtest"
)

// TestPrometheusScrapesDaemon runs the daemon on the virtual Pi with a periodic
// peer, lets a real Prometheus server (Debian package prometheus) scrape its
// MetricsListener every second, and asks it for the p99 of the RX end-to-end
// stage (classic buckets) and for the received-frame counter.
func TestPrometheusScrapesDaemon(t *testing.T) {
	bin := promtest.Tool(t, "prometheus")
	r := newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Read what the daemon writes, as candump would: a full socket would stop
	// the frames (and with them the rates Prometheus computes).
	drained := make(chan struct{})
	defer func() { cancel(); <-drained }()
	go func() {
		defer close(drained)
		for ctx.Err() == nil {
			r.read(0, 100*time.Millisecond)
		}
	}()
	prom, err := promtest.Start(ctx, t, bin, r.d.MetricsAddr)
	if err != nil {
		t.Fatal(err)
	}

	const sel = `{controller="sim0",interface="vcan0",stage="rx_end_to_end"}`
	p99, err := prom.Number(ctx, `histogram_quantile(0.99, sum by (le) (rate(cand_stage_latency_seconds_bucket`+sel+`[1m])))`)
	if err != nil {
		t.Fatal(err)
	}
	if !(p99 > 0 && p99 < 1) {
		r.logStages()
		t.Errorf("rx_end_to_end p99 = %g s, want in (0, 1)", p99)
	}
	frames, err := prom.Number(ctx, `sum(cand_rx_frames_total{controller="sim0"})`)
	if err != nil {
		t.Fatal(err)
	}
	if !(frames > 0) {
		t.Errorf("cand_rx_frames_total = %g, want > 0", frames)
	}
	t.Logf("Prometheus: rx_end_to_end p99 = %.1f µs, cand_rx_frames_total = %g", p99*1e6, frames)
	cancel()
	<-drained
	r.checkConservation()
}
