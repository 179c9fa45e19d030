package clock

import "sync/atomic"

// The strict rule's side of a register access: the gap since the CPU thread's
// previous access is charged at the board's cost, and only the host's scheduler
// and hypervisor's part of it is removed.
//
// A gap of at most LookGap is taken as running: Factor times its host time
// (running, no system call). A longer one is looked at (look): its host time is
// split with the CPU thread's CPU time and run delay since the previous look,
// less the short gaps and register accesses since then, which were charged as
// running already. What a short gap held of runqueue or steal is thus taken out
// of the next long one, so the account over any stretch is right even where one
// gap's share is not.

// acctState is the strict rule's running account, written by the CPU thread.
type acctState struct {
	reads atomic.Int64 // the CPU thread's clock reads since the last charge (clockReads)
	// readsN and readNs: the clock reads charged, and their board ns beyond
	// their host ns.
	readsN, readNs atomic.Int64
	short          atomic.Int64 // host ns of short gaps since the last look
	model          atomic.Int64 // host ns inside register accesses since the last look
	scaled         atomic.Int64 // board ns charged beyond host ns for the CPU's user code
	kernel         atomic.Int64 // board ns charged beyond host ns for its metered system calls
	kept           atomic.Int64 // a short gap's removal the floors refused
	idle           atomic.Int64 // board ns the CPU thread waited for the hardware
	models         atomic.Uint64
	modelN         atomic.Int64 // host ns of the register model removed
}

func (a *acctState) reset() {
	a.short.Store(0)
	a.model.Store(0)
}

// addTo adds the atomically kept counts to s.
func (a *acctState) addTo(s *Stats) {
	s.ScaledNs += a.scaled.Load()
	s.KernelNs += a.kernel.Load()
	s.ClockReads += a.readsN.Load()
	s.ClockReadNs += a.readNs.Load()
	s.FloorKeptNs += a.kept.Load()
	s.IdleNs += a.idle.Load()
	s.Removed[Model].Count += a.models.Load()
	s.Removed[Model].Ns += a.modelN.Load()
}

// noiseTo adds the host-noise rule's removals to s.
func (c *Clock) noiseTo(s *Stats) {
	s.Removed[HostNoise].Count += uint64(c.noise.n.Load())
	s.Removed[HostNoise].Ns += c.noise.ns.Load()
}

// sample is the CPU thread as the kernel counts it.
type sample struct {
	exec, rd int64 // its CPU time and run delay, ns
	nvcsw    int64 // its voluntary context switches
	sys      int64 // its read and write system calls (syscr + syscw; 0: unknown)
	// others is the CPU time of the process's threads other than the CPU thread
	// and the bus threads when last read, at othersAt (host ns).
	others, othersAt int64
}

// running charges a short gap that ends at host time now as the CPU's own
// running, less the simulator's overhead in it: its user code at the factor, its
// metered system calls at the board's kernel cost (kernel.go), which may be less
// than their host time.
func (c *Clock) running(now, gap int64, key uint32) {
	c.acct.short.Add(gap)
	run0 := max(gap-c.cpu.gapOverhead.Load(), 0)
	run, reads := c.clockReads(run0)
	user, kern := c.kernelIn(run)
	user -= c.noiseIn(key, user, false) // the host's, left out with the rest of run0
	up := scaled(user, c.cpu.factor.Load())
	c.acct.scaled.Add(up - user)
	switch x := up + kern + reads - run0; {
	case x > 0:
		c.off.Add(-x)
	case x < 0:
		if got := c.takeOut(now, -x); got < -x {
			c.acct.kept.Add(-x - got)
		}
	}
}

// Idle is the board time the CPU thread has spent waiting for the hardware
// (strict rule): the board's governor reads its load from it.
func (c *Clock) Idle() int64 { return c.acct.idle.Load() }

// Leave ends a register access under the strict rule: the host time since Access
// (the model's work) is replaced by the board's cost of the access (AccessNs).
// It returns the virtual time. Under the dedicated rule, or unbound, it only
// reads the clock.
func (c *Clock) Leave() int64 {
	now := c.h.now()
	if c.tid.Load() == 0 || !c.strict() {
		return now - c.off.Load()
	}
	in := now - c.accAt.Load()
	short, model := int64(0), int64(0) // for the trace: the account the rebase drops
	own := int64(0)                    // the rebase's host time
	if in > LookGap {
		short, model = c.acct.short.Load(), c.acct.model.Load()
		// Preempted or waiting for a model's lock: rebase the account, so that
		// this access's runqueue time is not taken out of the next gap as well.
		at := c.rebase(now)
		own, now = at-now, at
	} else {
		c.acct.model.Add(in)
	}
	// The rebase's reads of /proc (a few µs) are the clock's own work, and a
	// preemption in them the host's: neither is the board's, so they leave
	// with the model's time. In the next gap they would be charged as the
	// CPU's running at the board's speed. (The gap starts once its sample is
	// taken: a preemption after that is in the next look's run delay, and
	// removed there, once.)
	if d := in + own - c.cpu.accessNs.Load(); d > 0 {
		got := c.takeOut(now, d)
		if got > 0 {
			c.acct.models.Add(1)
			c.acct.modelN.Add(got)
		}
		if in > LookGap {
			c.traceAccess(now-own, in, got, d-got, short, model, own)
		}
	} else {
		c.off.Add(d)
	}
	// The gap to the next access starts at now, the time the access's host
	// time (and the rebase's) was taken at, or after a calibration burst if one
	// is due (calib.go): a preemption from here on is in the next gap, where a
	// look finds it. Read later, the host time between would be in no account
	// and pass as the board's (the clock's own few instructions here are in the
	// calibrated gap overhead).
	end := c.calibrate(now)
	c.lastAcc.Store(end)
	return end - c.off.Load()
}

// takeOut removes up to s ns, never below the time a model was advanced to,
// without the lock; it returns what it took.
func (c *Clock) takeOut(now, s int64) int64 {
	for {
		off := c.off.Load()
		t := min(s, now-off-c.reached.Load())
		if t <= 0 {
			return 0
		}
		if c.off.CompareAndSwap(off, off+t) {
			return t
		}
	}
}

// rebase makes now the start of the account (CPU thread). It returns the host
// time its sample of the thread was complete at (now if it took none), where
// the next gap starts: a preemption after it is in that gap's run delay.
func (c *Clock) rebase(now int64) int64 {
	if c.h.gettid() != int(c.tid.Load()) {
		return now
	}
	s := c.h.sample(c)
	at := c.h.now()
	c.mu.Lock()
	s.others, s.othersAt = c.base.others, c.base.othersAt
	c.base = s
	c.acct.reset()
	c.mu.Unlock()
	return at
}

// look is Access's slow path under the strict rule: the gap of gap host ns since
// the access that ended at prev is split and charged.
func (c *Clock) look(now, prev, gap int64, key uint32) {
	if c.h.gettid() != int(c.tid.Load()) {
		return // another thread (set-up, a test): not the CPU, host time
	}
	s := c.h.sample(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &c.base
	short, model := c.acct.short.Swap(0), c.acct.model.Swap(0)
	f := c.cpu.factor.Load()
	raw := s.exec - b.exec - short - model
	on := clamp(raw, 0, gap) // on its CPU
	rd := clamp(s.rd-b.rd, 0, gap-on)
	rest := gap - on - rd                      // asleep, or neither running nor runnable
	run := max(on-c.cpu.gapOverhead.Load(), 0) // of which the driver's
	slept := s.nvcsw != b.nvcsw
	syscalls := s.sys != b.sys || s.sys == 0
	woke := c.wokeFor.Load() == prev
	waited := c.waiting.Load() == prev && !woke
	oneCore := c.cpu.cores.Load() == 1
	others := c.othersIn(now, gap, s.exec, oneCore)
	s.others, s.othersAt = b.others, b.othersAt
	*b = s

	outlier := int64(0)
	if !slept || woke {
		// Of its running, what a system call took far beyond the median gap is
		// the host's (outlier.go); a gap woken by an edge against the median of
		// such gaps (the wake-up's return to the thread and its event read).
		h := &c.runs
		if slept {
			h = &c.wruns
		}
		if x := min(c.outlier(h, on, syscalls), run); x > 0 {
			c.stats.add(KernelOutlier, x)
			on, run, outlier = on-x, run-x, x
		}
	}
	// Of the driver's running, its metered system calls are charged at the
	// board's kernel cost (kernel.go), the rest at the factor. With the board's
	// own wake-up cost, the woken thread's own sleep and return (WokenHostNs of
	// its CPU time) are the wake-up's, charged in it (below).
	run0 := run
	run, reads := c.clockReads(run0)
	user, kern := c.kernelIn(run)
	user -= c.noiseIn(key, user, slept)
	own := int64(0)
	if woke && c.cpu.wakeBoard.Load() > 0 {
		own = min(c.cpu.woken.Load(), user)
		user -= own
	}
	runBoard := scaled(user, f) + kern + reads
	board := runBoard + on - run0
	c.acct.scaled.Add(scaled(user, f) - user)
	c.stats.add(Runqueue, rd)
	free := int64(0) // of rest, the wait for the hardware
	kind := byte('p')
	switch {
	case !slept:
		kind = 's'
		c.stats.add(Steal, rest)
	case woke:
		kind = 'w'
		// It waited until an INT edge (or a look that found it runnable)
		// woke it: the wait is the board's time; the wake-up path until it ran
		// costs the board's wake-up instead of the host's.
		path := clamp(now-c.wokeAt.Load()-on-outlier-rd, 0, rest) // the outlier was on its CPU too
		cost := c.cpu.wakeBoard.Load()
		if cost == 0 {
			cost = scaled(c.cpu.wakeHost.Load(), f)
		}
		free = rest - path
		board += free + cost
		c.stats.add(WakeUp, path+own)
		c.stats.Wakes++
		c.stats.WakeNs += cost
	case waited:
		kind = 'h'
		free = rest
		board += rest
	default:
		// A Go runtime park: the board's cost of one. Its host time beyond
		// that is the host's scheduling of the thread that hands it back; its
		// running (the runtime's preemption and scheduling, next to a few
		// instructions of the driver's) is the park's own work, so the park
		// costs that at the board's cost if that is more.
		cost := max(c.parkCost(f)-runBoard, 0)
		board += cost
		c.stats.add(Park, rest)
		c.stats.Parks++
		c.stats.ParkNs += cost
	}
	c.acct.idle.Add(free)
	if oneCore {
		// On one core the other threads ran on the CPU thread's core: their
		// time delayed it, except what fitted into its wait.
		if x := scaled(max(others-free, 0), f); x > 0 {
			board += x
			c.stats.SharedCoreNs += x
		}
	}
	c.stats.ForgivingNs += c.forgiving(now, prev, gap, woke, waited)
	got, kept := int64(0), int64(0)
	if d := board - gap; d >= 0 {
		c.off.Add(-d)
	} else if got = c.remove(now, -d, slept); got < -d {
		kept = -d - got
		c.stats.FloorKeptNs += kept
	}
	if c.trace.Load() != nil {
		c.record(GapRecord{At: now, Virt: now - c.off.Load(), Free: free, Gap: gap, Short: short, Model: model, On: on, Outlier: outlier, RunQ: rd, Rest: rest, Unmatched: max(-raw, 0),
			Kind: kind, Board: board, Removed: got, Kept: kept})
	}
}

// othersIn returns the CPU time the process's other threads (not the CPU thread,
// not the bus threads) used in the gap of gap host ns that ends now: all they
// used since the last reading if all, else their share of it in proportion to
// the gap. ownExec is the CPU thread's CPU time. mu held.
func (c *Clock) othersIn(now, gap, ownExec int64, all bool) int64 {
	o := c.h.others(c, ownExec)
	b := &c.base
	prev, at := b.others, b.othersAt
	b.others, b.othersAt = o, now
	if o <= prev {
		return 0
	}
	d := o - prev
	if all || now-at <= gap {
		return d
	}
	return d * gap / (now - at)
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }
