package daemon

import (
	"fmt"
	"log/slog"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/socketcan"
)

// openInterface opens controller i's CAN socket: a raw CAN socket on its
// interface (cand's end of a vxcan pair), creating the interface first if it
// does not exist and bringing it up, or, with kind none, one end of a
// socketpair (openPair). undo closes the socket and then, as a kernel driver's
// netdev does when its driver stops, leaves the interface in place but down,
// so that applications' sockets stay bound to it and their writes fail with
// ENETDOWN until cand is back; with interface.remove_on_exit it removes the
// interface instead.
func (w *wiring) openInterface(i int, cc *config.Controller) (fd int, undo func(), err error) {
	switch cc.Interface.Kind {
	case config.KindNone:
		return w.openPair(i, cc)
	case config.KindSLCAN:
		return w.openSLCAN(i, cc)
	}
	nd, spec := w.netdevs(), linkSpec(cc)
	log := w.log.With("interface", cc.Interface.Name)
	created, err := nd.Ensure(spec)
	if err != nil {
		return -1, nil, err
	}
	where := []any{"kind", cc.Interface.Kind}
	if spec.Peer != "" {
		where = append(where, "cand_end", spec.Name, "netns", spec.PeerNetNS.String())
	}
	if created {
		log.Info("created interface", where...)
	} else {
		log.Info("interface exists; serving it again", where...)
	}
	s, err := nd.Open(spec.Name, socketcan.Options{RcvBuf: cc.Interface.RcvBuf})
	if err != nil {
		// Nothing bridges it: a new interface goes again, an old one down.
		if created {
			nd.Delete(spec.Name)
		} else {
			nd.TakeDown(spec)
		}
		return -1, nil, err
	}
	for _, w := range s.Warnings() {
		log.Warn(w.Error())
	}
	return s.Fd(), func() {
		s.Close()
		w.release(nd, spec, cc, log)
	}, nil
}

// release is what becomes of the interface when cand stops: removed with
// interface.remove_on_exit, else set down.
func (w *wiring) release(nd Netdevs, spec socketcan.LinkSpec, cc *config.Controller, log *slog.Logger) {
	if cc.Interface.RemoveOnExit {
		if err := nd.Delete(spec.Name); err != nil {
			log.Warn("removing interface", "err", err)
			return
		}
		log.Info("removed interface (interface.remove_on_exit)")
		return
	}
	if err := nd.TakeDown(spec); err != nil {
		log.Warn("setting interface down", "err", err)
		return
	}
	log.Info("interface set down: it stays for the applications bound to it, whose writes fail with ENETDOWN until cand serves it again")
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
