// Package clock is the virtual Pi's time base: how much of the host's time is the
// board's (docs/clock.md).
//
// The virtual Pi runs the driver's code on the host, on the thread that plays
// the Pi's CPU (the daemon's owner thread). On host time the host's scheduler and
// hypervisor would stall the board, and the driver would run on a core several
// times faster than a Pi's, so neither losses nor latencies would be a Pi's.
//
// A Clock is host CLOCK_MONOTONIC plus an offset: virtual = host - off. Unbound,
// it is host time exactly. Once the CPU thread binds itself (BindCPU), the rule
// it was set to (SetRule) moves the offset at each register access:
//   - strict (strict.go): only what the host did to the CPU thread (runqueue,
//     steal, the host's park and wake-up paths, a late bus thread, host noise)
//     is removed; cand's own running is charged at the board's cost (cpu.go,
//     kernel.go);
//   - dedicated (dedicated.go): the forgiving rule, for comparison: every gap
//     longer than StallGrace without a wait for the hardware is removed.
//
// Both rules share the bus thread's side (bus.go): it moves time only while the
// CPU thread waits for the hardware; otherwise the CPU thread's register
// accesses advance the models (AdvanceTo). Time never goes back: no removal takes
// it below what a model was advanced to, a time handed out by Reach, or, after the
// CPU thread slept, what the hardware committed to (Commit). A register access
// takes no lock, only a clock read and a few atomics: a lock the CPU thread had
// to wait for would park it, the very stall the clock keeps out.
//
// Files:
//   - clock.go: virtual time, the floors (Reach, Commit) and binding;
//   - cpu.go: the board's CPU as the strict rule charges it (factor, costs, cores);
//   - kernel.go: the strict rule's metered system calls, charged at the board's
//     kernel cost of their kind;
//   - strict.go and dedicated.go: the two rules' register-access sides;
//   - clockread.go: the strict rule's charge for the CPU thread's clock reads;
//   - outlier.go: the strict rule's removal of a system call's CPU time that is
//     the hypervisor's, and noise.go of running far beyond its stretch of code's
//     median;
//   - bus.go: what the bus thread may do (CPURunning, Edge, BusTime);
//   - calib.go: the strict rule's continuous calibration of the factor against
//     the host's speed, and spread.go its figures over a run;
//   - stats.go: what was removed and charged, by category;
//   - trace.go: a per-gap trace of the strict rule's looks, off by default
//     (package gaptrace keeps it);
//   - proc.go: what the clock reads of the host: its time, the threads' CPU time,
//     run delay and context switches, and the look at the bound CPU thread
//     through /proc/self/task/TID/stat and .../syscall (BindCPU opens them).
package clock

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// StallGrace is, under the dedicated rule, the part of every gap in the CPU
	// thread's register accesses that is charged to the driver, stall or not.
	StallGrace = int64(20 * time.Microsecond)
	// LookGap is, under the strict rule, the longest gap between register
	// accesses taken as running without asking the kernel.
	LookGap = int64(20 * time.Microsecond)
	// Active: a CPU thread that touched a register this recently is running, and
	// will advance the models itself.
	Active = int64(10 * time.Microsecond)
	// Recheck is how often a bus thread that left time to a running CPU thread
	// looks again whether it has started to wait. The first event after the CPU
	// thread starts waiting may be this much late (with BusLateGrace on top).
	Recheck = int64(100 * time.Microsecond)
	// IdleLook is how often a bus thread with nothing due looks at the CPU
	// thread, so that a CPU thread idle in epoll_wait for longer is seen waiting
	// (the board's time) rather than taken for a park.
	IdleLook = int64(10 * time.Millisecond)
	// BusLateGrace is how late the bus thread may wake (while the CPU thread
	// waits) before the excess is taken out of virtual time.
	BusLateGrace = int64(100 * time.Microsecond)
	// WakeGrace is, under the dedicated rule, the wake-up latency charged to the
	// board when an INT edge wakes a CPU thread that waits for it; the rest of the
	// wake-up is a host stall.
	WakeGrace = int64(50 * time.Microsecond)
	// WaitRecheck is how long a bus thread trusts having seen the CPU thread
	// waiting: then it looks again, and a thread found runnable (woken by its
	// socket or a timeout, not by an INT edge) has ended its wait about then.
	WaitRecheck = int64(500 * time.Microsecond)
	// MaxPark is the longest a CPU thread parked in a futex holds the bus's time.
	MaxPark = int64(time.Second)
)

// Rule is how the clock treats the bound CPU thread's time.
type Rule uint32

const (
	// Strict removes only what the host's scheduler or hypervisor did to the CPU
	// thread and charges cand's own time at the board's cost (the default).
	Strict Rule = iota
	// Dedicated is the forgiving rule: every gap without a wait for the hardware
	// is removed but StallGrace, and the CPU runs at host speed.
	Dedicated
)

// String is the rule's name (as hardware.sim_cpu spells it).
func (r Rule) String() string {
	if r == Dedicated {
		return "dedicated"
	}
	return "strict"
}

// Clock is one virtual Pi's time base. The zero value is not usable; use New.
type Clock struct {
	noise    noiseState
	off      atomic.Int64 // virtual = host - off (negative: the board ahead)
	reached  atomic.Int64 // latest virtual time a model was advanced to: no removal goes below
	commit   atomic.Int64 // virtual time the hardware committed to (an SPI transfer's end)
	lastAcc  atomic.Int64 // host ns of the CPU's last register access (its end, under the strict rule)
	accAt    atomic.Int64 // host ns the current register access began (strict)
	tid      atomic.Int64 // the bound CPU thread (0: unbound)
	statFd   atomic.Int64 // its /proc/self/task/TID/stat + 1 (0: none)
	sysFd    atomic.Int64 // its /proc/self/task/TID/syscall + 1 (0: none)
	schedFd  atomic.Int64 // its /proc/self/task/TID/schedstat + 1 (0: none)
	ioFd     atomic.Int64 // its /proc/self/task/TID/io + 1 (0: none)
	waiting  atomic.Int64 // lastAcc for which the CPU thread was seen waiting for the hardware (0: none)
	wokeFor  atomic.Int64 // lastAcc for which an INT edge woke the waiting CPU thread (0: none)
	wokeAt   atomic.Int64 // host time of that edge
	waitSeen atomic.Int64 // host time of the last look that saw it waiting
	held     atomic.Int64 // host ns a Hold in progress began at (0: none; hold.go)
	rule     atomic.Uint32

	cpu   cpuState   // the board's CPU (cpu.go)
	acct  acctState  // the strict rule's running account (strict.go)
	cal   calibState // the strict rule's continuous calibration (calib.go)
	kern  meterState // the strict rule's metered system calls (kernel.go)
	buses busThreads

	h host

	mu    sync.Mutex // removals and their counts, the strict rule's looks
	nvcsw int64      // the CPU thread's voluntary switches at the last slow-path look (dedicated)
	base  sample     // the CPU thread at the strict rule's last look
	runs  pow2Hist   // the CPU time of its looked-at gaps without a sleep (outlier.go)
	wruns pow2Hist   // the CPU time of its gaps woken by an INT edge (outlier.go)
	stats Stats
	trace atomic.Pointer[tracer] // the strict rule's per-gap trace (trace.go; nil: off)
}

// New returns an unbound clock on the strict rule: host time.
func New() *Clock {
	c := &Clock{h: realHost()}
	c.cpu.init()
	c.cal.next.Store(math.MaxInt64)
	return c
}

// SetRule picks the rule for the next binding (BindCPU).
func (c *Clock) SetRule(r Rule) { c.rule.Store(uint32(r)) }

// Rule is the rule the clock binds with.
func (c *Clock) Rule() Rule { return Rule(c.rule.Load()) }

func (c *Clock) strict() bool { return Rule(c.rule.Load()) == Strict }

// Now is the virtual time (CLOCK_MONOTONIC ns minus the offset). A read on the
// bound CPU thread is the driver's clock read: counted, so that the strict rule
// charges it at the board's cost of one (clockReads).
func (c *Clock) Now() int64 {
	if m := c.kern.m.Load(); m != 0 && c.h.thread() == m {
		c.acct.reads.Add(1)
	}
	return c.hostNow() - c.off.Load()
}

// ModelNow is the virtual time as a model reads it inside a register access
// (the System Timer's counter, the SPI shifter): the same as Now, but never
// counted as the driver's clock read.
func (c *Clock) ModelNow() int64 { return c.hostNow() - c.off.Load() }

// Reach returns the virtual time now and makes it a floor: no later removal takes
// virtual time below it. Use it, not Now, for a time something outside the models
// acts at (a test injecting a fault "now", peers starting): a removal after Now
// could otherwise put that time in the board's future.
func (c *Clock) Reach() int64 {
	v := c.Now()
	raise(&c.reached, v)
	return v
}

// Reached is the latest virtual time a model was advanced to: the board's time
// as its hardware has seen it. Unlike Now, no later removal takes the board's
// time back below it, and reading it sets no floor: the time for a thread other
// than the CPU's to read (a sampler), where Now, read while the CPU thread is
// stalled, may be a time the board never reaches.
func (c *Clock) Reached() int64 { return c.reached.Load() }

// Host converts virtual time v to host CLOCK_MONOTONIC with the offset as it is
// now: what a kernel timestamp of an event at v reads (e.g. a GPIO edge event).
func (c *Clock) Host(v int64) int64 { return v + c.off.Load() }

// Ahead is how far the board's time is ahead of host time (negative: behind,
// after removals).
func (c *Clock) Ahead() int64 { return -c.off.Load() }

// Stats returns what the clock removed and charged so far.
func (c *Clock) Stats() Stats {
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	s.Rule = c.Rule()
	c.acct.addTo(&s)
	c.calibTo(&s)
	c.kernelTo(&s)
	c.noiseTo(&s)
	return s
}

// Bound reports whether a CPU thread is bound.
func (c *Clock) Bound() bool { return c.tid.Load() != 0 }

// bind makes thread tid the CPU, watched through the /proc files fd, sfd and
// schedFd (-1: none). Call it on that thread.
func (c *Clock) bind(tid, fd, sfd, schedFd int) {
	c.UnbindCPU()
	c.schedFd.Store(int64(schedFd) + 1)
	c.fillCalibration() // before the account starts: its bursts are in no gap
	c.mu.Lock()
	c.nvcsw = c.h.nvcsw()
	c.base = c.h.sample(c)
	c.runs.reset()
	c.wruns.reset()
	now := c.h.now()
	c.base.others, c.base.othersAt = c.h.others(c, c.base.exec), now
	c.mu.Unlock()
	c.acct.reset()
	c.resetMeter(c.h.thread())
	c.lastAcc.Store(now)
	c.accAt.Store(now)
	c.waiting.Store(0)
	c.sysFd.Store(int64(sfd) + 1)
	c.statFd.Store(int64(fd) + 1)
	c.tid.Store(int64(tid))
}

// Access is a register access by the CPU: it returns the virtual time of the
// access, after charging or removing the gap that preceded it under the rule.
// Under the strict rule call Leave when the access is done.
func (c *Clock) Access() int64 { return c.AccessAt(0) }

// AccessAt is Access at site (Site; 0: unnamed), which keys the gap before it
// for the host-noise rule (noise.go).
func (c *Clock) AccessAt(site uint32) int64 {
	now := c.h.now()
	prev := c.lastAcc.Swap(now)
	if c.tid.Load() != 0 {
		gap := now - prev
		switch {
		case !c.strict():
			if gap > StallGrace {
				c.stalled(now, prev, gap)
			}
		case gap > LookGap:
			c.look(now, prev, gap, c.noiseKey(site))
		default:
			c.running(now, gap, c.noiseKey(site))
		}
	}
	c.accAt.Store(now)
	v := now - c.off.Load()
	raise(&c.reached, v)
	return v
}

// Commit records that the hardware has committed to reach virtual time v (the
// end of an SPI transfer in flight): a CPU thread that sleeps meanwhile waits for
// the wire, and no removal after a sleep goes below v.
func (c *Clock) Commit(v int64) { raise(&c.commit, v) }

// raise moves a up to v.
func raise(a *atomic.Int64, v int64) {
	for {
		f := a.Load()
		if v <= f || a.CompareAndSwap(f, v) {
			return
		}
	}
}

// remove takes up to s ns out of virtual time, never below the time a model was
// advanced to, nor, after a sleep, below the time the hardware committed to, and
// returns what it took. mu held.
func (c *Clock) remove(now, s int64, slept bool) int64 {
	floor := c.reached.Load()
	if slept {
		floor = max(floor, c.commit.Load())
	}
	s = min(s, now-c.off.Load()-floor)
	if s <= 0 {
		return 0
	}
	c.off.Add(s)
	return s
}
