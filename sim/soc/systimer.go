package soc

import (
	"sync/atomic"

	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// SystemTimerModel is the System Timer block (BCM2835 ARM Peripherals §12) at
// register level:
//
//   - CLO/CHI count the board's time (sim/clock) in µs: the count at board time
//     v ns is v/1000, plus what SetCount added. Read-only: writes are ignored.
//   - C0..C3 hold what was written.
//   - CS.Mn is set once the counter's low word has reached Cn since the last
//     access (looked at on each access, so a match between two accesses is seen
//     at the second); writing 1 clears it.
//   - Other offsets read 0.
//
// Registers are read by the CPU thread (Load, Store), like the other blocks;
// Sample is for any goroutine.
type SystemTimerModel struct {
	soc    *SoC
	offset atomic.Uint64 // added to the board's µs (SetCount)
	cmp    [4]uint32
	cs     uint32
	seen   uint64 // the count matches were looked for up to
	looked bool
}

var _ bcm2835.Regs[bcm2835.STReg] = (*SystemTimerModel)(nil)

// countAt is the counter at board time at (ns).
func (t *SystemTimerModel) countAt(at int64) uint64 {
	return uint64(max(at, 0))/1000 + t.offset.Load()
}

// SetCount makes the counter read n now (from any goroutine): a board that has
// been up this long, for tests of the counter's wrap. The counter keeps counting
// from n; CS is not touched.
func (t *SystemTimerModel) SetCount(n uint64) {
	at := max(t.soc.clk.ModelNow(), 0)
	t.offset.Store(n - uint64(at)/1000)
}

// Sample is the counter at the board's time that the hardware has reached
// (sim/clock Reached), with the board time its tick began at: a tie of the
// counter to the board's clock that any goroutine may take, without a register
// access (nothing is charged to the board), and that no later read of CLO/CHI
// through the registers precedes.
func (t *SystemTimerModel) Sample() (tickNs int64, count uint64) {
	at := max(t.soc.clk.Reached(), 0)
	return at - at%1000, t.countAt(at)
}

// match sets CS.Mn for each compare value the counter's low word reached
// since the last look, up to count now.
func (t *SystemTimerModel) match(now uint64) {
	if !t.looked {
		t.seen, t.looked = now, true
		return
	}
	passed := now - t.seen
	for n, c := range t.cmp {
		if d := uint64(c - uint32(t.seen)); (d != 0 && d <= passed) || passed >= 1<<32 {
			t.cs |= 1 << n
		}
	}
	t.seen = now
}

func (t *SystemTimerModel) Load(off bcm2835.STReg) uint32 {
	now := t.countAt(t.soc.clk.AccessAt(clock.Site(siteSystemTimer, uint32(off), false)))
	t.match(now)
	switch off {
	case bcm2835.STCS:
		return t.cs
	case bcm2835.STCLO:
		return uint32(now)
	case bcm2835.STCHI:
		return uint32(now >> 32)
	case bcm2835.STC0, bcm2835.STC1, bcm2835.STC2, bcm2835.STC3:
		return t.cmp[(off-bcm2835.STC0)/4]
	}
	return 0
}

func (t *SystemTimerModel) Store(off bcm2835.STReg, v uint32) {
	t.match(t.countAt(t.soc.clk.AccessAt(clock.Site(siteSystemTimer, uint32(off), true))))
	switch off {
	case bcm2835.STCS:
		t.cs &^= v & (bcm2835.STCSM0 | bcm2835.STCSM1 | bcm2835.STCSM2 | bcm2835.STCSM3)
	case bcm2835.STC0, bcm2835.STC1, bcm2835.STC2, bcm2835.STC3:
		t.cmp[(off-bcm2835.STC0)/4] = v
	}
}
