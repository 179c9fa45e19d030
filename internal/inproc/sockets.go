package inproc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Queues are the socket buffer sizes forced on each end (SO_SNDBUFFORCE,
// SO_RCVBUFFORCE, as the daemon asks of a real CAN socket); 0 keeps the kernel's
// default. On a unix socket the sender's buffer holds what is queued, so HostSend
// bounds the frames the caller can queue for the daemon and DaemonSend those the
// daemon can queue for the caller. Forcing needs CAP_NET_ADMIN; without it the
// default stays.
type Queues struct{ HostSend, HostReceive, DaemonSend, DaemonReceive int }

// Deep is 8 MiB every way: no queue limits the traffic.
func Deep() Queues { return Queues{8 << 20, 8 << 20, 8 << 20, 8 << 20} }

// Pair makes one controller's socketpair, both ends non-blocking, with queues q:
// host is the caller's end, daemon the daemon's.
func Pair(q Queues) (host, daemon int, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("inproc: socketpair: %w", err)
	}
	force(fds[0], unix.SO_SNDBUFFORCE, q.HostSend)
	force(fds[0], unix.SO_RCVBUFFORCE, q.HostReceive)
	force(fds[1], unix.SO_SNDBUFFORCE, q.DaemonSend)
	force(fds[1], unix.SO_RCVBUFFORCE, q.DaemonReceive)
	return fds[0], fds[1], nil
}

// pairs makes the socketpairs o asks for into h.Host and h.ends; on an error the
// caller closes those made.
func (h *Harness[D]) pairs(o Options) error {
	for i := range o.Controllers {
		if o.NoSocket != nil && o.NoSocket(i) {
			h.Host, h.ends = append(h.Host, -1), append(h.ends, -1)
			continue
		}
		host, daemon, err := Pair(o.Queues)
		if err != nil {
			return fmt.Errorf("%w (controller %d)", err, i)
		}
		h.Host, h.ends = append(h.Host, host), append(h.ends, daemon)
		if o.BlockingHost {
			if err := unix.SetNonblock(host, false); err != nil {
				return fmt.Errorf("inproc: making controller %d's end blocking: %w", i, err)
			}
		}
	}
	return nil
}

// force sets a buffer size if n is not 0. A refusal (no CAP_NET_ADMIN) leaves the
// kernel's default, which only makes the queue shallower.
func force(fd, opt, n int) {
	if n != 0 {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, n)
	}
}

// closeSockets closes both ends of every pair.
func (h *Harness[D]) closeSockets() {
	for _, fd := range append(h.Host, h.ends...) {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	h.Host, h.ends = nil, nil
}
