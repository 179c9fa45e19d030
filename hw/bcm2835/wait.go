package bcm2835

import (
	"slices"
	"time"
)

// sleepPart is the wait rule of a transfer: of a wait of wait ns for bytes in flight,
// how much to sleep before polling the rest. Waits up to the poll budget are polled
// through. A longer wait sleeps only for the part a wake-up pays for: wait − wake,
// where wake is what a sleep overshoots by (its wake-up latency, margin included),
// so the thread is back polling before the bytes are done. When the wait is not
// longer than the wake-up itself, sleeping would only end late: it is polled.
func sleepPart(wait, budget, wake int64) int64 {
	if wait <= budget || wait <= wake {
		return 0
	}
	return wait - wake
}

// Wake-up calibration. The wake-up latency is measured once, when the SPI engine is
// built, on the host or board it runs on, because no one figure fits: a kernel
// thread's wake-up on a Pi 2 costs 19–25 µs
// (https://github.com/msperl/spi-bcm2835/issues/11), a nanosleep on the build
// machine's virtual machine overshoots by 60–100 µs (docs/BENCHMARKS.md, the SPI
// engine's "sleep" column). wakeSamples sleeps of wakeProbe are timed; the
// overshoot taken is the second largest (one preemption during start-up does not
// turn every later sleep into polling), plus wakeMargin for the spread of later
// wake-ups. Measured on the thread that builds the engine, before the owner thread
// may get real-time priority, it errs high: a high estimate polls longer, it never
// makes a transfer end late.
const (
	wakeSamples = 8
	wakeProbe   = 10 * time.Microsecond
	wakeMargin  = 5 * time.Microsecond
)

// calibrateWake measures the wake-up latency of sleep on the clock now: what a
// sleep of wakeProbe takes beyond wakeProbe, as above, plus wakeMargin.
func calibrateWake(sleep func(time.Duration), now func() int64) int64 {
	var over [wakeSamples]int64
	for i := range over {
		t0 := now()
		sleep(wakeProbe)
		over[i] = max(now()-t0-int64(wakeProbe), 0)
	}
	slices.Sort(over[:])
	return over[wakeSamples-2] + int64(wakeMargin)
}
