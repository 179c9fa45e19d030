package kernelref

import (
	"testing"
	"time"

	"cand/config"
)

// The Pi 3's costs are the Pi 2's scaled by the two profiles' time for the same
// work (sim/board.go: Cortex-A7, 4.97 cycles per anchor cycle at 900 MHz;
// Cortex-A53, 4.10 at 1200 MHz): × 0.61871, to the nanosecond, as
// docs/kernel-reference.md lists them.
func TestPi3Costs(t *testing.T) {
	got, err := ForBoard(config.SimBoardPi3)
	if err != nil {
		t.Fatal(err)
	}
	want := Costs{IRQ: 7845 * time.Nanosecond, ThreadWake: 19279 * time.Nanosecond, SyncSetup: 2846 * time.Nanosecond,
		InCS: 3366 * time.Nanosecond, SyncReturn: 2896 * time.Nanosecond}
	if got != want {
		t.Errorf("pi3 costs %+v, want %+v", got, want)
	}
	if p2, err := ForBoard(config.SimBoardPi2); err != nil || p2 != Pi2 {
		t.Errorf("pi2 costs %+v (%v), want Pi2 %+v", p2, err, Pi2)
	}
	for _, b := range []config.SimBoard{config.SimBoardPiZero, config.SimBoardPi1, config.SimBoardPi4} {
		if _, err := ForBoard(b); err == nil {
			t.Errorf("%s: costs without a measurement or a stated scaling", b)
		}
	}
}
