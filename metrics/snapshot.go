package metrics

import (
	"fmt"
	"math"
	"time"
)

// Snapshot summarises a Histogram for benchmark tables and logs.
type Snapshot struct {
	Count uint64
	Sum   time.Duration
	// Quantiles, each the largest duration its bucket can hold but never more than
	// Max: an upper estimate at most 9 % (one bucket) above the true value.
	P50, P90, P99, P999 time.Duration
	Max                 time.Duration // exact
}

// Mean returns Sum/Count (0 without observations).
func (s Snapshot) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

// String formats the snapshot as one table row, e.g.
// "n=1000 mean=12.1µs p50=11.9µs p90=14.1µs p99=20.3µs p99.9=31.2µs max=33µs".
func (s Snapshot) String() string {
	return fmt.Sprintf("n=%d mean=%v p50=%v p90=%v p99=%v p99.9=%v max=%v",
		s.Count, s.Mean(), s.P50, s.P90, s.P99, s.P999, s.Max)
}

// Snapshot reads the histogram once and computes its summary. It allocates
// nothing on the heap but copies the bucket counts (4 KiB) onto the stack, so call
// it from a reader, not the frame path.
func (h *Histogram) Snapshot() Snapshot {
	var v histValue
	h.load(&v)
	return Snapshot{
		Count: v.count,
		Sum:   time.Duration(v.sum),
		P50:   v.quantile(0.5),
		P90:   v.quantile(0.9),
		P99:   v.quantile(0.99),
		P999:  v.quantile(0.999),
		Max:   time.Duration(v.max),
	}
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) as the largest duration in the
// bucket that holds the ⌈q·n⌉-th smallest observation, capped at the exact
// maximum; so Quantile(1) is Max. It returns 0 without observations.
func (h *Histogram) Quantile(q float64) time.Duration {
	var v histValue
	h.load(&v)
	return v.quantile(q)
}

func (v *histValue) quantile(q float64) time.Duration {
	if v.count == 0 || math.IsNaN(q) {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(v.count)))
	rank = max(rank, 1)
	if rank >= v.count {
		return time.Duration(v.max)
	}
	seen := v.zero
	if seen >= rank {
		return 0
	}
	for i, c := range v.counts {
		seen += c
		if seen >= rank {
			// The largest whole nanosecond count in the bucket.
			ns := math.Floor(upperBound(i+minKey) * 1e9)
			if ns >= float64(v.max) {
				return time.Duration(v.max)
			}
			return time.Duration(ns)
		}
	}
	return time.Duration(v.max) // only if a racing writer moved counts
}
