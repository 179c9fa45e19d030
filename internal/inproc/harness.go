package inproc

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Timeouts: how long Start waits for the daemon to bridge, and Stop for it to
// return once cancelled.
const (
	ReadyTimeout = 20 * time.Second
	StopTimeout  = 10 * time.Second
)

// Options say what Start prepares besides the daemon.
type Options struct {
	// Controllers is how many socketpairs to make, one per controller (0: the
	// daemon opens its own sockets).
	Controllers int
	// NoSocket, when set, names the controllers that get no pair (-1 on both
	// sides): the daemon makes their socket itself.
	NoSocket func(i int) bool
	// BlockingHost makes the caller's ends blocking (set SO_RCVTIMEO to bound a
	// read); otherwise every end is non-blocking.
	BlockingHost bool
	Queues       Queues
	// Metrics hands the daemon a TCP listener on a free loopback port for
	// /metrics, whatever its configuration says.
	Metrics bool
}

// Env is what the run function passes on to daemon.Run.
type Env[D any] struct {
	Sockets []int        // the daemon's ends, index-aligned with the controllers (-1: none)
	Metrics net.Listener // nil unless Options.Metrics
	Ready   func(D)      // the daemon's ready callback
}

// Harness is a daemon running in this process.
type Harness[D any] struct {
	D D // what the daemon passed to Ready
	// Host are the caller's ends, index-aligned with the controllers. A caller
	// may replace an end; Close closes the ends here then.
	Host []int

	ends   []int
	cancel context.CancelFunc
	done   chan error
	exited bool  // run returned
	err    error // what it returned
}

// Start runs run in a goroutine with a context that Stop cancels and returns once
// the daemon called Ready, or with an error if it returned first or did not get
// ready within ReadyTimeout (the daemon is stopped and the sockets closed then).
func Start[D any](ctx context.Context, o Options, run func(context.Context, Env[D]) error) (*Harness[D], error) {
	h := &Harness[D]{done: make(chan error, 1)}
	if err := h.pairs(o); err != nil {
		h.closeSockets()
		return nil, err
	}
	var ln net.Listener
	if o.Metrics {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			h.closeSockets()
			return nil, fmt.Errorf("inproc: a loopback listener for /metrics: %w", err)
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	ready := make(chan D, 1)
	go func() {
		h.done <- run(rctx, Env[D]{Sockets: h.ends, Metrics: ln, Ready: func(d D) { ready <- d }})
	}()
	select {
	case h.D = <-ready:
		return h, nil
	case err := <-h.done:
		h.exited, h.err = true, err
		h.Close()
		return nil, fmt.Errorf("the daemon exited before it was ready: %v", err)
	case <-time.After(ReadyTimeout):
		h.Close()
		return nil, fmt.Errorf("the daemon was not ready after %v", ReadyTimeout)
	}
}

// Stop cancels the daemon's context and waits up to StopTimeout for it to return.
// ok is false if it did not; err is what it returned. Later calls return the same
// without waiting again once it has returned.
func (h *Harness[D]) Stop() (ok bool, err error) {
	h.cancel()
	return h.Exited(StopTimeout)
}

// Exited waits up to d for the daemon to return by itself (without Stop): ok is
// false if it still runs, err what it returned.
func (h *Harness[D]) Exited(d time.Duration) (ok bool, err error) {
	if h.exited {
		return true, h.err
	}
	select {
	case h.err = <-h.done:
		h.exited = true
		return true, h.err
	case <-time.After(d):
		return false, nil
	}
}

// Close stops the daemon if it still runs (as Stop), then closes every socket
// end. It reports Stop's ok and err.
func (h *Harness[D]) Close() (ok bool, err error) {
	ok, err = h.Stop()
	h.closeSockets()
	return ok, err
}

// Ends are the daemon's ends of the sockets, index-aligned with the controllers
// (-1: none).
func (h *Harness[D]) Ends() []int { return h.ends }
