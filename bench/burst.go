package bench

import (
	"cand/metrics"
)

// Reference3x7 is a published measurement of the kernel's SPI path for an MCP2515
// on a Raspberry Pi 2 (Source): one interrupt carrying 3 received messages, which
// the kernel's mcp251x served with 7 SPI transfers, with spi-bcm2835 polling short
// transfers for up to 10 µs (one of the 7 still waited for its interrupt) and for up
// to 20 µs.
var Reference3x7 = BurstReference{
	Messages:           3,
	SPITransfers:       7,
	HandlingUsIRQ:      215,
	HandlingUsPolling:  161.8,
	CSSpanUsIRQ:        95.0,
	CSSpanUsPolling:    81.8,
	Source:             "https://github.com/msperl/spi-bcm2835/wiki/spi_bcm2835situation",
	HandlingDefinition: "interrupt to last can_callback finished",
}

// BurstReference is a measurement's figures for one interrupt with Messages
// messages. The IRQ figures are with the shorter poll, under which a transfer still
// waited for its interrupt; the Polling figures with the longer one.
type BurstReference struct {
	Messages          int     `json:"messages"`
	SPITransfers      int     `json:"spi_transfers"`
	HandlingUsIRQ     float64 `json:"handling_us_irq"`
	HandlingUsPolling float64 `json:"handling_us_polling"`
	// CSSpan: first CS-down to last CS-up.
	CSSpanUsIRQ        float64 `json:"cs_span_us_irq"`
	CSSpanUsPolling    float64 `json:"cs_span_us_polling"`
	Source             string  `json:"source"`
	HandlingDefinition string  `json:"handling_definition"`
}

// BurstResult describes how the daemon served bursts of back-to-back frames.
// Counts are per burst over the measured window plus the drain (bursts = the
// daemon's RX frames / frames per burst over that interval, like the other
// counters). The daemon handles a frame as soon as its INT assertion is seen, so a
// burst is usually served by several interrupts (one per frame, the later ones
// found by the INT poll window when it is on), not by one as in Reference3x7;
// IntHandled is per interrupt: INT edge (or, for a polled one, the moment the
// poll saw INT low) → INT high again.
type BurstResult struct {
	FramesPerBurst           int     `json:"frames_per_burst"`
	PeriodUs                 float64 `json:"period_us"`
	Bursts                   float64 `json:"bursts"`
	InterruptsPerBurst       float64 `json:"interrupts_per_burst"`
	PolledInterruptsPerBurst float64 `json:"polled_interrupts_per_burst"`
	SPITransfersPerBurst     float64 `json:"spi_transfers_per_burst"`
	SPITransfersPerInterrupt float64 `json:"spi_transfers_per_interrupt"`
	SPIBytesPerBurst         float64 `json:"spi_bytes_per_burst"`
	IntHandledP50Us          float64 `json:"int_handled_p50_us"`
	IntHandledP99Us          float64 `json:"int_handled_p99_us"`
	// HandlingUsPerBurst is interrupts per burst × int_handled p50: the time per
	// burst the owner thread spends with an interrupt open.
	HandlingUsPerBurst float64        `json:"handling_us_per_burst"`
	Reference          BurstReference `json:"reference"`
}

// burstOf computes sc's burst figures from the window's counter deltas and the
// int_handled stage.
func burstOf(sc Scenario, m *metrics.Controller, w *window) *BurstResult {
	b := &BurstResult{FramesPerBurst: sc.Burst, PeriodUs: us(sc.Period), Reference: Reference3x7}
	b.Bursts = float64(m.RXFrames.Load()-w.rx0) / float64(sc.Burst)
	h := stageOf(m.IntHandled.Snapshot())
	b.IntHandledP50Us, b.IntHandledP99Us = h.P50, h.P99
	if b.Bursts == 0 {
		return b
	}
	ints := float64(m.Interrupts.Load() - w.ints0)
	b.InterruptsPerBurst = ints / b.Bursts
	b.PolledInterruptsPerBurst = float64(m.PolledInts.Load()-w.polled0) / b.Bursts
	xfers := float64(m.RXSPITransfers.Load() - w.spiT0)
	b.SPITransfersPerBurst = xfers / b.Bursts
	b.SPIBytesPerBurst = float64(m.RXSPIBytes.Load()-w.spiB0) / b.Bursts
	if ints > 0 {
		b.SPITransfersPerInterrupt = xfers / ints
	}
	b.HandlingUsPerBurst = b.InterruptsPerBurst * h.P50
	return b
}
