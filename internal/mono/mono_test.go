package mono

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Now must be the kernel's CLOCK_MONOTONIC: GPIO edge timestamps are compared with it.
func TestNowIsClockMonotonic(t *testing.T) {
	var ts unix.Timespec
	for i := 0; i < 5; i++ {
		a := Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		b := Now()
		k := ts.Nano()
		if k < a || k > b {
			if i == 4 {
				t.Fatalf("CLOCK_MONOTONIC %d not within [%d, %d]", k, a, b)
			}
			continue
		}
		return
	}
}

func TestNowAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Now() }); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func BenchmarkNow(b *testing.B) {
	for b.Loop() {
		_ = Now()
	}
}

// A Clock is read on the frame path: no allocation, whether set or nil.
func TestClockAllocatesNothing(t *testing.T) {
	for _, c := range []Clock{nil, Now} {
		if n := testing.AllocsPerRun(100, func() { _ = c.Now() }); n != 0 {
			t.Fatalf("allocs = %v", n)
		}
	}
}

// BenchmarkClock is a real Pi's clock read through Clock (a func value) against
// BenchmarkNow's direct call.
func BenchmarkClock(b *testing.B) {
	c := Clock(Now)
	for b.Loop() {
		_ = c.Now()
	}
}
