package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"cand/mcp2515"
)

// BitTiming is what cand_bit_timing_info says of one controller: the bit timing it
// programs (in the kernel's terms, as `ip -details link show` prints them), the
// MCP2515's crystal and the SPI clock in use.
type BitTiming struct {
	mcp2515.BitTiming
	OscillatorHz uint32
	SCLKHz       uint32
}

// labels returns cand_bit_timing_info's variable label names and their values.
func (t *BitTiming) labels() (names, values []string) {
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	for _, l := range []struct{ name, value string }{
		{"bitrate", u(t.Bitrate)},
		{"sample_point", strconv.FormatFloat(float64(t.SamplePoint)/1000, 'f', 3, 64)}, // per mille, printed as ip does: 0.875
		{"tq_ns", u(t.TQ)},
		{"prop_seg", u(t.PropSeg)},
		{"phase_seg1", u(t.PhaseSeg1)},
		{"phase_seg2", u(t.PhaseSeg2)},
		{"sjw", u(t.SJW)},
		{"brp", u(t.BRP)},
		{"oscillator_hz", u(t.OscillatorHz)},
		{"sclk_hz", u(t.SCLKHz)},
	} {
		names, values = append(names, l.name), append(values, l.value)
	}
	return names, values
}

// AddBitTiming exports t as cand_bit_timing_info{controller, interface, bitrate,
// sample_point, tq_ns, prop_seg, phase_seg1, phase_seg2, sjw, brp, oscillator_hz,
// sclk_hz} = 1 for c. Call it once per controller, at start-up; the returned
// BitTimingInfo changes it when the controller is programmed anew (a reload).
func (r *Registry) AddBitTiming(c *Controller, t BitTiming) *BitTimingInfo {
	names, _ := t.labels()
	desc := prometheus.NewDesc("cand_bit_timing_info",
		"Bit timing the controller programs, in the kernel's terms (ip -details link show): bitrate in bit/s, sample point, time quantum in ns, "+
			"segments and SJW in time quanta, the kernel's prescaler brp; with the MCP2515's crystal and the SPI clock in use, in Hz. Always 1.",
		names, prometheus.Labels{"controller": c.name, "interface": c.iface})
	b := &BitTimingInfo{desc: desc}
	b.Set(t)
	r.reg.MustRegister(b)
	return b
}

// BitTimingInfo is one controller's cand_bit_timing_info series.
type BitTimingInfo struct {
	desc *prometheus.Desc
	m    atomic.Pointer[prometheus.Metric]
}

var _ prometheus.Collector = (*BitTimingInfo)(nil)

// Set makes t what the series says from the next scrape on.
func (b *BitTimingInfo) Set(t BitTiming) {
	_, values := t.labels()
	m := prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, 1, values...)
	b.m.Store(&m)
}

func (b *BitTimingInfo) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }
func (b *BitTimingInfo) Collect(ch chan<- prometheus.Metric) { ch <- *b.m.Load() }
