package bench

import (
	"cand/config"
	"cand/metrics"
	"cand/sim"
)

// Traffic is what a scenario measured beyond ScenarioResult's pipeline figures:
// the workload's streams, TX, the owner thread's busy fraction, each controller of
// a two-controller run, and the kernel driver's way side by side. ScenarioResult
// embeds it, so its fields sit in the scenario's JSON object.
type Traffic struct {
	// Workload is the workload's kind ("" for the classic scenarios).
	Workload string `json:"workload,omitempty"`
	// SeqGaps are frames missing between two that arrived (per sender, by the
	// counter the frames carry; canbus.Peer.Seq); Reordered arrived after a later
	// one. Frames lost at the very end of the window are lost but no gap.
	SeqGaps   uint64 `json:"sequence_gaps"`
	Reordered uint64 `json:"reordered,omitempty"`
	// Duplicates arrived a second time (not counted as received).
	Duplicates uint64 `json:"duplicates,omitempty"`
	// BitsPerFrame is the received frames' mean length on the wire (stuffing and
	// intermission included, canwire.Bits).
	BitsPerFrame float64 `json:"bits_per_frame"`
	// FilteredOffered are frames of senders the controller's filters drop;
	// FilterLeaks those of them that reached the socket anyway.
	FilteredOffered uint64 `json:"filtered_offered,omitempty"`
	FilterLeaks     uint64 `json:"filter_leaks,omitempty"`
	// ErrorFramesRead are SocketCAN error frames read from the sockets.
	ErrorFramesRead uint64 `json:"error_frames_read"`
	// StrayFrames are frames read that belong to no sender of the workload.
	StrayFrames uint64 `json:"stray_frames,omitempty"`
	// TX: frames written to the socket in the window, reported sent by the driver
	// (TX-done), and the difference after the drain: frames still queued in the
	// socket (the back-pressure of a driver slower than the writer) or dropped.
	TXOffered uint64 `json:"tx_offered,omitempty"`
	TXSent    uint64 `json:"tx_sent,omitempty"`
	TXUnsent  uint64 `json:"tx_unsent,omitempty"`
	// TXArbLost is how often the controller lost arbitration (the chip model's
	// count; 0 on a real board).
	TXArbLost uint64 `json:"tx_arbitration_lost,omitempty"`
	// SPI transfers and bytes outside interrupt handling (LOAD TX BUFFER, RTS) per
	// TX frame; the TX-done interrupt's transfers count as interrupt handling,
	// with the RX frames.
	SPITransfersPerTXFrame float64 `json:"spi_transfers_per_tx_frame,omitempty"`
	SPIBytesPerTXFrame     float64 `json:"spi_bytes_per_tx_frame,omitempty"`
	// OwnerBusy is the owner thread's CPU time over the window's wall time (-1:
	// not measured; OwnerBusyError says why).
	OwnerBusy      float64 `json:"owner_busy_fraction"`
	OwnerBusyError string  `json:"owner_busy_error,omitempty"`
	// DeliveryBusy and DeliveryRunDelayMs are the delivery thread's CPU time over
	// the window's wall time and its host run delay in it (-1: no delivery
	// thread, or not measured; deliveryWatch).
	DeliveryBusy       float64 `json:"delivery_busy_fraction"`
	DeliveryRunDelayMs float64 `json:"delivery_run_delay_ms"`
	// DeliveryCatchUps is how often the owner found the RX ring full while the
	// board's delivery core would have been taking frames, and waited for the
	// simulator's late thread with the board's time held (bridge.Delivery's
	// catchUp): each a ring drop the host's scheduling, not the board, would
	// have made.
	DeliveryCatchUps uint64 `json:"delivery_catch_ups"`
	// DeliveryWakes and DeliveryIsolated are the owner's wakes of the parked
	// delivery thread over the window and the isolated frames it wrote itself
	// instead (bridge.DeliveryStats).
	DeliveryWakes    uint64 `json:"delivery_wakes"`
	DeliveryIsolated uint64 `json:"delivery_isolated"`
	// DeliveryBoardUs is what the board's delivery core was charged per record
	// it wrote over the window (sim.DeliveryCore; nil: none), its user code and
	// its system calls: above a frame's wire time, the ring fills on the board too.
	DeliveryBoardUs *PerFrameUs `json:"delivery_board_us_per_frame,omitempty"`
	// Ports are the controllers one by one, when there are more than one (the
	// scenario's figures are their sums; its stages are the first controller's).
	Ports []PortResult `json:"ports,omitempty"`
	// Kernel is the same workload driven the kernel mcp251x driver's way
	// (bench/kernelref), when the scenario asks for it.
	Kernel *KernelResult `json:"kernel_reference,omitempty"`
}

// PortResult is one controller of a scenario.
type PortResult struct {
	Name string `json:"name"`
	RXFigures
	RXEndToEnd Stage `json:"rx_end_to_end"`
}

// RXFigures are a pipeline's receive figures, flat in the JSON object of the
// result that embeds them: frames the simulated senders offered (those the
// filters drop left out), read from the socket and lost; the chip's overflows
// (RX0OVR, RX1OVR); and the SPI transfers and bytes of interrupt handling per
// received frame.
type RXFigures struct {
	FramesOffered  uint64 `json:"frames_offered"`
	FramesReceived uint64 `json:"frames_received"`
	FramesLost     uint64 `json:"frames_lost"`
	// RingAtClose is the frames still waiting in cand's RX rings when the window
	// closed. Beyond one drain's frames (RingInFlight), which are on their way as
	// any frame is at any instant, they count as lost (part of FramesLost), so
	// that a delivery falling behind the chip is not forgiven by the drain after
	// the window.
	RingAtClose uint64 `json:"ring_at_close"`
	RXOverflows uint64 `json:"rx_overflows"`
	// RingDrops is the frames lost to a full RX ring (cand_rx_ring_drops_total):
	// the socket side fell behind the chip.
	RingDrops              uint64  `json:"rx_ring_drops"`
	SPITransfersPerRXFrame float64 `json:"spi_transfers_per_rx_frame"`
	SPIBytesPerRXFrame     float64 `json:"spi_bytes_per_rx_frame"`
}

// RingInFlight is the frames in cand's RX rings at a window's close that are
// not counted lost: one drain's, the chip's two RX buffers, handed to the
// socket together.
const RingInFlight = 2

// setFrames sets the frames offered, received and lost from c.
func (f *RXFigures) setFrames(c counts) {
	f.FramesOffered, f.FramesReceived, f.FramesLost = c.offered, c.received, 0
	if c.offered > c.received {
		f.FramesLost = c.offered - c.received
	}
}

// portCounters are one controller's counters at an instant.
type portCounters struct {
	rx, intXfers, intBytes, xfers, bytes, overflows, tx, ringDrops uint64
}

func countersOf(m *metrics.Controller) portCounters {
	return portCounters{rx: m.RXFrames.Load(), intXfers: m.RXSPITransfers.Load(), intBytes: m.RXSPIBytes.Load(),
		xfers: m.Polls.Load() + m.Sleeps.Load(), bytes: m.SPIBytes.Load(), overflows: m.RXOverflows.Load(), tx: m.TXFrames.Load(), ringDrops: m.RXRingDrops.Load()}
}

func (c portCounters) minus(o portCounters) portCounters {
	return portCounters{rx: c.rx - o.rx, intXfers: c.intXfers - o.intXfers, intBytes: c.intBytes - o.intBytes,
		xfers: c.xfers - o.xfers, bytes: c.bytes - o.bytes, overflows: c.overflows - o.overflows, tx: c.tx - o.tx, ringDrops: c.ringDrops - o.ringDrops}
}

func (c portCounters) plus(o portCounters) portCounters {
	return portCounters{rx: c.rx + o.rx, intXfers: c.intXfers + o.intXfers, intBytes: c.intBytes + o.intBytes,
		xfers: c.xfers + o.xfers, bytes: c.bytes + o.bytes, overflows: c.overflows + o.overflows, tx: c.tx + o.tx, ringDrops: c.ringDrops + o.ringDrops}
}

// perFrame is a/n, 0 for no frames.
func perFrame(a, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return float64(a) / float64(n)
}

// portsWindow holds every controller's counters at the start of the window.
type portsWindow struct {
	ms []*metrics.Controller
	c0 []portCounters
	d  []portCounters // the deltas at End
}

func (w *portsWindow) begin() {
	w.c0 = w.c0[:0]
	for _, m := range w.ms {
		w.c0 = append(w.c0, countersOf(m))
	}
}

// deltas are each controller's counter deltas since begin.
func (w *portsWindow) deltas() []portCounters {
	out := make([]portCounters, len(w.ms))
	for i, m := range w.ms {
		out[i] = countersOf(m).minus(w.c0[i])
	}
	return out
}

// fillTraffic sets res's stream, TX and per-controller figures from the window: r
// read the sockets, d are the controllers' counter deltas, byteNs one SPI byte's
// wire time. With more than one controller, the scenario's pipeline figures
// become the sums.
func fillTraffic(res *ScenarioResult, r *reader, d []portCounters, names []string, ms []*metrics.Controller, byteNs int64) {
	exp, filt := sum(r.streams, false), sum(r.streams, true)
	res.setFrames(exp)
	res.SeqGaps, res.Reordered, res.Duplicates = exp.gaps, exp.reordered, exp.duplicates
	res.BitsPerFrame = perFrame(exp.bits, exp.received)
	res.FilteredOffered, res.FilterLeaks = filt.offered, filt.received
	res.ErrorFramesRead, res.StrayFrames = r.errorFrames, r.stray
	var all portCounters
	for _, c := range d {
		all = all.plus(c)
	}
	if r.tx != nil {
		res.TXOffered, res.TXSent = r.txWritten(), all.tx
		if res.TXOffered > res.TXSent {
			res.TXUnsent = res.TXOffered - res.TXSent
		}
		res.SPITransfersPerTXFrame = perFrame(all.xfers-all.intXfers, all.tx)
		res.SPIBytesPerTXFrame = perFrame(all.bytes-all.intBytes, all.tx)
	}
	res.RingDrops = all.ringDrops
	if len(d) < 2 {
		return
	}
	res.RXOverflows = all.overflows
	res.SPITransfersPerRXFrame = perFrame(all.intXfers, all.rx)
	res.SPIBytesPerRXFrame = perFrame(all.intBytes, all.rx)
	res.WireUsPerRXFrame = res.SPIBytesPerRXFrame * float64(byteNs) / 1e3
	for i, c := range d {
		var p counts
		for _, s := range r.streams {
			if s.port == i && !s.filtered {
				p.offered += s.Offered()
				p.received += s.Received
			}
		}
		pr := PortResult{Name: names[i], RXFigures: RXFigures{RXOverflows: c.overflows, RingDrops: c.ringDrops,
			SPITransfersPerRXFrame: perFrame(c.intXfers, c.rx), SPIBytesPerRXFrame: perFrame(c.intBytes, c.rx)},
			RXEndToEnd: stageOf(ms[i].RXEndToEnd.Snapshot())}
		pr.setFrames(p)
		res.Ports = append(res.Ports, pr)
	}
}

// fillWindow sets res's pipeline figures from a finished window: w has the first
// controller's counters, r read the sockets, d are every controller's deltas. The
// daemon has stopped (its histograms are read once nothing writes them).
func (res *ScenarioResult) fillWindow(w *window, r *reader, d []portCounters, h *harness, cfg *config.Config, byteNs int64) {
	m := w.m
	res.DurationS = w.elapsed.Seconds()
	res.BoardS = float64(w.boardElapsed) / 1e9
	res.RXOverflows = m.RXOverflows.Load() - w.overflows0
	if rx := float64(m.RXFrames.Load() - w.rx0); rx > 0 {
		res.SPITransfersPerRXFrame = float64(m.RXSPITransfers.Load()-w.spiT0) / rx
		res.SPIBytesPerRXFrame = float64(m.RXSPIBytes.Load()-w.spiB0) / rx
		res.WireUsPerRXFrame = res.SPIBytesPerRXFrame * float64(byteNs) / 1e3
	}
	pw := h.portsWindow()
	fillTraffic(res, r, d, h.names(cfg), pw.ms, byteNs)
	if received := res.FramesReceived; received > 0 {
		res.AllocsPerFrame = float64(w.mallocs) / float64(received)
		res.CPUUsPerFrame = float64(w.cpu.Microseconds()) / float64(received)
	}
	res.RingAtClose = w.ringAtClose
	if w.ringAtClose > RingInFlight {
		// Counted lost, not received, though the drain after the window
		// delivered them: received + lost stays offered.
		e := min(w.ringAtClose-RingInFlight, res.FramesReceived)
		res.FramesReceived -= e
		res.FramesLost += e
	}
	res.PolledInterrupts = m.PolledInts.Load()
	res.Stages = stages(m)
	res.RXHistogram = rxBuckets(h.d.Metrics)
}

// simStreams are the workload's senders on the virtual Pi: every periodic or load
// peer of every bus (in lockstep, each counted over the first peer's window).
func simStreams(pi *sim.Pi, wl Workload) []*stream {
	var ss []*stream
	for i, bus := range wl.Buses {
		peers := pi.Node(i).Peers
		for j, p := range bus.Peers {
			if p.Kind == config.PeerPeriodic || p.Kind == config.PeerLoad {
				s := peerStream(i, peers[j], p.Filtered)
				if wl.Lockstep {
					s.sent = peers[0].SentNow
				}
				ss = append(ss, s)
			}
		}
	}
	return ss
}

// PerFrameUs is a board core's charge per frame: its user code at the factor,
// its system calls at the board's kernel cost (µs); and the host time per frame
// the host-noise rule took out of them (host µs, charged to nobody).
type PerFrameUs struct {
	User   float64 `json:"user"`
	Kernel float64 `json:"kernel"`
	Noise  float64 `json:"host_noise_removed"`
}
