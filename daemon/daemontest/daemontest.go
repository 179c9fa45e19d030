// Package daemontest runs the whole daemon in-process on the virtual Pi, for the
// tests of other packages (the command, the monitoring files): one end of a
// SOCK_SEQPACKET socketpair stands in for each controller's CAN socket, as in
// package daemon's own end-to-end tests.
package daemontest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/daemon"
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
	d := &Daemon{}
	var ends []int
	for range cfg.Controllers {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.SetNonblock(fds[1], true)
		// A deep queue on cand's side: the stand-in for SO_RCVBUFFORCE.
		unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		d.Host, ends = append(d.Host, fds[0]), append(ends, fds[1])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, ready := make(chan error, 1), make(chan *daemon.Daemon, 1)
	go func() {
		done <- daemon.Run(ctx, cfg, daemon.Options{Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Sockets: ends, MetricsListener: ln, Ready: func(dd *daemon.Daemon) { ready <- dd }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("daemon did not stop within 10 s")
		}
		for _, fd := range append(d.Host, ends...) {
			unix.Close(fd)
		}
	})
	select {
	case d.Daemon = <-ready:
	case err := <-done:
		t.Fatalf("daemon exited before ready: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("daemon not ready after 20 s")
	}
	return d
}
