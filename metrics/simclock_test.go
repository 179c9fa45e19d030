package metrics

import "testing"

// The virtual Pi's clock removals are exported as counters by thread and
// category, the board time charged by kind, read at each scrape.
func TestSimClockExposition(t *testing.T) {
	r := New("test")
	n := uint64(0)
	r.AddSimClock(func() SimClock {
		n++
		return SimClock{Board: "pi3", Rule: "strict", Factor: 12.5, HostKernelNs: 250, CoreClockHz: 250e6, ARMClockHz: 600e6,
			Removed: []SimRemoval{{Thread: "cpu", Category: "runqueue", Count: n, Ns: 1_500_000}, {Thread: "bus", Category: "bus_late", Count: 2, Ns: 250_000}},
			Charged: []SimCharge{{Kind: "cpu_scaled", Ns: 3_000_000_000}}}
	})
	secondScrapeHas(t, r,
		`cand_sim_host_stalls_total{category="runqueue",thread="cpu"} 2`,
		`cand_sim_host_stalls_total{category="bus_late",thread="bus"} 2`,
		`cand_sim_host_stall_seconds_total{category="runqueue",thread="cpu"} 0.0015`,
		`cand_sim_host_stall_seconds_total{category="bus_late",thread="bus"} 0.00025`,
		`cand_sim_board_charged_seconds_total{kind="cpu_scaled"} 3`,
		`cand_sim_board_info{board="pi3",rule="strict"} 1`,
		`cand_sim_cpu_factor 12.5`,
		`cand_sim_host_kernel_seconds 2.5e-07`,
		`cand_sim_clock_hz{clock="core"} 2.5e+08`,
		`cand_sim_clock_hz{clock="arm"} 6e+08`,
	)
}
