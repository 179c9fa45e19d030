// Package daemon wires cand together from its configuration: the hardware backend
// (real registers or the virtual Pi), one MCP2515 controller per configured chip,
// their SocketCAN interfaces, the metrics endpoint, and the owner thread that runs
// the frame path (package bridge). cmd/cand is only flags around it; tests run the
// whole daemon in-process with socketpairs standing in for CAN sockets.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"cand/bridge"
	"cand/config"
	"cand/internal/mono"
	"cand/internal/rt"
	"cand/internal/sdnotify"
	"cand/mcp2515"
	"cand/metrics"
	"cand/sim"
	"cand/socketcan"
)

// Options are what the command line (or a test) adds to the configuration.
type Options struct {
	Version string
	Log     *slog.Logger
	// Sockets, when set, are used as the controllers' CAN sockets (index-aligned
	// with cfg.Controllers) instead of creating interfaces: tests pass one end of a
	// SOCK_SEQPACKET socketpair, which carries the same 16-byte frames.
	Sockets []int
	// Sim, when set, is the virtual Pi to run on (tests inspect its peers);
	// otherwise backend sim builds one from the configuration.
	Sim *sim.Pi
	// Ready is called once every controller is initialised and bridging.
	Ready func(d *Daemon)
	// MetricsListener, when set, serves /metrics instead of cfg.Metrics.Listen.
	MetricsListener net.Listener
}

// Daemon is a running cand; tests reach its parts through it.
type Daemon struct {
	Metrics *metrics.Registry
	Owner   *bridge.Owner
	Pi      *sim.Pi // nil on real hardware
	// MetricsAddr is where /metrics is served ("" if disabled).
	MetricsAddr string
}

// Run runs cand until ctx is done. On the way out every controller goes back to
// Configuration mode and every interface cand created is removed.
func Run(ctx context.Context, cfg *config.Config, opt Options) (err error) {
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	d := &Daemon{Metrics: metrics.New(opt.Version)}
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()

	hw, err := openHardware(ctx, cfg, opt, log)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, hw.close)
	d.Pi = hw.pi

	owner := &bridge.Owner{}
	probe := hw.probe(cfg)
	d.Owner = owner
	var inits []func() error
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		bt, err := Timing(cc)
		if err != nil {
			return fmt.Errorf("controller %s: %w", cc.Name, err)
		}
		dev, err := hw.device(cc)
		if err != nil {
			return fmt.Errorf("controller %s: %w", cc.Name, err)
		}
		sclk := dev.SCLKHz()
		// The firmware may lower the core clock at run time unless core_freq is
		// pinned: SCLK then drops with it (never above the request).
		sclkLo, sclkHi := dev.SCLKRange()
		m := d.Metrics.AddController(cc.Name, cc.Interface.Name)
		m.SCLKHz.Set(int64(sclk))
		m.SCLKMinHz.Set(int64(sclkLo))
		m.SCLKMaxHz.Set(int64(sclkHi))
		spi := bridge.NewSPI(dev, m, probe)
		intr := hw.gpio.ActiveLow(cc.IntGPIO)
		ctl := mcp2515.New(spi, intr, controllerConfig(cc, bt), mono.Now)

		sockFd := -1
		if opt.Sockets != nil {
			sockFd = opt.Sockets[i]
		} else {
			fd, undo, err := openInterface(cc, log)
			if err != nil {
				return fmt.Errorf("controller %s: %w", cc.Name, err)
			}
			cleanups = append(cleanups, undo)
			sockFd = fd
		}
		owner.Ports = append(owner.Ports, bridge.NewPort(bridge.PortConfig{
			Name:        cc.Name,
			Ctl:         ctl,
			SPI:         spi,
			Int:         intr,
			IntFd:       hw.fds[i],
			SockFd:      sockFd,
			Metrics:     m,
			ErrorFrames: *cc.ErrorFrames,
			RestartNs:   int64(*cc.RestartMs) * 1e6,
			TxTimeoutNs: int64(cc.TxTimeout.D()),
			PollWindow:  cc.IntPollWindow.D(),
			Log:         log.Warn,
		}))
		name, iface := cc.Name, cc.Interface.Name
		inits = append(inits, func() error {
			if err := ctl.Init(); err != nil {
				return fmt.Errorf("controller %s: %w", name, err)
			}
			log.Info("controller ready", "controller", name, "interface", iface, "timing", bt.String(),
				"sclk_hz", sclk, "sclk_range_hz", fmt.Sprintf("%d..%d", sclkLo, sclkHi))
			return nil
		})
	}

	spareProcs(len(cfg.Controllers), hw.pi != nil, log)

	ready := make(chan struct{})
	owner.Setup = func() error {
		report, err := rt.Setup(rtConfig(cfg))
		for _, line := range report.Lines() {
			log.Info(line)
		}
		if err != nil {
			return err
		}
		if hw.pi != nil {
			bindSimCPU(hw.pi, cfg.Hardware.SimCPU, log)
		}
		for _, init := range inits {
			if err := init(); err != nil {
				return err
			}
		}
		close(ready)
		return nil
	}
	if hw.pi != nil {
		clk := hw.pi.Clock()
		defer func() {
			clk.UnbindCPU()
			if s := clk.Stats(); s.CPUStalls+s.BusLate > 0 {
				log.Info("virtual Pi: host stalls taken out of the board's time",
					"owner_stalls", s.CPUStalls, "owner_stall_ms", s.CPUStallNs/1e6, "longest_us", s.CPUStallMaxNs/1e3,
					"bus_late", s.BusLate, "bus_late_ms", s.BusLateNs/1e6)
			}
		}()
		d.Metrics.AddSimClock(func() metrics.SimClock {
			s := clk.Stats()
			return metrics.SimClock{CPUStalls: s.CPUStalls, CPUStallNs: s.CPUStallNs, BusLate: s.BusLate, BusLateNs: s.BusLateNs}
		})
	}

	if hw.start != nil {
		hw.start(ctx)
	}
	if err := d.serveMetrics(ctx, cfg, opt, log, &cleanups); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errc <- owner.Run(runCtx)
	}()
	notifier := sdnotify.FromEnv()
	select {
	case <-ready:
		notifier.Send("READY=1\nSTATUS=bridging")
		log.Info("bridging", "controllers", len(cfg.Controllers), "metrics", d.MetricsAddr)
		if opt.Ready != nil {
			opt.Ready(d)
		}
		go watchdog(runCtx, notifier, owner)
		go manualRestart(runCtx, owner, log)
	case err := <-errc:
		wg.Wait()
		return err
	}
	err = <-errc
	wg.Wait()
	notifier.Send("STOPPING=1")
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// bindSimCPU makes the calling (owner) thread the virtual Pi's CPU, unless the
// configuration asks for a shared CPU: the host's stalls of this thread are then
// not the board's time (sim/clock). Without /proc the board stays on host time.
func bindSimCPU(pi *sim.Pi, mode config.SimCPU, log *slog.Logger) {
	if mode == config.SimCPUShared {
		log.Info("virtual Pi on host time: host stalls of the owner thread count as the board's time (hardware.sim_cpu: shared)")
		return
	}
	if err := pi.Clock().BindCPU(); err != nil {
		log.Warn("virtual Pi on host time: host stalls of the owner thread will count as the board's time", "err", err)
		return
	}
	log.Info("virtual Pi: the owner thread plays a dedicated CPU; host stalls of it are taken out of the board's time (cand_sim_host_stall_seconds_total)")
}

// spareProcs gives the Go scheduler one P more than the CPUs for the owner thread
// (and one per simulated bus thread). The owner blocks in epoll_wait, which hands its
// P back; when it wakes it needs a P at once, and if every P is busy (a sim bus
// thread spinning towards its next event, an HTTP scrape) it would queue for up to a
// scheduler tick — milliseconds, enough to overflow the MCP2515's two RX buffers.
// A GOMAXPROCS set in the environment is left alone.
func spareProcs(controllers int, sim bool, log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	n := runtime.NumCPU() + 1
	if sim {
		n += controllers
	}
	if runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
		log.Debug("GOMAXPROCS raised", "procs", n)
	}
}

// manualRestart restarts controllers that are off the bus on SIGUSR1 — the manual
// restart for restart_ms 0, like `ip link set canX type can restart`.
func manualRestart(ctx context.Context, o *bridge.Owner, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	defer signal.Stop(sig)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			log.Info("SIGUSR1: restarting controllers that are bus-off")
			o.Restart()
		}
	}
}

// watchdog feeds systemd's watchdog every half interval, but only while the owner
// thread's heartbeat is fresh: a wedged frame path gets the service restarted.
func watchdog(ctx context.Context, n sdnotify.Notifier, o *bridge.Owner) {
	iv := sdnotify.WatchdogInterval()
	if iv == 0 || !n.Enabled() {
		return
	}
	t := time.NewTicker(iv / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if mono.Now()-o.Heartbeat() < int64(iv/2) {
				n.Send("WATCHDOG=1")
			}
		}
	}
}

func (d *Daemon) serveMetrics(ctx context.Context, cfg *config.Config, opt Options, log *slog.Logger, cleanups *[]func()) error {
	l := opt.MetricsListener
	if l == nil {
		if cfg.Metrics.Listen == nil || *cfg.Metrics.Listen == "" {
			return nil
		}
		var err error
		l, err = net.Listen("tcp", *cfg.Metrics.Listen)
		if err != nil {
			return fmt.Errorf("metrics: cannot listen on %s: %w (set metrics.listen to a free address, or \"\" to disable)", *cfg.Metrics.Listen, err)
		}
	}
	d.MetricsAddr = l.Addr().String()
	srv := &http.Server{Handler: d.Metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	*cleanups = append(*cleanups, func() { srv.Close() })
	return nil
}

func openInterface(cc *config.Controller, log *slog.Logger) (fd int, undo func(), err error) {
	created, err := socketcan.EnsureLink(cc.Interface.Name, socketcan.Kind(cc.Interface.Kind), cc.Interface.Peer, socketcan.FrameSize)
	if err != nil {
		return -1, nil, err
	}
	if created {
		log.Info("created interface", "interface", cc.Interface.Name, "kind", cc.Interface.Kind)
	}
	s, err := socketcan.Open(cc.Interface.Name, socketcan.Options{RcvBuf: cc.Interface.RcvBuf})
	if err != nil {
		if created {
			socketcan.DeleteLink(cc.Interface.Name)
		}
		return -1, nil, err
	}
	for _, w := range s.Warnings() {
		log.Warn(w.Error(), "interface", cc.Interface.Name)
	}
	return s.Fd(), func() {
		s.Close()
		if created {
			if err := socketcan.DeleteLink(cc.Interface.Name); err != nil {
				log.Warn("removing interface", "interface", cc.Interface.Name, "err", err)
			} else {
				log.Info("removed interface", "interface", cc.Interface.Name)
			}
		}
	}, nil
}
