package clock

import (
	"math"
	"testing"
	"time"
)

// fakeKernel is a calibration kernel on the scripted host: each pass runs the
// CPU thread for per host ns, which the test changes as the host's speed.
type fakeKernel struct {
	s   *script
	per int64
	// preempt, steal and park are host time the next run spends on the
	// runqueue, off its vCPU and parked by the Go runtime.
	preempt, steal, park int64
}

func (k *fakeKernel) run(n int) {
	k.s.busy(int64(n) * k.per)
	k.s.now += k.preempt + k.steal + k.park
	k.s.rd += k.preempt
	if k.park > 0 {
		k.s.nvcsw++
	}
	k.preempt, k.steal, k.park = 0, 0, 0
}

const (
	testWarm, testRuns, testPasses = 10, 3, 20
	testBoardNs                    = 2400 // the board's ns per pass
)

func testKernel(k *fakeKernel) Kernel {
	return Kernel{Run: k.run, Warm: testWarm, Runs: testRuns, Passes: testPasses}
}

// calibratedOn returns a strict clock on the scripted host with a kernel of per
// host ns a pass and a board that takes testBoardNs, bound (the binding's bursts
// run) and its first access made and ended.
func calibratedOn(t *testing.T, per int64) (*Clock, *script, *fakeKernel) {
	t.Helper()
	s := &script{now: 1e9, tid: 7, state: 'R'}
	c := newScripted(s)
	k := &fakeKernel{s: s, per: per}
	c.SetKernel(testKernel(k))
	c.SetCPU(CPU{Factor: FactorUnit, BoardKernelNs: testBoardNs, Cores: 4})
	c.bind(7, -1, -1, -1)
	c.Access()
	c.Leave()
	return c, s, k
}

// burstWall is one burst's host time on the fake kernel: the untimed passes and
// the timed runs.
func burstWall(per int64) int64 { return (testWarm + testRuns*testPasses) * per }

// A calibration burst is the simulator's time: the board's clock does not
// advance over it, it is reported as removed (Calibration), and its running is
// not charged to the next gap.
func TestCalibrationBurstIsRemoved(t *testing.T) {
	s := &script{now: 1e9, tid: 7, state: 'R'}
	c := newScripted(s)
	k := &fakeKernel{s: s, per: 200}
	c.SetKernel(testKernel(k))
	c.SetCPU(CPU{Factor: FactorUnit, BoardKernelNs: testBoardNs, Cores: 4})
	before := c.Now()
	c.bind(7, -1, -1, -1)
	if v := c.Now(); v != before || s.now != 1e9+calibFill*burstWall(200) {
		t.Fatalf("after the binding's %d bursts (host %d ns): board at before%+d ns, want before", calibFill, s.now-1e9, v-before)
	}
	if f := c.CPU().Factor; f != testBoardNs*FactorUnit/200 {
		t.Errorf("factor %d, want %d: the board's %d ns a pass over the host's 200", f, testBoardNs*FactorUnit/200, testBoardNs)
	}
	f := c.CPU().Factor
	start := c.Access()
	c.Leave()
	s.busy(CalibEvery) // a looked-at gap: running, charged
	v := c.Access()
	if want := start + scaled(CalibEvery, f); v != want {
		t.Fatalf("virtual = start+%d ns after %d ns of running, want start+%d", v-start, CalibEvery, want-start)
	}
	if end := c.Leave(); end != v {
		t.Errorf("the access that ran a burst ended at its start%+d ns, want its start: the burst is removed", end-v)
	}
	st := c.Stats()
	if want := (Removal{Count: calibFill + 1, Ns: (calibFill + 1) * burstWall(200)}); st.Removed[Calibration] != want {
		t.Errorf("calibration removed %+v, want %+v", st.Removed[Calibration], want)
	}
	if st.RemovedNs() != st.Removed[Calibration].Ns {
		t.Errorf("removed %+v, want the calibration's only", st.Removed)
	}
	if st.CalibBursts != calibFill+1 {
		t.Errorf("%d bursts, want %d", st.CalibBursts, calibFill+1)
	}
	// The next gap's CPU time holds the burst's; only the driver's is charged.
	s.busy(100 * us)
	if got := c.Access(); got != v+scaled(100*us, f) {
		t.Errorf("virtual = +%d ns after 100 µs of running that followed a burst, want +%d: the burst's own running is not charged",
			got-v, scaled(100*us, f))
	}
}

// A burst the host's scheduler preempted and the hypervisor stole from: its
// wait is runqueue and the theft steal, each removed once, only its running is
// the calibration's, and the board's clock does not advance over the burst.
func TestPreemptedBurstIsRunqueue(t *testing.T) {
	c, s, k := calibratedOn(t, 200)
	f := c.CPU().Factor
	st0 := c.Stats()
	s.busy(CalibEvery)
	v := c.Access()
	k.preempt, k.steal = 300*us, 40*us
	if end := c.Leave(); end != v {
		t.Errorf("the access that ran a preempted burst ended at its start%+d ns, want its start", end-v)
	}
	st := c.Stats()
	if d := st.Removed[Runqueue].Ns - st0.Removed[Runqueue].Ns; d != 300*us {
		t.Errorf("runqueue removed +%d ns, want the burst's 300 µs", d)
	}
	if d := st.Removed[Steal].Ns - st0.Removed[Steal].Ns; d != 40*us {
		t.Errorf("steal removed +%d ns, want the burst's 40 µs", d)
	}
	if d := st.Removed[Calibration].Ns - st0.Removed[Calibration].Ns; d != burstWall(200) {
		t.Errorf("calibration removed +%d ns, want the burst's own %d", d, burstWall(200))
	}
	s.busy(100 * us)
	if got := c.Access(); got != v+scaled(100*us, f) {
		t.Errorf("virtual = +%d ns after 100 µs of running, want +%d: the burst's running and wait are neither charged nor removed again",
			got-v, scaled(100*us, f))
	}
	if d := c.Stats().RemovedNs() - st.RemovedNs(); d != 0 {
		t.Errorf("the next gap removed %d ns more, want nothing", d)
	}
}

// A Go runtime park in a burst is cand's: removed as a park, and the board's
// park charged, as in a gap.
func TestParkInABurstCostsTheBoardsPark(t *testing.T) {
	c, s, k := calibratedOn(t, 200)
	c.SetCPU(CPU{Factor: FactorUnit, BoardKernelNs: testBoardNs, Cores: 4, ParkHostNs: 10 * us})
	f := c.CPU().Factor
	st0 := c.Stats()
	s.busy(CalibEvery)
	v := c.Access()
	k.park = 2 * int64(time.Millisecond)
	if end, want := c.Leave(), v+scaled(10*us, f); end != want {
		t.Errorf("the access that ran a parked burst ended at its start%+d ns, want +%d: the board's park", end-v, want-v)
	}
	st := c.Stats()
	if st.Removed[Park].Ns-st0.Removed[Park].Ns != 2*int64(time.Millisecond) || st.Parks != st0.Parks+1 || st.ParkNs-st0.ParkNs != scaled(10*us, f) {
		t.Errorf("park removed +%d ns, %d parks charged %d ns: want 2 ms removed, one park of %d ns",
			st.Removed[Park].Ns-st0.Removed[Park].Ns, st.Parks-st0.Parks, st.ParkNs-st0.ParkNs, scaled(10*us, f))
	}
	if d := st.Removed[Calibration].Ns - st0.Removed[Calibration].Ns; d != burstWall(200) {
		t.Errorf("calibration removed +%d ns, want the burst's own %d", d, burstWall(200))
	}
}

// The factor follows a host whose speed changes, from a low rank of the recent
// bursts: one slow or fast burst does not move it, a host slower for the whole
// window does, and the same board work then costs the same board time.
func TestCalibrationFollowsTheHost(t *testing.T) {
	c, s, k := calibratedOn(t, 200)
	burst := func() {
		t.Helper()
		s.busy(CalibEvery)
		c.Access()
		before := c.Stats().CalibBursts
		c.Leave()
		if c.Stats().CalibBursts != before+1 {
			t.Fatal("no burst ran when one was due")
		}
	}
	fast := c.CPU().Factor
	// The same board work: 500 passes' worth of the driver's code at the host's
	// speed now.
	charge := func() int64 {
		t.Helper()
		v0 := c.Access()
		c.Leave()
		s.busy(500 * k.per / 10) // ten short gaps, no look
		for range 10 {
			c.Access()
			c.Leave()
			s.busy(500 * k.per / 10)
		}
		return c.Access() - v0
	}
	base := charge()

	k.per = 400 // the host at half its speed
	burst()
	if f := c.CPU().Factor; f != fast {
		t.Errorf("one slow burst moved the factor %d → %d", fast, f)
	}
	for range calibWindow {
		burst()
	}
	slow := c.CPU().Factor
	if slow != testBoardNs*FactorUnit/400 {
		t.Errorf("factor %d after a window of slow bursts, want %d", slow, testBoardNs*FactorUnit/400)
	}
	k.per = 100
	burst()
	if f := c.CPU().Factor; f != slow {
		t.Errorf("one fast burst moved the factor %d → %d", slow, f)
	}
	k.per = 400
	got := charge()
	if d := got - base; d < -base/1000 || d > base/1000 {
		t.Errorf("the same board work cost %d ns on the host at half its speed, %d at full speed: want the same within 0.1 %%", got, base)
	}
	// The estimate stayed at 200 until fewer than a window's 1/calibRank of its
	// bursts were fast: after 22 of the 26 bursts.
	st := c.Stats()
	if st.HostKernelNs.Min != 200 || st.HostKernelNs.Max != 400 || math.Abs(st.HostKernelNs.Median/200-1) > 0.016 {
		t.Errorf("host kernel ns over the run %+v, want 200 … ≈200 … 400", st.HostKernelNs)
	}
	if want := float64(testBoardNs*FactorUnit/400) / FactorUnit; st.Factor.Min != want || st.Factor.Max != float64(fast)/FactorUnit {
		t.Errorf("factor over the run %+v, want %g … %g", st.Factor, want, float64(fast)/FactorUnit)
	}
}

// A burst takes at most 1/calibShare of the CPU thread's time, however slowly
// the kernel runs (an emulator); a preempted one rebases the account.
func TestCalibrationRateIsBounded(t *testing.T) {
	c, s, k := calibratedOn(t, 10*us) // a burst of 700 µs
	n := c.Stats().CalibBursts
	s.busy(10 * CalibEvery)
	c.Access()
	c.Leave()
	if got := c.Stats().CalibBursts; got != n {
		t.Errorf("a burst %d ns after one of %d µs, want none before %d µs", 10*CalibEvery, burstWall(k.per)/us, calibShare*burstWall(k.per)/us)
	}
	s.busy(calibShare * burstWall(k.per))
	c.Access()
	c.Leave()
	if got := c.Stats().CalibBursts; got != n+1 {
		t.Errorf("%d bursts after %d µs, want one more", got-n, calibShare*burstWall(k.per)/us)
	}
}

// Only the bound CPU thread calibrates: another thread's access runs no burst
// and leaves it due.
func TestCalibrationOnlyOnTheCPUThread(t *testing.T) {
	c, s, _ := calibratedOn(t, 200)
	n := c.Stats().CalibBursts
	s.busy(CalibEvery)
	s.tid = 8
	c.Access()
	c.Leave()
	if got := c.Stats().CalibBursts; got != n {
		t.Fatalf("another thread ran %d bursts", got-n)
	}
	s.tid = 7
	c.Access()
	c.Leave()
	if got := c.Stats().CalibBursts; got != n+1 {
		t.Errorf("the CPU thread ran %d bursts, want the one due", got-n)
	}
}

// Without a kernel the factor stays as set, and no burst runs.
func TestNoKernelKeepsTheFactor(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{BoardKernelNs: testBoardNs})
	s.busy(CalibEvery)
	c.Access()
	c.Leave()
	if st := c.Stats(); c.CPU().Factor != 3*FactorUnit || st.CalibBursts != 0 || st.Removed[Calibration].Count != 0 {
		t.Errorf("factor %d, %d bursts, removed %+v: want 3×, none", c.CPU().Factor, st.CalibBursts, st.Removed[Calibration])
	}
}

// The spread's median is the histogram's, within a bucket; least and greatest exact.
func TestSpread(t *testing.T) {
	var h logHist
	if s := h.spread(1); s != (Spread{}) {
		t.Errorf("empty: %+v", s)
	}
	for _, v := range []int64{7, 1000, 1001, 1002, 5000, 123456} {
		h.add(v)
	}
	s := h.spread(1)
	if s.Min != 7 || s.Max != 123456 || math.Abs(s.Median/1001-1) > 0.016 {
		t.Errorf("spread %+v, want 7 … ≈1001 … 123456", s)
	}
}
