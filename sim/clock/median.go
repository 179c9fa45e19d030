package clock

import (
	"math/bits"
	"sync/atomic"
)

// medianSamples is how many values make a median before a rule uses it (the
// kernel-outlier rule, outlier.go; the host-noise rule, noise.go).
const medianSamples = 64

// pow2Hist holds values (ns) in power-of-two buckets, for an upper bound of
// their median. The zero value is empty. Safe for one writer and concurrent
// readers.
type pow2Hist struct {
	n      atomic.Uint64
	bucket [40]atomic.Uint32 // bucket k: [2^k, 2^(k+1)) ns; the last holds the rest too
}

// add records ns (below 1: in the first bucket).
func (h *pow2Hist) add(ns int64) {
	h.n.Add(1)
	h.bucket[min(bits.Len64(uint64(max(ns, 1)))-1, len(h.bucket)-1)].Add(1)
}

// median is an upper bound of the median: the top of the bucket that holds it
// (0 before medianSamples values).
func (h *pow2Hist) median() int64 { return h.medianOf(medianSamples) }

// medianOf is median once h holds at least min values (0 before).
func (h *pow2Hist) medianOf(min uint64) int64 {
	n := h.n.Load()
	if n < min || n == 0 {
		return 0
	}
	var seen uint64
	for k := range h.bucket {
		if seen += uint64(h.bucket[k].Load()); 2*seen >= n {
			return int64(1) << (k + 1)
		}
	}
	return 0
}

// reset empties h (its one writer, or nobody running).
func (h *pow2Hist) reset() {
	h.n.Store(0)
	for k := range h.bucket {
		h.bucket[k].Store(0)
	}
}
