// Package daemon wires cand together from its configuration: the hardware backend
// (real registers or the virtual Pi), one MCP2515 controller per configured chip,
// their SocketCAN interfaces, the metrics endpoint, and the owner thread that runs
// the frame path (package bridge). cmd/cand is only flags around it; tests run the
// whole daemon in-process with socketpairs standing in for CAN sockets.
package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/http"

	"cand/bridge"
	"cand/config"
	"cand/metrics"
	"cand/sim"
)

// Options are what the command line (or a test) adds to the configuration.
type Options struct {
	Version string
	Log     *slog.Logger
	// Sockets, when set, are used as the controllers' CAN sockets (index-aligned
	// with cfg.Controllers) instead of creating interfaces: tests pass one end of a
	// SOCK_SEQPACKET socketpair, which carries the same 16-byte frames. An entry
	// of -1 leaves that controller's socket to the daemon.
	Sockets []int
	// Sim, when set, is the virtual Pi to run on (tests inspect its peers);
	// otherwise backend sim builds one from the configuration.
	Sim *sim.Pi
	// Ready is called once every interface is served: each controller initialised
	// and bridging, or retried while its chip does not answer.
	Ready func(d *Daemon)
	// MetricsListener, when set, serves /metrics instead of cfg.Metrics.Listen.
	MetricsListener net.Listener
	// Links, when set, is where the daemon learns its interfaces' link state and
	// how it recreates a deleted one (tests, with Sockets); otherwise it follows
	// the interfaces it opened over rtnetlink. With Sockets or Netdevs and no Links,
	// the link state is not followed.
	Links Links
	// Netdevs, when set, makes, opens, takes down and removes the controllers'
	// SocketCAN interfaces instead of the running kernel (tests).
	Netdevs Netdevs
	// ConfigPath is the file the configuration was read from: Daemon.Reload reads
	// it again.
	ConfigPath string
	// DropPrivileges drops, once everything is set up and before READY=1, every
	// capability the run does not need, from every thread (privileges.go). cmd/cand
	// sets it; an in-process test leaves its process's capabilities alone.
	DropPrivileges bool
}

// Daemon is a running cand; tests reach its parts through it.
type Daemon struct {
	Metrics *metrics.Registry
	Owner   *bridge.Owner
	Pi      *sim.Pi // nil on real hardware
	// MetricsAddr is where /metrics is served ("" if disabled).
	MetricsAddr string
	// StatusSocket is the unix socket `cand status` reads ("" if disabled).
	StatusSocket string
	// SocketcandAddr is where the socketcand server listens ("" if disabled).
	SocketcandAddr string

	reload  func() (ReloadResult, error) // Reload for this run
	threads threadIDs                    // the frame path's threads (Threads)
}

// wiring is one Run: its inputs, the daemon it builds, and what it set up, undone
// in reverse order on the way out.
type wiring struct {
	*Daemon
	cfg     *config.Config
	opt     Options
	log     *slog.Logger
	hw      backend
	sources []statusSource // per controller, what the status document reads
	// timingInfo is each controller's cand_bit_timing_info, for a reload.
	timingInfo []*metrics.BitTimingInfo
	cleanups   []func()
	pairEnds   map[int]int // controller index → socketcand's end of its socketpair (interface kind none)
	// slcans are the controllers with interface kind slcan (slcan.go), and
	// slcanKick asks the link watch to read their link state again.
	slcans    map[int]*slcanPort
	slcanKick chan struct{}
	// memLocked: mlockall(MCL_CURRENT|MCL_FUTURE) applied (owner thread, before ready).
	memLocked bool
	// metricsSrv is the metrics endpoint's server now (metricsserver.go).
	metricsSrv *http.Server
	// reloading is a reload's state (reload.go).
	reloading reloader
	// sd keeps systemd's STATUS= line once cand is ready (sdstatus.go); a reload
	// comes only after that (Options.Ready hands out the Daemon).
	sd *sdStatus
}

func (w *wiring) cleanup() {
	for i := len(w.cleanups) - 1; i >= 0; i-- {
		w.cleanups[i]()
	}
}

// Run runs cand until ctx is done. On the way out every controller goes back to
// Configuration mode and every interface is set down (or, with
// interface.remove_on_exit, removed).
func Run(ctx context.Context, cfg *config.Config, opt Options) error {
	w := &wiring{Daemon: &Daemon{Metrics: metrics.New(opt.Version), Owner: &bridge.Owner{}}, cfg: cfg, opt: opt, log: opt.Log}
	if w.log == nil {
		w.log = slog.Default()
	}
	w.Daemon.reload = w.reloadConfig
	defer w.cleanup()

	srv, err := w.metricsServer(&w.cfg.Metrics)
	if err != nil {
		return err
	}
	if restore := hostCPUClock().hold(&w.cfg.Hardware, w.log); restore != nil {
		w.cleanups = append(w.cleanups, restore) // after the board is given back
	}
	hw, err := w.openBackend()
	if err != nil {
		return err
	}
	w.hw = hw
	w.Owner.Clock = hw.clock()
	w.cleanups = append(w.cleanups, hw.close)
	inits, err := w.addPorts()
	if err != nil {
		return err
	}
	w.Owner.Delivery = w.delivery()
	threads := hw.threads()
	if d := w.Owner.Delivery; d != nil {
		threads++
		w.Metrics.AddDelivery(func() metrics.Delivery {
			s := d.Stats()
			return metrics.Delivery{Wakes: s.Wakes, Parks: s.Parks, Batches: s.Batches, Frames: s.Frames, Isolated: s.Isolated}
		})
	}
	spareProcs(threads, w.log)
	ready := make(chan struct{})
	w.Owner.Setup = w.ownerSetup(inits, ready)
	hw.observe(w.Metrics)
	defer hw.report() // once the owner thread has stopped (w.bridge returned)

	hw.start(ctx)
	if err := w.serveMetrics(srv); err != nil {
		return err
	}
	if err := w.serveStatus(); err != nil {
		return err
	}
	if err := w.serveSocketcand(); err != nil {
		return err
	}
	return w.bridge(ctx, ready)
}
