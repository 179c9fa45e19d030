package sim

import (
	"cand/hw/bcm2835"
	"cand/sim/clock"
	"cand/sim/soc"
)

// boardView is register block r as the driver reaches it on the virtual Pi:
// behind the peripheral bus (stall) and, under the strict rule (gov set), the
// board's CPU (cpuRegs). The calibration of the gap overhead (calibrate.go) times
// the same view, so that all of the simulator's code between two accesses is in
// the overhead and none of it is charged as the driver's.
func boardView[O bcm2835.Offset](stall *soc.BusStall, r bcm2835.Regs[O], clk *clock.Clock, gov *governor) bcm2835.Regs[O] {
	if gov != nil {
		r = cpuRegs[O]{r: r, clk: clk, gov: gov}
	}
	return soc.Gate(stall, r)
}

// cpuRegs is a register block as the board's CPU reaches it under the strict
// rule: every access ends with the clock's Leave, which charges the board's
// access time in place of the model's, and the governor takes its sample when
// one is due. It adds no lock and no allocation to an access.
type cpuRegs[O bcm2835.Offset] struct {
	r   bcm2835.Regs[O]
	clk *clock.Clock
	gov *governor
}

var _ bcm2835.Regs[bcm2835.SPIReg] = cpuRegs[bcm2835.SPIReg]{}

func (c cpuRegs[O]) Load(off O) uint32 {
	v := c.r.Load(off)
	c.done()
	return v
}

func (c cpuRegs[O]) Store(off O, v uint32) {
	c.r.Store(off, v)
	c.done()
}

func (c cpuRegs[O]) done() {
	if t := c.clk.Leave(); t >= c.gov.next {
		c.gov.step(t)
	}
}
