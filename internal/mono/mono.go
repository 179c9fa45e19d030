// Package mono reads CLOCK_MONOTONIC in nanoseconds without a system call.
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
