package kernelref

import (
	"fmt"

	"cand/hw/bcm2835"
	"cand/metrics"
	"cand/sim/clock"
)

// boardCPU is the reference driver's CPU on the virtual Pi's clock. The
// reference's time on the board is its calibrated charges and the SPI wire's
// time, nothing else: the host's running of its Go code, its socket reads and
// writes, the SPI engine's code and its register accesses take no board time,
// and a host stall of the thread takes none either.
//
// It plays the CPU through the strict rule's register-access account
// (sim/clock): a span from Clock.Access to Clock.Leave costs the board exactly
// the clock's AccessNs, whatever the host spent in it. The reference's thread is
// always inside such a span except for the instants it hands a register access
// to a model: the span is closed (Leave, AccessNs 0: the host time in it leaves
// the board's time) and the model's own Access opens the next. To pass board
// time, a span is closed with AccessNs set to the time to pass (to). The clock
// must be bound to the calling thread under the strict rule; newBoardCPU sets
// its factor to 1 and its AccessNs to 0, so the board must run at fixed clocks
// (force_turbo: the governor would reset both).
//
// What host time falls between two spans passes on the board: the clock's own
// code closing a span, tens of nanoseconds, and whatever the clock counts as the
// thread's running in that gap (a short preemption; CPU time that is not the
// reference's, such as host interrupts; a piece of stallNs or more is counted as
// a host stall). It is kept as debt: the next charge is shorter by it, and a
// transfer's chip select rises at its CS-down time + its wire time + InCS however
// long the SPI engine took, so the board's time at the end of each charge is the
// model's. Debt a stretch of handler runs leaves unpaid when it ends is counted
// (late).
type boardCPU struct {
	clk *clock.Clock
	at  int64 // the board's time when the open span began: the reference's now
	// debt is board time that passed beyond what the model asked for, not yet
	// absorbed by a charge.
	debt int64
	// sample reads the INT levels; advanceTo calls it every sampleStep while
	// watch says an INT edge would matter (nil: always).
	sample func()
	watch  func() bool
	// late counts debt left unpaid when a stretch of handler runs ended: the
	// reference's only board time that is neither a calibrated charge nor the
	// wire's (nil: not counted).
	late *metrics.Counter
	// stalls counts the pieces of host time of at least stallNs that passed on
	// the board between two spans, and stallTime their time (nil: not counted);
	// stallSeq is their count for the driver's own use.
	stalls, stallTime *metrics.Counter
	stallSeq          uint64
	// waitStep is the board time a poll of the SPI engine passes when the
	// model's bytes are still in flight at their expected end (a quarter of a
	// byte's wire time).
	waitStep int64
}

// sampleStep is the board time between two reads of the INT levels while a
// charge passes: an INT edge is timed to within it.
const sampleStep = 2000 // ns

// edgeStep is sampleStep while no INT edge would start a wake-up: the edge then
// only times the rx_end_to_end stage.
const edgeStep = 10_000 // ns

// stallNs is the least host time passed on the board in one piece that counts
// as a host stall: the clock's LookGap, below which it takes a gap for running
// without looking.
const stallNs = int64(clock.LookGap)

// newBoardCPU takes over clk for the calling thread, which must be bound to it
// under the strict rule; restore gives the clock its CPU back.
func newBoardCPU(clk *clock.Clock) (c *boardCPU, restore func(), err error) {
	if !clk.Bound() || clk.Rule() != clock.Strict {
		return nil, nil, fmt.Errorf("kernelref: the reference needs the virtual Pi's clock bound to its thread under the strict rule, whose register-access account it charges its costs through: set hardware.sim_cpu: strict")
	}
	old := clk.CPU()
	clk.SetCPU(clock.CPU{Factor: clock.FactorUnit, Cores: old.Cores, GapOverheadNs: old.GapOverheadNs})
	c = &boardCPU{clk: clk, sample: func() {}}
	c.at = clk.Access()
	return c, func() { clk.Leave(); clk.SetCPU(old) }, nil
}

// now is the reference's time on the board.
func (c *boardCPU) now() int64 { return c.at }

// moved notes that the board's time went from prev to c.at where the model
// asked for want: the excess is debt.
func (c *boardCPU) moved(prev, want int64) {
	if x := c.at - max(want, prev); x > 0 {
		c.debt += x
		if x >= stallNs {
			c.stallSeq++
			if c.stalls != nil {
				c.stalls.Inc()
				c.stallTime.Add(uint64(x))
			}
		}
	}
}

// to closes the open span at board time t (or where the board already is, if
// later) and opens the next.
func (c *boardCPU) to(t int64) {
	prev := c.at
	c.clk.SetAccessNs(max(t-prev, 0))
	c.clk.Leave()
	c.clk.SetAccessNs(0)
	c.at = c.clk.Access()
	c.moved(prev, t)
}

// advanceTo passes board time up to t, reading the INT levels every
// sampleStep while an INT edge would start a wake-up (a port whose handler is
// not running), so that it is timed to within that, and every edgeStep
// otherwise (the edge only times the latency stage). Every step leaves a gap
// between two spans in which host time can slip in: fewer steps, less of it.
func (c *boardCPU) advanceTo(t int64) {
	for c.at < t {
		step := int64(sampleStep)
		if c.watch != nil && !c.watch() {
			step = edgeStep
		}
		c.to(min(c.at+step, t))
		c.sample()
	}
}

// charge spends d of the CPU, less the debt it can absorb.
func (c *boardCPU) charge(d int64) {
	pay := min(c.debt, d)
	c.debt -= pay
	c.advanceTo(c.at + d - pay)
}

// mark is the board's time and the debt at a transfer's CS down.
type mark struct{ at, debt int64 }

func (c *boardCPU) mark() mark { return mark{c.at, c.debt} }

// until ends a transfer begun at m: its chip select rises d after m.at (the
// wire's time and InCS), whatever the engine's own time in it; what the
// engine took beyond that is debt.
func (c *boardCPU) until(m mark, d int64) {
	t := m.at + d
	if over := c.at - t; over > 0 {
		c.debt = m.debt + over
		return
	}
	c.debt = m.debt
	c.advanceTo(t)
}

// settle ends a stretch of handler runs: debt left unpaid is board time the
// driver ran beyond its charges (late).
func (c *boardCPU) settle() {
	if c.debt > 0 && c.late != nil {
		c.late.Add(uint64(c.debt))
	}
	c.debt = 0
}

// idle passes board time up to t with no handler running: what slips in
// between spans meanwhile only passes idle time, and a wait to a due time
// absorbs it.
func (c *boardCPU) idle(t int64) {
	c.advanceTo(t)
	c.debt = 0
}

// regs is register model r as the reference (c) reaches it: each access closes
// the open span (its host time, and the previous access's model work, leave the
// board's time) and the access's own Access on the model opens the next, at the
// board time the model was advanced to. The models are reached directly, not
// through the board's view (sim.Pi.SPI0), whose end of every access would leave
// a second gap of host time between spans. With spi (SPI0), a status read that
// finds bytes in flight passes the board's time to the end of the bytes written
// (the wire's time, as the model shifts them: back to back at the divider's
// byte time from when each was written), or by waitStep if the model is not
// done by then.
func regs[O bcm2835.Offset](c *boardCPU, r bcm2835.Regs[O], spi bool, coreHz uint32) bcm2835.Regs[O] {
	return &spanRegs[O]{c: c, r: r, spi: spi, coreHz: coreHz}
}

type spanRegs[O bcm2835.Offset] struct {
	c       *boardCPU
	r       bcm2835.Regs[O]
	spi     bool
	coreHz  uint32
	byteNs  int64 // at the divider last written
	wireEnd int64 // board time the bytes written so far are shifted by
}

var _ bcm2835.Regs[bcm2835.SPIReg] = (*spanRegs[bcm2835.SPIReg])(nil)

func (v *spanRegs[O]) Load(off O) uint32 {
	c := v.c
	prev := c.at
	c.clk.Leave()
	x := v.r.Load(off)
	c.at = c.clk.Reached()
	c.moved(prev, prev)
	if v.spi && bcm2835.SPIReg(off) == bcm2835.SPICS && bcm2835.CS(x)&bcm2835.CSTA != 0 && bcm2835.CS(x)&(bcm2835.CSRXD|bcm2835.CSDONE) == 0 {
		c.to(max(v.wireEnd, c.at+c.waitStep))
	}
	return x
}

func (v *spanRegs[O]) Store(off O, x uint32) {
	c := v.c
	prev := c.at
	c.clk.Leave()
	v.r.Store(off, x)
	c.at = c.clk.Reached()
	c.moved(prev, prev)
	if !v.spi {
		return
	}
	switch bcm2835.SPIReg(off) {
	case bcm2835.SPICLK:
		v.byteNs = bcm2835.WireNs(v.coreHz, x, 1)
	case bcm2835.SPIFIFO:
		v.wireEnd = max(v.wireEnd, c.at) + v.byteNs
	}
}
