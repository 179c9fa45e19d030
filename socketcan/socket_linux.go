package socketcan

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Options configure the raw CAN socket.
type Options struct {
	// RcvBuf is the receive buffer in bytes the kernel should reserve for
	// frames waiting for cand (0: the system default). It is set with
	// SO_RCVBUFFORCE, which needs CAP_NET_ADMIN and ignores
	// net.core.rmem_max; without the capability Open falls back to
	// SO_RCVBUF (capped by rmem_max) and reports a warning. Each queued
	// frame costs a whole skb (several hundred bytes), not 16.
	RcvBuf int
}

// Socket is cand's one raw CAN socket on an interface: frames read from it
// are what other programs sent; frames written to it reach every other
// socket on the host (CAN_RAW_LOOPBACK on) but not cand itself
// (CAN_RAW_RECV_OWN_MSGS off). A second socket would see cand's own
// writes. The fd is non-blocking and close-on-exec; it is not registered
// with the Go runtime poller: put Fd() in your own epoll set.
type Socket struct {
	fd       int
	ifindex  int
	rcvBuf   int
	warnings []error
}

// Open creates a raw CAN socket bound to ifname and configures it:
// loopback on, own messages off, error frames not received, SO_RXQ_OVFL on
// (ReadFrame reports the kernel's drop count), and opt.RcvBuf.
func Open(ifname string, opt Options) (*Socket, error) {
	fd, err := unix.Socket(unix.AF_CAN, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.CAN_RAW)
	if err != nil {
		return nil, canSocketError(err)
	}
	s := &Socket{fd: fd}
	if err := s.setup(ifname, opt); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

func (s *Socket) setup(ifname string, opt Options) error {
	ifr, err := unix.NewIfreq(ifname)
	if err != nil {
		return fmt.Errorf("socketcan: interface name %q: %w; use a name of at most 15 bytes", ifname, err)
	}
	if err := unix.IoctlIfreq(s.fd, unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return fmt.Errorf("socketcan: no interface %q (%w); create it first (EnsureLink, or `ip link add dev %s type vcan`)", ifname, err, ifname)
		}
		return fmt.Errorf("socketcan: looking up interface %q: %w", ifname, err)
	}
	s.ifindex = int(ifr.Uint32())
	opts := []struct {
		level, name, value int
		what               string
	}{
		{unix.SOL_CAN_RAW, unix.CAN_RAW_LOOPBACK, 1, "CAN_RAW_LOOPBACK"},
		{unix.SOL_CAN_RAW, unix.CAN_RAW_RECV_OWN_MSGS, 0, "CAN_RAW_RECV_OWN_MSGS"},
		{unix.SOL_CAN_RAW, unix.CAN_RAW_ERR_FILTER, 0, "CAN_RAW_ERR_FILTER"},
		{unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1, "SO_RXQ_OVFL"},
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(s.fd, o.level, o.name, o.value); err != nil {
			return fmt.Errorf("socketcan: setsockopt %s=%d on %s: %w", o.what, o.value, ifname, err)
		}
	}
	warn, rcvBuf, err := setRcvBuf(s.fd, opt.RcvBuf)
	if err != nil {
		return fmt.Errorf("socketcan: %s: %w", ifname, err)
	}
	if warn != nil {
		s.warnings = append(s.warnings, warn)
	}
	s.rcvBuf = rcvBuf
	sa := &unix.SockaddrCAN{Ifindex: s.ifindex}
	if err := unix.Bind(s.fd, sa); err != nil {
		return fmt.Errorf("socketcan: bind to %s (index %d): %w", ifname, s.ifindex, err)
	}
	return nil
}

// Fd returns the socket's file descriptor, for epoll and for ReadFrame and
// WriteFrame. It stays owned by s.
func (s *Socket) Fd() int { return s.fd }

// Ifindex returns the index of the interface the socket is bound to.
func (s *Socket) Ifindex() int { return s.ifindex }

// RcvBuf returns the receive buffer size the kernel reports after Open
// (the kernel doubles the requested value for its bookkeeping).
func (s *Socket) RcvBuf() int { return s.rcvBuf }

// Warnings returns the non-fatal problems met while opening, such as the
// SO_RCVBUFFORCE fallback, for the caller to log.
func (s *Socket) Warnings() []error { return s.warnings }

// Close closes the socket. It is not safe to call concurrently with
// ReadFrame or WriteFrame on Fd().
func (s *Socket) Close() error {
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// setRcvBuf asks for an n-byte receive buffer (n <= 0: leave the default)
// with SO_RCVBUFFORCE, falling back to SO_RCVBUF with a warning, and
// returns the size the kernel reports afterwards.
func setRcvBuf(fd, n int) (warn error, got int, err error) {
	if n > 0 {
		if ferr := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n); ferr != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n); err != nil {
				return nil, 0, fmt.Errorf("setsockopt SO_RCVBUF=%d: %w", n, err)
			}
			warn = fmt.Errorf("socketcan: SO_RCVBUFFORCE=%d refused (%w): receive buffer capped by net.core.rmem_max; grant CAP_NET_ADMIN or raise the sysctl", n, ferr)
		}
	}
	got, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return warn, 0, fmt.Errorf("getsockopt SO_RCVBUF: %w", err)
	}
	return warn, got, nil
}
