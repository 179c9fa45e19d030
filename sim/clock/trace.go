package clock

// The strict rule's per-gap trace: a diagnostic, off unless a test or a
// benchmark turns it on (TraceGaps). It hands each looked-at gap (those longer
// than LookGap) with the split the rule made of it to a GapTracer, to find
// which category carries host time into the board's when the board falls
// behind on a loaded host. Off, it costs a look, and a register access longer
// than LookGap, one atomic pointer load; short gaps are never recorded one by
// one, only their sum in the next look's record.

// GapRecord is one looked-at gap as the strict rule split it (host ns but Board).
type GapRecord struct {
	At      int64 // host time of the access that ended the gap
	Virt    int64 // the board's time at that access
	Free    int64 // of Rest, the wait for the hardware (the board's time)
	Gap     int64 // the gap's host time
	Short   int64 // host ns of short gaps since the previous look (charged as running then)
	Model   int64 // host ns inside register accesses since the previous look
	On      int64 // the thread's CPU time in the gap (less Short and Model), outlier out
	Outlier int64 // of its CPU time, taken out as the kernel's (outlier.go)
	RunQ    int64 // its run delay
	Rest    int64 // neither running nor runnable: asleep, or stolen
	// Unmatched is how much Short and Model exceeded the thread's CPU time
	// since the previous look: host time of short gaps (or accesses) that was
	// no running (steal, runqueue) and was charged as running, not taken back.
	Unmatched int64
	// Kind: 's' steal (no sleep), 'w' woken by an edge, 'h' waited for the
	// hardware, 'p' park; 'a' a register access longer than LookGap (Gap its
	// host time, Removed what was taken out of it and of its rebase, Kept what
	// the floors kept);
	// 'c' a calibration burst (likewise).
	Kind    byte
	Board   int64 // board ns charged for the gap (before the floors)
	Removed int64 // host ns taken out of the board's clock for it
	Kept    int64 // host ns it would have removed that the floors kept (Stats.FloorKeptNs)
	Own     int64 // 'a': host ns of the clock's own work after the access (its rebase, removed with it)
}

// GapTracer receives the strict rule's looked-at gaps (TraceGaps), under the
// clock's lock: it must not block nor call the clock. Package
// sim/clock/gaptrace keeps the last n.
type GapTracer interface {
	Gap(r GapRecord)
}

// tracer holds a GapTracer for the clock's atomic pointer.
type tracer struct{ t GapTracer }

// TraceGaps sends every looked-at gap to t from now on (nil: off). Call it
// before or while the CPU thread runs.
func (c *Clock) TraceGaps(t GapTracer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t == nil {
		c.trace.Store(nil)
		return
	}
	c.trace.Store(&tracer{t})
}

// record hands r to the tracer if tracing is on. mu held.
func (c *Clock) record(r GapRecord) {
	if t := c.trace.Load(); t != nil {
		t.t.Gap(r)
	}
}

// traceAccess records a register access of in host ns, longer than LookGap, of
// which got was taken out and kept was refused by the floors; short and model
// are the account since the previous look, which the access's rebase drops.
func (c *Clock) traceAccess(now, in, got, kept, short, model, own int64) {
	if c.trace.Load() == nil {
		return // off: no lock
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.record(GapRecord{At: now, Virt: now - c.off.Load(), Gap: in, Short: short, Model: model, Own: own, Kind: 'a', Removed: got, Kept: kept})
}

// traceBurst records a calibration burst of wall host ns, of which got was taken
// out; own is the host time after it that no account holds (its lock).
func (c *Clock) traceBurst(now, wall, got, own int64) {
	if c.trace.Load() == nil {
		return // off: no lock
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.record(GapRecord{At: now, Virt: now - c.off.Load(), Gap: wall, Own: own, Kind: 'c', Removed: got, Kept: wall - got})
}
