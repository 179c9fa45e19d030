package sim

import (
	"fmt"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/kernelop"
	"cand/sim/clock"
)

// Profile is a Raspberry Pi the virtual Pi plays (hardware.sim_board). Its
// figures, their sources and the assumptions behind them are in docs/boards.md.
type Profile struct {
	Name  config.SimBoard
	Model string
	// Revision is the board's revision code: hw/bcm2835 derives its SoC and core
	// clock range (core_freq_min..core_freq) from it, as on a real board.
	Revision uint32
	Cores    int
	CPU      string // the ARM core
	// ARMMinHz..ARMMaxHz are arm_freq_min and arm_freq: the ondemand governor
	// moves the ARM clock between them (Raspberry Pi documentation, config.txt
	// overclocking options, default values table).
	ARMMinHz, ARMMaxHz uint32
	// PerClock is how many of this core's clock cycles the calibration kernel
	// takes per cycle of the anchor core (calibrate.go, docs/boards.md): an
	// assumption from published per-clock benchmark ratios, on the slow side.
	PerClock float64
	// Kernel is the board's published kernel figures, which its system calls,
	// parks and wake-ups are charged from (docs/boards.md).
	Kernel UnixBench
}

// UnixBench is a board's UnixBench 5.1.3 results in one copy, in loops per
// second, and the ARM clock they were taken at: the system call test (a loop of
// five calls: dup, close, getppid, getuid, umask), the pipe test (a 512-byte
// write and read on one pipe) and the pipe-based context switch test (a token's
// round trip between two processes over two pipes).
type UnixBench struct {
	Hz                              float64
	SyscallLps, PipeLps, ContextLps float64
}

// KernelWork is a kind of kernel work the board's figures and the host's
// calibration both measure.
type KernelWork int

const (
	// Syscall is one system call of the system call test's loop.
	Syscall KernelWork = iota
	// Pipe is one 512-byte write and read on a pipe.
	Pipe
	// RoundTrip is one round trip of a token between two threads over two
	// pipes: two wake-ups, each a hand-off from one thread to the other.
	RoundTrip
	numKernelWork
)

// workOf is the kind of kernel work a metered system call is charged as
// (docs/boards.md, "What the board's kernel costs"): a socket's write or read
// and the INT line's event read move data through a kernel queue with a copy, as
// the pipe test does; a zero-timeout epoll_wait and a clock_gettime enter the
// kernel and leave without data, as the system call test's calls do; waking
// another thread is a hand-off, as in the context switch test.
func workOf(op kernelop.Op) KernelWork {
	switch op {
	case kernelop.SocketWrite, kernelop.SocketRead, kernelop.EventRead:
		return Pipe
	case kernelop.Wake:
		return RoundTrip
	}
	return Syscall
}

// ns is the figure for work w at the clock it was taken at.
func (u UnixBench) ns(w KernelWork) float64 {
	switch w {
	case Syscall:
		return 1e9 / u.SyscallLps / 5
	case Pipe:
		return 1e9 / u.PipeLps
	}
	return 1e9 / u.ContextLps
}

// UnixBench results (bretmlw/sbc-benchmarks, docs/boards.md). The Pi 3's core
// is the Pi Zero 2 W's Cortex-A53, measured at 1 GHz; the Pi 2's Cortex-A7 has
// no published figures: the A53's, taken as many more cycles per operation as
// the user-code figures say (PerClock 4.97 against 4.10), an assumption.
func unixBenchPi4() UnixBench { // Pi 4 B at 2.15 GHz, 5.10.11-v7l+
	return UnixBench{Hz: 2150e6, SyscallLps: 703409.2, PipeLps: 148577.8, ContextLps: 32815.1}
}

func unixBenchA53() UnixBench { // Pi Zero 2 W at 1 GHz, 5.10.17-v7+
	return UnixBench{Hz: 1000e6, SyscallLps: 488229.9, PipeLps: 140813.3, ContextLps: 26368.0}
}

func unixBenchA7() UnixBench {
	u, r := unixBenchA53(), perClockA7/perClockA53
	return UnixBench{Hz: u.Hz, SyscallLps: u.SyscallLps / r, PipeLps: u.PipeLps / r, ContextLps: u.ContextLps / r}
}

func unixBenchZeroW() UnixBench { // Pi Zero W at 1 GHz, 5.10.17+
	return UnixBench{Hz: 1000e6, SyscallLps: 395412.8, PipeLps: 94397.0, ContextLps: 14612.3}
}

func unixBenchPi1() UnixBench { // Pi 1 B rev 2 at 700 MHz, 5.10.17+
	return UnixBench{Hz: 700e6, SyscallLps: 255611.6, PipeLps: 60686.1, ContextLps: 9064.9}
}

// The per-clock slowdowns of the calibration kernel against the anchor core
// (docs/boards.md, "How fast the board's CPU is").
const (
	perClockA72 = 2.0
	perClockA53 = 4.10
	perClockA7  = 4.97
	// The ARM1176JZF-S: the A53's, times UnixBench's Dhrystone per clock of the
	// A53 (Pi Zero 2 W, 3.72 M lps at 1 GHz) over that of the board's own
	// (Pi Zero W, 2.36 M lps at 1 GHz; Pi 1 B, 1.63 M lps at 700 MHz).
	perClockZero = 6.46
	perClockPi1  = 6.54
)

// anchorKernelCycles is the calibration kernel's cycles on the anchor core, an
// AMD Zen 3 (EPYC, family 25) measured at 184 ns a pass and taken at 3.5 GHz,
// the boost clock of the 2.45 GHz EPYC it reported (more cycles than at its base
// clock: a slower board).
const anchorKernelCycles = 650

// accessCycles is the core-clock cycles a register access takes on the board (an
// assumption: docs/boards.md).
const accessCycles = 62

// profiles are the boards the virtual Pi plays.
func profiles() [5]Profile {
	return [...]Profile{
		{Name: config.SimBoardPiZero, Model: "Raspberry Pi Zero", Revision: 0x900092, Cores: 1, CPU: "ARM1176JZF-S",
			ARMMinHz: 700e6, ARMMaxHz: 1000e6, PerClock: perClockZero, Kernel: unixBenchZeroW()},
		{Name: config.SimBoardPi1, Model: "Raspberry Pi 1 Model B+", Revision: 0x900032, Cores: 1, CPU: "ARM1176JZF-S",
			ARMMinHz: 700e6, ARMMaxHz: 700e6, PerClock: perClockPi1, Kernel: unixBenchPi1()},
		{Name: config.SimBoardPi2, Model: "Raspberry Pi 2 Model B", Revision: 0xa01041, Cores: 4, CPU: "Cortex-A7",
			ARMMinHz: 600e6, ARMMaxHz: 900e6, PerClock: perClockA7, Kernel: unixBenchA7()},
		{Name: config.SimBoardPi3, Model: "Raspberry Pi 3 Model B", Revision: 0xa02082, Cores: 4, CPU: "Cortex-A53",
			ARMMinHz: 600e6, ARMMaxHz: 1200e6, PerClock: perClockA53, Kernel: unixBenchA53()},
		{Name: config.SimBoardPi4, Model: "Raspberry Pi 4 Model B", Revision: 0xc03111, Cores: 4, CPU: "Cortex-A72",
			ARMMinHz: 600e6, ARMMaxHz: 1500e6, PerClock: perClockA72, Kernel: unixBenchPi4()},
	}
}

// ProfileOf returns the profile of board name.
func ProfileOf(name config.SimBoard) (Profile, error) {
	for _, p := range profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("sim: no board profile %q", name)
}

// Board is a profile as this virtual Pi plays it: with its SoC and core clocks,
// and the host's calibration.
type Board struct {
	Profile
	SoC                  bcm2835.SoC
	CoreMinHz, CoreMaxHz uint32
	// CorePinned: hardware.core_clock_hz pins the core clock at CoreMaxHz (as
	// core_freq=core_freq_min does on the board).
	CorePinned bool
	// ForceTurbo: hardware.sim_force_turbo, config.txt's force_turbo=1: the ARM
	// and core clocks at their maximum, idle or not.
	ForceTurbo bool
	// KernelCost is hardware.sim_kernel_cost: the board's kernel figures
	// (board, or unset) or the user-code factor for its system calls, parks
	// and wake-ups.
	KernelCost config.SimKernelCost
	Host       Calibration
}

// newBoard plays profile p on this host with the hardware settings h.
func newBoard(p Profile, h *config.Hardware, host Calibration) (Board, error) {
	hw, err := bcm2835.FromRevision(p.Revision)
	if err != nil {
		return Board{}, fmt.Errorf("sim: board %s: %w", p.Name, err)
	}
	b := Board{Profile: p, SoC: hw.SoC, CoreMinHz: hw.CoreClockMinHz, CoreMaxHz: hw.CoreClockMaxHz,
		ForceTurbo: h.SimForceTurbo, KernelCost: h.SimKernelCost, Host: host}
	if core := h.CoreClockHz; core != 0 {
		b.CoreMinHz, b.CoreMaxHz, b.CorePinned = core, core, true
	}
	return b, nil
}

// KernelNs is the board's time for one pass of the calibration kernel at ARM
// clock armHz.
func (b Board) KernelNs(armHz uint32) float64 {
	return anchorKernelCycles * b.PerClock / float64(armHz) * 1e9
}

// Factor is board ns per host ns of the CPU's own work at ARM clock armHz.
func (b Board) Factor(armHz uint32) float64 {
	if b.Host.KernelNs <= 0 {
		return 1
	}
	return max(b.KernelNs(armHz)/b.Host.KernelNs, 1)
}

// AccessNs is the board's time for one register access at core clock coreHz.
func (b Board) AccessNs(coreHz uint32) int64 { return accessCycles * 1e9 / int64(coreHz) }

// wakeHostNs is the host's part of an INT edge's wake-up that the owner's own
// CPU time does not hold: the board's two hand-offs (the GPIO interrupt's
// threaded handler, then the epoll waiter) less the woken owner's own sleep and
// return (WokenNs), which the strict rule charges from its CPU time in the gap
// already (docs/boards.md, "The board's other costs"). Never below one
// hand-off: the first is no thread of cand's.
func (b Board) wakeHostNs() int64 {
	h := b.Host.HandOffNs
	return int64(h + max(h-b.Host.WokenNs, 0))
}

// BoardKernel reports whether the board's system calls, parks and wake-ups are
// charged from its kernel figures (hardware.sim_kernel_cost: board, the
// default), not at the user-code factor.
func (b Board) BoardKernel() bool { return b.KernelCost != config.SimKernelCostUserFactor }

// WorkNs is the board's time for kernel work w at ARM clock armHz: its
// published figure scaled by the clock it was taken at over armHz.
func (b Board) WorkNs(w KernelWork, armHz uint32) float64 {
	return b.Kernel.ns(w) * b.Kernel.Hz / float64(armHz)
}

// KernelFactor is board ns per host ns of the kernel work a system call of kind
// op does, at ARM clock armHz (0: the host's figure is unknown). Unlike Factor
// it may be below 1: a virtual machine's system calls can be slower than a
// Pi's.
func (b Board) KernelFactor(op kernelop.Op, armHz uint32) float64 {
	w := workOf(op)
	host := b.Host.work(w)
	if host <= 0 {
		return 0
	}
	return b.WorkNs(w, armHz) / host
}

// clockReadCycles is the ARM cycles of one read of the runtime's clock through
// the vDSO on a core with the architected timer: the counter's register read and
// the vDSO's sequence count, shift and multiply (lib/vdso/gettime.c). An
// assumption (docs/boards.md, "Clock reads"): no published figure for a Pi.
const clockReadCycles = 100

// ClockReadNs is the board's time for one read of the runtime's clock at ARM
// clock armHz: the vDSO's work, plus a system call where the SoC has no
// architected timer (BCM2835: every clock_gettime is a system call).
func (b Board) ClockReadNs(armHz uint32) float64 {
	ns := clockReadCycles * 1e9 / float64(armHz)
	if !b.SoC.ArchTimer() {
		ns += b.WorkNs(Syscall, armHz)
	}
	return ns
}

// clockCPU is the board's CPU for sim/clock at the given clocks. With the
// board's kernel figures a park costs one hand-off of the context switch test's
// round trip and a wake-up by an INT edge two (the GPIO interrupt's threaded
// handler, then the epoll waiter), the woken owner's own sleep and return
// (WokenNs) taken out of its running.
func (b Board) clockCPU(armHz, coreHz uint32) clock.CPU {
	c := clock.CPU{Factor: int64(b.Factor(armHz) * clock.FactorUnit), BoardKernelNs: int64(b.KernelNs(armHz)), AccessNs: b.AccessNs(coreHz),
		ParkHostNs: int64(b.Host.HandOffNs), WakeHostNs: b.wakeHostNs(), Cores: b.Cores,
		GapOverheadNs: int64(b.Host.GapOverheadNs)}
	if !b.BoardKernel() {
		return c
	}
	for op := range kernelop.NumOps {
		if op == kernelop.SimOnly {
			continue // the simulator's own: no board cost (sim/clock)
		}
		if f := b.KernelFactor(op, armHz); f > 0 {
			c.KernelFactor[op] = max(int64(f*clock.FactorUnit), 1)
		}
	}
	trip := b.WorkNs(RoundTrip, armHz)
	c.ParkBoardNs, c.WakeBoardNs = int64(trip/2), int64(trip)
	c.KernelFixedNs[kernelop.Wake] = c.ParkBoardNs // one hand-off (clock.CPU.KernelFixedNs)
	c.ClockReadHostNs, c.ClockReadBoardNs = int64(b.Host.NowNs), int64(b.ClockReadNs(armHz))
	c.WokenHostNs, c.MeterNs = int64(b.Host.WokenNs), int64(b.Host.MeterNs)
	return c
}
