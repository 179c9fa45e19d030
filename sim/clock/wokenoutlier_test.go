package clock

import "testing"

// waitForEdge has the CPU thread wait 100 µs for the hardware (seen waiting by
// the bus thread) until an INT edge, which the host takes 500 µs to wake it
// from.
func waitForEdge(t *testing.T, c *Clock, s *script) {
	t.Helper()
	s.now += 100 * us
	s.state = 'S'
	if c.CPURunning() {
		t.Fatal("CPURunning true while it waits")
	}
	c.BusTime(s.now)
	c.Edge(s.now)
	s.nvcsw++
	s.now += 500 * us // the host takes 500 µs to run it
}

// wokenGap is one gap in which the CPU thread waits for an edge (waitForEdge)
// and runs ns of CPU time (with a read system call if syscall); it returns the
// board's time at the access that ends it, and that time less the board's time
// when the gap began.
func wokenGap(t *testing.T, c *Clock, s *script, ns int64, syscall bool) (v, d int64) {
	t.Helper()
	start := c.Now()
	waitForEdge(t, c, s)
	s.busy(ns)
	if syscall {
		s.sys++
	}
	v = c.Access()
	c.Leave()
	s.state = 'R'
	return v, v - start
}

// A gap woken by an edge whose running is far beyond the median of such gaps,
// with a system call, is the host's beyond the median (the woken thread's vCPU
// and interrupts counted as its running): removed as a kernel outlier, the
// median charged at the factor, after the wait.
func TestWokenGapOutlierIsRemoved(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{})
	s.sys = 1
	for range medianSamples {
		if _, d := wokenGap(t, c, s, 10*us, true); d != 100*us+scaled(10*us, f) {
			t.Fatalf("a woken gap of 10 µs running took %d ns of the board's, want the 100 µs wait and 30 µs", d)
		}
	}
	const med = 16384 // the top of 10 µs's power-of-two bucket
	if _, d := wokenGap(t, c, s, 600*us, true); d != 100*us+scaled(med, f) {
		t.Errorf("a woken gap of 600 µs running took %d ns of the board's, want the 100 µs wait and the median at the factor, %d", d, 100*us+scaled(med, f))
	}
	if r := c.Stats().Removed[KernelOutlier]; r.Count != 1 || r.Ns != 600*us-med {
		t.Errorf("kernel outliers removed = %+v, want 1 of %d ns", r, 600*us-med)
	}
}

// Without a system call a woken gap's running is cand's code: charged in full.
// And a woken gap's median is its own: a gap without a sleep is not held to it.
func TestWokenGapMedianIsItsOwn(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{})
	s.sys = 1
	for range medianSamples {
		wokenGap(t, c, s, 10*us, true)
	}
	if _, d := wokenGap(t, c, s, 600*us, false); d != 100*us+scaled(600*us, f) {
		t.Errorf("a woken gap of 600 µs running without a system call took %d ns of the board's, want all of it charged, %d", d, 100*us+scaled(600*us, f))
	}
	start := c.Now()
	s.busy(600 * us)
	s.sys++
	if v, want := c.Access(), start+scaled(600*us, f); v != want {
		t.Errorf("a gap without a sleep of 600 µs with a system call: virtual = start+%d ns, want start+%d: no median of its own kind yet, charged", v-start, want-start)
	}
	if r := c.Stats().Removed[KernelOutlier]; r.Count != 0 {
		t.Errorf("kernel outliers removed = %+v, want none", r)
	}
}
