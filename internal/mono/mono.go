// Package mono reads CLOCK_MONOTONIC in nanoseconds without a system call, and
// declares the clock type cand's deadlines and latencies are read from.
//
// The Go runtime's nanotime is CLOCK_MONOTONIC on Linux, read through the vDSO, the
// same clock the GPIO character device stamps edge events with by default. Reading it
// here lets the frame path compare an edge's kernel timestamp with "now" without the
// syscall that unix.ClockGettime would make.
package mono

import (
	_ "unsafe" // for go:linkname
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns CLOCK_MONOTONIC in nanoseconds.
func Now() int64 { return nanotime() }

// Clock reads the board's time in nanoseconds: the clock the driver's deadlines
// (poll window, SPI poll budget and stall detection, TX timeout, bus-off restart,
// chip health) and its stage latencies are read from, and that INT edge events
// are stamped in. On a real Pi it is Now; on the virtual Pi it is the board's own
// clock (sim/clock), which the host's stalls are taken out of. The daemon's
// backend picks it; the zero Clock (nil) is Now.
type Clock func() int64

// Now reads c: c(), or Now() if c is nil.
func (c Clock) Now() int64 {
	if c == nil {
		return Now()
	}
	return c()
}
