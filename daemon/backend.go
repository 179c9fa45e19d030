package daemon

import (
	"context"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/mono"
	"cand/metrics"
)

// backend is the board cand runs on, the real Pi (backend_bcm2835.go) or the
// virtual Pi (backend_sim.go); the daemon drives both through it alike.
type backend interface {
	// device opens the controller's chip select on SPI0.
	device(cc *config.Controller) (*bcm2835.Device, error)
	// intLine is controller i's INT line: the fd that delivers its edge events and
	// its level.
	intLine(i int, cc *config.Controller) (fd int, level bcm2835.ActiveLow)
	// probe returns the logic-analyzer pins' driver, or nil when none is configured.
	probe(cfg *config.Config) *bridge.Probe
	// threads is how many threads the board runs beside the owner thread that need
	// a CPU at once when they wake (the virtual Pi's bus threads).
	threads() int
	// cores is how many CPU cores the board has (realtime.delivery: auto).
	cores() int
	// paceDelivery plays the delivery thread's core on the virtual Pi (its
	// Pacer, meter and clock); nothing on a real Pi.
	paceDelivery(d *bridge.Delivery)
	// observe adds the board's own metrics.
	observe(r *metrics.Registry)
	// start starts what runs on the board by itself (the virtual Pi's buses and
	// peers) until ctx is done.
	start(ctx context.Context)
	// bindOwner runs on the owner thread, locked to its OS thread, before the
	// controllers are initialised.
	bindOwner()
	// clock is the board's time, which every deadline and latency is read in:
	// CLOCK_MONOTONIC on a real Pi, the virtual Pi's own clock (sim/clock) on the
	// simulator, where the bus is paced (hardware.clk).
	clock() mono.Clock
	// seenClock is the board's time for the other threads (hardware.seen).
	seenClock() mono.Clock
	// clockSource is the clock clock() reads (runtime or system_timer), and why.
	clockSource() clockSource
	// report runs once the owner thread has stopped.
	report()
	// close gives the board back: pins restored, lines and mappings closed.
	close()
}

// openBackend opens the configured backend; on the virtual Pi it sets Daemon.Pi.
func (w *wiring) openBackend() (backend, error) {
	switch w.cfg.Hardware.Backend {
	case config.BackendBCM2835:
		b, err := openBCM2835(w.cfg, w.log)
		if err != nil {
			return nil, err
		}
		return b, nil
	default:
		b, err := openSim(w.cfg, w.opt.Sim, w.log)
		if err != nil {
			return nil, err
		}
		w.Pi = b.pi
		w.Owner.Kernel = b.pi.Kernel() // the board's cost of the owner's system calls
		return b, nil
	}
}
