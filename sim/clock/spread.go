package clock

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// Spread is the least, the median and the greatest of a figure over a run (all 0:
// never recorded). The median is that of a histogram with 32 buckets per
// doubling: within 1.6 %.
type Spread struct {
	Min, Median, Max float64
}

// logHist records positive values, written by one thread and read by any, with
// no lock: the exact least and greatest, and 32 buckets per doubling.
type logHist struct {
	n        atomic.Uint64
	min, max atomic.Int64
	bucket   [histOctaves * histSub]atomic.Uint64
}

const (
	histSub     = 32 // buckets per doubling
	histOctaves = 48
)

// histIndex is v's bucket: below histSub exactly, above it by its leading bit and
// the five bits after it.
func histIndex(v int64) int {
	if v < histSub {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 1 // ≥ 5
	i := e*histSub + int(v>>(e-5))&(histSub-1)
	return min(i, histOctaves*histSub-1)
}

// histMid is the middle of bucket i.
func histMid(i int) float64 {
	if i < histSub {
		return float64(i)
	}
	e, m := i/histSub, i%histSub
	lo := float64(int64(histSub+m) << (e - 5))
	return lo + math.Ldexp(1, e-5)/2
}

func (h *logHist) add(v int64) {
	if h.n.Add(1) == 1 {
		h.min.Store(v)
		h.max.Store(v)
	}
	if v < h.min.Load() {
		h.min.Store(v)
	}
	if v > h.max.Load() {
		h.max.Store(v)
	}
	h.bucket[histIndex(v)].Add(1)
}

// spread is the histogram's spread, each value divided by unit.
func (h *logHist) spread(unit float64) Spread {
	n := h.n.Load()
	if n == 0 {
		return Spread{}
	}
	s := Spread{Min: float64(h.min.Load()) / unit, Max: float64(h.max.Load()) / unit}
	var seen uint64
	for i := range h.bucket {
		if seen += h.bucket[i].Load(); 2*seen >= n {
			s.Median = clampF(histMid(i)/unit, s.Min, s.Max)
			break
		}
	}
	return s
}

func clampF(v, lo, hi float64) float64 { return math.Max(lo, math.Min(v, hi)) }
