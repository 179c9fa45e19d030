package clock

import "math/bits"

// The strict rule's kernel outliers: host time inside the CPU thread's system
// calls that is the host's, not cand's (docs/clock.md, "System calls").
//
// A gap between two register accesses in which the CPU thread did not sleep holds
// cand's code and at most a few of its system calls (a socket write, an event
// read, a zero-timeout epoll_wait), all charged at the board's CPU factor. On a
// virtual machine one of those system calls occasionally runs for milliseconds of
// CPU time that is neither run delay nor steal (the hypervisor serving the vCPU
// while the guest counts it as running). Such a gap is an outlier when its CPU
// time is more than OutlierTimes the median gap's (a looked-at gap is longer than
// LookGap, so the median is at least 32 µs and the bound at least 256 µs), and
// the CPU thread made a read or write system call since the previous look (its
// syscr + syscw, /proc/self/task/TID/io): then its CPU time beyond the median is
// removed (category KernelOutlier) and the median is charged at the factor. A
// stretch of cand's own code without a system call is charged in full however
// long (TestBusyStretchIsCharged, TestSpinWithoutSyscallIsCharged).
const (
	// OutlierTimes: a gap with more CPU time than this many times the median
	// gap's is an outlier.
	OutlierTimes = 8
	// outlierSamples is how many gaps make the median before any is an outlier.
	outlierSamples = 64
)

// runHist is the CPU time of the gaps the strict rule looked at in which the CPU
// thread did not sleep, in power-of-two buckets (mu held).
type runHist struct {
	n      uint64
	bucket [64]uint64 // bucket k: CPU time in [2^k, 2^(k+1)) ns
}

func (h *runHist) add(ns int64) {
	h.n++
	h.bucket[bits.Len64(uint64(max(ns, 1)))-1]++
}

// median is an upper bound of the median: the top of the bucket that holds it
// (0 before outlierSamples gaps).
func (h *runHist) median() int64 {
	if h.n < outlierSamples {
		return 0
	}
	var seen uint64
	for k, n := range h.bucket {
		if seen += n; 2*seen >= h.n {
			return int64(1) << (k + 1)
		}
	}
	return 0
}

// outlier records a gap's CPU time on (the CPU thread did not sleep in it) and
// returns the part of it that is the host's: beyond the median, when the gap is
// an outlier and a system call was made (syscalls). mu held.
func (c *Clock) outlier(on int64, syscalls bool) int64 {
	med := c.runs.median()
	c.runs.add(on)
	if med == 0 || !syscalls || on <= OutlierTimes*med {
		return 0
	}
	return on - med
}
