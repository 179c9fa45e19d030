package soak

import (
	"fmt"
	"io"
	"time"

	"cand/config"
	"cand/metrics"
	"cand/sim"
)

// Report is a soak run's accounting, per direction, by the rule of the daemon's
// end-to-end tests (docs/faults.md): every frame offered is delivered or lost by a
// named cause; what is left over is unexplained.
type Report struct {
	Seed    uint64
	TXRate  int
	Rule    config.SimCPU // the virtual Pi's clock rule
	Elapsed time.Duration
	Faults  [numFaults]uint64
	LostIn  [numFaults]uint64 // RX frames the chip lost in each kind of fault's windows

	// TX, socket to bus.
	TXWritten     uint64 // frames the writer wrote into cand's socket (offered)
	TXRefused     uint64 // writes the full socket queue refused (never offered)
	TXSent        uint64 // cand_tx_frames_total
	TXDropped     uint64 // cand_tx_dropped_total: bus-off, chip reset, timeout, abort
	TXInvalid     uint64 // cand_tx_invalid_total
	TXSocketDrops uint64 // cand_socket_drops_total
	TXUnsent      uint64 // cand_tx_unsent_at_exit_total
	TXChipSent    uint64 // the chip model's own count, erratum-5 repeats aside
	TXChipRepeats uint64
	TXHeard       uint64 // what the listener on the bus received
	// TXResetSent: frames the chip sent whose TX-done flag a chip reset then wiped
	// before cand read it; cand counted them dropped (it cannot know otherwise).
	// At most txBuffers per chip reset.
	TXResetSent uint64
	// TXResetHeard: frames the listener heard that the chip does not count as sent:
	// on the wire when the chip was reset, and finished by the simulated bus (on a
	// real bus the transmitter's brown-out would destroy the frame). cand counted
	// them dropped. At most one per chip reset.
	TXResetHeard   uint64
	TXSeqErrors    uint64 // out of order or corrupt, at the listener
	TXDuplicates   uint64 // counters heard twice (erratum-5 repeats are such)
	TXUnexplained  uint64
	TXPeerSent     uint64 // the load peer's frames on the bus
	RXAccepted     uint64 // frames the chip accepted (offered to cand)
	RXOverflowLost uint64 // lost in the chip (RXnOVR)
	RXOverflows    uint64 // cand_rx_overflows_total (events: RXnOVR is a flag)
	RXWiped        uint64 // wiped from the RX buffers by chip resets
	RXHeld         uint64 // still in the RX buffers at the end
	RXRefused      uint64 // refused by cand's socket (EAGAIN), by the difference
	RXRingDrops    uint64 // cand_rx_ring_drops_total: lost to cand's full RX ring
	// RXTorn: frames a chip reset hit while cand read them: the chip model counts
	// them wiped, cand delivered what it read (a reset after the DLC byte: the
	// data bytes after it read 0xFF, then 0x00; earlier, the read-back is no frame
	// and dropped). At most one per chip reset; a sequence error in its window.
	RXTorn       uint64
	RXInvalid    uint64 // cand_rx_invalid_reads_total: RX read-backs that were no frame, dropped
	RXSocketErrs uint64 // cand_rx_socket_errors_total (error frames included)
	RXWritten    uint64 // cand_rx_frames_total
	RXRead       uint64 // the load peer's frames read from cand's socket (delivered)
	RXSeqErrors  uint64 // repeated, out of order or corrupt
	RXSeqInFault uint64 // of those, during a fault or within faultSettle after it
	RXUncertain  uint64 // cand_rx_order_uncertain_total: both RX buffers full, order not knowable
	// RXReordersOut: of the sequence errors outside fault windows, the reorders (a
	// counter lower than the previous one): explained up to RXUncertain, the reads
	// whose order cand reported it could not know.
	RXReordersOut uint64
	SeqFirsts     []string
	RXUnexplained uint64
	ErrorFrames   uint64 // cand_error_frames_total
	ErrorFramesRd uint64
	Stray         uint64 // other records read from cand's socket
	Problems      []string

	Start, End Resources
}

func (r *Report) account(m *metrics.Controller, pi *sim.Pi, w *writer, rd *reader, l *listener, in *injector) {
	bad := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	cs := pi.Node(0).Chip.Stats()
	r.Faults, r.LostIn = in.counts, in.lostIn

	r.TXWritten, r.TXRefused = w.written.Load(), w.refused.Load()
	r.TXSent, r.TXDropped, r.TXInvalid = m.TXFrames.Load(), m.TXDropped.Load(), m.TXInvalid.Load()
	r.TXSocketDrops, r.TXUnsent = m.SocketDrops.Load(), m.TXUnsentAtExit.Load()
	r.TXChipSent, r.TXChipRepeats = cs.Sent-cs.Repeats, cs.Repeats
	r.TXHeard, r.TXSeqErrors, r.TXDuplicates = l.seq.frames, l.seq.errors, l.seq.dups
	r.TXUnexplained = diff(r.TXWritten, r.TXSent+r.TXDropped+r.TXInvalid+r.TXSocketDrops+r.TXUnsent)
	resets := r.Faults[FaultChipReset]
	r.TXResetSent = r.bounded(int64(r.TXChipSent)-int64(r.TXSent), txBuffers*resets)
	r.TXResetHeard = r.bounded(int64(r.TXHeard)-int64(cs.Sent), resets)
	if r.TXResetSent+r.TXResetHeard > r.TXDropped {
		r.TXUnexplained += r.TXResetSent + r.TXResetHeard - r.TXDropped
	}
	if r.TXDuplicates > r.TXChipRepeats {
		bad("TX: the listener heard %d counters twice, the chip repeated %d frames", r.TXDuplicates, r.TXChipRepeats)
	}

	r.TXPeerSent = pi.Node(0).Peers[0].Stats().Sent
	r.RXAccepted, r.RXOverflowLost, r.RXOverflows = cs.Received+cs.Lost, cs.Lost, m.RXOverflows.Load()
	r.RXWiped, r.RXHeld = in.wiped, uint64(pi.Node(0).Chip.RXHeld())
	r.RXWritten, r.RXSocketErrs, r.RXRingDrops = m.RXFrames.Load(), m.SocketWriteErrs.Load(), m.RXRingDrops.Load()
	r.RXRead, r.RXSeqErrors, r.RXSeqInFault = rd.seq.frames, rd.seq.errors+rd.seq.dups, rd.inFault
	r.RXUncertain, r.RXReordersOut, r.RXInvalid = m.RXOrderUncertain.Load(), rd.reordersOut, m.RXInvalidReads.Load()
	for _, s := range l.seq.firsts {
		r.SeqFirsts = append(r.SeqFirsts, "TX: "+s)
	}
	for _, s := range rd.seq.firsts {
		r.SeqFirsts = append(r.SeqFirsts, "RX: "+s)
	}
	// What cand read from the chip is what it wrote, what its full RX ring lost
	// and what the socket refused; the refusals are bounded by
	// cand_rx_socket_errors_total.
	candRead := int64(cs.Received) - int64(r.RXWiped) - int64(r.RXHeld)
	refused := candRead - int64(r.RXWritten) - int64(r.RXRingDrops)
	switch {
	case refused < 0 && uint64(-refused) <= r.Faults[FaultChipReset]:
		r.RXTorn = uint64(-refused)
	case refused < 0:
		r.RXUnexplained += uint64(-refused)
	case uint64(refused) > r.RXSocketErrs:
		r.RXRefused = r.RXSocketErrs
		r.RXUnexplained += uint64(refused) - r.RXSocketErrs
	default:
		r.RXRefused = uint64(refused)
	}
	r.RXUnexplained += diff(r.RXWritten, r.RXRead)
	if r.RXOverflowLost > 0 && r.RXOverflows == 0 {
		bad("RX: the chip lost %d frames, cand reported no overflow", r.RXOverflowLost)
	}
	if r.RXOverflows > r.RXOverflowLost {
		bad("RX: %d overflow events, the chip lost only %d frames", r.RXOverflows, r.RXOverflowLost)
	}
	r.ErrorFrames, r.ErrorFramesRd, r.Stray = m.ErrorFrames.Load(), rd.errs, rd.stray
	if r.ErrorFrames != r.ErrorFramesRd {
		bad("cand wrote %d error frames, %d were read", r.ErrorFrames, r.ErrorFramesRd)
	}
	if r.Stray > 0 {
		bad("%d records read from cand's socket are neither the load peer's frames nor error frames", r.Stray)
	}
	if r.TXUnexplained > 0 || r.RXUnexplained > 0 {
		bad("unexplained frames: TX %d, RX %d", r.TXUnexplained, r.RXUnexplained)
	}
	if out := r.RXSeqErrors - r.RXSeqInFault - r.explainedReorders(); r.TXSeqErrors > 0 || out > 0 {
		bad("sequence errors outside fault windows, not reported by cand: TX %d, RX %d", r.TXSeqErrors, out)
	}
	r.Problems = append(r.Problems, growthProblems(r.Start, r.End)...)
}

// explainedReorders is how many RX reorders outside fault windows cand reported
// as reads whose order it could not know (cand_rx_order_uncertain_total).
func (r *Report) explainedReorders() uint64 { return min(r.RXReordersOut, r.RXUncertain) }

// bounded returns extra if it lies in [0, limit], and otherwise adds it to the
// unexplained TX frames and returns 0.
func (r *Report) bounded(extra int64, limit uint64) uint64 {
	if extra >= 0 && uint64(extra) <= limit {
		return uint64(extra)
	}
	r.TXUnexplained += uint64(max(extra, -extra))
	return 0
}

// txBuffers is the MCP2515's number of TX buffers (MCP2515 datasheet DS20001801J
// §3.0): what one chip reset can leave cand unsure of.
const txBuffers = 3

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// Pass reports whether everything added up and nothing grew beyond its limit.
func (r *Report) Pass() bool { return len(r.Problems) == 0 }

// Print writes the report as text.
func (r *Report) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("soak: %v on the virtual Pi (%s clock rule), 1 Mbit/s, load peer at 100 %%, TX writer at %d/s, seed %d",
		r.Elapsed.Round(time.Second), r.Rule, r.TXRate, r.Seed)
	p("faults injected:")
	for f := Fault(0); f < numFaults; f++ {
		p("  %-15s %4d   chip RX overflow losses in its windows (the fault and %v after): %d", f, r.Faults[f], faultSettle, r.LostIn[f])
	}
	p("TX (socket to bus):")
	p("  offered (written)          %d   (%d more writes refused by the full socket queue, not offered)", r.TXWritten, r.TXRefused)
	p("  delivered (cand sent)      %d   chip sent %d, listener heard %d (%d twice; chip repeats %d)", r.TXSent, r.TXChipSent, r.TXHeard, r.TXDuplicates, r.TXChipRepeats)
	p("  lost: dropped (bus-off, chip reset, timeout) %d, invalid %d, socket drops %d, unsent at exit %d",
		r.TXDropped, r.TXInvalid, r.TXSocketDrops, r.TXUnsent)
	p("        of the dropped, sent before a chip reset wiped the TX-done flag: %d (at most %d per reset)", r.TXResetSent, txBuffers)
	p("        of the dropped, on the wire at a chip reset and finished by the simulated bus: %d (at most 1 per reset)", r.TXResetHeard)
	p("  unexplained                %d", r.TXUnexplained)
	p("  sequence errors            %d", r.TXSeqErrors)
	p("RX (bus to socket):")
	p("  on the bus (load peer)     %d   (not accepted while cand was off the bus: %d)", r.TXPeerSent, int64(r.TXPeerSent)-int64(r.RXAccepted))
	var inFaults uint64
	for _, n := range r.LostIn {
		inFaults += n
	}
	p("  offered (chip accepted)    %d", r.RXAccepted)
	p("  delivered (read)           %d   (cand wrote %d)", r.RXRead, r.RXWritten)
	p("  lost: chip overflow %d (cand overflow events %d), wiped by chip resets %d, held at exit %d, RX ring full %d, socket refused %d (cand_rx_socket_errors %d)",
		r.RXOverflowLost, r.RXOverflows, r.RXWiped, r.RXHeld, r.RXRingDrops, r.RXRefused, r.RXSocketErrs)
	p("        chip overflow outside fault windows: %d", int64(r.RXOverflowLost)-int64(inFaults))
	p("        counted wiped but read torn by a chip reset mid-read: %d (at most 1 per reset)", r.RXTorn)
	p("  RX read-backs that were no frame, dropped (cand_rx_invalid_reads): %d", r.RXInvalid)
	p("  unexplained                %d", r.RXUnexplained)
	p("  sequence errors            %d   (%d of them in a fault window: during a fault or up to %v after)", r.RXSeqErrors, r.RXSeqInFault, faultSettle)
	p("        outside: %d reorders, %d of them reported by cand as order unknown (cand_rx_order_uncertain %d)",
		r.RXReordersOut, r.explainedReorders(), r.RXUncertain)
	for _, s := range r.SeqFirsts {
		p("  sequence error: %s", s)
	}
	p("error frames: cand wrote %d, read %d", r.ErrorFrames, r.ErrorFramesRd)
	p("resources     start        end")
	p("  VmRSS       %7d kB  %7d kB   (limit +%.0f %%)", r.Start.RSSKiB, r.End.RSSKiB, rssGrowthMax*100)
	p("  goroutines  %7d     %7d      (limit +%d)", r.Start.Goroutines, r.End.Goroutines, goroutineGrowthMax)
	p("  fds         %7d     %7d      (limit +%d)", r.Start.FDs, r.End.FDs, fdGrowthMax)
	for _, s := range r.Problems {
		p("problem: %s", s)
	}
	if r.Pass() {
		p("PASS")
	} else {
		p("FAIL")
	}
}
