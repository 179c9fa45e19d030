package socketcan

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// LinkWatch follows the network interfaces of one network namespace: a
// NETLINK_ROUTE socket subscribed to RTNLGRP_LINK, created in the namespace of
// the thread that calls WatchLinks.
type LinkWatch struct {
	fd      int
	seq     uint32
	dumping bool // a dump's answer is still coming (until NLMSG_DONE)
	redump  bool // the kernel dropped messages during it: dump again after it
	buf     []byte
}

// watchRcvBuf is the watch socket's receive buffer: room for a burst of link
// messages (each a few hundred bytes to a few KiB) while the reader is busy.
const watchRcvBuf = 1 << 20

// WatchLinks subscribes to the kernel's link messages and asks for a dump, so
// that Run reports the state of every interface first and then each change.
func WatchLinks() (*LinkWatch, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("socketcan: open rtnetlink socket to watch links: %w", err)
	}
	// Best effort: a smaller buffer only makes an overrun (and a new dump) likelier.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, watchRcvBuf)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_LINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("socketcan: subscribe to rtnetlink link messages (RTNLGRP_LINK): %w", err)
	}
	w := &LinkWatch{fd: fd, buf: make([]byte, 64<<10)}
	if err := w.dump(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return w, nil
}

func (w *LinkWatch) dump() error {
	w.seq++
	if err := unix.Sendto(w.fd, reqDumpLinks(w.seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("socketcan: rtnetlink link dump request: %w", err)
	}
	w.dumping, w.redump = true, false
	return nil
}

// pollMs is how often Run looks at its context while no message comes.
const pollMs = 200

// Run calls fn with every link message until ctx is done (then it returns nil) or
// the socket fails. When the kernel dropped messages because the socket's
// receive buffer overran (ENOBUFS), Run asks for a new dump, so the last event of
// every interface is again its current state. fn runs on Run's goroutine.
func (w *LinkWatch) Run(ctx context.Context, fn func(LinkEvent)) error {
	for ctx.Err() == nil {
		pfd := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, pollMs); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("socketcan: poll rtnetlink watch: %w", err)
		}
		n, from, err := unix.Recvfrom(w.fd, w.buf, unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOBUFS):
			// Messages were lost: the state is known again after a dump.
			if w.dumping {
				w.redump = true
				continue
			}
			if err := w.dump(); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("socketcan: rtnetlink watch receive: %w", err)
		}
		if sa, ok := from.(*unix.SockaddrNetlink); ok && sa.Pid != 0 {
			continue // not from the kernel
		}
		done, err := parseLinkEvents(w.buf[:n], fn)
		if err != nil {
			return err
		}
		if done {
			w.dumping = false
			if w.redump {
				if err := w.dump(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Close closes the socket; call it once Run has returned.
func (w *LinkWatch) Close() error { return unix.Close(w.fd) }
