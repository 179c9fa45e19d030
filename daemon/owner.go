package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"cand/bridge"
	"cand/internal/sdnotify"
)

// ownerSetup is what the owner thread does first, locked to its OS thread: its
// real-time settings, the board's binding, and the controllers' initialisation;
// then ready is closed.
func (w *wiring) ownerSetup(inits []func() error, ready chan<- struct{}) func() error {
	refused := w.Metrics.AddRealtime()
	return func() error {
		if err := w.setupRealtime(refused); err != nil {
			return err
		}
		w.hw.bindOwner()
		for _, init := range inits {
			if err := init(); err != nil {
				return err
			}
		}
		close(ready)
		return nil
	}
}

// bridge runs the owner thread, and the link watch beside it, until ctx is done or
// one of them must stop cand. Once every interface is served (its chip answering or
// retried) it drops the capabilities only set-up needed (Options.DropPrivileges),
// tells systemd (READY=1), calls Options.Ready, and starts the watchdog and the
// SIGUSR1 restart; on the way out it tells systemd STOPPING=1 and logs what was
// left unsent.
func (w *wiring) bridge(ctx context.Context, ready <-chan struct{}) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errc <- w.Owner.Run(runCtx)
	}()
	stopc := make(chan error, 1) // the link watch's reason to stop cand
	if links := w.links(); links != nil {
		lw := newLinkWatch(w, links)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := lw.run(runCtx); err != nil {
				stopc <- err
			}
		}()
	}
	// stop ends the run for the link watch's reason, once the owner has stopped.
	stop := func(err error) error {
		cancel()
		<-errc
		wg.Wait()
		return err
	}
	notifier := sdnotify.FromEnv()
	select {
	case <-ready:
		w.dropPrivileges()
		w.sd = newSDStatus(notifier, w.sources)
		w.sd.ready()
		go w.sd.run(runCtx)
		w.log.Info("bridging", "controllers", len(w.cfg.Controllers), "metrics", w.MetricsAddr)
		if w.opt.Ready != nil {
			w.opt.Ready(w.Daemon)
		}
		go watchdog(runCtx, notifier, w.Owner)
		go manualRestart(runCtx, w.Owner, w.log)
	case err := <-errc:
		cancel()
		wg.Wait()
		return err
	case err := <-stopc:
		return stop(err)
	}
	var err error
	select {
	case err = <-errc:
		cancel()
		wg.Wait()
	case lerr := <-stopc:
		err = stop(lerr)
	}
	notifier.Send("STOPPING=1")
	w.logStopped()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// links is what follows the interfaces' link state: Options.Links, or rtnetlink
// for the interfaces cand opened; nil with Options.Sockets or Options.Netdevs alone.
func (w *wiring) links() Links {
	switch {
	case w.opt.Links != nil:
		return w.opt.Links
	case w.opt.Sockets == nil && w.opt.Netdevs == nil:
		return kernelLinks{cfg: w.cfg, log: w.log, nd: w.netdevs(), slcans: w.slcans}
	}
	return nil
}

// logStopped is the exit's log line: what each controller left undone.
func (w *wiring) logStopped() {
	var unsent, dropped uint64
	for _, p := range w.Owner.Ports {
		unsent += p.M.TXUnsentAtExit.Load()
		dropped += p.M.TXDropped.Load()
	}
	w.log.Info("stopped", "tx_unsent_at_exit", unsent, "tx_dropped", dropped)
}

// spareProcs gives the Go scheduler one P more than the CPUs for the owner thread
// (and one per thread the board runs, such as a simulated bus thread). The owner
// blocks in epoll_wait, which hands its P back; when it wakes it needs a P at once,
// and if every P is busy (a sim bus thread spinning towards its next event, an HTTP
// scrape) it would queue for up to a scheduler tick — milliseconds, enough to
// overflow the MCP2515's two RX buffers. A GOMAXPROCS set in the environment is
// left alone.
func spareProcs(boardThreads int, log *slog.Logger) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	n := runtime.NumCPU() + 1 + boardThreads
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
// thread's heartbeat is fresh, younger than half the interval: a wedged frame path
// gets the service restarted. The owner beats at every loop turn; its turns are
// bounded under any load (bridge.PollsPerTurn) and its idle sleep is short, so only
// a thread that stopped running ages its heartbeat that far. After it stops, at most
// the one tick within half an interval still sends WATCHDOG=1.
func watchdog(ctx context.Context, n sdnotify.Notifier, o *bridge.Owner) {
	iv := sdnotify.WatchdogInterval()
	if iv == 0 || !n.Enabled() {
		return
	}
	fresh := int64(iv / 2)
	every(ctx, iv/2, func() {
		if o.HeartbeatAge() < fresh {
			n.Send("WATCHDOG=1")
		}
	})
}
