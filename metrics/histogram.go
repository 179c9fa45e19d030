package metrics

import (
	"sync/atomic"
	"time"
)

// Histogram records durations in nanoseconds into fixed schema-3 buckets.
//
// Observe is safe for concurrent use and never locks, allocates or makes a
// system call; it is meant for one writer (the owner thread) with any number of
// concurrent readers (the scrape, Snapshot, Quantile). A reader sees each counter
// atomically but not all of them at one instant, so a scrape that races a write
// may show the new bucket count with the old sum: harmless for rates.
//
// The zero value is ready to use.
type Histogram struct {
	zero   atomic.Uint64 // observations ≤ 0 ns
	sum    atomic.Uint64 // ns, of positive observations
	max    atomic.Int64  // ns, exact largest observation
	counts [numBuckets]atomic.Uint64
}

// Observe records one duration of ns nanoseconds. Negative durations (a clock
// going backwards between two stamps) are counted as 0.
func (h *Histogram) Observe(ns int64) {
	if ns <= 0 {
		h.zero.Add(1)
		return
	}
	h.counts[bucketKey(ns)-minKey].Add(1)
	h.sum.Add(uint64(ns))
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// ObserveDuration records d.
func (h *Histogram) ObserveDuration(d time.Duration) { h.Observe(int64(d)) }

// ObserveSpan records end-start, two CLOCK_MONOTONIC stamps in nanoseconds
// (mono.Now(), GPIO edge timestamps).
func (h *Histogram) ObserveSpan(start, end int64) { h.Observe(end - start) }

// Count returns the number of observations.
func (h *Histogram) Count() uint64 {
	n := h.zero.Load()
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Sum returns the total of all observations.
func (h *Histogram) Sum() time.Duration { return time.Duration(h.sum.Load()) }

// Max returns the largest observation, exactly (0 if there was none).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// load copies the histogram's counters into a plain value.
func (h *Histogram) load(v *histValue) {
	v.zero = h.zero.Load()
	v.count = v.zero
	for i := range h.counts {
		c := h.counts[i].Load()
		v.counts[i] = c
		v.count += c
	}
	v.sum = h.sum.Load()
	v.max = h.max.Load()
}

// histValue is one reading of a Histogram.
type histValue struct {
	zero, count, sum uint64
	max              int64
	counts           [numBuckets]uint64
}
