package bridge

import (
	"errors"

	"golang.org/x/sys/unix"

	"cand/mcp2515"
	"cand/socketcan"
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

// ReplaceSocket hands the owner thread fd, a new socket for port i (its interface
// was deleted, which leaves the old socket unbound for good, and made again). In
// its next turn the owner counts what still waited in the old socket's queue as
// dropped, puts fd in the old descriptor's place (dup3, so the descriptor the port
// was built with stays valid) and closes fd. The owner owns fd from this call on.
// Safe from any goroutine.
func (o *Owner) ReplaceSocket(i int, fd int) {
	if old := o.Ports[i].newSock.Swap(int64(fd) + 1); old > 0 {
		unix.Close(int(old - 1)) // never taken: superseded
	}
	o.kick()
}

// followLink acts on the link state the watch posted and reports whether the
// interface is up. Down or gone, the controller leaves the bus: frames are neither
// read from the socket nor sent, and wait in the socket queue. Up again, the
// controller is initialised again (as after a reset) and bridging resumes.
func (p *Port) followLink() bool {
	if p.newSock.Load() != 0 {
		if fd := p.newSock.Swap(0); fd > 0 {
			// A new socket means the interface was deleted, even if the watch
			// posted it back up before this turn saw it gone.
			if p.linkHave == LinkUp {
				p.linkHave = LinkGone
				p.offBus(LinkGone)
			}
			p.replaceSocket(int(fd - 1))
		}
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
		p.retryAt = p.clock.Now() // the chip's own retry, at once
		p.info("interface up; the chip does not answer yet (retried with back-off)", p.linkArgs("was", prev.String())...)
		return
	}
	if !p.restartOrDown(false) {
		return
	}
	p.info("interface up: controller back on the bus", p.linkArgs("was", prev.String(), "state", p.Ctl.State().String())...)
}

// leaveBus takes the controller off the bus and then reads what the chip still
// holds, so no frame that reached it goes unseen: the pending transmissions are
// aborted (CANCTRL.ABAT: counted as dropped as the chip releases them), the chip
// is put in Configuration mode (no frame arrives after that), and its interrupts,
// still enabled, are serviced: the frames it received reach the socket (or the
// socket's refusal is counted), an overflow is reported, TX results come in.
func (p *Port) leaveBus() {
	if err := p.Ctl.Abort(); err != nil {
		p.log("aborting the pending frames", p.linkArgs("err", err.Error())...)
	}
	if err := p.Ctl.SetMode(mcp2515.ModeConfig); err != nil {
		p.log("cannot take the controller off the bus", p.linkArgs("err", err.Error())...)
		return
	}
	if _, err := p.Ctl.HandleInterrupt(p); err != nil {
		p.log("reading the chip after it left the bus", p.linkArgs("err", err.Error())...)
	}
}

// replaceSocket puts fd, a socket on the recreated interface, in place of the
// port's socket, whose interface was deleted: what still waited in the old queue
// can never be sent there and is counted as dropped. The descriptor goes back in
// the owner's epoll set (the old socket's entry went with it).
func (p *Port) replaceSocket(fd int) {
	defer unix.Close(fd)
	n := 0
	for ; n < unsentMost; n++ {
		if _, err := socketcan.ReadFrame(p.sockFd, &p.txBuf, &p.drops); err != nil && classify(err) != sockFrame {
			break
		}
	}
	if n > 0 {
		p.M.TXDropped.Add(uint64(n))
		p.log("frames in the socket queue of the deleted interface: dropped", p.linkArgs("frames", n)...)
	}
	p.drops, p.lastDrops = 0, 0 // the new socket's count starts at 0
	if err := unix.Dup3(fd, p.sockFd, unix.O_CLOEXEC); err != nil {
		p.fail("replace", err)
		return
	}
	p.sockReadable = true
	if p.ep < 0 {
		return
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
