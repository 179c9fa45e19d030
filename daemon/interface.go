package daemon

import (
	"fmt"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/socketcan"
)

// openInterface opens controller i's CAN socket: a raw CAN socket on its
// interface, creating the interface first if it does not exist, or, with kind
// none, one end of a socketpair (openPair). undo closes what it opened and
// removes an interface it created.
func (w *wiring) openInterface(i int, cc *config.Controller) (fd int, undo func(), err error) {
	if cc.Interface.Kind == config.KindNone {
		return w.openPair(i, cc)
	}
	log := w.log
	created, err := socketcan.EnsureLink(cc.Interface.Name, socketcan.Kind(cc.Interface.Kind), cc.Interface.Peer, socketcan.FrameSize)
	if err != nil {
		return -1, nil, err
	}
	if created {
		log.Info("created interface", "interface", cc.Interface.Name, "kind", cc.Interface.Kind)
	}
	s, err := socketcan.Open(cc.Interface.Name, socketcan.Options{RcvBuf: cc.Interface.RcvBuf})
	if err != nil {
		if created {
			socketcan.DeleteLink(cc.Interface.Name)
		}
		return -1, nil, err
	}
	for _, w := range s.Warnings() {
		log.Warn(w.Error(), "interface", cc.Interface.Name)
	}
	return s.Fd(), func() {
		s.Close()
		if created {
			if err := socketcan.DeleteLink(cc.Interface.Name); err != nil {
				log.Warn("removing interface", "interface", cc.Interface.Name, "err", err)
			} else {
				log.Info("removed interface", "interface", cc.Interface.Name)
			}
		}
	}, nil
}

// openPair is the CAN socket of a controller without a SocketCAN interface:
// one end of a SOCK_SEQPACKET socketpair, which carries the same 16-byte
// struct can_frame records a raw CAN socket does. The other end is kept in
// w.pairEnds for socketcand, which fans the frames out to its clients and
// sends theirs. On an AF_UNIX socketpair what is queued is bounded by the
// sender's send buffer, so each direction gets interface.rcvbuf there: the
// owner's end sends the received frames, socketcand's end the frames waiting
// for a TX buffer (the back-pressure queue a raw CAN socket's receive buffer
// is).
func (w *wiring) openPair(i int, cc *config.Controller) (int, func(), error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("socketpair for %s (interface kind none): %w", cc.Interface.Name, err)
	}
	for _, fd := range fds {
		if err := setSndBuf(fd, cc.Interface.RcvBuf); err != nil {
			w.log.Warn(err.Error(), "interface", cc.Interface.Name)
		}
	}
	if w.pairEnds == nil {
		w.pairEnds = map[int]int{}
	}
	w.pairEnds[i] = fds[1]
	w.log.Info("no SocketCAN interface: frames go to socketcand's clients only", "interface", cc.Interface.Name)
	return fds[0], func() {
		unix.Close(fds[0])
		if end, ok := w.pairEnds[i]; ok {
			unix.Close(end)
			delete(w.pairEnds, i)
		}
	}, nil
}

// setSndBuf asks for an n-byte send buffer with SO_SNDBUFFORCE (CAP_NET_ADMIN),
// else with SO_SNDBUF, capped by net.core.wmem_max: then the error says so.
func setSndBuf(fd, n int) error {
	ferr := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, n)
	if ferr == nil {
		return nil
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, n); err != nil {
		return fmt.Errorf("setsockopt SO_SNDBUF=%d on the socketpair: %w", n, err)
	}
	return fmt.Errorf("SO_SNDBUFFORCE=%d refused on the socketpair (%w): its queue is capped by net.core.wmem_max; grant CAP_NET_ADMIN or raise the sysctl", n, ferr)
}
