package soc

import (
	"sync/atomic"

	"cand/hw/bcm2835"
)

// BusStall is a fault of the peripheral bus between the CPU and the register blocks
// it gates: while it is on, a register access does not complete. It is neither
// refused nor timed out; the load or store never returns, as a CPU core waits on a
// bus transaction nobody answers, so the thread that made it is wedged until Resume
// (it sleeps meanwhile: the host's CPU is not spent). The zero value is off; its
// methods are safe for concurrent use.
type BusStall struct {
	gate    atomic.Pointer[chan struct{}] // closed by Resume; nil: not stalled
	waiting atomic.Int32
}

// Stall makes every later access through the gated blocks wait until Resume.
func (s *BusStall) Stall() {
	ch := make(chan struct{})
	s.gate.CompareAndSwap(nil, &ch)
}

// Resume completes the waiting accesses; later ones run at once again.
func (s *BusStall) Resume() {
	if ch := s.gate.Swap(nil); ch != nil {
		close(*ch)
	}
}

// Waiting is the number of accesses waiting now.
func (s *BusStall) Waiting() int { return int(s.waiting.Load()) }

// Gate returns r with every access subject to the stall s. Off, an access costs
// one atomic load more.
func Gate[O bcm2835.Offset](s *BusStall, r bcm2835.Regs[O]) bcm2835.Regs[O] {
	return gated[O]{r: r, s: s}
}

type gated[O bcm2835.Offset] struct {
	r bcm2835.Regs[O]
	s *BusStall
}

var _ bcm2835.Regs[bcm2835.SPIReg] = gated[bcm2835.SPIReg]{}

func (g gated[O]) Load(off O) uint32 {
	g.s.wait()
	return g.r.Load(off)
}

func (g gated[O]) Store(off O, v uint32) {
	g.s.wait()
	g.r.Store(off, v)
}

func (s *BusStall) wait() {
	ch := s.gate.Load()
	if ch == nil {
		return
	}
	s.waiting.Add(1)
	<-*ch
	s.waiting.Add(-1)
}
