package sim

import (
	"sync"
	"sync/atomic"

	"cand/sim/clock"
	"cand/sim/mcpchip"
	"cand/sim/soc"
)

// Wiring is one controller's wires between the board and its MCP2515: the SPI
// lines (an soc.SPISlave in front of the chip) and the INT line (the GPIO input's
// soc.PinSource, and the edge events). Tests inject wiring faults here, at any
// time and from any goroutine:
//   - MISO: a line shorted to ground reads 0x00; a broken line floats, and the
//     pull-up reads 0xFF. Only MISO is at fault: SCK, MOSI and CS still reach the
//     chip, which acts on every instruction it is sent (a RESET resets it) while
//     the driver reads only the stuck level. A chip that is missing altogether
//     (MISO floats and nothing reaches it) is mcpchip.Chip.Unplug.
//   - INT held low without the chip (a short to ground, a wrong int_gpio on a
//     line something else pulls low): the line is the wired AND of the chip's
//     open-drain output and the fault, as on the board.
type Wiring struct {
	chip *mcpchip.Chip
	edge *soc.EdgeLine
	clk  *clock.Clock

	miso atomic.Int32 // -1: the chip drives MISO; else the byte MISO reads
	held atomic.Bool  // INT held low

	// resetAt: power-cycle the chip as the next transfer whose instruction byte it
	// matches begins (ResetAtInstruction); next: the next byte is a transfer's
	// first (set at each CS fall).
	resetAt atomic.Pointer[instrReset]
	next    atomic.Bool

	mu       sync.Mutex // orders the INT line's edges
	chipHigh bool       // the chip's INT output
	line     bool       // the line's level as the edge events report it
}

var (
	_ soc.SPISlave  = (*Wiring)(nil)
	_ soc.PinSource = (*Wiring)(nil)
	// The chip behind the wires has the same pins.
	_ soc.SPISlave  = (*mcpchip.Chip)(nil)
	_ soc.PinSource = (*mcpchip.Chip)(nil)
)

func newWiring(chip *mcpchip.Chip, edge *soc.EdgeLine, clk *clock.Clock) *Wiring {
	w := &Wiring{chip: chip, edge: edge, clk: clk, chipHigh: true, line: true}
	w.miso.Store(-1)
	return w
}

// MISOStuck makes MISO read b (0x00: shorted to ground; 0xFF: broken, the
// pull-up) instead of the chip's output; the chip still receives what is sent.
func (w *Wiring) MISOStuck(b byte) { w.miso.Store(int32(b)) }

// MISOConnected gives MISO back to the chip.
func (w *Wiring) MISOConnected() { w.miso.Store(-1) }

// HoldINTLow holds the INT line low (on) or lets it follow the chip again.
func (w *Wiring) HoldINTLow(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held.Store(on)
	w.setLine(w.clk.Now())
	w.edge.Flush()
}

// instrReset is a pending ResetAtInstruction.
type instrReset struct {
	match func(instr byte) bool
	done  func(wiped int)
}

// ResetAtInstruction power-cycles the chip (a brown-out, mcpchip.PowerCycleLosing)
// once, as the first transfer whose instruction byte match accepts begins: a reset
// at an exact point of the driver's sequence, e.g. between READ STATUS and READ RX
// BUFFER. done gets the frames the reset wiped from the RX buffers.
func (w *Wiring) ResetAtInstruction(match func(instr byte) bool, done func(wiped int)) {
	w.resetAt.Store(&instrReset{match: match, done: done})
}

// SetCS implements soc.SPISlave: the chip select reaches the chip whatever MISO does.
func (w *Wiring) SetCS(active bool, at int64) {
	w.next.Store(active)
	w.chip.SetCS(active, at)
}

func (w *Wiring) Exchange(mosi byte, mode uint8, sclkHz uint32, at int64) byte {
	if w.next.Load() {
		w.next.Store(false)
		if r := w.resetAt.Load(); r != nil && r.match(mosi) && w.resetAt.CompareAndSwap(r, nil) {
			r.done(w.chip.PowerCycleLosing(at))
		}
	}
	out := w.chip.Exchange(mosi, mode, sclkHz, at)
	if m := w.miso.Load(); m >= 0 {
		return byte(m)
	}
	return out
}

// Level implements soc.PinSource: the INT line at time at.
func (w *Wiring) Level(at int64) bool {
	high := w.chip.Level(at)
	return high && !w.held.Load()
}

// chipINT follows the chip's INT output (mcpchip.Chip.OnINT, called with the bus's
// lock held): the edge is held until the lock is released (see sim.New).
func (w *Wiring) chipINT(level bool, at int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chipHigh = level
	w.setLine(at)
}

// setLine records the line's level at the board's time at, which the edge event
// is stamped in (a real Pi's kernel stamps it in CLOCK_MONOTONIC, the board's time
// there; the driver reads its clock in the same time, daemon/hardware.go); a
// falling line wakes the CPU thread if it waits for it (sim/clock). The caller
// holds mu.
func (w *Wiring) setLine(at int64) {
	line := w.chipHigh && !w.held.Load()
	if line == w.line {
		return
	}
	w.line = line
	w.edge.Hold(line, at)
	if !line {
		w.clk.Edge(at)
	}
}
