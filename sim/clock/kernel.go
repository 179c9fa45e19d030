package clock

import (
	"sync/atomic"

	"cand/internal/kernelop"
)

// The strict rule's metered system calls: the clock is the owner thread's
// kernelop.Meter (docs/clock.md, "System calls").
//
// A system call's kernel work does not slow down from the host to a Pi by the
// factor of user code, and not by one factor for every kind of call (UnixBench's
// system call, pipe and context-switch tests against its Dhrystone,
// docs/boards.md). So the host time between Enter and Exit on the CPU thread is
// taken out of the gap's running, which the factor scales, and charged at the
// board's cost for that kind of call instead: its host time times
// CPU.KernelFactor of its kind (the board's figure for that kind of kernel work
// over the host's, measured when the board is built). The meter's own code
// around the call (CPU.MeterNs) is the simulator's: charged at its host time.
// Calls on other threads, under the dedicated rule, unbound, or of a kind
// without a kernel factor are not metered: their time stays what it was. A
// kernelop.SimOnly call is the simulator's own: taken out, charged nothing.

// meterState is the CPU thread's metered calls.
type meterState struct {
	m  atomic.Uintptr // the CPU thread (host.thread) while bound; 0: none
	at atomic.Int64   // host ns its current call entered (0: none)
	// host and board: the calls since the last register access, host ns (the
	// meter's own time included) and board ns.
	host, board atomic.Int64
	ops         [kernelop.NumOps]kernelCount
}

type kernelCount struct {
	calls       atomic.Uint64
	host, board atomic.Int64
}

// KernelCalls counts one kind of metered system call.
type KernelCalls struct {
	Calls uint64
	// HostNs is their host time, BoardNs what it stands for on the board.
	HostNs, BoardNs int64
}

var _ kernelop.Meter = (*Clock)(nil)

// Enter implements kernelop.Meter: the CPU thread enters a system call of kind op.
func (c *Clock) Enter(op kernelop.Op) {
	if op >= kernelop.NumOps || (c.cpu.kernel[op].Load() == 0 && op != kernelop.SimOnly) || !c.strict() {
		return
	}
	if m := c.kern.m.Load(); m == 0 || c.h.thread() != m {
		return
	}
	c.kern.at.Store(c.h.now())
}

// Exit implements kernelop.Meter: the call of kind op returned.
func (c *Clock) Exit(op kernelop.Op) {
	now := c.h.now()
	at := c.kern.at.Load()
	if at == 0 || op >= kernelop.NumOps || c.h.thread() != c.kern.m.Load() {
		return
	}
	c.kern.at.Store(0)
	d := max(now-at, 0)
	b := c.kernelBoard(op, d) // SimOnly: 0, the simulator's
	own := c.cpu.meter.Load()
	c.kern.host.Add(d + own)
	c.kern.board.Add(b + own)
	c.noise.calls.Add(1)
	n := &c.kern.ops[op]
	n.calls.Add(1)
	n.host.Add(d)
	n.board.Add(b)
}

// KernelCost is the board's time for a system call of kind op that took hostNs
// of a thread's CPU time on the host: at the kernel factor of its kind now, or
// the user-code factor where it has none. For a thread that keeps its own board
// time (sim.DeliveryCore).
func (c *Clock) KernelCost(op kernelop.Op, hostNs int64) int64 {
	f := int64(0)
	if op < kernelop.NumOps {
		f = c.cpu.kernel[op].Load()
	}
	if f == 0 {
		return scaled(hostNs, c.cpu.factor.Load())
	}
	return c.kernelBoard(op, hostNs)
}

// kernelBoard is the board's time for a metered call of kind op (with a kernel
// factor) that took hostNs: the kind's fixed board cost if it has one, else its
// host time at the kind's kernel factor.
func (c *Clock) kernelBoard(op kernelop.Op, hostNs int64) int64 {
	if f := c.cpu.kernelFixed[op].Load(); f > 0 {
		return f
	}
	return scaled(hostNs, c.cpu.kernel[op].Load())
}

// kernelIn takes the metered calls since the last register access out of run,
// the host ns of the gap's running: it returns the user code's part of run
// (charged at the factor) and the board ns of the rest. Where the calls' host
// time exceeds the running (the host preempted the thread inside one, which is
// removed as runqueue or steal), only the running is theirs, at their mean
// factor.
func (c *Clock) kernelIn(run int64) (user, board int64) {
	h, b := c.kern.host.Swap(0), c.kern.board.Swap(0)
	if h <= 0 {
		return run, 0
	}
	if h > run {
		b = b * run / h
		h = run
	}
	c.acct.kernel.Add(b - h)
	return run - h, b
}

// resetMeter forgets the calls in flight and since the last access; m is the
// CPU thread (0: none).
func (c *Clock) resetMeter(m uintptr) {
	c.kern.m.Store(m)
	c.kern.at.Store(0)
	c.kern.host.Store(0)
	c.kern.board.Store(0)
}

// kernelTo adds the metered calls' counts to s.
func (c *Clock) kernelTo(s *Stats) {
	for i := range c.kern.ops {
		n := &c.kern.ops[i]
		s.Kernel[i] = KernelCalls{Calls: n.calls.Load(), HostNs: n.host.Load(), BoardNs: n.board.Load()}
	}
}
