package clock

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The bus thread's side: it moves time only while the CPU thread waits for the
// hardware, and takes out its own lateness then.

// CPURunning reports whether the bound CPU thread is running, runnable, or parked
// by the Go runtime, so that a bus thread must leave the moving of time to the
// CPU's own accesses (and look again after Active). False when unbound, or when
// the CPU thread waits for the hardware. It takes no lock: call it before taking
// the bus's.
func (c *Clock) CPURunning() bool {
	if c.tid.Load() == 0 {
		return false
	}
	if c.held.Load() != 0 {
		return true // holding the board's time (hold.go)
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
	if c.strict() {
		c.noteBus()
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

// Edge tells the clock that the INT line fell at virtual time at (an edge event
// is queued for the CPU thread): if the CPU thread is waiting for the hardware,
// this wakes it, and from now on the bus thread leaves time to it, as to a
// running thread. The thread that moved the bus may itself have been kept off
// its CPU by the host between reaching at and getting here (BusTime took out
// its lateness up to then, not after): what the board's time has run past at
// beyond BusLateGrace is the host's and is taken out, as BusTime's is, so that
// the edge does not wake the board's CPU later than the INT line fell. Call it
// with the bus's lock held, from whichever thread moves the bus.
func (c *Clock) Edge(at int64) {
	if c.tid.Load() == 0 {
		return
	}
	if last := c.lastAcc.Load(); c.waiting.Load() == last && c.wokeFor.Load() != last {
		now := c.h.now()
		if late := now - c.off.Load() - at; late > BusLateGrace {
			c.mu.Lock()
			if s := c.remove(now, late-BusLateGrace, true); s > 0 {
				c.stats.add(BusLate, s)
			}
			c.mu.Unlock()
		}
		c.wokeAt.Store(now)
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
			c.stats.add(BusLate, s)
		}
		c.mu.Unlock()
	}
	raise(&c.reached, v)
	return v
}

// busThreads are the threads that called CPURunning: the simulator's bus threads,
// whose CPU time is not the board's (strict rule, one-core boards and parks).
type busThreads struct {
	tid [16]atomic.Int64
	fd  [16]atomic.Int64 // their /proc/self/task/TID/schedstat + 1 (0: none)
}

// noteBus records the calling thread as a bus thread (once).
func (c *Clock) noteBus() {
	tid := int64(c.h.gettid())
	if tid == c.tid.Load() {
		return
	}
	b := &c.buses
	for i := range b.tid {
		switch b.tid[i].Load() {
		case tid:
			return
		case 0:
			if b.tid[i].CompareAndSwap(0, tid) {
				if fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/schedstat", tid), unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
					b.fd[i].Store(int64(fd) + 1)
				}
				return
			}
		}
	}
}
