package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// prometheusBin is where the Debian package prometheus installs the server.
const prometheusBin = "/usr/bin/prometheus"

// TestPrometheusScrapesDaemon runs the daemon on the virtual Pi with a periodic
// peer, lets a real Prometheus server (Debian package prometheus) scrape its
// MetricsListener every second, and asks it for the p99 of the RX end-to-end
// stage (classic buckets) and for the received-frame counter.
func TestPrometheusScrapesDaemon(t *testing.T) {
	if _, err := os.Stat(prometheusBin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v; install the Debian package prometheus", prometheusBin, err)
		}
		t.Skipf("%s missing (install the Debian package prometheus): the scrape test needs a real Prometheus server", prometheusBin)
	}
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
	api := runPrometheus(ctx, t, r.d.MetricsAddr)

	const sel = `{controller="sim0",interface="vcan0",stage="rx_end_to_end"}`
	p99 := queryNumber(ctx, t, api,
		`histogram_quantile(0.99, sum by (le) (rate(cand_stage_latency_seconds_bucket`+sel+`[1m])))`)
	if !(p99 > 0 && p99 < 1) {
		r.logStages()
		t.Errorf("rx_end_to_end p99 = %g s, want in (0, 1)", p99)
	}
	frames := queryNumber(ctx, t, api, `sum(cand_rx_frames_total{controller="sim0"})`)
	if !(frames > 0) {
		t.Errorf("cand_rx_frames_total = %g, want > 0", frames)
	}
	t.Logf("Prometheus: rx_end_to_end p99 = %.1f µs, cand_rx_frames_total = %g", p99*1e6, frames)
}

// runPrometheus starts Prometheus on a free loopback port, scraping target every
// second with its storage in a temporary directory, waits until it is ready and
// returns its base URL. The server is killed when the test ends.
func runPrometheus(ctx context.Context, t *testing.T, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cand
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(prometheusBin, "--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", prometheusBin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	})
	base := "http://" + addr
	for {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-exited:
			t.Fatalf("prometheus exited before becoming ready:\n%s", log.String())
		case <-ctx.Done():
			t.Fatalf("prometheus not ready: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// queryNumber polls Prometheus's instant-query API until query returns one
// sample that is a number (not NaN), and returns it.
func queryNumber(ctx context.Context, t *testing.T, api, query string) float64 {
	t.Helper()
	var last string
	for {
		v, raw, err := promQuery(api, query)
		if err == nil && !math.IsNaN(v) {
			return v
		}
		last = fmt.Sprintf("%s (err %v)", raw, err)
		select {
		case <-ctx.Done():
			t.Fatalf("%s: no number before the deadline; last reply: %s", query, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// promQuery runs one instant query and returns its single sample (NaN if there
// is none yet) and the raw reply.
func promQuery(api, query string) (float64, string, error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return math.NaN(), "", err
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	var reply struct {
		Status string
		Error  string
		Data   struct{ Result []struct{ Value [2]any } }
	}
	if err := json.NewDecoder(io.TeeReader(resp.Body, &raw)).Decode(&reply); err != nil {
		return math.NaN(), raw.String(), err
	}
	if reply.Status != "success" {
		return math.NaN(), raw.String(), fmt.Errorf("query failed: %s", reply.Error)
	}
	if len(reply.Data.Result) != 1 {
		return math.NaN(), raw.String(), nil
	}
	s, _ := reply.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, raw.String(), err
}
