package sim

import (
	"slices"
	"testing"

	"cand/hw/bcm2835"
	"cand/internal/emulator"
	"cand/sim/clock"
)

// A gap made only of the simulator's own code (register reads back to back
// through the board's view, as the driver reaches SPI0) charges nothing at the
// board's factor beyond the driver's own part of it (the call a real board's
// read makes): the calibrated gap overhead is the rest of that code's host time.
// Each round calibrates and then times the board's view as the calibration does
// (the fastest of its runs); the test takes the median of the rounds' charges,
// so that the host's load is in neither figure. The medians spread by about
// ±1.5 ns; 3 ns is below the bus-stall gate's share of the gap where the host
// is slow (docs/boards.md).
func TestSimulatorOnlyGapChargesNothing(t *testing.T) {
	if emu := emulator.Name(); emu != "" {
		// Under qemu-user the register view's code and a real read cost what
		// the emulator's translation makes of them, tens of times a host's and
		// not in proportion: a few-ns bound means nothing there.
		t.Skipf("under a user-mode emulator (%s): its timings are not the host's", emu)
	}
	pi := piOf(t, "hardware:\n  sim_board: pi4\n  sim_force_turbo: true\ncontrollers:\n  - bitrate: 1000000\n")
	clk := pi.Clock()
	bindHere(t, clk)
	cpu := clk.CPU()
	// Factor 2, no overhead, no calibration: the charge beyond host time is the
	// gaps' host time.
	cpu.Factor, cpu.BoardKernelNs, cpu.GapOverheadNs = 2*clock.FactorUnit, 0, 0
	clk.SetCPU(cpu)
	var spi bcm2835.Regs = pi.SPI0()
	const rounds = 15
	var charged, gaps, overheads, bares [rounds]float64
	for i := range rounds {
		overheads[i] = measureGapOverhead()
		bares[i] = measureBareRead()
		spi.Load(bcm2835.SPICS) // the gap since the last run is no simulator-only one
		best := -1.0
		for range gapRuns {
			before := clk.Stats().ScaledNs
			readLoop(spi, gapAccesses)
			best = minOf(best, float64(clk.Stats().ScaledNs-before)/gapAccesses)
		}
		gaps[i], charged[i] = best, best-overheads[i]-bares[i]
	}
	m := rounds / 2
	for _, a := range []*[rounds]float64{&charged, &gaps, &overheads, &bares} {
		slices.Sort(a[:])
	}
	t.Logf("medians: charged beyond a real read %.2f ns, gap %.1f ns, overhead %.1f ns, real read %.2f ns", charged[m], gaps[m], overheads[m], bares[m])
	if charged[m] > 3 {
		t.Errorf("a gap of simulator code only (%.1f host ns) is charged %.1f ns beyond a real board's read (%.1f ns) as the driver's (overhead %.1f ns): want at most 3 ns (medians of %d paired runs)",
			gaps[m], charged[m], bares[m], overheads[m], rounds)
	}
}

func minOf(m, v float64) float64 {
	if m < 0 || v < m {
		return v
	}
	return m
}
