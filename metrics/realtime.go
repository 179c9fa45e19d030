package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// RealtimeSetting is one of the owner thread's real-time settings (internal/rt).
type RealtimeSetting uint8

const (
	SchedFIFO   RealtimeSetting = iota // the SCHED_FIFO priority
	CPUAffinity                        // the pin to one CPU
	MemoryLock                         // mlockall
	NumRealtimeSettings
)

// String returns the label value: "sched_fifo", "affinity" or "mlockall".
func (s RealtimeSetting) String() string {
	switch s {
	case SchedFIFO:
		return "sched_fifo"
	case CPUAffinity:
		return "affinity"
	case MemoryLock:
		return "mlockall"
	}
	return "unknown"
}

var realtimeRefusedDesc = prometheus.NewDesc("cand_realtime_refused",
	"1 while the kernel refused a real-time setting the configuration asks for and cand runs without it (the log says what is missing: CAP_SYS_NICE, RLIMIT_RTPRIO, CAP_IPC_LOCK, the CPU), 0 when it is in effect or not asked for.",
	[]string{"setting"}, nil)

// Realtime is cand_realtime_refused{setting}, set once the owner thread has
// applied its settings.
type Realtime struct {
	refused [NumRealtimeSettings]atomic.Bool
}

var _ prometheus.Collector = (*Realtime)(nil)

// SetRefused records whether the kernel refused s.
func (rt *Realtime) SetRefused(s RealtimeSetting, refused bool) { rt.refused[s].Store(refused) }

// Describe and Collect make Realtime its own collector.
func (rt *Realtime) Describe(ch chan<- *prometheus.Desc) { ch <- realtimeRefusedDesc }

func (rt *Realtime) Collect(ch chan<- prometheus.Metric) {
	for s := range NumRealtimeSettings {
		v := 0.0
		if rt.refused[s].Load() {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(realtimeRefusedDesc, prometheus.GaugeValue, v, s.String())
	}
}

// AddRealtime creates cand_realtime_refused, every setting 0, and registers it.
// Call it once per registry.
func (r *Registry) AddRealtime() *Realtime {
	rt := &Realtime{}
	r.reg.MustRegister(rt)
	return rt
}
