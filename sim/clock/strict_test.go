package clock

import (
	"testing"
	"time"
)

// strictOn returns a clock on the strict rule, bound, with the board's CPU set to
// factor f (FactorUnits) and the other figures of p, its first access made and
// ended at host time 1 s.
func strictOn(t *testing.T, f int64, p CPU) (*Clock, *script) {
	t.Helper()
	p.Factor = f
	if p.Cores == 0 {
		p.Cores = 4
	}
	c, s := boundOn(t, Strict)
	c.SetCPU(p)
	c.Leave()
	return c, s
}

// busy advances the scripted host by ns of the CPU thread running.
func (s *script) busy(ns int64) {
	s.now += ns
	s.exec += ns
}

// The defect the strict rule exists to fix: a stretch of the driver's own code
// with no register access is the board's time, however long. 200 µs of running
// are charged, not removed — at the board's speed.
func TestBusyStretchIsCharged(t *testing.T) {
	for _, f := range []int64{FactorUnit, 3 * FactorUnit} {
		c, s := strictOn(t, f, CPU{})
		start := c.Now()
		s.busy(200 * us)
		v := c.Access()
		if want := start + scaled(200*us, f); v != want {
			t.Errorf("factor %d/%d: virtual = start+%d µs after a 200 µs busy stretch, want start+%d µs: charged, not removed",
				f, FactorUnit, (v-start)/us, (want-start)/us)
		}
		st := c.Stats()
		if st.RemovedNs() != 0 {
			t.Errorf("factor %d/%d: removed %d ns (%+v), want nothing", f, FactorUnit, st.RemovedNs(), st.Removed)
		}
		if st.ScaledNs != scaled(200*us, f)-200*us {
			t.Errorf("factor %d/%d: ScaledNs = %d, want %d", f, FactorUnit, st.ScaledNs, scaled(200*us, f)-200*us)
		}
		if st.ForgivingNs != 200*us-StallGrace {
			t.Errorf("ForgivingNs = %d, want %d: the dedicated rule would have removed all but its grace", st.ForgivingNs, 200*us-StallGrace)
		}
	}
}

// Short gaps are taken as running without asking the kernel, at the board's speed.
func TestShortGapRunsAtTheBoardsSpeed(t *testing.T) {
	c, s := strictOn(t, 4*FactorUnit, CPU{})
	start := c.Now()
	s.busy(LookGap)
	if v := c.Access(); v != start+4*LookGap {
		t.Errorf("virtual = start+%d ns, want start+%d", v-start, 4*LookGap)
	}
}

// The time the host kept the CPU thread runnable but not running is removed;
// its running is charged.
func TestRunqueueIsRemoved(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{})
	start := c.Now()
	s.busy(100 * us)
	s.now += 250 * us // on the runqueue
	s.rd += 250 * us
	if v := c.Access(); v != start+200*us {
		t.Fatalf("virtual = start+%d µs, want start+200 µs (100 µs of running at factor 2)", (v-start)/us)
	}
	if st := c.Stats(); st.Removed[Runqueue] != (Removal{Count: 1, Ns: 250 * us}) || st.RemovedNs() != 250*us {
		t.Errorf("removed %+v, want 250 µs of runqueue only", st.Removed)
	}
}

// Neither running, nor runnable, nor asleep: the hypervisor had the vCPU.
func TestStealIsRemoved(t *testing.T) {
	c, s := strictOn(t, FactorUnit, CPU{})
	start := c.Now()
	s.busy(50 * us)
	s.now += 300 * us
	if v := c.Access(); v != start+50*us {
		t.Fatalf("virtual = start+%d µs, want start+50 µs", (v-start)/us)
	}
	if st := c.Stats(); st.Removed[Steal] != (Removal{Count: 1, Ns: 300 * us}) {
		t.Errorf("removed %+v, want 300 µs of steal", st.Removed)
	}
}

// A short gap is charged as running even if the host preempted it; the next
// look takes that runqueue time out of its own gap, so the account is right.
func TestShortGapsRunqueueComesOutOfTheNextLook(t *testing.T) {
	c, s := strictOn(t, FactorUnit, CPU{})
	start := c.Now()
	s.now += 15 * us // preempted throughout a short gap
	s.rd += 15 * us
	c.Access()
	c.Leave()
	s.busy(100 * us)
	if v := c.Access(); v != start+100*us {
		t.Errorf("virtual = start+%d µs, want start+100 µs: only the running is the board's", (v-start)/us)
	}
}

// A Go runtime park costs the board's park (ParkHostNs × factor), whatever the
// host took to hand the thread back; the running in the gap is the park's own
// work, so it counts only where it costs the board more than a park.
func TestParkCostsTheBoardsPark(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{ParkHostNs: 20 * us})
	start := c.Now()
	s.busy(10 * us)
	s.nvcsw++
	s.now += 2 * int64(time.Millisecond) // parked in a futex, not seen waiting
	v := c.Access()
	if want := start + 60*us; v != want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (a 20 µs park at factor 3; its 10 µs of running within it)", (v-start)/us, (want-start)/us)
	}
	st := c.Stats()
	if st.Parks != 1 || st.ParkNs != 30*us || st.Removed[Park] != (Removal{Count: 1, Ns: 2000 * us}) {
		t.Errorf("parks %d charged %d ns, removed %+v; want one park charged 30 µs beyond its running, 2 ms removed", st.Parks, st.ParkNs, st.Removed[Park])
	}
	// Running longer than a park's board cost is charged as running.
	c, s = strictOn(t, 3*FactorUnit, CPU{ParkHostNs: 20 * us})
	start = c.Now()
	s.busy(50 * us)
	s.nvcsw++
	s.now += 300 * us
	if v := c.Access(); v != start+150*us {
		t.Errorf("virtual = start+%d µs, want start+150 µs (50 µs of running at factor 3)", (v-start)/us)
	}
}

// On a board with several cores the other threads' work during a park ran on
// other cores: the park costs the board's park, no more.
func TestParkIgnoresOtherCoresWork(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{ParkHostNs: 5 * us})
	s.busy(30 * us)
	c.Access()
	c.Leave()
	start := c.Now()
	s.nvcsw++
	s.now += 400 * us
	s.others += 100 * us
	if v := c.Access(); v != start+10*us {
		t.Fatalf("virtual = start+%d µs, want start+10 µs (a 5 µs park at factor 2)", (v-start)/us)
	}
}

// The simulator's own code in a gap (GapOverheadNs) is not scaled.
func TestGapOverheadIsNotScaled(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{GapOverheadNs: 40})
	start := c.Now()
	s.busy(1040)
	if v := c.Access(); v != start+3*1000+40 {
		t.Errorf("virtual = start+%d ns, want start+3040 (1000 ns of driver at factor 3, 40 ns of simulator)", v-start)
	}
}

// A wait for the hardware is the board's time; the running around it is charged
// at the board's speed and its runqueue time removed.
func TestWaitIsTheBoardsTime(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{})
	start := c.Now()
	s.busy(10 * us)
	s.state = 'S'
	s.now += 50 * us
	if c.CPURunning() {
		t.Fatal("CPURunning true for a thread asleep outside futex")
	}
	s.nvcsw++
	s.now += 400 * us
	s.rd += 30 * us
	s.now += 30 * us
	if v := c.Access(); v != start+20*us+450*us {
		t.Fatalf("virtual = start+%d µs, want start+470 µs (the wait, and 10 µs of running at factor 2)", (v-start)/us)
	}
	if st := c.Stats(); st.Removed[Runqueue].Ns != 30*us || st.IdleNs != 450*us {
		t.Errorf("runqueue %d ns, idle %d ns; want 30 µs and the 450 µs wait", st.Removed[Runqueue].Ns, st.IdleNs)
	}
}

// An INT edge ends the wait; the wake-up path until the thread runs costs the
// board's (WakeHostNs × factor), not the host's.
func TestWakeUpCostsTheBoardsWakeUp(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{WakeHostNs: 40 * us})
	start := c.Now()
	waitForEdge(t, c, s)
	s.busy(5 * us)
	want := start + 100*us + 80*us + 10*us
	if v := c.Access(); v != want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (the wait, the board's 80 µs wake-up, 5 µs of running at factor 2)", (v-start)/us, (want-start)/us)
	}
	if st := c.Stats(); st.Removed[WakeUp] != (Removal{Count: 1, Ns: 500 * us}) || st.Wakes != 1 || st.WakeNs != 80*us {
		t.Errorf("wake-up removed %+v, charged %d ns in %d; want 500 µs removed, 80 µs charged", st.Removed[WakeUp], st.WakeNs, st.Wakes)
	}
}

// On a one-core board the other threads' CPU time is the CPU thread's delay.
func TestOneCoreChargesTheOtherThreads(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{Cores: 1})
	s.busy(30 * us)
	c.Access()
	c.Leave()
	start := c.Now()
	s.busy(30 * us)
	s.others += 40 * us
	if v := c.Access(); v != start+60*us+80*us {
		t.Fatalf("virtual = start+%d µs, want start+140 µs (its 30 µs and the others' 40 µs, at factor 2)", (v-start)/us)
	}
	if st := c.Stats(); st.SharedCoreNs != 80*us {
		t.Errorf("SharedCoreNs = %d, want %d", st.SharedCoreNs, 80*us)
	}
}

// A register access costs the board's access time, whatever the model took.
func TestAccessCostsTheBoardsAccess(t *testing.T) {
	c, s := strictOn(t, FactorUnit, CPU{AccessNs: 100})
	v := c.Access()
	s.busy(3 * us) // the model's work
	if l := c.Leave(); l != v+100 {
		t.Fatalf("Leave = Access+%d ns, want +100", l-v)
	}
	if st := c.Stats(); st.Removed[Model] != (Removal{Count: 1, Ns: 3*us - 100}) {
		t.Errorf("model removed %+v, want 2900 ns", st.Removed[Model])
	}
	// A model quicker than the board's access: the board runs ahead.
	v = c.Access()
	s.busy(50)
	if l := c.Leave(); l != v+100 {
		t.Errorf("Leave = Access+%d ns, want +100", l-v)
	}
}

// An access preempted inside the model restarts the account at its end, so its
// runqueue time, already gone with the model's, is not removed again.
func TestLongAccessRestartsTheAccount(t *testing.T) {
	c, s := strictOn(t, FactorUnit, CPU{AccessNs: 100})
	c.Access()
	s.now += 100 * us // preempted in the model
	s.rd += 100 * us
	start := c.Leave()
	s.busy(60 * us)
	if v := c.Access(); v != start+60*us {
		t.Errorf("virtual = start+%d µs, want start+60 µs", (v-start)/us)
	}
}

// Removals keep the floors; charges only move time forward.
func TestStrictRemovalFloors(t *testing.T) {
	c, s := strictOn(t, FactorUnit, CPU{})
	start := c.Now()
	c.Commit(start + 80*us)
	s.busy(10 * us)
	s.nvcsw++
	s.now += 300 * us // parked while a transfer is in flight
	if v := c.Access(); v != start+80*us {
		t.Errorf("virtual = start+%d µs, want start+80 µs (the transfer's end)", (v-start)/us)
	}
	if st := c.Stats(); st.FloorKeptNs != 70*us {
		t.Errorf("FloorKeptNs = %d, want %d", st.FloorKeptNs, 70*us)
	}
}

// A thread other than the bound one is on host time.
func TestStrictForeignThreadIsHostTime(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{})
	start := c.Now()
	s.tid = 8
	s.now += 300 * us
	if v := c.Access(); v != start+300*us {
		t.Fatalf("virtual = start+%d µs, want start+300 µs", (v-start)/us)
	}
}
