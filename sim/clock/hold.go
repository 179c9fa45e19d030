package clock

// Holding the board's time while the CPU thread waits for one of the
// simulator's own host threads.
//
// A thread that plays another board core (sim.DeliveryCore's thread) keeps its
// board time, but what it has done so far is the host's: when the host runs it
// late, the CPU thread can find it behind where the board's core would be (a
// ring the board's core would have emptied still full). Hold lets the CPU
// thread wait for it with the board standing still: for every reader of the
// clock (Now, ModelNow: that thread's pacing too), for the bus threads
// (CPURunning says running, so they leave time alone), and for the strict rule,
// which takes the wait's host time out as a register model's, charging the board
// one register access.

// Hold runs wait on the CPU thread with the board's time held at its start. On
// any other thread, unbound, or under another rule, wait runs with time going on.
func (c *Clock) Hold(wait func()) {
	if m := c.kern.m.Load(); m == 0 || c.h.thread() != m || !c.strict() {
		wait()
		return
	}
	c.Access()
	c.held.Store(c.accAt.Load())
	wait()
	c.held.Store(0)
	c.Leave()
}

// hostNow is the host time the board's time is read at: now, or the start of a
// Hold in progress.
func (c *Clock) hostNow() int64 {
	now := c.h.now()
	if h := c.held.Load(); h != 0 && h < now {
		return h
	}
	return now
}
