package sim

import (
	"slices"
	"testing"

	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// BenchmarkSimulatorOnlyGap measures what a gap made only of the simulator's
// own code (register reads back to back through the board's view, as the driver
// reaches SPI0) is charged at the board's factor beyond the driver's own part
// of it (the call a real board's read makes): with the gap overhead calibrated
// right, about nothing. Each iteration calibrates and then times the board's
// view as the calibration does (the fastest of its runs); the metrics are the
// medians over the iterations, so that the host's load is in neither figure.
// A timing, so a benchmark and not a pass/fail test: the figure moves with the
// host (under a user-mode emulator it means nothing: the translation prices the
// view and a real read out of proportion). The strict rule's side of it, that
// the calibrated overhead is not scaled, is TestGapOverheadIsNotScaled in
// sim/clock.
//
//	go test -run '^$' -bench SimulatorOnlyGap -benchtime 15x ./sim/
func BenchmarkSimulatorOnlyGap(b *testing.B) {
	pi := piOf(b, "hardware:\n  sim_board: pi4\n  sim_force_turbo: true\ncontrollers:\n  - bitrate: 1000000\n")
	clk := pi.Clock()
	bindHere(b, clk)
	cpu := clk.CPU()
	// Factor 2, no overhead, no calibration: the charge beyond host time is the
	// gaps' host time.
	cpu.Factor, cpu.BoardKernelNs, cpu.GapOverheadNs = 2*clock.FactorUnit, 0, 0
	clk.SetCPU(cpu)
	var spi bcm2835.Regs[bcm2835.SPIReg] = pi.SPI0()
	var charged, gaps, overheads, bares []float64
	for b.Loop() {
		overhead, bare := measureGapOverhead(), measureBareRead()
		spi.Load(bcm2835.SPICS) // the gap since the last run is no simulator-only one
		best := -1.0
		for range gapRuns {
			before := clk.Stats().ScaledNs
			readLoop(spi, gapAccesses)
			best = minOf(best, float64(clk.Stats().ScaledNs-before)/gapAccesses)
		}
		charged, gaps = append(charged, best-overhead-bare), append(gaps, best)
		overheads, bares = append(overheads, overhead), append(bares, bare)
	}
	b.ReportMetric(median(charged), "charged-ns/gap")
	b.ReportMetric(median(gaps), "gap-ns")
	b.ReportMetric(median(overheads), "overhead-ns")
	b.ReportMetric(median(bares), "real-read-ns")
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
