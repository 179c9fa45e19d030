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
	body := metricsText(t, r.d.MetricsAddr)
	for _, want := range []string{
		"\ncand_spi_clock_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_spi_clock_min_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_spi_clock_max_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_rx_frames_total{controller=\"sim0\",interface=\"vcan0\"} ",
		"\ncand_stage_latency_seconds_count{controller=\"sim0\",interface=\"vcan0\",stage=\"rx_end_to_end\"} ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Unpinned, the default board (a Pi 3) moves its core clock between 250 and
// 400 MHz: the dividers are sized for 400 (10 MHz), and SCLK drops to 6.25 MHz
// with the core. The board's clocks and CPU factor are exported too.
func TestMetricsSPIClockRange(t *testing.T) {
	r := newRigConfig(t).start()
	text := metricsText(t, r.d.MetricsAddr)
	for _, want := range []string{
		"\ncand_spi_clock_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_spi_clock_min_hertz{controller=\"sim0\",interface=\"vcan0\"} 6.25e+06\n",
		"\ncand_spi_clock_max_hertz{controller=\"sim0\",interface=\"vcan0\"} 1e+07\n",
		"\ncand_sim_board_info{board=\"pi3\",rule=\"strict\"} 1\n",
		"\ncand_sim_cpu_factor ",
		"\ncand_sim_host_stall_seconds_total{category=\"runqueue\",thread=\"cpu\"} ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// metricsText is the daemon's /metrics in the text format.
func metricsText(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
