package sim

import (
	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// cpuRegs is a register block as the board's CPU reaches it under the strict
// rule: every access ends with the clock's Leave, which charges the board's
// access time in place of the model's, and the governor takes its sample when
// one is due. It adds no lock and no allocation to an access.
type cpuRegs struct {
	r   bcm2835.Regs
	clk *clock.Clock
	gov *governor
}

func (c cpuRegs) Load(off uint32) uint32 {
	v := c.r.Load(off)
	c.done()
	return v
}

func (c cpuRegs) Store(off uint32, v uint32) {
	c.r.Store(off, v)
	c.done()
}

func (c cpuRegs) done() {
	if t := c.clk.Leave(); t >= c.gov.next {
		c.gov.step(t)
	}
}
