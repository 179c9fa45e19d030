package sim

import (
	"math"
	"testing"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// Every board the configuration names has a profile, whose SoC and core clock
// range are hw/bcm2835's for its revision code (one source for those facts).
func TestEveryBoardHasAProfile(t *testing.T) {
	for _, name := range []config.SimBoard{config.SimBoardPiZero, config.SimBoardPi1, config.SimBoardPi2, config.SimBoardPi3, config.SimBoardPi4} {
		p, err := ProfileOf(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		hw, err := bcm2835.FromRevision(p.Revision)
		if err != nil {
			t.Errorf("%s: revision %06x: %v", name, p.Revision, err)
			continue
		}
		b, err := newBoard(p, &config.Hardware{}, Calibration{})
		if err != nil {
			t.Fatal(err)
		}
		if b.SoC != hw.SoC || b.CoreMinHz != hw.CoreClockMinHz || b.CoreMaxHz != hw.CoreClockMaxHz || b.CorePinned {
			t.Errorf("%s: %v core %d..%d Hz, want %v %d..%d", name, b.SoC, b.CoreMinHz, b.CoreMaxHz, hw.SoC, hw.CoreClockMinHz, hw.CoreClockMaxHz)
		}
		if p.Cores < 1 || p.ARMMinHz == 0 || p.ARMMinHz > p.ARMMaxHz || p.PerClock < 1 {
			t.Errorf("%s: profile %+v is not a board", name, p)
		}
	}
	if _, err := ProfileOf("pi5"); err == nil {
		t.Error("ProfileOf(pi5) found a profile")
	}
}

// The factor is the board's kernel time over the host's, and grows as the ARM
// clock drops; core_clock_hz pins the core clock.
func TestBoardFactor(t *testing.T) {
	p, _ := ProfileOf(config.SimBoardPi3)
	b, err := newBoard(p, &config.Hardware{CoreClockHz: 250_000_000}, Calibration{KernelNs: 200, HandOffNs: 5000, GapOverheadNs: 30})
	if err != nil {
		t.Fatal(err)
	}
	if !b.CorePinned || b.CoreMinHz != 250_000_000 || b.CoreMaxHz != 250_000_000 {
		t.Errorf("pinned core %d..%d, want 250 MHz", b.CoreMinHz, b.CoreMaxHz)
	}
	want := anchorKernelCycles * p.PerClock / 1.2 / 200
	if f := b.Factor(1_200_000_000); math.Abs(f-want) > 1e-9 {
		t.Errorf("factor at 1.2 GHz = %g, want %g", f, want)
	}
	if f, f2 := b.Factor(1_200_000_000), b.Factor(600_000_000); math.Abs(f2-2*f) > 1e-9 {
		t.Errorf("factor at 600 MHz = %g, want twice %g", f2, f)
	}
	cpu := b.clockCPU(600_000_000, 250_000_000)
	if cpu.AccessNs != 248 || cpu.ParkHostNs != 5000 || cpu.WakeHostNs != 10000 || cpu.GapOverheadNs != 30 || cpu.Cores != 4 ||
		cpu.Factor != int64(b.Factor(600_000_000)*clock.FactorUnit) || cpu.BoardKernelNs != int64(b.KernelNs(600_000_000)) {
		t.Errorf("clock CPU %+v", cpu)
	}
	if f := (Board{}).Factor(1e9); f != 1 {
		t.Errorf("uncalibrated factor %g, want 1", f)
	}
}

// Calibration measures something on any host.
func TestCalibrate(t *testing.T) {
	c := Calibrate()
	if c.KernelNs <= 0 || c.HandOffNs <= 0 || c.GapOverheadNs < 0 {
		t.Errorf("calibration %+v", c)
	}
}

// The wake-up's cost is two hand-offs less the woken owner's own part of the
// second (its sleep and return, charged from its CPU time), never below one.
func TestWakeUpCostLeavesTheOwnersPart(t *testing.T) {
	p, _ := ProfileOf(config.SimBoardPi4)
	for _, c := range []struct {
		handOff, woken float64
		want           int64
	}{{5000, 0, 10000}, {5000, 1500, 8500}, {5000, 6000, 5000}} {
		b, err := newBoard(p, &config.Hardware{}, Calibration{KernelNs: 200, HandOffNs: c.handOff, WokenNs: c.woken})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.clockCPU(b.ARMMaxHz, b.CoreMaxHz).WakeHostNs; got != c.want {
			t.Errorf("hand-off %.0f ns, woken %.0f ns: wake-up %d host ns, want %d", c.handOff, c.woken, got, c.want)
		}
	}
}
