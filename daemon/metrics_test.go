package daemon

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The metrics endpoint serves the controller's SPI clock and its range (the virtual
// Pi's core clock pinned at 400 MHz, as core_freq=400 on a Pi 3: 400 MHz / 40 =
// 10 MHz) and counts received frames.
func TestMetricsEndpoint(t *testing.T) {
	r := newRigConfig(t).coreClock(400_000_000).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	if _, _, err := r.read(0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + r.d.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\ncand_spi_clock_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_spi_clock_min_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_spi_clock_max_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_rx_frames_total{controller=\"sim0\",interface=\"vcan0\"} ",
		"\ncand_stage_latency_seconds_count{controller=\"sim0\",interface=\"vcan0\",stage=\"rx_end_to_end\"} ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	r.checkConservation()
}

// Unpinned, the default board (a Pi 3) moves its core clock between 250 and
// 400 MHz: the dividers are sized for 400 (10 MHz), and SCLK drops to 6.25 MHz
// with the core. The board and its clock rule (the default, dedicated) are exported too.
func TestMetricsSPIClockRange(t *testing.T) {
	r := newRigConfig(t).start()
	s := scrapeMetrics(t, r.d.MetricsAddr)
	for name, want := range map[string]float64{"cand_spi_clock_hertz": 10e6, "cand_spi_clock_min_hertz": 6.25e6, "cand_spi_clock_max_hertz": 10e6} {
		if v := s.value(t, name); v != want {
			t.Errorf("%s = %g, want %g", name, v, want)
		}
	}
	if v := s.metric(t, "cand_sim_board_info", map[string]string{"board": "pi3", "rule": "strict"}).Gauge.GetValue(); v != 1 {
		t.Errorf("cand_sim_board_info{board=pi3,rule=strict} = %g, want 1", v)
	}
	if f := s.metric(t, "cand_sim_cpu_factor", nil).Gauge.GetValue(); f < 1 {
		t.Errorf("cand_sim_cpu_factor = %g, want at least 1", f)
	}
	s.metric(t, "cand_sim_host_stall_seconds_total", map[string]string{"category": "runqueue", "thread": "cpu"})
	// The owner thread's calibration bursts: it calibrated when it bound the clock
	// (if it could: not without /proc, e.g. under some emulators, where the
	// board stays on host time and charges nothing).
	bursts := s.metric(t, "cand_sim_host_stalls_total", map[string]string{"category": "calibration", "thread": "cpu"}).Counter.GetValue()
	scaled := s.metric(t, "cand_sim_board_charged_seconds_total", map[string]string{"kind": "cpu_scaled"}).Counter.GetValue()
	if scaled > 0 && bursts < 1 {
		t.Errorf("cand_sim_host_stalls_total{category=calibration} = %g with the owner's running charged (%g s): want the owner thread's bursts", bursts, scaled)
	}
	if scaled > 0 {
		if k := s.metric(t, "cand_sim_host_kernel_seconds", nil).Gauge.GetValue(); k <= 0 {
			t.Errorf("cand_sim_host_kernel_seconds = %g, want the bursts' estimate", k)
		}
	}
}
