package daemon

import (
	"context"
	"log/slog"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/metrics"
	"cand/sim"
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
	h := &hardware{
		gpio: g,
		spi:  bcm2835.NewSPI(pi.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: pi.CoreClockHz(), PollBudget: cfg.Hardware.PollBudget.D()}),
	}
	var names []string
	for i := range cfg.Controllers {
		h.fds = append(h.fds, pi.IntFd(i))
		names = append(names, cfg.Controllers[i].Name)
	}
	return &simBackend{hardware: h, pi: pi, cpu: cfg.Hardware.SimCPU, buses: len(cfg.Controllers), names: names, saved: saved, log: log}, nil
}

func (b *simBackend) threads() int { return b.buses }

func (b *simBackend) observe(r *metrics.Registry) {
	clk := b.pi.Clock()
	r.AddSimClock(func() metrics.SimClock {
		s := clk.Stats()
		return metrics.SimClock{CPUStalls: s.CPUStalls, CPUStallNs: s.CPUStallNs, BusLate: s.BusLate, BusLateNs: s.BusLateNs}
	})
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

func (b *simBackend) start(ctx context.Context) { b.pi.Start(ctx) }

// bindOwner makes the calling (owner) thread the virtual Pi's CPU, unless the
// configuration asks for a shared CPU: the host's stalls of this thread are then
// not the board's time (sim/clock). Without /proc the board stays on host time.
// now is the virtual Pi's time: the load peers are paced in it.
func (b *simBackend) now() int64 { return b.pi.Clock().Now() }

func (b *simBackend) bindOwner() {
	if b.cpu == config.SimCPUShared {
		b.log.Info("virtual Pi on host time: host stalls of the owner thread count as the board's time (hardware.sim_cpu: shared)")
		return
	}
	if err := b.pi.Clock().BindCPU(); err != nil {
		b.log.Warn("virtual Pi on host time: host stalls of the owner thread will count as the board's time", "err", err)
		return
	}
	b.log.Info("virtual Pi: the owner thread plays a dedicated CPU; host stalls of it are taken out of the board's time (cand_sim_host_stall_seconds_total)")
}

// report returns the board to host time and logs the host stalls taken out of it.
func (b *simBackend) report() {
	clk := b.pi.Clock()
	clk.UnbindCPU()
	if s := clk.Stats(); s.CPUStalls+s.BusLate > 0 {
		b.log.Info("virtual Pi: host stalls taken out of the board's time",
			"owner_stalls", s.CPUStalls, "owner_stall_ms", s.CPUStallNs/1e6, "longest_us", s.CPUStallMaxNs/1e3,
			"bus_late", s.BusLate, "bus_late_ms", s.BusLateNs/1e6)
	}
}

func (b *simBackend) close() {
	b.saved.Restore()
	b.pi.Close()
}
