package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
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
	prom := lookTool(t, "prometheus")
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
		api := startPrometheus(ctx, t, prom, target.Listener.Addr().String(), false)
		if api == "" {
			return
		}
		expectQuantile(ctx, t, api, `histogram_quantile(0.5, rate(cand_stage_latency_seconds_bucket`+sel+`[1m]))`, classic10)
		expectQuantile(ctx, t, api, `histogram_quantile(0.99, rate(cand_stage_latency_seconds_bucket`+sel+`[1m]))`, classic100)
	})
	wg.Go(func() {
		api := startPrometheus(ctx, t, prom, target.Listener.Addr().String(), true)
		if api == "" {
			return
		}
		expectQuantile(ctx, t, api, `histogram_quantile(0.5, rate(cand_stage_latency_seconds`+sel+`[1m]))`, native10)
		expectQuantile(ctx, t, api, `histogram_quantile(0.99, rate(cand_stage_latency_seconds`+sel+`[1m]))`, native100)
	})
	wg.Wait()
}

// startPrometheus starts a Prometheus server on a free loopback port that scrapes
// target every second, waits until it is ready and returns its base URL ("" after
// reporting an error). The server is killed when the test ends.
func startPrometheus(ctx context.Context, t *testing.T, bin, target string, native bool) string {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cand
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Error(err)
		return ""
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Error(err)
		return ""
	}
	args := []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}
	if native {
		args = append(args, "--enable-feature=native-histograms")
	}
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Errorf("start %s: %v", bin, err)
		return ""
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus (native=%v) log:\n%s", native, log.String())
		}
	})

	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		select {
		case <-exited:
			t.Errorf("prometheus %v exited before becoming ready", args)
			return ""
		case <-ctx.Done():
			t.Errorf("prometheus %v not ready: %v", args, ctx.Err())
			return ""
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// expectQuantile polls the query API until query returns one sample, then checks
// that it lies in the bucket (lo, hi].
func expectQuantile(ctx context.Context, t *testing.T, api, query string, bucket [2]float64) {
	var last string
	for {
		v, status, err := instantQuery(api, query)
		if err == nil {
			if v > bucket[0] && v <= bucket[1] {
				t.Logf("%s = %g, in (%g, %g]", query, v, bucket[0], bucket[1])
				return
			}
			if !math.IsNaN(v) {
				t.Errorf("%s = %g, want in (%g, %g]", query, v, bucket[0], bucket[1])
				return
			}
		}
		last = fmt.Sprintf("%s (%v)", status, err)
		select {
		case <-ctx.Done():
			t.Errorf("%s: no answer before the deadline; last reply: %s", query, last)
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// instantQuery runs query and returns its single sample value (NaN if there is
// none yet) and the raw reply for diagnostics.
func instantQuery(api, query string) (float64, string, error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return math.NaN(), "", err
	}
	defer resp.Body.Close()
	var reply struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	var raw bytes.Buffer
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
