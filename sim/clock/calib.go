package clock

import (
	"math"
	"sync/atomic"
	"time"
)

// The strict rule's continuous calibration: the factor follows the host's speed.
//
// The factor is the board's time for one pass of a fixed kernel over the host's
// (CPU.BoardKernelNs, sim/calibrate.go). Measured once, the host's time is that
// of one moment: on a shared virtual machine it moves by more than half between
// runs (frequency, a busy sibling thread, cache pressure), and a host slower now
// than when it was measured has the board charged for its slowness, while one
// measured at a slow moment forgives the driver. So the CPU thread itself (same
// core as the driver's code) times a short burst of the kernel (Kernel) at a
// register access's end, at most every CalibEvery and at most 1/calibShare of its
// time, and the factor is the board's time over a low rank of the last
// calibWindow bursts (one fast or slow burst does not move it).
//
// A burst measures what the one-shot measures (sim/calibrate.go: the fastest of
// 50 runs of 100 passes, run back to back), against which the board's figure for
// the kernel is set: the kernel's time with the host's caches and branch
// predictors trained on it. Right after other code a pass takes up to twice as
// long for a few hundred passes (docs/boards.md), so a burst first runs
// Kernel.Warm passes untimed, then times Kernel.Runs runs of Kernel.Passes and
// keeps the fastest.
//
// A burst is the simulator's own time: it is taken out of the board's clock
// (category Calibration), as the register model's is, after the access has
// ended and before the gap to the next one starts, so the board's time does not
// advance over it and the chip sees a host stall between two accesses that the
// clock removes, not a longer transfer. Only its running is counted as
// calibration: what of it the host's scheduler kept the thread waiting is
// runqueue, the hypervisor's is steal, and a Go runtime park in it costs the
// board's park, as anywhere else. Its CPU time and run
// delay are kept out of the next looked-at gap (the look's base moves by them),
// so it is never charged at the factor either.
const (
	// CalibEvery is the least host time between two calibration bursts.
	CalibEvery = int64(10 * time.Millisecond)
	// calibShare: after a burst, the next waits at least calibShare times the
	// burst's CPU time (the bursts take at most 0.5 % of the CPU thread's time,
	// also where the kernel runs slowly, e.g. under an emulator).
	calibShare = 200
	// calibWindow is how many recent bursts the estimate is taken from.
	calibWindow = 16
	// calibRank: the estimate is the (n/calibRank)-th fastest of the n bursts
	// in the window (the 2nd of 16: the 12.5th percentile), at least the fastest.
	calibRank = 8
	// calibFill is how many bursts the binding runs, so that the factor is the
	// CPU thread's own from the first access.
	calibFill = 8
)

// Kernel is the fixed work the strict rule times on the CPU thread to follow the
// host's speed (SetKernel).
type Kernel struct {
	// Run runs n passes of the kernel.
	Run func(n int)
	// Warm is how many passes a burst runs untimed first: the host's caches and
	// branch predictors trained on the kernel, as for the one-shot calibration.
	Warm int
	// Runs is how many runs of Passes passes a burst then times; its figure is
	// the fastest run's time per pass.
	Runs, Passes int
}

// calibState is the continuous calibration. The window belongs to the thread
// that claimed the burst (next set to MaxInt64): the CPU thread.
type calibState struct {
	kernel Kernel             // set before binding
	next   atomic.Int64       // host ns the next burst is due (MaxInt64: none, or one running)
	win    [calibWindow]int64 // ps per pass of the last bursts
	n, i   int                // bursts in win; the slot of the next
	est    atomic.Int64       // ps per pass: the estimate now (0: none yet)
	board  atomic.Int64       // the board's ns per pass at its ARM clock now (0: a fixed factor)
	bursts atomic.Uint64
	// host and factor: the estimate (ps per pass) and the factor (FactorUnits)
	// after each burst, over the run.
	host, factor logHist
}

// SetKernel makes the strict rule time k on the CPU thread and take the factor
// from it (with CPU.BoardKernelNs). Call it before BindCPU.
func (c *Clock) SetKernel(k Kernel) {
	if k.Run == nil || k.Passes <= 0 || k.Runs <= 0 {
		k = Kernel{}
	}
	c.cal.kernel = k
}

// fillCalibration runs the binding's bursts under the strict rule with a Kernel
// (the CPU thread, at binding).
func (c *Clock) fillCalibration() {
	c.cal.next.Store(math.MaxInt64)
	if c.cal.kernel.Run == nil || !c.strict() {
		return
	}
	c.cal.n, c.cal.i = 0, 0 // a new thread's own
	now := c.h.now()
	for range calibFill {
		now = c.burst(now)
	}
}

// calibrate runs a burst if one is due at host time now and the caller is the
// CPU thread, and returns the host time after it (now if none ran).
func (c *Clock) calibrate(now int64) int64 {
	due := c.cal.next.Load()
	if now < due || !c.cal.next.CompareAndSwap(due, math.MaxInt64) {
		return now
	}
	if c.h.gettid() != int(c.tid.Load()) {
		c.cal.next.Store(due) // another thread (set-up, a test): not the CPU's speed
		return now
	}
	return c.burst(now)
}

// burst times the kernel, updates the estimate and the factor, and takes the
// burst's host time since t0 out of the board's clock. It returns the host time
// its removal ends at, where the next gap starts. CPU thread, with the burst
// claimed.
func (c *Clock) burst(t0 int64) int64 {
	before := c.h.sample(c)
	k := &c.cal.kernel
	k.Run(k.Warm)
	best := int64(math.MaxInt64)
	for range k.Runs {
		t1 := c.h.now()
		k.Run(k.Passes)
		best = min(best, c.h.now()-t1)
	}
	c.cal.add(best * 1000 / int64(k.Passes))
	c.cal.bursts.Add(1)
	est := c.cal.estimate()
	c.cal.est.Store(est)
	c.followHost()
	c.cal.host.add(est)
	c.cal.factor.add(c.cpu.factor.Load())
	after := c.h.sample(c)
	t3 := c.h.now()
	wall := t3 - t0
	rq := clamp(after.rd-before.rd, 0, wall)
	own := clamp(after.exec-before.exec, 0, wall-rq)
	c.mu.Lock()
	// The next look's account starts as if the burst had not been: its running,
	// run delay, switches and system calls are not the driver's.
	b := &c.base
	b.exec += after.exec - before.exec
	b.rd += after.rd - before.rd
	b.nvcsw += after.nvcsw - before.nvcsw
	b.sys += after.sys - before.sys
	// Its running is the calibration's; what the host's scheduler kept it
	// waiting is runqueue, and the rest steal, or if it slept a Go runtime park
	// (cand's: it costs the board's park, as in a gap).
	got := c.takeOut(t3, wall)
	cal := min(own, got)
	q := min(rq, got-cal)
	rest := got - cal - q
	c.stats.add(Calibration, cal)
	c.stats.add(Runqueue, q)
	if after.nvcsw == before.nvcsw {
		c.stats.add(Steal, rest)
	} else {
		cost := c.parkCost(c.cpu.factor.Load())
		c.off.Add(-cost)
		c.stats.add(Park, rest)
		c.stats.Parks++
		c.stats.ParkNs += cost
	}
	c.mu.Unlock()
	// The share is of the thread's running: a wait in the burst costs it none.
	end := c.h.now()
	c.traceBurst(end, wall, got, end-t3)
	c.cal.next.Store(end + max(CalibEvery, calibShare*own))
	// The next gap starts at t3, where the burst's removal ends: the wait for
	// the lock and the bookkeeping since are in it, and a look finds a
	// preemption there.
	return t3
}

// followHost sets the factor from the board's time for a pass and the host's
// estimate, if there are both.
func (c *Clock) followHost() {
	board, est := c.cal.board.Load(), c.cal.est.Load()
	if board > 0 && est > 0 {
		c.SetFactor(board * 1000 * FactorUnit / est)
	}
}

// add puts a burst's ps per pass into the window.
func (s *calibState) add(ps int64) {
	s.win[s.i] = max(ps, 1)
	s.i = (s.i + 1) % calibWindow
	s.n = min(s.n+1, calibWindow)
}

// estimate is the window's (n/calibRank)-th fastest burst, at least its fastest.
func (s *calibState) estimate() int64 {
	var sorted [calibWindow]int64
	w := sorted[:s.n]
	copy(w, s.win[:s.n])
	for i := 1; i < len(w); i++ {
		for j := i; j > 0 && w[j] < w[j-1]; j-- {
			w[j], w[j-1] = w[j-1], w[j]
		}
	}
	return w[max(s.n/calibRank, 1)-1]
}

// HostKernelNs is the host's time for one pass of the kernel now, as the
// continuous calibration estimates it (0: no burst yet).
func (c *Clock) HostKernelNs() float64 { return float64(c.cal.est.Load()) / 1000 }

// calibTo adds the calibration's figures to s.
func (c *Clock) calibTo(s *Stats) {
	s.CalibBursts = c.cal.bursts.Load()
	s.HostKernelNs = c.cal.host.spread(1000)
	s.Factor = c.cal.factor.spread(FactorUnit)
}
