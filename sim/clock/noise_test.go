package clock

import (
	"testing"
	"time"
)

var (
	siteA = Site(1, 0x34, false) // e.g. a GPIO level read
	siteB = Site(2, 0x04, false) // e.g. an SPI FIFO read
	siteC = Site(2, 0x00, true)
)

// noiseGaps runs n gaps of ns running from site A to site B and back.
func noiseGaps(c *Clock, s *script, n int, ns int64) {
	for range n {
		c.AccessAt(siteA)
		c.Leave()
		s.busy(ns)
		c.AccessAt(siteB)
		c.Leave()
		s.busy(ns)
	}
}

// A stretch between the same two accesses that runs far beyond its median is
// clipped to NoiseTimes × the median (at least NoiseFloor), the rest removed
// as the host's: 1 µs gaps make a median of at most 1,024 ns, so of 100 µs of
// running 8,192 ns are charged.
func TestHostNoiseClippedAtItsKey(t *testing.T) {
	const f = 3 * FactorUnit
	for _, long := range []int64{15 * us, 100 * us} { // a short gap and a looked-at one
		c, s := strictOn(t, f, CPU{})
		c.SetNoise(true)
		noiseGaps(c, s, medianSamples, 1*us)
		c.AccessAt(siteA)
		v0 := c.Leave()
		s.busy(long)
		const bound = NoiseTimes * 1024
		if v, want := c.AccessAt(siteB), v0+scaled(bound, f); v != want {
			t.Errorf("%d ns: virtual = +%d ns after the stretch, want +%d (%d ns charged at the factor)", long, v-v0, want-v0, bound)
		}
		if r := c.Stats().Removed[HostNoise]; r.Count != 1 || r.Ns != long-bound {
			t.Errorf("%d ns: host noise removed = %+v, want 1 of %d ns", long, r, long-bound)
		}
	}
}

// What the rule does not touch: running within its key's bound, a key and a
// pool with too few gaps for a median (three gaps each way: six in the pool),
// an unnamed access, the rule off. Each is charged in full.
func TestHostNoiseChargedInFull(t *testing.T) {
	const f = 3 * FactorUnit
	for _, tc := range []struct {
		name    string
		on      bool
		warm    int
		to      uint32
		stretch int64
	}{
		{"within NoiseFloor", true, medianSamples, siteB, NoiseFloor},
		{"within NoiseTimes", true, medianSamples, siteB, NoiseTimes * 1024},
		{"median unknown", true, 3, siteB, 100 * us},
		{"unnamed access", true, medianSamples, 0, 100 * us},
		{"rule off", false, medianSamples, siteB, 100 * us},
	} {
		c, s := strictOn(t, f, CPU{})
		c.SetNoise(tc.on)
		noiseGaps(c, s, tc.warm, 1*us)
		c.AccessAt(siteA)
		v0 := c.Leave()
		s.busy(tc.stretch)
		if v, want := c.AccessAt(tc.to), v0+scaled(tc.stretch, f); v != want {
			t.Errorf("%s: virtual = +%d ns after %d ns of running, want +%d: charged in full", tc.name, v-v0, tc.stretch, want-v0)
		}
		if r := c.Stats().Removed[HostNoise]; r.Count != 0 {
			t.Errorf("%s: host noise removed = %+v, want none", tc.name, r)
		}
	}
}

// A key with fewer than noiseSamples gaps is held to the pool's bound: a
// stretch first seen (A to C), after gaps of 1 µs elsewhere, is charged
// NoiseTimes × 1,024 ns of its 100 µs; once it has its own median of 16 µs
// (eight gaps), that median bounds it.
func TestHostNoiseNewKeyHeldToThePool(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{})
	c.SetNoise(true)
	noiseGaps(c, s, noiseSamples, 1*us)
	stretch := func(ns int64) int64 {
		c.AccessAt(siteA)
		v0 := c.Leave()
		s.busy(ns)
		return c.AccessAt(siteC) - v0
	}
	const bound = NoiseTimes * 1024
	if d, want := stretch(100*us), scaled(bound, f); d != want {
		t.Errorf("a new stretch of 100 µs: virtual +%d ns, want +%d (%d ns charged at the factor)", d, want, bound)
	}
	if r := c.Stats().Removed[HostNoise]; r.Count != 1 || r.Ns != 100*us-bound {
		t.Errorf("host noise removed = %+v, want 1 of %d ns", r, 100*us-bound)
	}
	for range noiseSamples - 1 {
		stretch(16 * us)
	}
	// Its own median (16,384 ns): 100 µs is within 8 × that.
	if d, want := stretch(100*us), scaled(100*us, f); d != want {
		t.Errorf("100 µs of a stretch whose median is 16 µs: virtual +%d ns, want +%d (charged in full)", d, want)
	}
}

// The same two registers with a system call between them are another key: a
// loop turn's return to the register a poll loop reads is not held to the poll
// loop's median.
func TestHostNoiseKeyedBySystemCalls(t *testing.T) {
	c := New()
	c.SetNoise(true)
	c.noiseKey(siteA)
	plain := c.noiseKey(siteB)
	c.noiseKey(siteA)
	c.noise.calls.Add(1)
	call := c.noiseKey(siteB)
	c.noiseKey(siteA)
	c.acct.reads.Add(1)
	read := c.noiseKey(siteB)
	if plain == 0 || plain == call || plain == read || call == read {
		t.Errorf("keys A→B plain %d, with a system call %d, with a clock read %d: want three distinct non-zero keys", plain, call, read)
	}
	c.noiseKey(siteA)
	c.acct.reads.Store(0)
	if again := c.noiseKey(siteB); again != plain {
		t.Errorf("key A→B again = %d, want %d", again, plain)
	}
}

// A Go runtime park in a stretch whose median is known has its running held to
// the stretch's bound, and not recorded: 300 µs of CPU in a park between A and
// B (median 1 µs) are 8,192 ns at the factor (24.6 board µs), so the park
// costs the board's park (20 µs at factor 3), not 900 µs.
func TestHostNoiseHoldsAParkToItsKey(t *testing.T) {
	const f = 3 * FactorUnit
	c, s := strictOn(t, f, CPU{ParkHostNs: 20 * us})
	c.SetNoise(true)
	noiseGaps(c, s, medianSamples, 1*us)
	c.AccessAt(siteA)
	v0 := c.Leave()
	s.busy(300 * us)
	s.nvcsw++
	s.now += 2 * int64(time.Millisecond) // parked in a futex
	const bound = NoiseTimes * 1024
	if v, want := c.AccessAt(siteB), v0+60*us; v != want {
		t.Errorf("virtual = +%d ns after the park, want +%d", v-v0, want-v0)
	}
	if r := c.Stats().Removed[HostNoise]; r.Count != 1 || r.Ns != 300*us-bound {
		t.Errorf("host noise removed = %+v, want 1 of %d ns", r, 300*us-bound)
	}
	for k := range c.noise.keys {
		if n := c.noise.keys[k].n.Load(); n > medianSamples {
			t.Errorf("key %d holds %d gaps, want at most %d: the park was recorded", k, n, medianSamples)
		}
	}
}

// Stretches says what each stretch of code ran: 64 gaps of 1 µs from A to B.
func TestHostNoiseStretches(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{})
	c.SetNoise(true)
	noiseGaps(c, s, medianSamples, 1*us)
	var ab *Stretch
	st := c.Stretches()
	for i := range st {
		if st[i].From == siteA && st[i].To == siteB {
			ab = &st[i]
		}
	}
	if ab == nil || ab.Gaps != medianSamples || ab.RunNs != medianSamples*us || ab.Calls != 0 || ab.Reads != 0 || ab.NoiseNs != 0 {
		t.Fatalf("stretch A→B = %+v, want %d gaps of %d ns in all, no calls, reads or noise", ab, medianSamples, medianSamples*us)
	}
}
