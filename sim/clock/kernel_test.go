package clock

import (
	"testing"
	"time"

	"cand/internal/kernelop"
)

// kernelCPU is a board at factor f whose socket writes cost k FactorUnits per
// host ns and whose meter takes meter host ns around a call.
func kernelCPU(f, k, meter int64) CPU {
	p := CPU{Factor: f, MeterNs: meter}
	p.KernelFactor[kernelop.SocketWrite] = k
	return p
}

// call runs a metered call of kind op that takes ns of the CPU thread's running.
func call(c *Clock, s *script, op kernelop.Op, ns int64) {
	c.Enter(op)
	s.busy(ns)
	c.Exit(op)
}

// A short gap's metered system call is charged at the board's kernel cost of its
// kind, the user code around it at the factor, the meter's own time at its host
// time.
func TestMeteredCallCostsTheBoardsKernelWork(t *testing.T) {
	c, s := strictOn(t, 4*FactorUnit, kernelCPU(0, FactorUnit/2, 1*us))
	start := c.Now()
	s.busy(3 * us) // the driver's code, and the meter's 1 µs around the call
	call(c, s, kernelop.SocketWrite, 6*us)
	v := c.Access()
	// 2 µs of user code × 4, 6 µs of kernel work × 0.5, 1 µs of the meter.
	if want := start + 8*us + 3*us + 1*us; v != want {
		t.Fatalf("virtual = start+%d ns, want start+%d", v-start, want-start)
	}
	st := c.Stats()
	if st.ScaledNs != 6*us || st.KernelNs != -3*us {
		t.Errorf("ScaledNs %d, KernelNs %d; want %d, %d", st.ScaledNs, st.KernelNs, 6*us, -3*us)
	}
	if got := st.Kernel[kernelop.SocketWrite]; got != (KernelCalls{Calls: 1, HostNs: 6 * us, BoardNs: 3 * us}) {
		t.Errorf("socket writes %+v, want one of 6 µs host, 3 µs board", got)
	}
	if st.RemovedNs() != 0 {
		t.Errorf("removed %+v, want nothing", st.Removed)
	}
}

// A host slower at kernel work than the board: the gap costs the board less than
// its host time, and the difference leaves the board's time (never below what a
// model was advanced to).
func TestSlowHostKernelIsNotTheBoards(t *testing.T) {
	c, s := strictOn(t, FactorUnit, kernelCPU(0, FactorUnit/4, 0))
	start := c.Now()
	s.busy(2 * us)
	call(c, s, kernelop.SocketWrite, 8*us)
	if v, want := c.Access(), start+2*us+2*us; v != want {
		t.Fatalf("virtual = start+%d ns, want start+%d (2 µs of code, 8 µs of kernel work × 0.25)", v-start, want-start)
	}
	if st := c.Stats(); st.KernelNs != -6*us || st.FloorKeptNs != 0 {
		t.Errorf("KernelNs %d, FloorKeptNs %d; want %d, 0", st.KernelNs, st.FloorKeptNs, -6*us)
	}
	// A model already at a later time keeps the board's time there.
	c.Leave()
	start = c.Now()
	call(c, s, kernelop.SocketWrite, 8*us)
	c.Reach() // a bus thread advanced a model meanwhile
	if v, want := c.Access(), start+8*us; v != want {
		t.Errorf("virtual = start+%d ns, want start+%d: the floor", v-start, want-start)
	}
	if st := c.Stats(); st.FloorKeptNs != 6*us {
		t.Errorf("FloorKeptNs %d, want %d", st.FloorKeptNs, 6*us)
	}
}

// A looked-at gap splits the same way: its running less the metered calls at the
// factor, the calls at their kernel cost; runqueue time is removed as in any gap.
func TestLookedAtGapChargesTheKernelWork(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, kernelCPU(0, 3*FactorUnit, 0))
	start := c.Now()
	s.busy(30 * us)
	call(c, s, kernelop.SocketWrite, 10*us)
	s.now += 100 * us // on the runqueue
	s.rd += 100 * us
	if v, want := c.Access(), start+60*us+30*us; v != want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (30 µs of code × 2, 10 µs of kernel work × 3)", (v-start)/us, (want-start)/us)
	}
	if st := c.Stats(); st.Removed[Runqueue].Ns != 100*us || st.ScaledNs != 30*us || st.KernelNs != 20*us {
		t.Errorf("runqueue %d, ScaledNs %d, KernelNs %d; want 100 µs, 30 µs, 20 µs", st.Removed[Runqueue].Ns, st.ScaledNs, st.KernelNs)
	}
}

// A metered call preempted inside: the preemption is removed as runqueue, and
// only the thread's running is charged, the call's share at its kernel cost.
func TestPreemptedCallChargesOnlyItsRunning(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, kernelCPU(0, 3*FactorUnit, 0))
	start := c.Now()
	c.Enter(kernelop.SocketWrite)
	s.busy(30 * us)
	s.now += 90 * us // on the runqueue inside the call
	s.rd += 90 * us
	c.Exit(kernelop.SocketWrite)
	if v, want := c.Access(), start+90*us; v != want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (30 µs of kernel work × 3)", (v-start)/us, (want-start)/us)
	}
}

// Calls on another thread, or of a kind without a kernel factor, are not
// metered: the gap is running at the factor, as without a meter.
func TestUnmeteredCallsAreRunning(t *testing.T) {
	for _, tc := range []struct {
		name string
		tid  int
		op   kernelop.Op
	}{{"another thread", 8, kernelop.SocketWrite}, {"no kernel factor", 7, kernelop.SocketRead}} {
		c, s := strictOn(t, 4*FactorUnit, kernelCPU(0, FactorUnit/2, 1*us))
		start := c.Now()
		s.busy(2 * us)
		s.tid = tc.tid
		call(c, s, tc.op, 6*us)
		s.tid = 7
		if v, want := c.Access(), start+32*us; v != want {
			t.Errorf("%s: virtual = start+%d ns, want start+%d (8 µs of running × 4)", tc.name, v-start, want-start)
		}
		if st := c.Stats(); st.KernelNs != 0 || st.Kernel != [kernelop.NumOps]KernelCalls{} {
			t.Errorf("%s: kernel %d ns, %+v; want none", tc.name, st.KernelNs, st.Kernel)
		}
	}
}

// Without kernel factors and board costs (hardware.sim_kernel_cost: user_factor)
// a gap with a metered call, a wake-up and a park cost exactly what they cost
// before the meter: everything at the factor.
func TestUserFactorIsTheOldCharge(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{WakeHostNs: 10 * us, ParkHostNs: 20 * us, WokenHostNs: 2 * us})
	start := c.Now()
	s.busy(2 * us)
	call(c, s, kernelop.SocketWrite, 6*us)
	v := c.Access()
	if want := start + 24*us; v != want {
		t.Fatalf("short gap: virtual = start+%d ns, want start+%d", v-start, want-start)
	}
	c.Leave()
	start = c.Now()
	waitForEdge(t, c, s)
	call(c, s, kernelop.EventRead, 5*us)
	if v, want := c.Access(), start+100*us+30*us+15*us; v != want {
		t.Fatalf("woken gap: virtual = start+%d µs, want start+%d µs (the wait, 10 µs × 3, 5 µs × 3)", (v-start)/us, (want-start)/us)
	}
	c.Leave()
	start = c.Now()
	s.busy(10 * us)
	s.nvcsw++
	s.now += time.Millisecond.Nanoseconds()
	if v, want := c.Access(), start+60*us; v != want {
		t.Fatalf("park: virtual = start+%d µs, want start+%d µs (20 µs × 3)", (v-start)/us, (want-start)/us)
	}
	if st := c.Stats(); st.KernelNs != 0 || st.WakeNs != 30*us || st.ParkNs != 30*us {
		t.Errorf("KernelNs %d, WakeNs %d, ParkNs %d; want 0, %d, %d", st.KernelNs, st.WakeNs, st.ParkNs, 30*us, 30*us)
	}
}

// With the board's own wake-up cost, the woken thread's own sleep and return
// (WokenHostNs of its running) are in it: taken out of the running, and the
// board's wake-up charged in full, whatever the factor.
func TestWakeUpCostsTheBoardsFigure(t *testing.T) {
	p := kernelCPU(0, FactorUnit, 0)
	p.WakeHostNs, p.WakeBoardNs, p.WokenHostNs = 40*us, 30*us, 2*us
	p.KernelFactor[kernelop.EventRead] = 2 * FactorUnit
	c, s := strictOn(t, 4*FactorUnit, p)
	start := c.Now()
	waitForEdge(t, c, s)
	s.busy(5 * us)
	call(c, s, kernelop.EventRead, 3*us)
	// The wait, the board's 30 µs wake-up, 3 µs of code × 4, 3 µs of event read × 2.
	if v, want := c.Access(), start+100*us+30*us+12*us+6*us; v != want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs", (v-start)/us, (want-start)/us)
	}
	if st := c.Stats(); st.Removed[WakeUp] != (Removal{Count: 1, Ns: 502 * us}) || st.Wakes != 1 || st.WakeNs != 30*us {
		t.Errorf("wake-up removed %+v, charged %d ns in %d; want 502 µs removed (the path and the woken side's 2 µs), 30 µs charged",
			st.Removed[WakeUp], st.WakeNs, st.Wakes)
	}
}

// With the board's own park cost, a park costs it, or its running at the board's
// cost where that is more.
func TestParkCostsTheBoardsFigure(t *testing.T) {
	p := kernelCPU(0, FactorUnit/2, 0)
	p.ParkHostNs, p.ParkBoardNs = 20*us, 50*us
	c, s := strictOn(t, 3*FactorUnit, p)
	start := c.Now()
	s.busy(10 * us)
	s.nvcsw++
	s.now += 2 * time.Millisecond.Nanoseconds()
	if v := c.Access(); v != start+50*us {
		t.Fatalf("virtual = start+%d µs, want start+50 µs (the board's park; its 10 µs × 3 of running within it)", (v-start)/us)
	}
	if st := c.Stats(); st.Parks != 1 || st.ParkNs != 20*us {
		t.Errorf("%d parks charged %d ns, want one of 20 µs beyond its running", st.Parks, st.ParkNs)
	}
	c.Leave()
	start = c.Now()
	s.busy(16 * us)
	call(c, s, kernelop.SocketWrite, 8*us)
	s.nvcsw++
	s.now += 300 * us
	if v := c.Access(); v != start+52*us {
		t.Errorf("virtual = start+%d µs, want start+52 µs (16 µs × 3 and 8 µs × 0.5 of running, more than a park)", (v-start)/us)
	}
}

// The dedicated rule meters nothing.
func TestDedicatedMetersNothing(t *testing.T) {
	c, s := boundOn(t, Dedicated)
	c.SetCPU(kernelCPU(2*FactorUnit, FactorUnit, 0))
	call(c, s, kernelop.SocketWrite, 6*us)
	c.Access()
	if st := c.Stats(); st.Kernel != [kernelop.NumOps]KernelCalls{} {
		t.Errorf("kernel %+v, want none", st.Kernel)
	}
}

// Another thread's system call, costed for its own board time: at the kernel
// factor of its kind, or the user-code factor where the kind has none.
func TestKernelCostForAnotherThread(t *testing.T) {
	c, _ := strictOn(t, 4*FactorUnit, kernelCPU(0, FactorUnit/2, 0))
	if got := c.KernelCost(kernelop.SocketWrite, 6*us); got != 3*us {
		t.Errorf("socket write of 6 µs: %d ns, want %d", got, 3*us)
	}
	if got := c.KernelCost(kernelop.SocketRead, 6*us); got != 24*us {
		t.Errorf("socket read of 6 µs without a kernel factor: %d ns, want %d", got, 24*us)
	}
}

// The CPU thread's clock reads are charged at the board's cost of a read, their
// host time taken out of the running the factor scales.
func TestClockReadsCostTheBoardsRead(t *testing.T) {
	c, s := strictOn(t, 4*FactorUnit, CPU{ClockReadHostNs: 100, ClockReadBoardNs: 500})
	start := c.Now() // a read too: charged with the next gap
	s.busy(3 * us)
	for range 4 {
		c.Now()
	}
	// 3 µs of running less 5 reads' 100 ns host: 2.5 µs × 4, and 5 reads × 500 ns.
	if v, want := c.Access(), start+10*us+2500; v != want {
		t.Fatalf("virtual = start+%d ns, want start+%d", v-start, want-start)
	}
	// A model's reads (ModelNow) and another thread's are not the driver's.
	start = c.ModelNow()
	s.busy(1 * us)
	c.ModelNow()
	if v, want := c.Access(), start+4*us; v != want {
		t.Fatalf("virtual = start+%d ns, want start+%d (no read charged)", v-start, want-start)
	}
}

// A kind of call with a fixed board cost costs that, however long the host's
// call took: 50 µs of a host's wake, at a kernel factor of 4, is the board's
// 20 µs hand-off, not 200 µs; a socket write without one still follows its host
// time.
func TestKernelFixedCost(t *testing.T) {
	p := kernelCPU(FactorUnit, FactorUnit, 0)
	p.KernelFactor[kernelop.Wake] = 4 * FactorUnit
	p.KernelFactor[kernelop.SocketWrite] = 4 * FactorUnit
	p.KernelFixedNs[kernelop.Wake] = 20 * us
	c, s := strictOn(t, FactorUnit, p)
	start := c.Now()
	call(c, s, kernelop.Wake, 50*us)
	if v, want := c.Access(), start+20*us; v != want {
		t.Fatalf("virtual = start+%d ns, want start+%d (one hand-off)", v-start, want-start)
	}
	if got := c.KernelCost(kernelop.Wake, 50*us); got != 20*us {
		t.Errorf("KernelCost of a wake = %d ns, want %d", got, 20*us)
	}
	if got := c.KernelCost(kernelop.SocketWrite, 5*us); got != 20*us {
		t.Errorf("KernelCost of a 5 µs socket write at kernel factor 4 = %d ns, want %d", got, 20*us)
	}
}
