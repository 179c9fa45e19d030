package bench

import (
	"context"
	"fmt"

	"cand/bench/kernelref"
	"cand/config"
	"cand/internal/inproc"
	"cand/sim"
)

// KernelResult is a scenario's workload driven the kernel mcp251x driver's way
// (bench/kernelref) on a virtual Pi of its own, of the scenario's board: its SPI
// transfers are real on the register model, its wake-ups and per-transfer costs
// are charged from a published Raspberry Pi 2 measurement, scaled to a Pi 3 on
// that board (calibrated, not measured: docs/kernel-reference.md). The figures
// are defined as cand's are.
type KernelResult struct {
	Error string `json:"error,omitempty"`
	// Board and ClockRule are the profile and clock rule it ran on.
	Board          string  `json:"board"`
	ClockRule      string  `json:"clock_rule"`
	DurationS      float64 `json:"duration_s"`
	FramesOffered  uint64  `json:"frames_offered"`
	FramesReceived uint64  `json:"frames_received"`
	FramesLost     uint64  `json:"frames_lost"`
	SeqGaps        uint64  `json:"sequence_gaps"`
	Reordered      uint64  `json:"reordered,omitempty"`
	Duplicates     uint64  `json:"duplicates,omitempty"`
	// RXOverflows counts RX0OVR and RX1OVR bits seen (rx_over_errors).
	RXOverflows uint64 `json:"rx_overflows"`
	// Unfiltered are frames of senders cand's filters drop in the chip that the
	// kernel driver, which sets no filters, handed up.
	Unfiltered             uint64  `json:"unfiltered_frames,omitempty"`
	Interrupts             uint64  `json:"interrupts"`
	SPITransfersPerRXFrame float64 `json:"spi_transfers_per_rx_frame"`
	SPIBytesPerRXFrame     float64 `json:"spi_bytes_per_rx_frame"`
	TXOffered              uint64  `json:"tx_offered,omitempty"`
	TXSent                 uint64  `json:"tx_sent,omitempty"`
	TXUnsent               uint64  `json:"tx_unsent,omitempty"`
	SPITransfersPerTXFrame float64 `json:"spi_transfers_per_tx_frame,omitempty"`
	SPIBytesPerTXFrame     float64 `json:"spi_bytes_per_tx_frame,omitempty"`
	ErrorFramesRead        uint64  `json:"error_frames_read"`
	// BusyFraction is the share of the window the driver spent in its handlers
	// (the threaded IRQ handler and tx_work, charges included), on the board's
	// clock.
	BusyFraction   float64 `json:"busy_fraction"`
	RXEndToEnd     Stage   `json:"rx_end_to_end"`
	TXSocketToDone Stage   `json:"tx_socket_to_done"`
	// LateUs is board time the driver spent beyond its charges and the wire's
	// time (0 when the model ran exactly), µs; like the stalls below, over the
	// window and the drain.
	LateUs float64 `json:"late_us"`
	// HostStalls are pieces of host time of 20 µs or more the board's clock left
	// in the reference's time (HostStallUs in all), and OverflowsAfterStall the
	// RX overflows found right after one: the host's doing, not the model's.
	HostStalls          uint64  `json:"host_stalls"`
	HostStallUs         float64 `json:"host_stall_us"`
	OverflowsAfterStall uint64  `json:"rx_overflows_after_stall"`
	// Costs are the charges used, µs.
	Costs KernelCosts `json:"costs_us"`
}

// KernelCosts are kernelref.Costs in µs, with their source.
type KernelCosts struct {
	IRQ        float64 `json:"irq"`
	ThreadWake float64 `json:"thread_wake"`
	SyncSetup  float64 `json:"spi_sync_setup"`
	InCS       float64 `json:"in_cs"`
	SyncReturn float64 `json:"spi_sync_return"`
	Source     string  `json:"source"`
}

// runKernel runs sc's workload with the kernel's driver way for sc.Duration, on a
// fresh virtual Pi built from the same configuration cand ran with.
func runKernel(ctx context.Context, sc Scenario, cfg *config.Config) *KernelResult {
	c, err := kernelref.ForBoard(cfg.Hardware.SimBoard)
	if err != nil {
		return &KernelResult{Board: string(cfg.Hardware.SimBoard), Error: err.Error()}
	}
	src := kernelref.Source
	if cfg.Hardware.SimBoard != config.SimBoardPi2 {
		src += ", scaled to " + string(cfg.Hardware.SimBoard) + " (kernelref.ForBoard)"
	}
	res := &KernelResult{Costs: KernelCosts{IRQ: us(c.IRQ), ThreadWake: us(c.ThreadWake), SyncSetup: us(c.SyncSetup),
		InCS: us(c.InCS), SyncReturn: us(c.SyncReturn), Source: src}}
	if err := runKernelWindow(ctx, sc, cfg, c, res); err != nil {
		res.Error = err.Error()
	}
	return res
}

func runKernelWindow(ctx context.Context, sc Scenario, cfg *config.Config, costs kernelref.Costs, res *KernelResult) error {
	kc := *cfg
	// The reference charges its costs through the strict rule's account at fixed
	// clocks (kernelref.Run).
	kc.Hardware.SimCPU, kc.Hardware.SimForceTurbo = config.SimCPUStrict, true
	pi, err := sim.New(&kc)
	if err != nil {
		return err
	}
	defer pi.Close()
	h, err := inproc.Start(ctx, inproc.Options{Controllers: len(cfg.Controllers), Queues: inproc.Deep()},
		func(ctx context.Context, e inproc.Env[[]kernelref.Port]) error {
			pi.Start(ctx)
			return kernelref.Run(ctx, kernelref.Config{Pi: pi, Cfg: &kc, Sockets: e.Sockets, Costs: costs}, e.Ready)
		})
	if err != nil {
		return fmt.Errorf("kernel reference: %w", err)
	}
	defer h.Close()
	ports := h.D
	wl := sc.workload()
	st := ports[0].Stats
	txDone := func() uint64 { return st.TXFrames.Load() }
	r := newReader(h.Host, simStreams(pi, wl), wl.TX, wl.Loopback, pi.Clock().Now, txDone)
	type snap struct{ rx, ints, ist, istB, tx, txX, txB, ovr, busy, ovrStall, stalls, stallNs, late uint64 }
	take := func() snap {
		var s snap
		for _, p := range ports {
			q := p.Stats
			s.rx += q.RXFrames.Load()
			s.ints += q.Interrupts.Load()
			s.ist += q.ISTXfers.Load()
			s.istB += q.ISTBytes.Load()
			s.tx += q.TXFrames.Load()
			s.txX += q.TXXfers.Load()
			s.txB += q.TXBytes.Load()
			s.ovr += q.Overflows.Load()
			s.busy += q.BusyNs.Load()
			s.ovrStall += q.OverflowsAfterStall.Load()
			s.stalls += q.HostStalls.Load()
			s.stallNs += q.HostStallNs.Load()
			s.late += q.LateNs.Load()
		}
		return s
	}
	var s0, s1 snap
	var v0, v1 int64
	err = r.run(ctx, sc.Duration, func() { s0, v0 = take(), pi.Clock().Now() }, func() { s1, v1 = take(), pi.Clock().Now() })
	end := take()
	switch ok, derr := h.Stop(); {
	case err != nil:
	case !ok:
		err = fmt.Errorf("kernel reference: did not stop within %v", inproc.StopTimeout)
	case derr != nil:
		err = derr
	}
	exp, filt := sum(r.streams, false), sum(r.streams, true)
	res.DurationS = r.elapsed.Seconds()
	res.Board, res.ClockRule = string(pi.Board().Name), string(pi.Rule())
	res.FramesOffered, res.FramesReceived = exp.offered, exp.received
	if exp.offered > exp.received {
		res.FramesLost = exp.offered - exp.received
	}
	res.SeqGaps, res.Reordered, res.Duplicates = exp.gaps, exp.reordered, exp.duplicates
	res.Unfiltered = filt.received
	res.ErrorFramesRead = r.errorFrames
	// Counters over the window and the drain, like cand's.
	res.RXOverflows = end.ovr - s0.ovr
	res.Interrupts = end.ints - s0.ints
	res.SPITransfersPerRXFrame = perFrame(end.ist-s0.ist, end.rx-s0.rx)
	res.SPIBytesPerRXFrame = perFrame(end.istB-s0.istB, end.rx-s0.rx)
	if r.tx != nil {
		res.TXOffered, res.TXSent = r.txWritten(), end.tx-s0.tx
		if res.TXOffered > res.TXSent {
			res.TXUnsent = res.TXOffered - res.TXSent
		}
		res.SPITransfersPerTXFrame = perFrame(end.txX-s0.txX, end.tx-s0.tx)
		res.SPIBytesPerTXFrame = perFrame(end.txB-s0.txB, end.tx-s0.tx)
	}
	if v1 > v0 {
		res.BusyFraction = float64(s1.busy-s0.busy) / float64(v1-v0)
	}
	res.LateUs = float64(end.late-s0.late) / 1e3
	res.HostStalls, res.HostStallUs = end.stalls-s0.stalls, float64(end.stallNs-s0.stallNs)/1e3
	res.OverflowsAfterStall = end.ovrStall - s0.ovrStall
	res.RXEndToEnd = stageOf(st.RXEndToEnd.Snapshot())
	res.TXSocketToDone = stageOf(st.TXSocketToDone.Snapshot())
	return err
}
