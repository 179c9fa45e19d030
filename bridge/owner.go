package bridge

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"cand/internal/kernelop"
	"cand/internal/mono"
)

// Owner runs the owner thread for one SPI bus and its ports.
type Owner struct {
	Ports []*Port
	// Setup runs on the locked thread before the loop (real-time priority,
	// affinity, controller initialisation); its error is fatal.
	Setup func() error
	// Clock is the board's time, which the loop's deadlines (poll window, drain)
	// are read in: the one its ports were built with (nil: CLOCK_MONOTONIC, a
	// real Pi's). The heartbeat is CLOCK_MONOTONIC: systemd's watchdog runs on
	// the host's clock, whatever the board's.
	Clock mono.Clock
	// Kernel is told around the owner thread's frame-path system calls (socket
	// writes and reads, epoll looks, INT event reads) so that the virtual Pi can
	// charge each at the board's kernel cost (nil: real hardware, not metered).
	Kernel kernelop.Meter
	// Delivery, if set, is the delivery thread that writes received frames to
	// the sockets (delivery.go); nil: the owner writes them after each drain.
	// It is started, and its Setup run, before Setup.
	Delivery *Delivery

	heartbeat atomic.Int64
	ctlFd     atomic.Int64 // the control eventfd + 1 (0: not running)
	stop      atomic.Bool
	restart   atomic.Bool
	failures  int   // ports whose socket failed for good (owner thread only)
	kernel    meter // Kernel, for the loop
	apply     applier

	// The loop's schedule (loop.go), on the owner thread, and its published counts.
	win   window
	sched schedule
	stats loopStats
}

// Restart asks the owner thread to restart every controller that is off the bus
// (bus-off with restart_ms 0, like `ip link set canX type can restart`). Safe from
// any goroutine.
func (o *Owner) Restart() {
	o.restart.Store(true)
	o.kick()
}

// kick wakes the owner thread through the control eventfd, if it runs.
func (o *Owner) kick() {
	if fd := o.ctlFd.Load(); fd > 0 {
		var one = [8]byte{1}
		unix.Write(int(fd-1), one[:])
	}
}

// RingWaiting is how many received frames wait in the ports' RX rings for the
// socket (published by the owner, not yet written). Safe from any goroutine.
func (o *Owner) RingWaiting() uint64 {
	n := uint64(0)
	for _, p := range o.Ports {
		n += p.ring.waiting()
	}
	return n
}

// HeartbeatAge is how long ago (CLOCK_MONOTONIC ns) the loop made its last turn;
// the watchdog is fed only while it is young. Safe from any goroutine.
func (o *Owner) HeartbeatAge() int64 { return mono.Now() - o.heartbeat.Load() }

// HeartbeatAt is when (CLOCK_MONOTONIC ns) the loop made its last turn. Safe
// from any goroutine.
func (o *Owner) HeartbeatAt() int64 { return o.heartbeat.Load() }

// Run locks the calling goroutine to its OS thread and runs the loop until ctx is
// done, or until no port can bridge any more (every socket failed: an error).
// Before it returns it accounts for every frame still in flight (drain.go) and
// leaves every controller in Configuration mode. The thread is not unlocked: it may
// carry real-time settings and ends with the goroutine.
func (o *Owner) Run(ctx context.Context) error {
	runtime.LockOSThread()
	// The control eventfd comes first: Setup may report cand ready (its Ready
	// callback, READY=1), and an Apply from then on must be taken, by the loop once
	// it runs, not refused as "not running".
	ctl, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("owner: eventfd: %w", err)
	}
	o.ctlFd.Store(int64(ctl) + 1)
	defer func() { o.ctlFd.Store(0); o.refusePending(); unix.Close(ctl) }()
	if d := o.Delivery; d != nil {
		// Before Setup: its real-time settings need the capabilities cand drops
		// once ready.
		d.ownerKernel = o.Kernel
		if err := d.start(o.Ports); err != nil {
			return err
		}
		defer d.halt() // if the loop did not run: a no-op once halted
	}
	if o.Setup != nil {
		if err := o.Setup(); err != nil {
			return err
		}
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("owner: epoll_create1: %w", err)
	}
	defer unix.Close(ep)
	add := func(fd int, events uint32, data int) error {
		ev := unix.EpollEvent{Events: events, Fd: int32(data)}
		return unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev)
	}
	if err := add(ctl, unix.EPOLLIN, srcCtl); err != nil {
		return fmt.Errorf("owner: epoll_ctl: %w", err)
	}
	for i, p := range o.Ports {
		p.index, p.ep, p.owner = i, ep, o
		p.kernel = meter{o.Kernel}
		if err := add(p.intFd, unix.EPOLLIN, i<<2|srcInt); err != nil {
			return fmt.Errorf("owner: %s: cannot watch the INT line: %w", p.Name, err)
		}
		if err := add(p.sockFd, unix.EPOLLIN|unix.EPOLLET, i<<2|srcSock); err != nil {
			return fmt.Errorf("owner: %s: cannot watch the socket: %w", p.Name, err)
		}
		p.sockReadable = true // frames may already be queued
	}
	stopWatch := context.AfterFunc(ctx, func() {
		o.stop.Store(true)
		var one = [8]byte{1}
		unix.Write(ctl, one[:])
	})
	defer stopWatch()

	err = o.loop(ep)
	for _, p := range o.Ports {
		p.ep = -1 // the epoll set is closed with Run
	}
	if d := o.Delivery; d != nil {
		d.halt() // what it left in the rings, the owner writes (drain.go)
	}
	if derr := o.drain(); derr != nil && err == nil {
		err = derr
	}
	return err
}
