package socketcan

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// withRoute opens a NETLINK_ROUTE socket, runs fn with a roundTrip over
// it, and closes it. Extended acks are requested so errors carry the
// kernel's text ("Unknown device type"), and capped so the request is not
// echoed back.
func withRoute(fn func(rt roundTrip) error) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("socketcan: open rtnetlink socket: %w", err)
	}
	defer unix.Close(fd)
	// Old kernels lack these; errors then simply carry no text.
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_CAP_ACK, 1)
	// A kernel that never answers must not hang the daemon's start.
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("socketcan: rtnetlink SO_RCVTIMEO: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("socketcan: bind rtnetlink socket: %w", err)
	}
	buf := make([]byte, 32<<10)
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	rt := func(req []byte) ([]byte, error) {
		if req != nil {
			if err := unix.Sendto(fd, req, 0, kernel); err != nil {
				return nil, fmt.Errorf("socketcan: rtnetlink send: %w", err)
			}
		}
		for {
			n, from, err := unix.Recvfrom(fd, buf, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return nil, fmt.Errorf("socketcan: rtnetlink: no answer from the kernel within %ds", tv.Sec)
			}
			if err != nil {
				return nil, fmt.Errorf("socketcan: rtnetlink receive: %w", err)
			}
			if sa, ok := from.(*unix.SockaddrNetlink); ok && sa.Pid != 0 {
				continue // not from the kernel
			}
			return buf[:n], nil
		}
	}
	return fn(rt)
}
