package sim

import (
	"math"
	"runtime"
	"testing"
	"time"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/sim/clock"
	"cand/sim/soc"
)

// governorOn returns a pi3's governor on a clock bound to the calling (locked)
// thread.
func governorOn(t *testing.T, h *config.Hardware) (*governor, *clock.Clock) {
	t.Helper()
	p, _ := ProfileOf(config.SimBoardPi3)
	b, err := newBoard(p, h, Calibration{KernelNs: 200, HandOffNs: 5000})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.New()
	if err := clk.BindCPU(); err != nil {
		t.Skipf("cannot bind the clock: %v", err)
	}
	t.Cleanup(clk.UnbindCPU)
	return newGovernor(b, h.HoldCPUClock, clk, soc.NewOn(b.CoreMaxHz, b.SoC, clk)), clk
}

// The board starts at its lowest clocks; a busy sampling period raises them to
// the highest, held for sampling_down_factor periods; an idle one lowers them.
func TestGovernorOndemand(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, clk := governorOn(t, &config.Hardware{})
	if g.armHz.Load() != 600e6 || g.coreHz.Load() != 250e6 || g.soc.CoreClockHz() != 250e6 {
		t.Fatalf("start at %d/%d Hz, want the minimum 600/250 MHz", g.armHz.Load(), g.coreHz.Load())
	}
	f0 := clk.CPU().Factor
	now := int64(time.Second)
	g.step(now) // first sample: starts the periods
	g.step(now + samplingRate - 1)
	if g.turbo {
		t.Fatal("turbo before a period ended")
	}
	now += samplingRate // a busy period: no idle time
	g.step(now)
	if !g.turbo || g.armHz.Load() != 1200e6 || g.soc.CoreClockHz() != 400e6 || clk.CPU().Factor*2 > f0+2 {
		t.Fatalf("after a busy period: turbo %v at %d/%d Hz, factor %d (was %d); want 1.2 GHz/400 MHz, half the factor",
			g.turbo, g.armHz.Load(), g.soc.CoreClockHz(), clk.CPU().Factor, f0)
	}
	if g.next != now+samplingRate*samplingDownFactor {
		t.Errorf("next sample in %v, want %v", time.Duration(g.next-now), time.Duration(samplingRate*samplingDownFactor))
	}
}

// force_turbo holds the highest clocks; core_clock_hz holds the core clock.
func TestGovernorPinned(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, _ := governorOn(t, &config.Hardware{SimForceTurbo: true})
	if !g.turbo || g.armHz.Load() != 1200e6 || g.coreHz.Load() != 400e6 {
		t.Errorf("force_turbo: %d/%d Hz, want 1.2 GHz/400 MHz", g.armHz.Load(), g.coreHz.Load())
	}
	g, _ = governorOn(t, &config.Hardware{CoreClockHz: 300_000_000})
	g.step(1)
	g.step(1 + samplingRate)
	if !g.turbo || g.armHz.Load() != 1200e6 || g.soc.CoreClockHz() != 300e6 {
		t.Errorf("core pinned at 300 MHz, busy: %d/%d Hz, want 1.2 GHz/300 MHz", g.armHz.Load(), g.soc.CoreClockHz())
	}
}

// hardware.hold_cpu_clock holds the ARM clock at its maximum from the start, the
// core clock following it as the firmware raises it (or pinned by core_clock_hz),
// and no sample is taken that could lower them.
func TestGovernorHeld(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, clk := governorOn(t, &config.Hardware{HoldCPUClock: true})
	if !g.turbo || g.armHz.Load() != 1200e6 || g.coreHz.Load() != 400e6 || g.soc.CoreClockHz() != 400e6 {
		t.Fatalf("held at start: %d/%d Hz, want 1.2 GHz/400 MHz", g.armHz.Load(), g.coreHz.Load())
	}
	f0 := clk.CPU().Factor
	for now := int64(1); now < 200*samplingRate; now += samplingRate {
		g.step(now)
	}
	if g.next != math.MaxInt64 || g.armHz.Load() != 1200e6 || clk.CPU().Factor != f0 {
		t.Errorf("held, after 200 sampling periods: ARM %d Hz, factor %d (was %d); want 1.2 GHz and the same factor", g.armHz.Load(), clk.CPU().Factor, f0)
	}
	g, _ = governorOn(t, &config.Hardware{HoldCPUClock: true, CoreClockHz: 250_000_000})
	if g.armHz.Load() != 1200e6 || g.soc.CoreClockHz() != 250e6 {
		t.Errorf("held with the core pinned at 250 MHz: %d/%d Hz, want 1.2 GHz/250 MHz", g.armHz.Load(), g.soc.CoreClockHz())
	}
}

// The virtual Pi built from a configuration with hold_cpu_clock plays its board
// at the maximum clocks from the start; without it, at the idle ones.
func TestPiHoldsCPUClock(t *testing.T) {
	for _, c := range []struct {
		hardware      string
		armHz, coreHz uint32
	}{
		{"{sim_board: pi4, hold_cpu_clock: true}", 1500e6, 500e6},
		{"{sim_board: pi4}", 600e6, 200e6},
	} {
		pi := piOf(t, "hardware: "+c.hardware+"\ncontrollers:\n  - bitrate: 500000\n")
		if arm, core := pi.Clocks(); arm != c.armHz || core != c.coreHz {
			t.Errorf("hardware: %s: clocks %d/%d Hz at start, want %d/%d", c.hardware, arm, core, c.armHz, c.coreHz)
		}
	}
}

// The board's register view charges the board's access time on every access
// (strict rule), and the INT line's low spans are timed in the board's time.
func TestPiOnTheStrictRule(t *testing.T) {
	pi := piOf(t, "hardware: {sim_board: pi4, sim_cpu: strict}\ncontrollers:\n  - bitrate: 500000\n")
	if pi.Board().Name != config.SimBoardPi4 || pi.SoC() != bcm2835.SoCBCM2711 || pi.Rule() != config.SimCPUStrict {
		t.Fatalf("board %s soc %v rule %s, want pi4 BCM2711 strict", pi.Board().Name, pi.SoC(), pi.Rule())
	}
	if lo, hi := pi.CoreClockRange(); lo != 200e6 || hi != 500e6 {
		t.Errorf("core clock range %d..%d, want 200..500 MHz", lo, hi)
	}
	if f := pi.Factor(); f < 1 {
		t.Errorf("factor %g below 1", f)
	}
	bindHere(t, pi.Clock())
	r := pi.SPI0()
	cost := pi.Clock().CPU().AccessNs
	if cost != pi.Board().AccessNs(200_000_000) {
		t.Fatalf("access cost %d ns, want the board's at its idle 200 MHz core clock, %d", cost, pi.Board().AccessNs(200_000_000))
	}
	// An access far dearer than the model: the board's time is the board's cost.
	pi.Clock().SetAccessNs(10_000)
	// Reach, not Now: the gap before the first access began before t0, and its
	// runqueue time (the binding's calibration uses up the thread's slice) is
	// removed at that access.
	t0 := pi.Clock().Reach()
	for range 100 {
		r.Load(bcm2835.SPICS)
	}
	if el := pi.Clock().Now() - t0; el < 100*10_000 {
		t.Errorf("100 accesses of 10 µs took %d ns of board time, want at least 1 ms", el)
	}
	low := pi.INTLow(0)
	pi.intLow[0].edge(false, 1000)
	pi.intLow[0].edge(true, 5000)
	if s := low.Snapshot(); s.Count != 1 || s.Max != 4000 {
		t.Errorf("INT low spans %+v, want one of 4 µs", s)
	}
}

// piOf builds the virtual Pi of the configuration text yaml, closed at the end of
// the test.
func piOf(t testing.TB, yaml string) *Pi {
	t.Helper()
	cfg, err := config.Parse("x.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	pi, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pi.Close)
	return pi
}

// bindHere makes the test's thread clk's CPU until the test ends, or skips the
// test if the clock cannot bind (no /proc).
func bindHere(t testing.TB, clk *clock.Clock) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := clk.BindCPU(); err != nil {
		t.Skipf("cannot bind the clock: %v", err)
	}
	t.Cleanup(clk.UnbindCPU)
}
