package socketcan

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// LinkEvent is one link message from the kernel on a socket subscribed to the
// RTNLGRP_LINK multicast group (linux/rtnetlink.h): RTM_NEWLINK when an
// interface appears or changes (IFF_UP set or cleared by `ip link set ... up` or
// `down`, a rename, an MTU change) and in a dump's answer, RTM_DELLINK when it
// is deleted. The message carries the whole state, not the change.
type LinkEvent struct {
	Link
	Deleted bool // RTM_DELLINK: the interface is gone
}

// parseLinkEvents calls fn for each RTM_NEWLINK and RTM_DELLINK message in buf,
// one datagram read from a NETLINK_ROUTE socket. done reports the NLMSG_DONE
// that ends a dump; other messages (acks, other groups) are skipped. A message
// that does not parse stops the walk with errMalformed; the events before it
// were delivered.
func parseLinkEvents(buf []byte, fn func(LinkEvent)) (done bool, err error) {
	for len(buf) >= nlmsgHdrLen {
		l := int(native.Uint32(buf[0:]))
		typ := native.Uint16(buf[4:])
		if l < nlmsgHdrLen || l > len(buf) {
			return done, fmt.Errorf("%w: message length %d with %d bytes left", errMalformed, l, len(buf))
		}
		body := buf[nlmsgHdrLen:l]
		buf = buf[min(nlAlign(l), len(buf)):]
		switch typ {
		case unix.NLMSG_DONE:
			done = true
		case unix.NLMSG_ERROR:
			if err := parseNlmsgerr(body, 0); err != nil {
				return done, fmt.Errorf("socketcan: rtnetlink: %w", err)
			}
		case unix.RTM_NEWLINK, unix.RTM_DELLINK:
			link, err := parseLink(body)
			if err != nil {
				return done, err
			}
			fn(LinkEvent{Link: link, Deleted: typ == unix.RTM_DELLINK})
		}
	}
	return done, nil
}

// reqDumpLinks asks for every link (RTM_GETLINK with NLM_F_DUMP): one
// RTM_NEWLINK each, then NLMSG_DONE.
func reqDumpLinks(seq uint32) []byte {
	return newLinkMsg(unix.RTM_GETLINK, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, seq, unix.IfInfomsg{Family: unix.AF_UNSPEC}).bytes()
}
