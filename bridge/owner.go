package bridge

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"cand/hw/gpio"
	"cand/internal/mono"
	"cand/mcp2515"
)

// epoll user data: port index << 2 | source.
const (
	srcInt  = 0
	srcSock = 1
	srcCtl  = 3
)

// Owner runs the owner thread for one SPI bus and its ports.
type Owner struct {
	Ports []*Port
	// Int is each port's INT level (GPIO level register), index-aligned with Ports.
	Int []mcp2515.IntLine
	// PollWindow is, per port, how long to keep watching the INT level after an
	// interrupt before sleeping in epoll_wait again (0 = off). Bounded: on a
	// single-core board it never starves the rest.
	PollWindow []time.Duration
	// Setup runs on the locked thread before the loop (real-time priority,
	// affinity, controller initialisation); its error is fatal.
	Setup func() error

	heartbeat atomic.Int64
	ctlFd     atomic.Int64 // the control eventfd + 1 (0: not running)
	stop      atomic.Bool
	restart   atomic.Bool
}

// Restart asks the owner thread to restart every controller that is off the bus
// (bus-off with restart_ms 0, like `ip link set canX type can restart`). Safe from
// any goroutine.
func (o *Owner) Restart() {
	o.restart.Store(true)
	if fd := o.ctlFd.Load(); fd > 0 {
		var one = [8]byte{1}
		unix.Write(int(fd-1), one[:])
	}
}

// Heartbeat is the CLOCK_MONOTONIC ns of the loop's last turn; the watchdog is fed
// only while it is fresh.
func (o *Owner) Heartbeat() int64 { return o.heartbeat.Load() }

// maxIdleWait bounds epoll_wait so the heartbeat stays fresh on a silent bus.
const maxIdleWait = 200 // ms

// Run locks the calling goroutine to its OS thread and runs the loop until ctx is
// done. It leaves every controller in Configuration mode before it returns. The
// thread is not unlocked: it may carry real-time settings and ends with the
// goroutine.
func (o *Owner) Run(ctx context.Context) error {
	runtime.LockOSThread()
	if o.Setup != nil {
		if err := o.Setup(); err != nil {
			return err
		}
	}
	ctl, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("owner: eventfd: %w", err)
	}
	o.ctlFd.Store(int64(ctl) + 1)
	defer func() { o.ctlFd.Store(0); unix.Close(ctl) }()
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
		if err := add(p.IntFd, unix.EPOLLIN, i<<2|srcInt); err != nil {
			return fmt.Errorf("owner: %s: cannot watch the INT line: %w", p.Name, err)
		}
		if err := add(p.SockFd, unix.EPOLLIN|unix.EPOLLET, i<<2|srcSock); err != nil {
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
		if serr := p.Ctl.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("%s: leaving the bus: %w", p.Name, serr)
		}
	}
	return err
}

func (o *Owner) loop(ep int) error {
	var events [16]unix.EpollEvent
	timeout := 0 // first turn: look at every INT level and socket at once
	for {
		o.heartbeat.Store(mono.Now())
		if timeout != 0 {
			n, err := unix.EpollWait(ep, events[:], timeout)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return fmt.Errorf("owner: epoll_wait: %w", err)
			}
			for _, ev := range events[:max(n, 0)] {
				data := int(ev.Fd)
				if data&3 == srcCtl {
					var b [8]byte
					unix.Read(int(o.ctlFd.Load()-1), b[:])
					continue
				}
				p := o.Ports[data>>2]
				switch data & 3 {
				case srcInt:
					if err := o.intEvents(data>>2, p); err != nil {
						return err
					}
				case srcSock:
					p.sockReadable = true
				}
			}
		}
		if o.stop.Load() {
			return nil
		}
		timeout = maxIdleWait
		manual := o.restart.Swap(false)
		for i, p := range o.Ports {
			if next := p.health(mono.Now()); next != 0 {
				timeout = min(timeout, max(int((next-mono.Now())/1e6)+1, 1))
			}
			if p.down {
				continue
			}
			if p.busOff {
				if now := mono.Now(); manual || (p.restartAt != 0 && now >= p.restartAt) {
					if !p.restartOrDown(true) {
						continue
					}
				} else if p.restartAt != 0 {
					timeout = min(timeout, int((p.restartAt-now)/1e6)+1)
				}
			}
			// Level semantics: an INT still low (missed edge, or the handler's
			// bound) is serviced now.
			if o.Int[i].Asserted() {
				if err := p.interrupt(0); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
			}
			if d := p.txDeadline(); d != 0 {
				if now := mono.Now(); now >= d {
					if err := p.txTimeout(); err != nil {
						return fmt.Errorf("%s: TX timeout: %w", p.Name, err)
					}
				} else {
					timeout = min(timeout, int((d-now)/1e6)+1)
				}
			}
			if err := p.pumpTX(); err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			if p.stuck {
				timeout = 1 // come back soon, without spinning
			}
		}
		if err := o.pollWindow(); err != nil {
			return err
		}
	}
}

// intEvents reads the INT line's queued edge events (one read) and handles the
// interrupt with the newest edge's kernel timestamp. If the level is already high,
// the poll window or a previous pass has handled it: no SPI transfer is spent.
func (o *Owner) intEvents(i int, p *Port) error {
	n, err := gpio.ReadEvents(p.IntFd, p.evBuf[:], p.ev[:])
	if err != nil && n == 0 {
		if err == unix.EAGAIN {
			return nil
		}
		return fmt.Errorf("%s: reading INT events: %w", p.Name, err)
	}
	var edge int64
	for k := range n {
		e := &p.ev[k]
		if e.ID == gpio.EventFallingEdge {
			edge = int64(e.TimestampNs)
		}
		if lost := p.seq.Observe(e); lost != 0 {
			p.M.IntEventsLost.Add(uint64(lost))
		}
	}
	p.M.IntEdges.Add(uint64(n))
	if edge == 0 || p.down || !o.Int[i].Asserted() {
		return nil
	}
	if edge <= p.releasedNs {
		// A stale edge (its interrupt was handled by polling): INT is low again for
		// a newer frame whose edge has not been read yet. Handle it, but do not
		// pair its latency with the old timestamp.
		edge = 0
	}
	if err := p.interrupt(edge); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	return nil
}

// pollWindow watches the INT levels through the GPIO registers for the configured
// window after an interrupt, so a frame that follows closely is handled without a
// wake-up. Every iteration is a register read; the window bounds the spin.
func (o *Owner) pollWindow() error {
	var window time.Duration
	for _, w := range o.PollWindow {
		window = max(window, w)
	}
	if window <= 0 {
		return nil
	}
	deadline := mono.Now() + int64(window)
	for mono.Now() < deadline && !o.stop.Load() {
		for i, p := range o.Ports {
			if !p.down && o.Int[i].Asserted() {
				if err := p.interrupt(mono.Now()); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				if err := p.pumpTX(); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				deadline = mono.Now() + int64(window)
				p.M.PolledInts.Inc()
			}
		}
	}
	return nil
}
