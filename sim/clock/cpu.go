package clock

import (
	"sync/atomic"

	"cand/internal/kernelop"
)

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
	// take on this host, unloaded; on the board they take ParkHostNs × Factor,
	// unless ParkBoardNs is set.
	ParkHostNs int64
	// WakeHostNs is, likewise, the host's cost of the wake-up path from an
	// interrupt to the waiting thread running, × Factor unless WakeBoardNs is set.
	WakeHostNs int64
	// ParkBoardNs, when set, is the board's own cost of a park and hand-back,
	// in place of ParkHostNs × Factor.
	ParkBoardNs int64
	// WakeBoardNs, when set, is the board's own cost of the wake-up path in
	// place of WakeHostNs × Factor, the woken thread's own sleep and return
	// included: WokenHostNs of the woken gap's running is taken out of it, not
	// charged at the factor.
	WakeBoardNs, WokenHostNs int64
	// KernelFactor is, per kind of metered system call (Enter, Exit), how many
	// board ns one host ns inside such a call stands for, in FactorUnits (below
	// FactorUnit too: a host can be slower at kernel work than the board). 0:
	// the call is not metered, its time is running at Factor.
	KernelFactor [kernelop.NumOps]int64
	// KernelFixedNs is, per kind of metered system call, its board cost when
	// that does not follow its host time (0: KernelFactor applies). Waking
	// another thread costs a Pi's core an IPI and the hand-off, whatever the
	// host's write took: on an idle vCPU the hypervisor's interrupt makes it
	// 30-60 µs here, more than the whole round trip it would be scaled by (a
	// Pi 4 at 125 kbit/s and 50 % load was charged 380 board µs a wake).
	KernelFixedNs [kernelop.NumOps]int64
	// MeterNs is the host time of a metered call's Enter and Exit outside the
	// call: the simulator's, not scaled.
	MeterNs int64
	// Cores is how many cores the board has; on one, the process's other threads
	// share the CPU thread's core.
	Cores int
	// GapOverheadNs is the host time of the simulator's own code in every gap
	// between two register accesses (the clock reads, the register view's calls):
	// not the driver's, so not scaled.
	GapOverheadNs int64
	// ClockReadHostNs is the host time of one Clock.Now, and ClockReadBoardNs
	// the board's time for one read of the clock the driver reads there (its
	// runtime clock through the vDSO, or a system call where it has none). With
	// ClockReadBoardNs set, each of the CPU thread's clock reads is charged that,
	// in place of its host time at the factor.
	ClockReadHostNs, ClockReadBoardNs int64
}

// cpuState is the CPU, read by the CPU thread on every access.
type cpuState struct {
	factor, accessNs, parkHost, wakeHost, gapOverhead atomic.Int64
	readHost, readBoard                               atomic.Int64
	parkBoard, wakeBoard, woken, meter                atomic.Int64
	kernel, kernelFixed                               [kernelop.NumOps]atomic.Int64
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
	c.cpu.parkBoard.Store(max(p.ParkBoardNs, 0))
	c.cpu.wakeBoard.Store(max(p.WakeBoardNs, 0))
	c.cpu.woken.Store(max(p.WokenHostNs, 0))
	for i, f := range p.KernelFactor {
		c.cpu.kernel[i].Store(max(f, 0))
		c.cpu.kernelFixed[i].Store(max(p.KernelFixedNs[i], 0))
	}
	c.cpu.meter.Store(max(p.MeterNs, 0))
	c.cpu.cores.Store(int32(max(p.Cores, 1)))
	c.cpu.gapOverhead.Store(max(p.GapOverheadNs, 0))
	c.cpu.readHost.Store(max(p.ClockReadHostNs, 0))
	c.cpu.readBoard.Store(max(p.ClockReadBoardNs, 0))
}

// SetFactor changes the board's CPU factor (FactorUnits; below FactorUnit is
// taken as FactorUnit: the board is never faster than the host it runs on).
func (c *Clock) SetFactor(f int64) { c.cpu.factor.Store(max(f, FactorUnit)) }

// SetAccessNs changes the board's cost of a register access.
func (c *Clock) SetAccessNs(ns int64) { c.cpu.accessNs.Store(max(ns, 0)) }

// CPU returns the board's CPU as set now.
func (c *Clock) CPU() CPU {
	p := CPU{Factor: c.cpu.factor.Load(), BoardKernelNs: c.cal.board.Load(), AccessNs: c.cpu.accessNs.Load(), ParkHostNs: c.cpu.parkHost.Load(),
		WakeHostNs: c.cpu.wakeHost.Load(), ParkBoardNs: c.cpu.parkBoard.Load(), WakeBoardNs: c.cpu.wakeBoard.Load(), WokenHostNs: c.cpu.woken.Load(),
		MeterNs: c.cpu.meter.Load(), Cores: int(c.cpu.cores.Load()), GapOverheadNs: c.cpu.gapOverhead.Load(),
		ClockReadHostNs: c.cpu.readHost.Load(), ClockReadBoardNs: c.cpu.readBoard.Load()}
	for i := range p.KernelFactor {
		p.KernelFactor[i] = c.cpu.kernel[i].Load()
		p.KernelFixedNs[i] = c.cpu.kernelFixed[i].Load()
	}
	return p
}

// parkCost is the board's cost of a Go runtime park at factor f.
func (c *Clock) parkCost(f int64) int64 {
	if b := c.cpu.parkBoard.Load(); b > 0 {
		return b
	}
	return scaled(c.cpu.parkHost.Load(), f)
}

// scaled is ns host ns of running on a CPU of factor f, in board ns.
func scaled(ns, f int64) int64 { return ns * f / FactorUnit }
