package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// signals is the context cand runs in: done on SIGINT or SIGTERM, after which
// cand accounts for every frame in flight and exits 0. SIGHUP (systemctl reload:
// ExecReload=/bin/kill -HUP $MAINPID) calls reload, one at a time; its default
// action would end cand at once. (SIGUSR1, the manual restart after bus-off, is
// the daemon's.) stop releases the signals.
func signals(log *slog.Logger, reload func()) (ctx context.Context, stop func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: reloading the configuration")
				reload()
			}
		}
	}()
	return ctx, func() {
		cancel()
		<-done
		signal.Stop(hup)
	}
}
