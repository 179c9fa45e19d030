package sim

import (
	"math"
	"sync/atomic"
	"time"

	"cand/sim/clock"
	"cand/sim/soc"
)

// The board's clock scaling, as Raspberry Pi OS sets it up: the kernel's cpufreq
// ondemand governor (drivers/cpufreq/cpufreq_ondemand.c) with raspi-config's
// tunables (RPi-Distro/raspi-config, debian/raspi-config.init), and the firmware
// raising the core clock with the ARM's ("by default (force_turbo=0) the
// on-demand CPU frequency driver will raise clocks to their maximum frequencies
// when the ARM cores are busy, and will lower them to the minimum frequencies
// when the ARM cores are idle": Raspberry Pi documentation, config.txt,
// overclocking options). Every sampling period the governor reads the busiest
// core's load since the last sample: above the up threshold it goes to the
// maximum and looks again only after sampling_down_factor periods; otherwise the
// proportional frequency it picks is the minimum, the only other one the Pi's
// cpufreq driver offers within half the range.
const (
	upThreshold        = 50 // percent
	samplingRate       = int64(100 * time.Millisecond)
	samplingDownFactor = 50
)

// governor scales the board's clocks by the CPU thread's load (strict rule
// only: that is where the clock counts the board's idle time). Its fields but
// the reported clocks belong to the CPU thread.
type governor struct {
	b     Board
	clk   *clock.Clock
	soc   *soc.SoC
	turbo bool
	next  int64 // board time of the next sample (0: not started)
	at    int64 // board time of the last sample
	idle  int64 // the clock's idle time then

	armHz, coreHz atomic.Uint32 // the clocks now, for reports
}

// newGovernor starts the board in powersave, the kernel's governor until boot
// switches to ondemand: the minimum clocks; with force_turbo, the maximum ones
// for good. With hold (hardware.hold_cpu_clock: cpufreq's scaling_min_freq
// raised to scaling_max_freq before cand touches the chip, hw/cpufreq) the
// kernel asks for the maximum ARM clock for good, and the firmware raises the
// core clock with it as it does whenever cpufreq goes to the maximum (above): the
// same clocks as force_turbo, from the start, and no sample ever lowers them.
// What force_turbo does beyond that on a real board (from boot, for every
// program; the other VPU clocks and SDRAM) the model does not play.
func newGovernor(b Board, hold bool, clk *clock.Clock, s *soc.SoC) *governor {
	g := &governor{b: b, clk: clk, soc: s}
	pinned := b.ForceTurbo || hold
	g.apply(pinned)
	if pinned {
		g.next = math.MaxInt64
	}
	return g
}

// apply sets the clocks of the turbo state (or not) on the SoC and the clock.
// Call it from the CPU thread.
func (g *governor) apply(turbo bool) {
	g.turbo = turbo
	arm, core := g.b.ARMMinHz, g.b.CoreMinHz
	if turbo {
		arm, core = g.b.ARMMaxHz, g.b.CoreMaxHz
	}
	if core != g.soc.CoreClockHz() {
		g.soc.SetCoreClockHz(core)
	}
	g.clk.SetCPU(g.b.clockCPU(arm, core))
	g.armHz.Store(arm)
	g.coreHz.Store(core)
}

// step takes a sample if one is due at board time now (CPU thread, bound strict
// clock only).
func (g *governor) step(now int64) {
	if !g.clk.Bound() || g.clk.Rule() != clock.Strict {
		return
	}
	idle := g.clk.Idle()
	switch {
	case g.next == 0:
		g.next, g.at, g.idle = now+samplingRate, now, idle
		return
	case now < g.next:
		return
	}
	elapsed := now - g.at
	busy := elapsed - (idle - g.idle)
	turbo := busy*100 > upThreshold*elapsed
	if turbo != g.turbo {
		g.apply(turbo)
	}
	g.at, g.idle = now, idle
	g.next = now + samplingRate
	if turbo {
		g.next = now + samplingRate*samplingDownFactor
	}
}
