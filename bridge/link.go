package bridge

import (
	"errors"

	"golang.org/x/sys/unix"

	"cand/internal/mono"
	"cand/mcp2515"
)

// LinkState is a port's SocketCAN interface as the link watch reports it. A
// kernel CAN driver takes `ip link set can0 down` for "controller off the bus"
// and `up` for "back on" (drivers/net/can/spi/mcp251x.c: mcp251x_stop and
// mcp251x_open); cand does the same for its interface.
type LinkState int32

const (
	LinkUp   LinkState = iota // up: the controller is on the bus
	LinkDown                  // down: the controller is held off the bus
	LinkGone                  // deleted: held off the bus until the interface is back
)

// String returns "up", "down" or "gone".
func (s LinkState) String() string {
	switch s {
	case LinkUp:
		return "up"
	case LinkDown:
		return "down"
	case LinkGone:
		return "gone"
	}
	return "unknown"
}

// stateStopped is the kernel's name for a CAN controller that is off the bus by
// request (can_get_state_str in drivers/net/can/dev/dev.c), as `ip -details link
// show` prints it.
const stateStopped = "STOPPED"

// SetLink posts port i's link state, from any goroutine (the link watch); the
// owner thread acts on it in its next turn.
func (o *Owner) SetLink(i int, s LinkState) {
	o.Ports[i].linkWant.Store(int32(s))
	o.kick()
}

// SocketReplaced tells the owner thread that port i's socket descriptor now
// refers to a new socket (its interface was deleted and created again, and a
// socket bound to it put in the old one's place): the owner watches it again.
// Safe from any goroutine.
func (o *Owner) SocketReplaced(i int) {
	o.Ports[i].replaced.Store(true)
	o.kick()
}

// followLink acts on the link state the watch posted and reports whether the
// interface is up. Down or gone, the controller leaves the bus: frames are neither
// read from the socket nor sent, and wait in the socket queue. Up again, the
// controller is initialised again (as after a reset) and bridging resumes.
func (p *Port) followLink() bool {
	if p.replaced.Load() && p.replaced.Swap(false) {
		p.watchSocket()
	}
	want := LinkState(p.linkWant.Load())
	if want == p.linkHave {
		return want == LinkUp
	}
	prev := p.linkHave
	p.linkHave = want
	switch {
	case prev == LinkUp:
		p.offBus(want)
	case want == LinkUp:
		p.backOnBus(prev)
	default:
		p.log("interface "+want.String()+": controller stays off the bus", p.linkArgs()...)
	}
	p.updateGate()
	return p.linkHave == LinkUp
}

func (p *Port) linkArgs(more ...any) []any {
	return append([]any{"controller", p.Name, "interface", p.M.Interface()}, more...)
}

// offBus takes the controller off the bus for an interface that went down or away.
func (p *Port) offBus(why LinkState) {
	if !p.down {
		p.leaveBus()
	}
	p.M.LinkUp.Set(0)
	msg := "interface down: controller off the bus; frames wait in the socket queue"
	if why == LinkGone {
		msg = "interface deleted: controller off the bus until the interface is back"
	}
	p.log(msg, p.linkArgs("state", stateStopped)...)
}

// backOnBus puts the controller back on the bus once its interface is up again.
func (p *Port) backOnBus(prev LinkState) {
	p.sockReadable = true // frames may have waited
	p.linkErrs = false
	p.M.LinkUp.Set(1)
	if p.down {
		p.retryAt = mono.Now() // the chip's own retry, at once
		p.info("interface up; the chip does not answer yet (retried with back-off)", p.linkArgs("was", prev.String())...)
		return
	}
	if !p.restartOrDown(false) {
		return
	}
	p.info("interface up: controller back on the bus", p.linkArgs("was", prev.String(), "state", p.Ctl.State().String())...)
}

// leaveBus puts the controller in Configuration mode, so it leaves the bus, then
// reads what the chip still holds (frames received before, TX done): they reach
// the socket, or the socket's refusal is counted. A frame still loaded for TX stays
// pending and is counted dropped at the next restart.
func (p *Port) leaveBus() {
	if err := p.Ctl.Stop(); err != nil {
		p.log("cannot take the controller off the bus", p.linkArgs("err", err.Error())...)
		return
	}
	if _, err := p.Ctl.HandleInterrupt(p); err != nil {
		p.log("reading the chip after leaving the bus", p.linkArgs("err", err.Error())...)
	}
}

// watchSocket puts the port's socket descriptor, which now refers to a new socket,
// in the owner's epoll set again (the old socket's entry went with it).
func (p *Port) watchSocket() {
	p.sockReadable = true
	if p.ep < 0 {
		return // not running yet: Run adds it
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(p.index<<2 | srcSock)}
	err := unix.EpollCtl(p.ep, unix.EPOLL_CTL_ADD, p.sockFd, &ev)
	if errors.Is(err, unix.EEXIST) {
		err = unix.EpollCtl(p.ep, unix.EPOLL_CTL_MOD, p.sockFd, &ev)
	}
	if err != nil {
		p.fail("watch", err)
	}
}

// updateGate hides INT from the loop while the port is not bridging or the line is
// stuck (storm.go).
func (p *Port) updateGate() {
	p.gate.masked = !p.bridging()
	p.gate.storm = p.storm
}

var _ mcp2515.IntLine = (*intGate)(nil)
