package metrics

import "github.com/prometheus/client_golang/prometheus"

// SimClock is what the virtual Pi's clock did to the board's time (sim/clock):
// the host time it took out, by thread and category, and the board time it
// charged beyond host time for cand's own work; and the board it plays.
type SimClock struct {
	Board string // the board profile, e.g. pi3
	Rule  string // strict, dedicated (forgiving) or shared (host time)
	// Removed: host time taken out of the board's time.
	Removed []SimRemoval
	// Charged: board time charged beyond the host time it stands for, by kind
	// (cpu_scaled, park, wake_up, shared_core).
	Charged []SimCharge
	// Factor is board ns per host ns of the owner thread's own running.
	Factor float64
	// HostKernelNs is the host's time for one pass of the calibration kernel as
	// the owner's calibration bursts estimate it now (0: none, not exported).
	HostKernelNs float64
	// CoreClockHz and ARMClockHz are the board's clocks now.
	CoreClockHz, ARMClockHz float64
}

// SimRemoval is one category of removals on one thread (cpu: the owner thread,
// bus: the simulated bus thread).
type SimRemoval struct {
	Thread, Category string
	Count            uint64
	Ns               int64
}

// SimCharge is one kind of board time charged.
type SimCharge struct {
	Kind string
	Ns   int64
}

var (
	simStallsDesc = prometheus.NewDesc("cand_sim_host_stalls_total",
		"Virtual Pi only: host stalls taken out of the board's time, by thread (cpu: the owner thread, bus: the simulated bus thread) and category (docs/clock.md, \"What is removed\").",
		[]string{"thread", "category"}, nil)
	simStallSecondsDesc = prometheus.NewDesc("cand_sim_host_stall_seconds_total",
		"Virtual Pi only: host time taken out of the board's time, by thread and category (see cand_sim_host_stalls_total).",
		[]string{"thread", "category"}, nil)
	simChargedDesc = prometheus.NewDesc("cand_sim_board_charged_seconds_total",
		"Virtual Pi only (strict rule): board time charged beyond host time for cand's own work, by kind (docs/clock.md, \"What is charged\").",
		[]string{"kind"}, nil)
	simBoardDesc = prometheus.NewDesc("cand_sim_board_info",
		"Virtual Pi only: the board profile it plays and the clock rule (strict, dedicated: forgiving, shared: host time).",
		[]string{"board", "rule"}, nil)
	simFactorDesc = prometheus.NewDesc("cand_sim_cpu_factor",
		"Virtual Pi only: board time per host time of the owner thread's own running, at the board's CPU clock now.",
		nil, nil)
	simHostKernelDesc = prometheus.NewDesc("cand_sim_host_kernel_seconds",
		"Virtual Pi only (strict rule): the host's time for one pass of the calibration kernel as the owner thread's calibration bursts estimate it now; cand_sim_cpu_factor is the board's time for a pass over it.",
		nil, nil)
	simClockHzDesc = prometheus.NewDesc("cand_sim_clock_hz",
		"Virtual Pi only: the board's clocks now, as its firmware scales them (clock: core, arm).",
		[]string{"clock"}, nil)
)

type simClockCollector struct{ read func() SimClock }

var _ prometheus.Collector = simClockCollector{}

func (c simClockCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{simStallsDesc, simStallSecondsDesc, simChargedDesc, simBoardDesc, simFactorDesc, simHostKernelDesc, simClockHzDesc} {
		ch <- d
	}
}

func (c simClockCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	for _, r := range s.Removed {
		ch <- prometheus.MustNewConstMetric(simStallsDesc, prometheus.CounterValue, float64(r.Count), r.Thread, r.Category)
		ch <- prometheus.MustNewConstMetric(simStallSecondsDesc, prometheus.CounterValue, float64(r.Ns)/1e9, r.Thread, r.Category)
	}
	for _, k := range s.Charged {
		ch <- prometheus.MustNewConstMetric(simChargedDesc, prometheus.CounterValue, float64(k.Ns)/1e9, k.Kind)
	}
	ch <- prometheus.MustNewConstMetric(simBoardDesc, prometheus.GaugeValue, 1, s.Board, s.Rule)
	ch <- prometheus.MustNewConstMetric(simFactorDesc, prometheus.GaugeValue, s.Factor)
	if s.HostKernelNs > 0 {
		ch <- prometheus.MustNewConstMetric(simHostKernelDesc, prometheus.GaugeValue, s.HostKernelNs/1e9)
	}
	ch <- prometheus.MustNewConstMetric(simClockHzDesc, prometheus.GaugeValue, s.CoreClockHz, "core")
	ch <- prometheus.MustNewConstMetric(simClockHzDesc, prometheus.GaugeValue, s.ARMClockHz, "arm")
}

// AddSimClock exports the virtual Pi's clock, read at each scrape.
func (r *Registry) AddSimClock(read func() SimClock) {
	r.reg.MustRegister(simClockCollector{read: read})
}
