package bridge

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"cand/internal/mono"
)

// epoll user data: port index << 2 | source.
const (
	srcInt  = 0
	srcSock = 1
	srcCtl  = 3
)

// maxIdleWait bounds epoll_wait so the heartbeat stays fresh on a silent bus.
const maxIdleWait = 200 // ms

// loop waits in epoll_wait for an INT edge, a readable socket or the control
// eventfd, then gives every port its turn and the poll window, until stopped.
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
	}
}

// turn is the port's share of a loop turn: recovery when due, an INT still low,
// a TX timeout, and frames waiting in the socket. It returns timeout (ms) shortened
// to the port's next deadline.
func (p *Port) turn(manual bool, timeout int) (int, error) {
	timeout, on := p.recover(manual, timeout)
	if !on {
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
		if now := mono.Now(); now >= d {
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
	if p.stuck {
		timeout = 1 // come back soon, without spinning
	}
	return timeout, nil
}

// pollWindow watches the INT levels through the GPIO registers for the longest
// port's window after an interrupt, so a frame that follows closely is handled
// without a wake-up. Every iteration is a register read; the window bounds the spin.
func (o *Owner) pollWindow() error {
	var window time.Duration
	for _, p := range o.Ports {
		window = max(window, p.pollWindow)
	}
	if window <= 0 {
		return nil
	}
	deadline := mono.Now() + int64(window)
	for mono.Now() < deadline && !o.stop.Load() {
		for _, p := range o.Ports {
			if !p.down && p.intr.Asserted() {
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
