package mono

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeCounter is a counter the test sets.
type fakeCounter struct{ c uint64 }

func (f *fakeCounter) Count() uint64 { return f.c }

func newClock(t *testing.T, f *fakeCounter, first Sample) *CounterClock {
	t.Helper()
	k, err := NewCounterClock(f, 1_000_000, first)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// nowAt reads the clock with the counter at c.
func nowAt(k *CounterClock, f *fakeCounter, c uint64) int64 {
	f.c = c
	return k.Now()
}

// Counter and CLOCK_MONOTONIC at the same rate: every reading is the middle of
// its microsecond, and a tie changes nothing.
func TestCounterClockSameRate(t *testing.T) {
	f := &fakeCounter{}
	mono := func(c uint64) int64 { return 5_000_000_000 + int64(c)*1000 }
	k := newClock(t, f, Sample{Mono: mono(1000), Count: 1000})
	for _, c := range []uint64{1000, 1001, 999_999, 1_000_999} {
		if got, want := nowAt(k, f, c), mono(c)+500; got != want {
			t.Fatalf("count %d: Now = %d, want %d", c, got, want)
		}
	}
	k.Tie(Sample{Mono: mono(1_001_000), Count: 1_001_000})
	if got := k.tie.Load().mult; got != 1000<<32 {
		t.Fatalf("rate after an exact tie = %d, want %d (1000 ns per count × 2^32)", got, uint64(1000)<<32)
	}
	if got, want := nowAt(k, f, 2_000_000), mono(2_000_000)+500; got != want {
		t.Fatalf("Now = %d, want %d", got, want)
	}
	if s := k.Stats(); s != (TieStats{Ties: 1, Restarts: 1, LastErrNs: 0}) {
		t.Fatalf("stats %+v", s)
	}
}

// CLOCK_MONOTONIC 200 ppm faster than the counter (NTP's frequency correction):
// the first tie measures the rate and steers out the 200 µs it found; from then
// on the conversion is within 1 ns of CLOCK_MONOTONIC at each tie, and no tie
// moves a reading.
func TestCounterClockSlewedMonotonic(t *testing.T) {
	f := &fakeCounter{}
	mono := func(c uint64) int64 { return 5_000_000_000 + int64(c)*1000 + int64(c)/5 }
	k := newClock(t, f, Sample{Mono: mono(0), Count: 0})

	// At the nominal rate until the first tie: 200 µs behind after a second.
	if got := nowAt(k, f, 1_000_000); got != 6_000_000_500 {
		t.Fatalf("before the first tie: Now = %d, want 6000000500", got)
	}
	k.Tie(Sample{Mono: mono(1_000_000), Count: 1_000_000})
	// rate floor(1.0002e9 × 2^32 / 1e6) + correction trunc(200000 × 2^32 / 1e6)
	if got := k.tie.Load().mult; got != 4295826289459+858993459 {
		t.Fatalf("mult = %d, want 4296685282918", got)
	}
	if got := nowAt(k, f, 1_000_000); got != 6_000_000_500 {
		t.Fatalf("the tie moved the reading at its own count: Now = %d, want 6000000500", got)
	}
	// 6e9 + floor(1e6 × 4296685282918 / 2^32) + 500
	if got := nowAt(k, f, 2_000_000); got != 7_000_399_999+500 {
		t.Fatalf("Now = %d, want 7000400499 (CLOCK_MONOTONIC 7000400000 − 1 ns + half a tick)", got)
	}
	k.Tie(Sample{Mono: mono(2_000_000), Count: 2_000_000})
	// rate over both seconds floor(2.0004e9 × 2^32 / 2e6) + trunc(1 × 2^32 / 1e6)
	if got := k.tie.Load().mult; got != 4295826289459+4294 {
		t.Fatalf("mult = %d, want 4295826293753", got)
	}
	if got := nowAt(k, f, 3_000_000); got != 8_000_599_999+500 {
		t.Fatalf("Now = %d, want 8000600499", got)
	}
	if s := k.Stats(); s.Ties != 2 || s.Restarts != 1 || s.LastErrNs != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// The rate comes from the last 8 samples: a sample's error never grows at later
// ties, and leaves the rate once the sample has left the window.
func TestCounterClockRateWindow(t *testing.T) {
	f := &fakeCounter{}
	mono := func(c uint64) int64 { return int64(c) * 1000 }
	k := newClock(t, f, Sample{Mono: mono(0) + 900, Count: 0}) // the first sample 900 ns late
	for i := uint64(1); i <= tieHistory+2; i++ {
		k.Tie(Sample{Mono: mono(i * 1_000_000), Count: i * 1_000_000})
		if e := k.Stats().LastErrNs; e < -900 || e > 900 {
			t.Fatalf("tie %d: error %d ns, more than the first sample's 900", i, e)
		}
	}
	// Exact again, but for the 1 ns the rounding down of each conversion leaves.
	if e := k.Stats().LastErrNs; e != 1 {
		t.Fatalf("error at the last tie = %d ns, want 1", e)
	}
	if got := k.tie.Load().mult; got != 1000<<32+4294 {
		t.Fatalf("mult = %d, want 1000 × 2^32 + trunc(1 × 2^32 / 1e6)", got)
	}
}

func TestCounterClockRestarts(t *testing.T) {
	f := &fakeCounter{}
	k := newClock(t, f, Sample{Mono: 1_000_000_000, Count: 0})
	// The same count again: ignored.
	k.Tie(Sample{Mono: 1_000_000_100, Count: 0})
	if s := k.Stats(); s.Ties != 0 || s.Restarts != 1 {
		t.Fatalf("a sample with the newest count was used: %+v", s)
	}
	// 5 ms off after a second: beyond slewing, the conversion restarts from it.
	k.Tie(Sample{Mono: 2_005_000_000, Count: 1_000_000})
	if s := k.Stats(); s.Restarts != 2 || s.LastErrNs != 5_000_000 {
		t.Fatalf("stats %+v", s)
	}
	if got := nowAt(k, f, 1_000_001); got != 2_005_001_500 {
		t.Fatalf("Now = %d, want 2005001500", got)
	}
	// The counter went back (a reset): restart.
	k.Tie(Sample{Mono: 3_000_000_000, Count: 10})
	if got := nowAt(k, f, 11); got != 3_000_001_500 || k.Stats().Restarts != 3 {
		t.Fatalf("Now = %d (want 3000001500), stats %+v", got, k.Stats())
	}
}

func TestCounterClockRate(t *testing.T) {
	if _, err := NewCounterClock(&fakeCounter{}, 0, Sample{}); err == nil {
		t.Fatal("a 0 Hz counter was accepted")
	}
	k, err := NewCounterClock(&fakeCounter{c: 3}, 19_200_000, Sample{Mono: 0, Count: 0})
	if err != nil {
		t.Fatal(err)
	}
	// 3 ticks of 52.083 ns, + half a tick (26 ns)
	if got := k.Now(); got != 156+26 {
		t.Fatalf("Now = %d, want 182", got)
	}
}

// Now is read on the frame path while another goroutine ties: no allocation, and
// (under -race) no data race.
func TestCounterClockConcurrent(t *testing.T) {
	f := &atomicCounter{}
	k, err := NewCounterClock(f, 1_000_000, Sample{Mono: 0, Count: 0})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = k.Now() }); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= 200; i++ {
			f.c.Store(i * 1000)
			k.Tie(Sample{Mono: int64(i) * 1_000_000, Count: i * 1000})
		}
	}()
	prev := int64(0)
	for range 10_000 {
		now := k.Now()
		if now < prev {
			t.Fatalf("Now went back: %d after %d", now, prev)
		}
		prev = now
	}
	wg.Wait()
}

type atomicCounter struct{ c atomic.Uint64 }

func (a *atomicCounter) Count() uint64 { return a.c.Load() }

// stepCounter is a 1 MHz counter on a fake time base: every read takes readNs,
// every ref read refNs.
type stepCounter struct {
	t             int64
	readNs, refNs int64
}

func (s *stepCounter) Count() uint64 { s.t += s.readNs; return uint64(s.t / 1000) }
func (s *stepCounter) ref() int64    { s.t += s.refNs; return s.t }

func TestSampleEdge(t *testing.T) {
	for _, tc := range []struct {
		name          string
		readNs, refNs int64
	}{
		{"fast reads", 50, 30},
		{"a Pi 1: register read 250 ns, clock_gettime a system call", 250, 800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &stepCounter{t: 123_456_789, readNs: tc.readNs, refNs: tc.refNs}
			got, err := SampleEdge(s, s.ref)
			if err != nil {
				t.Fatal(err)
			}
			start := int64(got.Count) * 1000
			if got.Mono < start || got.Mono > start+tc.readNs+tc.refNs {
				t.Fatalf("sample %+v: Mono is %d ns after its tick's start, want 0..%d", got, got.Mono-start, tc.readNs+tc.refNs)
			}
		})
	}
	t.Run("not counting", func(t *testing.T) {
		_, err := SampleEdge(&fakeCounter{c: 42}, func() int64 { return 0 })
		if !errors.Is(err, ErrNotCounting) || err.Error() != "the counter did not move in 100000 reads (it stayed at 42): it is not counting" {
			t.Fatalf("err = %v", err)
		}
	})
}

// BenchmarkCounterClock is the conversion alone, on a counter that costs nothing.
func BenchmarkCounterClock(b *testing.B) {
	k, err := NewCounterClock(&fakeCounter{c: 12345}, 1_000_000, Sample{Mono: 1, Count: 1})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = k.Now()
	}
}
