package metrics

import (
	"math"
	"sync"
	"testing"
	"time"

	"cand/canstate"
)

func TestHistogramCountsSumMax(t *testing.T) {
	var h Histogram
	for _, ns := range []int64{1000, 1000, 1000, 1001, 10_000, 10_000, 0, -5, 20_000_000} {
		h.Observe(ns)
	}
	if got := h.Count(); got != 9 {
		t.Errorf("Count = %d, want 9", got)
	}
	if got := h.Sum(); got != 20_024_001 {
		t.Errorf("Sum = %d ns, want 20024001", got)
	}
	if got := h.Max(); got != 20*time.Millisecond {
		t.Errorf("Max = %v, want 20ms", got)
	}
	var v histValue
	h.load(&v)
	if v.zero != 2 {
		t.Errorf("zero bucket = %d, want 2 (0 and -5 ns)", v.zero)
	}
	want := map[int]uint64{-159: 4, -132: 2, -45: 1}
	for i, c := range v.counts {
		if c != want[i+minKey] {
			t.Errorf("bucket %d = %d, want %d", i+minKey, c, want[i+minKey])
		}
	}
}

func TestQuantile(t *testing.T) {
	var h Histogram
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("empty Quantile(0.5) = %v, want 0", got)
	}
	// 1 µs, 2 µs, …, 1000 µs.
	for i := int64(1); i <= 1000; i++ {
		h.Observe(i * 1000)
	}
	for _, tc := range []struct {
		q    float64
		true time.Duration
	}{
		{0, time.Microsecond}, {0.5, 500 * time.Microsecond}, {0.9, 900 * time.Microsecond},
		{0.99, 990 * time.Microsecond}, {0.999, 999 * time.Microsecond},
	} {
		got := h.Quantile(tc.q)
		// The estimate is the top of the true value's bucket: ≥ true, < true·2^(1/8).
		if got < tc.true || float64(got) >= float64(tc.true)*math.Exp2(1.0/8) {
			t.Errorf("Quantile(%v) = %v, want in [%v, %v·1.0905)", tc.q, got, tc.true, tc.true)
		}
	}
	if got := h.Quantile(1); got != time.Millisecond {
		t.Errorf("Quantile(1) = %v, want the exact max 1ms", got)
	}
	// 500 µs lies in (2^(-88/8), 2^(-87/8)] s ≈ (488.3, 532.5] µs; the estimate is
	// the largest whole ns count in it.
	if got, want := h.Quantile(0.5), time.Duration(math.Floor(math.Exp2(-87.0/8)*1e9)); got != want {
		t.Errorf("Quantile(0.5) = %d ns, want %d ns", got, want)
	}

	s := h.Snapshot()
	if s.Count != 1000 || s.Sum != 500500*time.Microsecond || s.Max != time.Millisecond ||
		s.P50 != h.Quantile(0.5) || s.P90 != h.Quantile(0.9) || s.P99 != h.Quantile(0.99) || s.P999 != h.Quantile(0.999) {
		t.Errorf("Snapshot = %+v, inconsistent with Count/Sum/Quantile", s)
	}
	if s.Mean() != 500500*time.Nanosecond {
		t.Errorf("Mean = %v, want 500.5µs", s.Mean())
	}
}

func TestQuantileZeroBucketAndHugeValues(t *testing.T) {
	var h Histogram
	h.Observe(0)
	h.Observe(0)
	h.Observe(math.MaxInt64)
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("Quantile(0.5) = %v, want 0", got)
	}
	if got := h.Quantile(0.9); got != math.MaxInt64 {
		t.Errorf("Quantile(0.9) = %v, want MaxInt64 ns", got)
	}
}

func TestZeroAllocations(t *testing.T) {
	r := New("test")
	c := r.AddController("can0", "vcan0")
	ns := int64(1)
	if n := testing.AllocsPerRun(1000, func() {
		c.RXEndToEnd.Observe(ns)
		ns = ns*3 + 7 // walk over many buckets, first hits included
		c.RXFrames.Add(1)
		c.RXBytes.Add(8)
		c.BusState.Set(int64(canstate.ErrorWarning))
		c.ObserveTransfer(1, CompletionSleep, ns&0xffff, 14)
	}); n != 0 {
		t.Errorf("frame path allocates %v times per run, want 0", n)
	}
}

// Readers run while the writer records; run with -race.
func TestConcurrentReadWhileRecording(t *testing.T) {
	r := New("test")
	c := r.AddController("can0", "vcan0")
	const n = 20000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range int64(n) {
			c.IntHandled.Observe(i)
			c.Interrupts.Inc()
		}
	})
	for range 2 {
		wg.Go(func() {
			for range 20 {
				if _, err := r.Gatherer().Gather(); err != nil {
					t.Error(err)
				}
				_ = c.IntHandled.Snapshot()
			}
		})
	}
	wg.Wait()
	if got := c.IntHandled.Count(); got != n {
		t.Errorf("Count = %d, want %d", got, n)
	}
	if got := c.IntHandled.Sum(); got != n*(n-1)/2 {
		t.Errorf("Sum = %d, want %d", got, n*(n-1)/2)
	}
}

func BenchmarkObserve(b *testing.B) {
	var h Histogram
	vals := [8]int64{900, 1500, 7_000, 14_400, 39_560, 161_800, 2_000_000, 40}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Observe(vals[i&7])
	}
}

func BenchmarkCounterAdd(b *testing.B) {
	var c Counter
	b.ReportAllocs()
	for b.Loop() {
		c.Add(1)
	}
}

func BenchmarkGather(b *testing.B) {
	r := New("bench")
	c := r.AddController("can0", "vcan0")
	for i := int64(1); i < 100_000; i += 7 {
		c.RXEndToEnd.Observe(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Gatherer().Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
