// Package clock is the virtual Pi's time base.
//
// A Raspberry Pi that runs cand well gives the owner thread a core of its own
// (isolcpus, SCHED_FIFO): nothing takes that core away for hundreds of
// microseconds. The machines the virtual Pi runs on do: a shared VM keeps a
// thread that only spins off its CPU now and then (hypervisor steal, host
// interrupts, the simulator's own threads on the runqueue), and every 10 ms of
// running (forcePreemptNS, Go's src/runtime/proc.go) the Go runtime preempts the
// owner goroutine, which, locked to its thread, then sleeps in a futex until
// another thread hands it back. At 1 Mbit/s, 250 µs is two frames, and the
// MCP2515 has two receive buffers (datasheet DS20001801J §4): on host time alone
// the virtual Pi would lose frames for the host's sake.
//
// A Clock is host CLOCK_MONOTONIC minus the time the host kept the simulated CPU
// from running. Unbound, it is host time exactly. Once the thread that plays the
// Pi's CPU (the daemon's owner thread) binds itself (BindCPU), time passes for the
// board only while that thread runs or waits for the hardware:
//
//   - The bus thread moves time only while the CPU thread is asleep in a system
//     call other than futex (epoll_wait for an INT edge, nanosleep through a long
//     SPI transfer): a wait for the hardware. While the CPU thread is running,
//     runnable, or parked by the Go runtime (futex), the bus thread leaves the
//     events to the CPU thread's own register accesses, which advance the bus
//     lazily (CPURunning), and looks again after Recheck. It asks the kernel
//     (/proc/self/task/TID/stat and .../syscall) only after the CPU thread has
//     not touched a register for Active, outside any lock. A park longer than
//     MaxPark counts as a wait, so time never stops for good.
//   - A register access (Access) that comes more than StallGrace after the CPU
//     thread's previous one removes the rest of the gap from virtual time (a CPU
//     stall), unless the bus thread saw the CPU thread waiting for the hardware in
//     that gap: then the hardware's time passed, and the gap, wake-up latency
//     included, is the board's. The first StallGrace of every gap is always the
//     driver's own time.
//   - An INT edge that wakes the waiting CPU thread (Edge) ends the wait, and so
//     does a look (every WaitRecheck while it waits) that finds it runnable again
//     (woken by its socket or a timeout): from then on the bus thread leaves time
//     to the CPU thread, and its first access removes all but WakeGrace of the
//     wake-up: a thread on a core of its own runs that soon after its IRQ, while
//     on a busy VM an epoll wake-up can take milliseconds.
//   - While the CPU thread waits, a bus thread that wakes more than BusLateGrace
//     after its event was due removes the excess (BusTime): a real bus is never
//     late. Lateness below that is kept, as a busy kernel's IRQ path would delay
//     an edge.
//
// A removal never takes virtual time below what a model was already advanced to or
// a time handed out by Reach, so time never goes back; nor, after the CPU thread
// slept, below what the hardware committed to (Commit: the end of an SPI transfer
// in flight), so a nanosleep through a long transfer is never removed even when no
// bus event made the bus thread look.
//
// The CPU's side takes no lock: an access is a clock read and a few atomics, and
// gettid and getrusage (did it sleep?) only after a gap longer than StallGrace. A
// lock the CPU thread had to wait for would park it, the very stall the clock
// exists to keep out.
//
// Files:
//   - clock.go: the rules above: virtual time, the removals (Access, BusTime),
//     what the bus thread may do (CPURunning, Edge) and the floors (Reach, Commit);
//   - proc.go: what the clock reads of the host: its time, the calling thread's
//     context switches, and the look at the bound CPU thread through
//     /proc/self/task/TID/stat and .../syscall (BindCPU opens them).
package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

const (
	// StallGrace is the part of every gap in the CPU thread's register accesses that
	// is charged to the driver, stall or not.
	StallGrace = int64(20 * time.Microsecond)
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
	// WakeGrace is the wake-up latency charged to the board when an INT edge
	// wakes a CPU thread that waits for it: a thread on a core of its own runs
	// that soon after its IRQ (two wake-ups: the GPIO IRQ thread, then the
	// epoll waiter). The rest of the wake-up is a host stall.
	WakeGrace = int64(50 * time.Microsecond)
	// WaitRecheck is how long a bus thread trusts having seen the CPU thread
	// waiting: then it looks again, and a thread found runnable (woken by its
	// socket or a timeout, not by an INT edge) has ended its wait about then.
	WaitRecheck = int64(500 * time.Microsecond)
	// MaxPark is the longest a CPU thread parked in a futex holds the bus's time.
	MaxPark = int64(time.Second)
)

// Stats counts what the clock removed from virtual time.
type Stats struct {
	CPUStalls     uint64 // CPU-thread gaps with a stall removed
	CPUStallNs    int64  // total removed from those gaps
	CPUStallMaxNs int64  // the longest single removal
	CPUParks      uint64 // of CPUStalls, gaps in which the thread slept (a Go runtime park)
	CPUWakes      uint64 // of CPUStalls, wake-ups by an INT edge slower than WakeGrace
	BusLate       uint64 // bus-thread wake-ups with lateness removed
	BusLateNs     int64  // total removed from those
}

// Clock is one virtual Pi's time base. The zero value is not usable; use New.
type Clock struct {
	off      atomic.Int64 // ns removed so far: virtual = host - off
	reached  atomic.Int64 // latest virtual time a model was advanced to: no removal goes below
	commit   atomic.Int64 // virtual time the hardware committed to (an SPI transfer's end)
	lastAcc  atomic.Int64 // host ns of the CPU's last register access
	tid      atomic.Int64 // the bound CPU thread (0: unbound)
	statFd   atomic.Int64 // its /proc/self/task/TID/stat + 1 (0: none)
	sysFd    atomic.Int64 // its /proc/self/task/TID/syscall + 1 (0: none)
	waiting  atomic.Int64 // lastAcc for which the CPU thread was seen waiting for the hardware (0: none)
	wokeFor  atomic.Int64 // lastAcc for which an INT edge woke the waiting CPU thread (0: none)
	wokeAt   atomic.Int64 // host time of that edge
	waitSeen atomic.Int64 // host time of the last look that saw it waiting

	h host

	mu    sync.Mutex // removals and their counts
	nvcsw int64      // the CPU thread's voluntary switches at the last slow-path look
	stats Stats
}

// New returns an unbound clock: host time.
func New() *Clock { return &Clock{h: realHost()} }

// Now is the virtual time (CLOCK_MONOTONIC ns minus the stalls removed).
func (c *Clock) Now() int64 { return c.h.now() - c.off.Load() }

// Reach returns the virtual time now and makes it a floor: no later removal takes
// virtual time below it. Use it, not Now, for a time something outside the models
// acts at (a test injecting a fault "now", peers starting): a removal after Now
// could otherwise put that time in the board's future.
func (c *Clock) Reach() int64 {
	v := c.Now()
	raise(&c.reached, v)
	return v
}

// Host converts virtual time v to host CLOCK_MONOTONIC with the removals made so
// far: what a kernel timestamp of an event at v reads (e.g. a GPIO edge event).
func (c *Clock) Host(v int64) int64 { return v + c.off.Load() }

// Stats returns the removals so far.
func (c *Clock) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Bound reports whether a CPU thread is bound.
func (c *Clock) Bound() bool { return c.tid.Load() != 0 }

// bind makes thread tid the CPU, watched through the /proc files fd and sfd (-1:
// none). Call it on that thread.
func (c *Clock) bind(tid, fd, sfd int) {
	c.UnbindCPU()
	c.mu.Lock()
	c.nvcsw = c.h.nvcsw()
	c.mu.Unlock()
	c.lastAcc.Store(c.h.now())
	c.waiting.Store(0)
	c.sysFd.Store(int64(sfd) + 1)
	c.statFd.Store(int64(fd) + 1)
	c.tid.Store(int64(tid))
}

// Access is a register access by the CPU: it returns the virtual time of the
// access, after removing the stall that preceded it, if any.
func (c *Clock) Access() int64 {
	now := c.h.now()
	prev := c.lastAcc.Swap(now)
	if gap := now - prev; gap > StallGrace && c.tid.Load() != 0 {
		c.stalled(now, prev, gap)
	}
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

// stalled is Access's slow path: the gap since the access at prev is removed,
// unless the CPU thread was seen waiting for the hardware in it.
//
// A gap with no wait is taken for a stall whether or not the thread was on its
// CPU: the frame path touches a register every few microseconds (its longest
// register-free stretch is the socket write), so StallGrace covers the driver's
// own work. The thread's CPU time cannot tell a stall from work here: a guest
// counts the time its vCPU is stolen as the running thread's CPU time, so it does
// not bound the removal.
func (c *Clock) stalled(now, prev, gap int64) {
	if c.h.gettid() != int(c.tid.Load()) {
		return // another thread (set-up, a test): not the CPU
	}
	nvcsw := c.h.nvcsw()
	c.mu.Lock()
	defer c.mu.Unlock()
	slept := nvcsw != c.nvcsw
	c.nvcsw = nvcsw
	woke := c.wokeFor.Load() == prev
	if c.waiting.Load() == prev && !woke {
		return // it waited for the hardware: that was the board's time
	}
	grace := StallGrace
	if woke {
		// It waited until an INT edge woke it: the wait was the board's time,
		// and so is WakeGrace of the wake-up; the rest is a stall.
		gap, grace = now-c.wokeAt.Load(), WakeGrace
	}
	if s := c.remove(now, gap-grace, slept && !woke); s > 0 {
		switch {
		case woke:
			c.stats.CPUWakes++
		case slept:
			c.stats.CPUParks++
		}
		c.stats.CPUStalls++
		c.stats.CPUStallNs += s
		c.stats.CPUStallMaxNs = max(c.stats.CPUStallMaxNs, s)
	}
}

// remove takes up to s ns out of virtual time, never below the time a model was
// advanced to, nor, after a sleep, below the time the hardware committed to. mu
// held.
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

// CPURunning reports whether the bound CPU thread is running, runnable, or parked
// by the Go runtime, so that a bus thread must leave the moving of time to the
// CPU's own accesses (and look again after Active). False when unbound, or when
// the CPU thread waits for the hardware. It takes no lock: call it before taking
// the bus's.
func (c *Clock) CPURunning() bool {
	if c.tid.Load() == 0 {
		return false
	}
	last := c.lastAcc.Load()
	now := c.h.now()
	age := now - last
	woke := c.wokeFor.Load() == last
	waiting := c.waiting.Load() == last
	switch {
	case age < Active:
		return true
	case woke && now-c.wokeAt.Load() < Recheck:
		return true // an INT edge is waking it
	case waiting && !woke && now-c.waitSeen.Load() < WaitRecheck:
		return false // seen waiting since its last access, lately
	}
	st := c.h.look(c)
	if st == 'R' || st == 'F' && age < MaxPark {
		if waiting && !woke {
			// Woken by something other than an INT edge (its socket, a
			// timeout) and not yet run: the wait ended about now.
			c.wokeAt.Store(now)
			c.wokeFor.Store(last)
		}
		return true // running, runnable, or parked by the Go runtime
	}
	if woke {
		c.wokeFor.Store(0) // asleep again without touching a register
	}
	c.waitSeen.Store(now)
	c.waiting.Store(last)
	return false
}

// Edge tells the clock that the INT line fell (an edge event is queued for the
// CPU thread): if the CPU thread is waiting for the hardware, this wakes it, and
// from now on the bus thread leaves time to it, as to a running thread. Call it
// with the bus's lock held, from whichever thread moves the bus.
func (c *Clock) Edge() {
	if c.tid.Load() == 0 {
		return
	}
	if last := c.lastAcc.Load(); c.waiting.Load() == last && c.wokeFor.Load() != last {
		c.wokeAt.Store(c.h.now())
		c.wokeFor.Store(last)
	}
}

// BusTime is the virtual time a bus thread advances to when its next event was
// due at due and CPURunning said no: the host time, less the bus thread's own
// lateness beyond BusLateGrace while the CPU thread waits (unbound: host time).
func (c *Clock) BusTime(due int64) int64 {
	now := c.h.now()
	v := now - c.off.Load()
	if late := v - due; late > BusLateGrace && c.tid.Load() != 0 {
		c.mu.Lock()
		if s := c.remove(now, late-BusLateGrace, true); s > 0 {
			v -= s
			c.stats.BusLate++
			c.stats.BusLateNs += s
		}
		c.mu.Unlock()
	}
	raise(&c.reached, v)
	return v
}
