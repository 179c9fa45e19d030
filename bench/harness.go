package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/daemon"
	"cand/sim"
)

// socketPair is one controller's CAN socket as a SOCK_SEQPACKET socketpair, which
// carries the same 16-byte frames: the driver's end and the benchmark's.
type socketPair struct{ host, driver int }

func newSocketPair() (socketPair, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return socketPair{-1, -1}, fmt.Errorf("bench: socketpair: %w", err)
	}
	// Deep queues both ways, as the daemon asks of a real CAN socket with
	// SO_RCVBUFFORCE: a unix socket's sender's buffer holds what is queued.
	for _, fd := range fds {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	}
	return socketPair{host: fds[0], driver: fds[1]}, nil
}

func (s socketPair) close() {
	unix.Close(s.host)
	unix.Close(s.driver)
}

// socketPairs makes n pairs; on an error it closes those made.
func socketPairs(n int) ([]socketPair, error) {
	var ps []socketPair
	for range n {
		p, err := newSocketPair()
		if err != nil {
			closePairs(ps)
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func closePairs(ps []socketPair) {
	for _, p := range ps {
		p.close()
	}
}

func hostEnds(ps []socketPair) []int {
	fds := make([]int, len(ps))
	for i, p := range ps {
		fds[i] = p.host
	}
	return fds
}

// harness is the daemon running in-process for one scenario, one socketpair per
// controller as its CAN sockets.
type harness struct {
	d     *daemon.Daemon
	pairs []socketPair
	stop  func() error // stops the daemon and waits for it
}

// hosts are the benchmark's ends of the sockets, index-aligned with the
// controllers.
func (h *harness) hosts() []int { return hostEnds(h.pairs) }

// close stops the daemon if it still runs and closes the sockets.
func (h *harness) close() {
	h.stop()
	closePairs(h.pairs)
}

// startDaemon runs the daemon for cfg (on pi, or on the real board when pi is nil
// and cfg says so) until it is ready. The daemon's logs are discarded; /metrics is
// served on a loopback port of its own.
func startDaemon(ctx context.Context, name string, cfg *config.Config, pi *sim.Pi) (*harness, error) {
	pairs, err := socketPairs(len(cfg.Controllers))
	if err != nil {
		return nil, err
	}
	socks := make([]int, len(pairs))
	for i, p := range pairs {
		socks[i] = p.driver
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closePairs(pairs)
		return nil, fmt.Errorf("bench: metrics listener: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	ready := make(chan *daemon.Daemon, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- daemon.Run(rctx, cfg, daemon.Options{Version: "bench", Log: log, Sockets: socks, Sim: pi,
			MetricsListener: ln, Ready: func(d *daemon.Daemon) { ready <- d }})
	}()
	stopped := false
	var stopErr error
	stop := func() error {
		if stopped {
			return stopErr
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				stopErr = fmt.Errorf("bench: %s: daemon: %w", name, err)
			}
		case <-time.After(10 * time.Second):
			stopErr = fmt.Errorf("bench: %s: the daemon did not stop within 10s", name)
		}
		return stopErr
	}
	h := &harness{pairs: pairs, stop: stop}
	select {
	case h.d = <-ready:
		return h, nil
	case err := <-done:
		stopped = true
		cancel()
		closePairs(pairs)
		return nil, fmt.Errorf("bench: %s: daemon exited before it was ready: %v", name, err)
	case <-time.After(20 * time.Second):
		stop()
		closePairs(pairs)
		return nil, fmt.Errorf("bench: %s: daemon not ready after 20s", name)
	}
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
