package socketcan

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// NetNS names a network namespace: a namespace file (Path: /run/netns/NAME as
// `ip netns add` makes it, or /proc/PID/ns/net), or a process that lives in it
// (PID). The zero NetNS is the caller's own namespace.
type NetNS struct {
	Path string
	PID  int
}

// IsZero reports whether n is the caller's own namespace.
func (n NetNS) IsZero() bool { return n.Path == "" && n.PID == 0 }

func (n NetNS) String() string {
	switch {
	case n.Path != "":
		return n.Path
	case n.PID != 0:
		return "the network namespace of PID " + strconv.Itoa(n.PID)
	}
	return "this network namespace"
}

// netnsRef is a namespace as an RTM_NEWLINK attribute carries it: an open
// namespace file (IFLA_NET_NS_FD) or a PID (IFLA_NET_NS_PID); the zero value
// adds no attribute.
type netnsRef struct {
	fd  int // the fd + 1 (0: none)
	pid int
}

func (r netnsRef) attr(m *nlBuilder) {
	switch {
	case r.fd > 0:
		m.attrU32(unix.IFLA_NET_NS_FD, uint32(r.fd-1))
	case r.pid > 0:
		m.attrU32(unix.IFLA_NET_NS_PID, uint32(r.pid))
	}
}

func (r netnsRef) isZero() bool { return r == netnsRef{} }

// open makes n an attribute; close releases the namespace file once the
// request is answered. The kernel takes a reference on the namespace while it
// creates the link (rtnl_link_get_net: get_net_ns_by_fd or get_net_ns_by_pid).
func (n NetNS) open() (ref netnsRef, close func(), err error) {
	switch {
	case n.Path != "":
		fd, err := unix.Open(n.Path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return netnsRef{}, nil, fmt.Errorf("socketcan: open network namespace %s: %w; create it first (`ip netns add NAME` makes /run/netns/NAME)", n.Path, err)
		}
		return netnsRef{fd: fd + 1}, func() { unix.Close(fd) }, nil
	case n.PID > 0:
		return netnsRef{pid: n.PID}, func() {}, nil
	}
	return netnsRef{}, func() {}, nil
}
