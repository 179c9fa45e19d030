package daemon

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The metrics endpoint serves the controller's SPI clock and its range (the virtual
// Pi's core clock is fixed: 400 MHz / 40 = 10 MHz) and counts received frames.
func TestMetricsEndpoint(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
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
