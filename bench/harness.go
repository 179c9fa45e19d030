package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"cand/config"
	"cand/daemon"
	"cand/internal/inproc"
	"cand/sim"
)

// harness is the daemon running in-process for one scenario, one socketpair per
// controller as its CAN sockets, every queue deep (inproc.Deep).
type harness struct {
	*inproc.Harness[*daemon.Daemon]
	d    *daemon.Daemon
	name string
}

// hosts are the benchmark's ends of the sockets, index-aligned with the
// controllers.
func (h *harness) hosts() []int { return h.Host }

// close stops the daemon if it still runs and closes the sockets.
func (h *harness) close() {
	h.stop()
	h.Close()
}

// stop stops the daemon and waits for it.
func (h *harness) stop() error {
	switch ok, err := h.Stop(); {
	case !ok:
		return fmt.Errorf("bench: %s: the daemon did not stop within %v", h.name, inproc.StopTimeout)
	case err != nil && !errors.Is(err, context.Canceled):
		return fmt.Errorf("bench: %s: daemon: %w", h.name, err)
	}
	return nil
}

// startDaemon runs the daemon for cfg (on pi, or on the real board when pi is nil
// and cfg says so) until it is ready. The daemon's logs are discarded; /metrics is
// served on a loopback port of its own.
func startDaemon(ctx context.Context, name string, cfg *config.Config, pi *sim.Pi) (*harness, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := inproc.Start(ctx, inproc.Options{Controllers: len(cfg.Controllers), Queues: inproc.Deep(), Metrics: true},
		func(ctx context.Context, e inproc.Env[*daemon.Daemon]) error {
			return daemon.Run(ctx, cfg, daemon.Options{Version: "bench", Log: log, Sockets: e.Sockets, Sim: pi,
				MetricsListener: e.Metrics, Ready: e.Ready})
		})
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", name, err)
	}
	return &harness{Harness: h, d: h.D, name: name}, nil
}

// portsWindow watches every controller's counters.
func (h *harness) portsWindow() *portsWindow {
	w := &portsWindow{}
	for _, p := range h.d.Owner.Ports {
		w.ms = append(w.ms, p.M)
	}
	return w
}

// names are the controllers' names.
func (h *harness) names(cfg *config.Config) []string {
	var n []string
	for _, cc := range cfg.Controllers {
		n = append(n, cc.Name)
	}
	return n
}
