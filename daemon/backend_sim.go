package daemon

import (
	"context"
	"log/slog"
	"time"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/kernelop"
	"cand/internal/mono"
	"cand/metrics"
	"cand/sim"
	"cand/sim/clock"
)

// simBackend is the virtual Pi: the same register code as on a real Pi, on the
// board's modelled registers, with the board's clock bound to the owner thread.
type simBackend struct {
	*hardware
	pi    *sim.Pi
	cpu   config.SimCPU
	buses int      // one simulated bus thread per controller
	names []string // the controllers' names, index-aligned with the board's nodes
	saved *bcm2835.Saved
	log   *slog.Logger
	// stallAfter is hardware.sim_stall_bus_after: 0, or when the peripheral bus stalls.
	stallAfter time.Duration
}

// openSim sets up the virtual Pi pi, or one built from cfg when pi is nil.
func openSim(cfg *config.Config, pi *sim.Pi, log *slog.Logger) (*simBackend, error) {
	if pi == nil {
		var err error
		pi, err = sim.New(cfg)
		if err != nil {
			return nil, err
		}
	}
	g := bcm2835.NewGPIO(pi.GPIO(), pi.SoC())
	// The same pin set-up as on a real Pi: SPI0 pins to ALT0, INT inputs with
	// pull-ups. The model's chip selects only reach the chips through it.
	plan, err := pinPlan(cfg)
	if err != nil {
		return nil, err
	}
	saved, err := bcm2835.SetupPins(g, plan)
	if err != nil {
		return nil, err
	}
	// Dividers sized for the board's highest core clock, as on a real Pi: SCLK
	// never exceeds the request, and drops with the core clock.
	minCore, maxCore := pi.CoreClockRange()
	h := &hardware{gpio: g, clk: pi.Clock().Now, seen: pi.Clock().Reached}
	h.src = chooseClock(cfg.Hardware.ClockSource, simClockVerdict(pi))
	if h.src.name == config.ClockSourceSystemTimer {
		// The owner reads the modelled System Timer as it would the real one;
		// the ties sample it against the board's clock, with no register access.
		model := pi.SoCModel().SystemTimer()
		err := h.useSystemTimer(bcm2835.NewSystemTimer(pi.SystemTimer()), func() (mono.Sample, error) {
			tick, count := model.Sample()
			return mono.Sample{Mono: tick, Count: count}, nil
		})
		if err != nil {
			saved.Restore()
			return nil, err
		}
	}
	h.logClock(log)
	h.spi = bcm2835.NewSPI(pi.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: maxCore, MinCoreClockHz: minCore,
		PollBudget: cfg.Hardware.PollBudget.D(), Clock: h.clk})
	var names []string
	for i := range cfg.Controllers {
		h.fds = append(h.fds, pi.IntFd(i))
		names = append(names, cfg.Controllers[i].Name)
	}
	return &simBackend{hardware: h, pi: pi, cpu: pi.Rule(), buses: len(cfg.Controllers), names: names, saved: saved, log: log,
		stallAfter: cfg.Hardware.SimStallBusAfter.D()}, nil
}

// simClockVerdict is whether the board the virtual Pi plays reads the runtime's
// clock through a system call: without the ARM Generic Timer (Pi 1, Zero) it
// has no vDSO clock. A Pi 4 on a 32-bit kernel with a device tree from before
// 2025 has none either: hardware.clock_source: system_timer plays it.
func simClockVerdict(pi *sim.Pi) mono.Verdict {
	bd := pi.Board()
	if pi.SoC().ArchTimer() {
		return mono.Verdict{Known: true, Reason: "the virtual Pi plays a " + bd.Model + ", whose " + bd.CPU +
			" has the ARM Generic Timer the vDSO reads CLOCK_MONOTONIC from"}
	}
	return mono.Verdict{Syscall: true, Known: true, Reason: "the virtual Pi plays a " + bd.Model + ", whose " + bd.CPU +
		" has no ARM Generic Timer, so its kernel has no vDSO clock"}
}

func (b *simBackend) threads() int { return b.buses }

// cores is the board's.
func (b *simBackend) cores() int { return b.pi.Board().Cores }

var _ bridge.Pacer = (*sim.DeliveryCore)(nil)

// paceDelivery gives the delivery thread the board's core (sim.DeliveryCore)
// under the strict rule, which plays its spin in the board's time; under the
// others it runs at the host's speed, as the owner does. It never spins on the
// host: the simulator's other threads need the host's cores.
func (b *simBackend) paceDelivery(d *bridge.Delivery) {
	d.Clock = b.pi.Clock().Now
	if b.cpu != config.SimCPUStrict {
		// Host time (shared), or the dedicated rule's core as fast as the host's:
		// the thread runs at the host's speed, parking when idle.
		d.SpinNs = 0
		return
	}
	core := sim.NewDeliveryCore(b.pi.Clock())
	core.KernelCost = b.pi.KernelCost()
	d.Pacer, d.Kernel, d.Stamp, d.Hold = core, core, core.Now, b.pi.Clock().Hold
	d.Look = b.pi.Clock().ModelNow // the simulator's looks: no clock read of the owner's
}

func (b *simBackend) observe(r *metrics.Registry) {
	r.AddSimClock(func() metrics.SimClock { return simClockMetrics(b.pi) })
	r.AddSimPeers(func() []metrics.SimPeer {
		var out []metrics.SimPeer
		for i, name := range b.names {
			for _, p := range b.pi.Node(i).Peers {
				out = append(out, metrics.SimPeer{Controller: name, Peer: p.Name(), Dropped: p.Stats().Dropped})
			}
		}
		return out
	})
}

// simClockMetrics reads the virtual Pi's clock for /metrics.
func simClockMetrics(pi *sim.Pi) metrics.SimClock {
	s := pi.Clock().Stats()
	arm, core := pi.Clocks()
	m := metrics.SimClock{Board: string(pi.Board().Name), Rule: string(pi.Rule()), Factor: pi.Factor(), HostKernelNs: pi.Clock().HostKernelNs(),
		CoreClockHz: float64(core), ARMClockHz: float64(arm)}
	for c := clock.Category(0); c < clock.NumCategories; c++ {
		thread := "cpu"
		if c == clock.BusLate {
			thread = "bus"
		}
		m.Removed = append(m.Removed, metrics.SimRemoval{Thread: thread, Category: c.String(), Count: s.Removed[c].Count, Ns: s.Removed[c].Ns})
	}
	m.Charged = []metrics.SimCharge{{Kind: "cpu_scaled", Ns: s.ScaledNs}, {Kind: "park", Ns: s.ParkNs},
		{Kind: "wake_up", Ns: s.WakeNs}, {Kind: "shared_core", Ns: s.SharedCoreNs}}
	return m
}

func (b *simBackend) start(ctx context.Context) {
	b.pi.Start(ctx)
	b.keepTied(ctx, b.log)
	if b.stallAfter > 0 {
		go stallBusAfter(ctx, b.pi.BusStall(), b.stallAfter, b.log)
	}
}

// bindOwner makes the calling (owner) thread the virtual Pi's CPU, unless the
// configuration asks for host time (hardware.sim_cpu: shared). Without /proc the
// board stays on host time.

func (b *simBackend) bindOwner() {
	bd := b.pi.Board()
	if b.cpu == config.SimCPUShared {
		b.log.Info("virtual Pi on host time: host stalls of the owner thread count as the board's time, and the driver runs at host speed (hardware.sim_cpu: shared)",
			"board", bd.Name)
		return
	}
	clk := b.pi.Clock()
	if err := clk.BindCPU(); err != nil {
		b.log.Warn("virtual Pi on host time: host stalls of the owner thread will count as the board's time", "err", err)
		return
	}
	if b.cpu == config.SimCPUDedicated {
		b.log.Info("virtual Pi on the forgiving dedicated rule: every gap without a wait for the hardware is taken out of the board's time, the driver's own work and Go runtime parks included, and the driver runs at host speed (hardware.sim_cpu: dedicated)",
			"board", bd.Name)
		return
	}
	if clk.SchedstatMissing() {
		b.log.Warn("virtual Pi: no /proc/self/task/TID/schedstat on this kernel (CONFIG_SCHED_INFO): the host's runqueue waits of the owner thread count as the board's time")
	}
	arm, core := b.pi.Clocks()
	args := []any{"board", bd.Name, "model", bd.Model, "cpu_factor", b.pi.Factor(), "arm_hz", arm, "core_hz", core,
		"host_kernel_ns", clk.HostKernelNs(), "host_kernel_ns_at_build", bd.Host.KernelNs, "host_handoff_ns", bd.Host.HandOffNs,
		"kernel_cost", kernelCost(bd)}
	if bd.BoardKernel() {
		args = append(args, "host_syscall_ns", bd.Host.SyscallNs, "host_pipe_ns", bd.Host.PipeNs, "host_round_trip_ns", bd.Host.RoundTripNs)
		for op := range kernelop.NumOps {
			args = append(args, op.String()+"_factor", bd.KernelFactor(op, arm))
		}
	}
	b.log.Info("virtual Pi: the owner thread plays the board's CPU; only the host's runqueue, steal and slow wake-ups leave the board's time (cand_sim_host_stall_seconds_total)",
		args...)
}

// kernelCost is hardware.sim_kernel_cost as the board plays it.
func kernelCost(bd sim.Board) config.SimKernelCost {
	if bd.BoardKernel() {
		return config.SimKernelCostBoard
	}
	return config.SimKernelCostUserFactor
}

// report returns the board to host time and logs what the clock did to its time.
func (b *simBackend) report() {
	clk := b.pi.Clock()
	clk.UnbindCPU()
	s := clk.Stats()
	if s.RemovedNs()+s.ChargedNs() == 0 {
		return
	}
	args := []any{"rule", s.Rule.String(), "removed_ms", s.RemovedNs() / 1e6, "longest_us", s.MaxRemovalNs / 1e3,
		"charged_ms", s.ChargedNs() / 1e6, "ahead_ms", clk.Ahead() / 1e6}
	if s.CalibBursts > 0 {
		args = append(args, "calibration_bursts", s.CalibBursts,
			"cpu_factor_min", s.Factor.Min, "cpu_factor_median", s.Factor.Median, "cpu_factor_max", s.Factor.Max,
			"host_kernel_ns_min", s.HostKernelNs.Min, "host_kernel_ns_median", s.HostKernelNs.Median, "host_kernel_ns_max", s.HostKernelNs.Max)
	}
	for c := clock.Category(0); c < clock.NumCategories; c++ {
		if r := s.Removed[c]; r.Count > 0 {
			args = append(args, c.String()+"_ms", r.Ns/1e6)
		}
	}
	for op, k := range s.Kernel {
		if k.Calls > 0 {
			args = append(args, kernelop.Op(op).String()+"_calls", k.Calls, kernelop.Op(op).String()+"_host_ms", float64(k.HostNs)/1e6,
				kernelop.Op(op).String()+"_board_ms", float64(k.BoardNs)/1e6)
		}
	}
	b.log.Info("virtual Pi: the board's time", args...)
}

func (b *simBackend) close() {
	b.saved.Restore()
	b.pi.Close()
}
