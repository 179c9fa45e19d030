package sim

import (
	"fmt"

	"cand/config"
	"cand/hw/bcm2835"
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
}

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
			ARMMinHz: 700e6, ARMMaxHz: 1000e6, PerClock: 18.8},
		{Name: config.SimBoardPi1, Model: "Raspberry Pi 1 Model B+", Revision: 0x900032, Cores: 1, CPU: "ARM1176JZF-S",
			ARMMinHz: 700e6, ARMMaxHz: 700e6, PerClock: 18.8},
		{Name: config.SimBoardPi2, Model: "Raspberry Pi 2 Model B", Revision: 0xa01041, Cores: 4, CPU: "Cortex-A7",
			ARMMinHz: 600e6, ARMMaxHz: 900e6, PerClock: 4.97},
		{Name: config.SimBoardPi3, Model: "Raspberry Pi 3 Model B", Revision: 0xa02082, Cores: 4, CPU: "Cortex-A53",
			ARMMinHz: 600e6, ARMMaxHz: 1200e6, PerClock: 4.10},
		{Name: config.SimBoardPi4, Model: "Raspberry Pi 4 Model B", Revision: 0xc03111, Cores: 4, CPU: "Cortex-A72",
			ARMMinHz: 600e6, ARMMaxHz: 1500e6, PerClock: 2.0},
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
	Host       Calibration
}

// newBoard plays profile p on this host with the hardware settings h.
func newBoard(p Profile, h *config.Hardware, host Calibration) (Board, error) {
	hw, err := bcm2835.FromRevision(p.Revision)
	if err != nil {
		return Board{}, fmt.Errorf("sim: board %s: %w", p.Name, err)
	}
	b := Board{Profile: p, SoC: hw.SoC, CoreMinHz: hw.CoreClockMinHz, CoreMaxHz: hw.CoreClockMaxHz,
		ForceTurbo: h.SimForceTurbo, Host: host}
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

// clockCPU is the board's CPU for sim/clock at the given clocks.
func (b Board) clockCPU(armHz, coreHz uint32) clock.CPU {
	return clock.CPU{Factor: int64(b.Factor(armHz) * clock.FactorUnit), BoardKernelNs: int64(b.KernelNs(armHz)), AccessNs: b.AccessNs(coreHz),
		ParkHostNs: int64(b.Host.HandOffNs), WakeHostNs: b.wakeHostNs(), Cores: b.Cores,
		GapOverheadNs: int64(b.Host.GapOverheadNs)}
}
