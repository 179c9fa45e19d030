package metrics

import (
	"strings"
	"testing"
)

// The virtual Pi's clock removals are exported as counters by thread, read at each
// scrape.
func TestSimClockExposition(t *testing.T) {
	r := New("test")
	n := uint64(0)
	r.AddSimClock(func() SimClock {
		n++
		return SimClock{CPUStalls: n, CPUStallNs: 1_500_000, BusLate: 2, BusLateNs: 250_000}
	})
	scrapeText(t, r.Handler())
	text := scrapeText(t, r.Handler())
	for _, want := range []string{
		`cand_sim_host_stalls_total{thread="cpu"} 2`,
		`cand_sim_host_stalls_total{thread="bus"} 2`,
		`cand_sim_host_stall_seconds_total{thread="cpu"} 0.0015`,
		`cand_sim_host_stall_seconds_total{thread="bus"} 0.00025`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("exposition lacks %q:\n%s", want, text)
		}
	}
}
