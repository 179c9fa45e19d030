package bridge

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"cand/internal/kernelop"
	"cand/internal/rawsys"
)

// epoll user data: port index << 2 | source.
const (
	srcInt  = 0
	srcSock = 1
	srcCtl  = 3
)

// maxIdleWait bounds epoll_wait so the heartbeat stays fresh on a silent bus.
const maxIdleWait = 200 // ms

// PollsPerTurn is the loop's bound. A loop turn serves every duty: the heartbeat,
// a stop request and the control eventfd, the epoll set (INT edges, and each
// socket's readability), and each port's turn (recovery and chip health when due, an
// INT still low, a TX timeout, frames waiting in the socket). Between two turns the
// poll window makes at most PollsPerTurn polls — a poll reads each port's INT level
// through the GPIO registers — and returns as soon as a poll has handled an
// interrupt. So from one turn to the next the owner thread reads each INT level at
// most PollsPerTurn + 1 times and handles at most three interrupts per port (its
// edge's, its turn's and the window's; HandleInterrupt is bounded by its passes),
// whatever the RX load and int_poll_window: no duty waits longer, and a frame
// written to the socket while a TX buffer is free is read at the next turn. The
// turn's zero-timeout epoll_wait looks at every socket, INT line and the control
// eventfd at once, for less than one recv on one socket costs (BenchmarkSocketLook);
// 32 polls keep that system call a small part of the spin while a TX frame still
// waits only microseconds, far less than a frame's time on the bus.
const PollsPerTurn = 32

// WindowRearms caps one poll window. An interrupt it handles re-arms it for
// int_poll_window, and so does a poll that comes a whole window after the previous
// one (the thread was not running: the bus was not keeping quiet); once re-armed
// this many times it closes, however recent the last interrupt, and the next loop
// turn does not poll, so the owner thread sleeps in epoll_wait until its next event
// (an INT edge, a frame to send). Under sustained traffic a window thus handles at
// most WindowRearms interrupts and lasts at most (WindowRearms + 1) ×
// int_poll_window plus the handling (and any time the thread is not running); then
// the other threads have the CPU until the next frame: a single-core board is never
// starved. Each rest costs the next frame an epoll wake-up, the window's purpose
// undone once; 64 makes that one frame in 65 (at 1 Mbit/s and full load, a rest
// every 8 ms or so).
const WindowRearms = 64

// window is the poll window's state across loop turns (owner thread only).
type window struct {
	open     bool
	rest     bool  // the last window was capped: the next turn does not poll
	length   int64 // the longest port's int_poll_window (ns)
	deadline int64 // length after its last interrupt
	last     int64 // its previous poll
	rearms   int   // since it opened: per interrupt handled, and per gap
}

// loop waits in epoll_wait for an INT edge, a readable socket or the control
// eventfd, then gives every port its turn and the poll window, until stopped. While
// the window is open, epoll_wait only looks (timeout 0).
func (o *Owner) loop(ep int) error {
	o.kernel = meter{o.Kernel}
	var events [16]unix.EpollEvent
	timeout := -1 // first turn: no epoll_wait; look at every INT level and socket at once
	for {
		o.beat()
		if timeout >= 0 {
			var n int
			var err error
			if timeout == 0 {
				o.kernel.enter(kernelop.EpollLook)
				n, err = rawsys.EpollLook(ep, events[:])
				o.kernel.exit(kernelop.EpollLook)
			} else {
				n, err = unix.EpollWait(ep, events[:], timeout)
			}
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
					if err := p.intEvents(); err != nil {
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
		o.applyPending() // apply.go: a change posted with Owner.Apply
		timeout = maxIdleWait
		manual := o.restart.Swap(false)
		for _, p := range o.Ports {
			var err error
			if timeout, err = p.turn(manual, timeout); err != nil {
				return err
			}
		}
		if err := o.check(); err != nil { // sockerr.go: every port's socket failed
			return err
		}
		if err := o.pollWindow(); err != nil {
			return err
		}
		if o.win.open {
			timeout = 0
		}
	}
}

// turn is the port's share of a loop turn: recovery when due, an INT still low,
// a TX timeout, and frames waiting in the socket. It returns timeout (ms) shortened
// to the port's next deadline.
func (p *Port) turn(manual bool, timeout int) (int, error) {
	timeout, on := p.recover(manual, timeout)
	if !on {
		p.deliver() // what the ring holds still goes to the socket, or is counted
		return timeout, nil
	}
	// Level semantics: an INT still low (missed edge, or the handler's bound) is
	// serviced now.
	if p.intr.Asserted() {
		if err := p.interrupt(0); err != nil {
			return timeout, fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	if d := p.txDeadline(); d != 0 {
		if now := p.clock.Now(); now >= d {
			if err := p.txTimeout(); err != nil {
				return timeout, fmt.Errorf("%s: TX timeout: %w", p.Name, err)
			}
		} else {
			timeout = min(timeout, int((d-now)/1e6)+1)
		}
	}
	if err := p.pumpTX(); err != nil {
		return timeout, fmt.Errorf("%s: %w", p.Name, err)
	}
	p.deliver() // error frames a TX timeout or a restart queued
	if p.stuck {
		timeout = 1 // come back soon, without spinning
	}
	return timeout, nil
}

// pollWindow watches the INT levels through the GPIO registers for the longest
// port's window after an interrupt, so a frame that follows closely is handled
// without a wake-up. The window opens at a loop turn and spans turns: each call
// polls until it has handled an interrupt or made PollsPerTurn polls, then returns
// to the loop for a turn. It closes when the window has passed since its last
// interrupt, or once it has been re-armed WindowRearms times (then the next turn
// rests).
func (o *Owner) pollWindow() error {
	w := &o.win
	if !w.open {
		if w.rest {
			w.rest = false
			return nil
		}
		var length time.Duration
		for _, p := range o.Ports {
			length = max(length, p.pollWindow)
		}
		if length <= 0 {
			return nil
		}
		now := o.Clock.Now()
		*w = window{open: true, length: int64(length), deadline: now + int64(length), last: now}
		o.sched.windows++
	}
	for range PollsPerTurn {
		if o.stop.Load() {
			return nil
		}
		now := o.Clock.Now()
		if now >= w.deadline {
			if now-w.last <= w.length {
				w.open = false
				return nil
			}
			// The thread did not run for a whole window since its previous
			// poll: that was not the bus keeping quiet. The window goes on, and
			// this counts towards its cap as an interrupt does.
			if o.rearm(now, 0) {
				return nil
			}
		}
		w.last = now
		o.sched.polls++
		handled := 0
		for _, p := range o.Ports {
			if !p.down && p.intr.Asserted() {
				if err := p.interrupt(o.Clock.Now()); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				if err := p.pumpTX(); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				p.M.PolledInts.Inc()
				handled++
			}
		}
		if handled > 0 {
			o.rearm(o.Clock.Now(), handled)
			return nil
		}
	}
	return nil
}

// rearm extends the window to its length from now, after it handled ints
// interrupts (0: a gap in the thread's running), and closes it once it has been
// re-armed WindowRearms times; it reports whether it closed.
func (o *Owner) rearm(now int64, ints int) bool {
	w := &o.win
	w.deadline = now + w.length
	w.rearms += max(ints, 1)
	o.sched.ints += uint64(ints)
	o.sched.maxRearms = max(o.sched.maxRearms, uint64(w.rearms))
	if w.rearms < WindowRearms {
		return false
	}
	w.open, w.rest = false, true
	o.sched.capped++
	return true
}
