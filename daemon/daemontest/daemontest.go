// Package daemontest starts the whole daemon in-process on the virtual Pi for the
// tests of other packages (the command, the monitoring files), from a
// configuration file's text, with the harness the daemon's own tests, the
// benchmark and the soak use (internal/inproc).
package daemontest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"cand/config"
	"cand/daemon"
	"cand/internal/inproc"
)

// Daemon is a running cand.
type Daemon struct {
	*daemon.Daemon
	// Host are the test's ends of the CAN sockets, index-aligned with the
	// controllers: what the test reads is what candump would show, what it writes
	// what cansend would send. They block; set a timeout to bound a read.
	Host []int
}

// Start decodes yaml as a configuration file, runs cand with it (serving /metrics
// on a free loopback port whatever metrics.listen says) and returns once every
// controller is bridging. cand stops when the test ends.
func Start(t testing.TB, yaml string) *Daemon {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("%v\nin:\n%s", err, yaml)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := inproc.Start(context.Background(), inproc.Options{
		Controllers:  len(cfg.Controllers),
		BlockingHost: true,
		// A deep queue on cand's side: the stand-in for SO_RCVBUFFORCE.
		Queues:  inproc.Queues{DaemonReceive: 8 << 20},
		Metrics: true,
	}, func(ctx context.Context, e inproc.Env[*daemon.Daemon]) error {
		return daemon.Run(ctx, cfg, daemon.Options{Version: "test", Log: log, Sockets: e.Sockets,
			MetricsListener: e.Metrics, Ready: e.Ready})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		switch ok, err := h.Close(); {
		case !ok:
			t.Errorf("daemon did not stop within %v", inproc.StopTimeout)
		case err != nil:
			t.Errorf("daemon: %v", err)
		}
	})
	return &Daemon{Daemon: h.D, Host: h.Host}
}
