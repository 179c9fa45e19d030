package clock

// The strict rule's kernel outliers: host time inside the CPU thread's system
// calls that is the host's, not cand's (docs/clock.md, "System calls").
//
// A gap between two register accesses in which the CPU thread did not sleep holds
// cand's code and at most a few of its system calls (a socket write, an event
// read, a zero-timeout epoll_wait), charged at the board's CPU factor or, those
// it meters, at the board's kernel cost (kernel.go). On a
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
//
// A gap in which the CPU thread slept until an INT edge woke it holds the same
// few system calls around its sleep (epoll_wait, the edge event's read), and
// the freshly woken thread is where the host's time shows most: the vCPU woken
// from its halt, the interrupts that wake it counted as the thread's running (a
// kernel without CONFIG_IRQ_TIME_ACCOUNTING). Such gaps are held to the median
// of their own kind (a woken gap's running is shorter than a looked-at running
// gap's, which is longer than LookGap by selection), by the same rule.
//
// OutlierTimes: a gap with more CPU time than this many times the median gap's
// is an outlier.
const OutlierTimes = 8

// outlier records a gap's CPU time on in h (the gaps of its kind: without a
// sleep, or woken by an edge) and returns the part of it that is the host's:
// beyond the median, when the gap is an outlier and a system call was made
// (syscalls). mu held.
func (c *Clock) outlier(h *pow2Hist, on int64, syscalls bool) int64 {
	med := h.median()
	h.add(on)
	if med == 0 || !syscalls || on <= OutlierTimes*med {
		return 0
	}
	return on - med
}
