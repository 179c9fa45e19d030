package clock

// The dedicated rule, for comparison: it forgives the driver its own time
// (docs/clock.md, "The dedicated rule").
// It plays a Pi whose owner thread has a core of its own, as fast as the host's:
// a gap between register accesses longer than StallGrace is removed but
// StallGrace unless the CPU thread waited for the hardware in it. It cannot tell
// a host stall from the driver computing, the Go runtime parking the thread or
// the garbage collector, so it removes all of them.

// stalled is Access's slow path under the dedicated rule: the gap since the
// access at prev is removed, unless the CPU thread was seen waiting for the
// hardware in it.
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
	s := c.remove(now, gap-grace, slept && !woke)
	switch {
	case woke:
		c.stats.add(WakeUp, s)
	case slept:
		c.stats.add(Park, s)
	default:
		c.stats.add(Stall, s)
	}
}

// forgiving is what the dedicated rule would remove from a gap of the strict
// rule (an indication for reports; mu held).
func (c *Clock) forgiving(now, prev, gap int64, woke, waited bool) int64 {
	switch {
	case woke:
		return max(now-c.wokeAt.Load()-WakeGrace, 0)
	case waited:
		return 0
	}
	return max(gap-StallGrace, 0)
}
