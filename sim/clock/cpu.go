package clock

import "sync/atomic"

// FactorUnit is Factor 1: a board as fast as the host.
const FactorUnit = 1024

// CPU is the board's CPU as the strict rule charges it. The virtual Pi sets it
// from its board profile (sim/board.go) and changes Factor and AccessNs as the
// board's firmware scales its clocks.
type CPU struct {
	// Factor is how many board ns one host ns of the CPU thread's own running
	// time stands for, in FactorUnits (2048: the board takes twice as long).
	// With BoardKernelNs and a Kernel (calib.go) it is the factor only until the
	// first calibration burst.
	Factor int64
	// BoardKernelNs is the board's time for one pass of the calibration kernel
	// at its ARM clock now (0: Factor stays as set). With a Kernel the factor is
	// BoardKernelNs over the host's recent time for a pass (calib.go).
	BoardKernelNs int64
	// AccessNs is the board time of one register access.
	AccessNs int64
	// ParkHostNs is what a Go runtime park of a locked thread and its hand-back
	// take on this host, unloaded; on the board they take ParkHostNs × Factor.
	ParkHostNs int64
	// WakeHostNs is, likewise, the host's cost of the wake-up path from an
	// interrupt to the waiting thread running.
	WakeHostNs int64
	// Cores is how many cores the board has; on one, the process's other threads
	// share the CPU thread's core.
	Cores int
	// GapOverheadNs is the host time of the simulator's own code in every gap
	// between two register accesses (the clock reads, the register view's calls):
	// not the driver's, so not scaled.
	GapOverheadNs int64
}

// cpuState is the CPU, read by the CPU thread on every access.
type cpuState struct {
	factor, accessNs, parkHost, wakeHost, gapOverhead atomic.Int64
	cores                                             atomic.Int32
}

func (s *cpuState) init() {
	s.factor.Store(FactorUnit)
	s.cores.Store(4)
}

// SetCPU sets the board's CPU for the strict rule.
func (c *Clock) SetCPU(p CPU) {
	c.SetFactor(p.Factor)
	c.cal.board.Store(max(p.BoardKernelNs, 0))
	c.followHost()
	c.SetAccessNs(p.AccessNs)
	c.cpu.parkHost.Store(max(p.ParkHostNs, 0))
	c.cpu.wakeHost.Store(max(p.WakeHostNs, 0))
	c.cpu.cores.Store(int32(max(p.Cores, 1)))
	c.cpu.gapOverhead.Store(max(p.GapOverheadNs, 0))
}

// SetFactor changes the board's CPU factor (FactorUnits; below FactorUnit is
// taken as FactorUnit: the board is never faster than the host it runs on).
func (c *Clock) SetFactor(f int64) { c.cpu.factor.Store(max(f, FactorUnit)) }

// SetAccessNs changes the board's cost of a register access.
func (c *Clock) SetAccessNs(ns int64) { c.cpu.accessNs.Store(max(ns, 0)) }

// CPU returns the board's CPU as set now.
func (c *Clock) CPU() CPU {
	return CPU{Factor: c.cpu.factor.Load(), BoardKernelNs: c.cal.board.Load(), AccessNs: c.cpu.accessNs.Load(), ParkHostNs: c.cpu.parkHost.Load(),
		WakeHostNs: c.cpu.wakeHost.Load(), Cores: int(c.cpu.cores.Load()), GapOverheadNs: c.cpu.gapOverhead.Load()}
}

// scaled is ns host ns of running on a CPU of factor f, in board ns.
func scaled(ns, f int64) int64 { return ns * f / FactorUnit }
