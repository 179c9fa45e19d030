package clock

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkHostNoise measures what the host-noise rule is for: a locked thread
// that does nothing but read its own CPU clock (CLOCK_THREAD_CPUTIME_ID) and
// the wall clock, a few hundred nanoseconds of code between two reads. Every
// step whose CPU time exceeds LookGap is CPU time the host gave the thread that
// was not its code: "noise/s" is how many such steps a second, "noise-%" their
// share of the thread's CPU time, "max-µs" the longest. On an idle machine few;
// on a loaded virtual machine hundreds a second (docs/clock.md, "Host noise").
func BenchmarkHostNoise(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() int64 {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return ts.Nano()
	}
	var n, noise, longest int64
	start, c0 := time.Now(), cpu()
	first := c0
	for range b.N {
		for range 1000 {
			_ = time.Now()
			c1 := cpu()
			if d := c1 - c0; d > LookGap {
				n++
				noise += d
				longest = max(longest, d)
			}
			c0 = cpu()
		}
	}
	wall, used := time.Since(start).Seconds(), c0-first
	b.ReportMetric(float64(n)/wall, "noise/s")
	if used > 0 {
		b.ReportMetric(100*float64(noise)/float64(used), "noise-%")
	}
	b.ReportMetric(float64(longest)/1e3, "max-µs")
}
