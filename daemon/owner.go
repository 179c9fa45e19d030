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
	"time"

	"cand/bridge"
	"cand/internal/mono"
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

// bridge runs the owner thread until ctx is done. Once it is ready it tells
// systemd (READY=1), calls Options.Ready, and starts the watchdog and the SIGUSR1
// restart; on the way out it tells systemd STOPPING=1.
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
	notifier := sdnotify.FromEnv()
	select {
	case <-ready:
		notifier.Send("READY=1\nSTATUS=bridging")
		w.log.Info("bridging", "controllers", len(w.cfg.Controllers), "metrics", w.MetricsAddr)
		if w.opt.Ready != nil {
			w.opt.Ready(w.Daemon)
		}
		go watchdog(runCtx, notifier, w.Owner)
		go manualRestart(runCtx, w.Owner, w.log)
	case err := <-errc:
		wg.Wait()
		return err
	}
	err := <-errc
	wg.Wait()
	notifier.Send("STOPPING=1")
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
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
	t := time.NewTicker(iv / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if mono.Now()-o.Heartbeat() < fresh {
				n.Send("WATCHDOG=1")
			}
		}
	}
}
