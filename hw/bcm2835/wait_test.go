package bcm2835

import (
	"testing"
	"time"
)

// The wait rule as a function of wait, poll budget and wake-up cost.
func TestSleepPart(t *testing.T) {
	const us = int64(time.Microsecond)
	for _, c := range []struct {
		name               string
		wait, budget, wake int64
		want               int64
	}{
		{"wait within the budget: polled", 20 * us, 20 * us, 5 * us, 0},
		{"short wait, no wake-up cost: polled", 19 * us, 20 * us, 0, 0},
		{"wait beyond the budget, below the wake-up: polled", 60 * us, 20 * us, 85 * us, 0},
		{"wait equal to the wake-up: polled", 85 * us, 20 * us, 85 * us, 0},
		{"long wait: sleeps all but the wake-up", 576 * us, 20 * us, 85 * us, 491 * us},
		{"wake-up below the budget: sleeps all but the wake-up", 60 * us, 20 * us, 10 * us, 50 * us},
		{"1 ns budget and wake-up (sleep for every wait)", 1872, 1, 1, 1871},
		{"no wait", 0, 20 * us, 5 * us, 0},
		{"wait already over", -3 * us, 20 * us, 5 * us, 0},
	} {
		if got := sleepPart(c.wait, c.budget, c.wake); got != c.want {
			t.Errorf("%s: sleepPart(%d, %d, %d) = %d, want %d", c.name, c.wait, c.budget, c.wake, got, c.want)
		}
	}
}

// fakeHost is a clock that only moves when its sleeper is called: each sleep takes
// what was asked plus the next of its overshoots.
type fakeHost struct {
	now   int64
	over  []int64
	asked []time.Duration
}

func (h *fakeHost) clock() int64 { return h.now }
func (h *fakeHost) sleep(d time.Duration) {
	h.asked = append(h.asked, d)
	h.now += int64(d) + h.over[0]
	h.over = h.over[1:]
}

// Calibration times wakeSamples sleeps of wakeProbe and takes the second largest
// overshoot plus wakeMargin: one outlier does not count.
func TestCalibrateWake(t *testing.T) {
	const us = int64(time.Microsecond)
	h := &fakeHost{over: []int64{62 * us, 70 * us, 2000 * us, 65 * us, 71 * us, 60 * us, 66 * us, 64 * us}}
	if got, want := calibrateWake(h.sleep, h.clock), 71*us+int64(wakeMargin); got != want {
		t.Errorf("calibrateWake = %d ns, want %d", got, want)
	}
	if len(h.asked) != wakeSamples {
		t.Fatalf("%d sleeps, want %d", len(h.asked), wakeSamples)
	}
	for _, d := range h.asked {
		if d != wakeProbe {
			t.Errorf("slept %v, want %v", d, wakeProbe)
		}
	}
	// A sleeper that returns early (EINTR) overshoots by nothing, not by less.
	h = &fakeHost{over: []int64{-5 * us, -5 * us, -5 * us, -5 * us, -5 * us, -5 * us, -5 * us, -5 * us}}
	if got := calibrateWake(h.sleep, h.clock); got != int64(wakeMargin) {
		t.Errorf("calibrateWake of early returns = %d ns, want the margin %d", got, int64(wakeMargin))
	}
}
