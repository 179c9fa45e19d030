package clock

import "testing"

// medianGaps runs n looked-at gaps of ns CPU time each, each with a system call,
// with an access between them.
func medianGaps(c *Clock, s *script, n int, ns int64) {
	for range n {
		s.busy(ns)
		s.sys++
		c.Access()
		c.Leave()
	}
}

// A system call far beyond the median gap's CPU time is the host's: all of it
// but the median is removed as a kernel outlier, and the median is charged at
// the board's factor.
func TestKernelOutlierIsRemoved(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{})
	s.sys = 1
	medianGaps(c, s, medianSamples, 30*us)
	const med = 32768 // the top of 30 µs's power-of-two bucket
	start := c.Now()
	s.busy(2400 * us)
	s.sys++ // the socket write that took it
	v := c.Access()
	if want := start + scaled(med, f); v != want {
		t.Errorf("virtual = start+%d ns after a 2.4 ms system call, want start+%d (the median gap, charged)", v-start, want-start)
	}
	st := c.Stats()
	if r := st.Removed[KernelOutlier]; r.Count != 1 || r.Ns != 2400*us-med {
		t.Errorf("kernel outliers removed = %+v, want 1 of %d ns", r, 2400*us-med)
	}
}

// A stretch of cand's own code without a system call is never an outlier: it is
// charged in full at the board's factor, however far beyond the median.
func TestSpinWithoutSyscallIsCharged(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{})
	s.sys = 1
	medianGaps(c, s, medianSamples, 30*us)
	start := c.Now()
	s.busy(2400 * us) // no system call
	v := c.Access()
	if want := start + scaled(2400*us, f); v != want {
		t.Errorf("virtual = start+%d ns after a 2.4 ms spin, want start+%d: charged", v-start, want-start)
	}
	if r := c.Stats().Removed[KernelOutlier]; r.Count != 0 {
		t.Errorf("kernel outliers removed = %+v, want none", r)
	}
}

// Up to OutlierTimes × the median a system call's CPU time is charged in full;
// so is everything before the median is known.
func TestNoOutlierBelowTheBounds(t *testing.T) {
	const f = 3 * FactorUnit
	for _, tc := range []struct {
		name      string
		gaps      int
		gap, long int64
	}{
		{"median unknown", medianSamples - 1, 30 * us, 2400 * us},
		{"at OutlierTimes", medianSamples, 30 * us, OutlierTimes * 32768},
	} {
		c, s := strictOn(t, f, CPU{})
		s.sys = 1
		medianGaps(c, s, tc.gaps, tc.gap)
		start := c.Now()
		s.busy(tc.long)
		s.sys++
		if v, want := c.Access(), start+scaled(tc.long, f); v != want {
			t.Errorf("%s: virtual = start+%d ns, want start+%d: charged", tc.name, v-start, want-start)
		}
		if r := c.Stats().Removed[KernelOutlier]; r.Count != 0 {
			t.Errorf("%s: kernel outliers removed = %+v, want none", tc.name, r)
		}
	}
}

func TestReadSyscalls(t *testing.T) {
	if got := sumSyscalls([]byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 3\nread_bytes: 0\n")); got != 13 {
		t.Errorf("syscr + syscw = %d, want 13", got)
	}
}
