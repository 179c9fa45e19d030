package metrics

import "github.com/prometheus/client_golang/prometheus"

// SimClock is what the virtual Pi's clock took out of its time (sim/clock): the
// host's stalls of the thread that plays the CPU, and the simulated bus thread's
// lateness beyond its grace.
type SimClock struct {
	CPUStalls  uint64
	CPUStallNs int64
	BusLate    uint64
	BusLateNs  int64
}

var (
	simStallsDesc = prometheus.NewDesc("cand_sim_host_stalls_total",
		"Virtual Pi only: host stalls taken out of the board's time (sim/clock); thread=cpu: the owner thread kept from running (runqueue waits, hypervisor steal, Go runtime parks, wake-ups beyond 50us), thread=bus: the simulated bus thread woken more than 100us late.",
		[]string{"thread"}, nil)
	simStallSecondsDesc = prometheus.NewDesc("cand_sim_host_stall_seconds_total",
		"Virtual Pi only: total host stall time taken out of the board's time, by thread (see cand_sim_host_stalls_total).",
		[]string{"thread"}, nil)
)

type simClockCollector struct{ read func() SimClock }

func (c simClockCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- simStallsDesc
	ch <- simStallSecondsDesc
}

func (c simClockCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	ch <- prometheus.MustNewConstMetric(simStallsDesc, prometheus.CounterValue, float64(s.CPUStalls), "cpu")
	ch <- prometheus.MustNewConstMetric(simStallsDesc, prometheus.CounterValue, float64(s.BusLate), "bus")
	ch <- prometheus.MustNewConstMetric(simStallSecondsDesc, prometheus.CounterValue, float64(s.CPUStallNs)/1e9, "cpu")
	ch <- prometheus.MustNewConstMetric(simStallSecondsDesc, prometheus.CounterValue, float64(s.BusLateNs)/1e9, "bus")
}

// AddSimClock exports the virtual Pi's clock removals, read at each scrape.
func (r *Registry) AddSimClock(read func() SimClock) {
	r.reg.MustRegister(simClockCollector{read: read})
}
