package main

import (
	"log/slog"
	"sync/atomic"

	"cand/daemon"
)

// reloader reloads the running daemon's configuration on SIGHUP; before the
// daemon bridges there is nothing to reload into.
type reloader struct {
	d   atomic.Pointer[daemon.Daemon]
	log *slog.Logger
}

// ready is daemon.Options.Ready.
func (r *reloader) ready(d *daemon.Daemon) { r.d.Store(d) }

func (r *reloader) reload() {
	d := r.d.Load()
	if d == nil {
		r.log.Warn("SIGHUP before cand bridges: no reload; the configuration is read as the start goes on")
		return
	}
	res, err := d.Reload()
	if err != nil {
		return // the daemon logged why
	}
	r.log.Info("reloaded", "applied", len(res.Applied), "need_restart", len(res.NeedRestart))
}
