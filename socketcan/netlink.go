package socketcan

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// rtnetlink wire format (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h):
// every message is a struct nlmsghdr, then for link messages a struct
// ifinfomsg, then attributes (struct nlattr: u16 len, u16 type, payload,
// padded to 4 bytes). Integers are in host byte order.
const (
	nlmsgHdrLen   = unix.SizeofNlMsghdr  // 16
	ifinfomsgLen  = unix.SizeofIfInfomsg // 16
	nlattrHdrLen  = unix.SizeofNlAttr    // 4
	nlmsgerrLen   = unix.SizeofNlMsgerr  // 20: int error + the request's nlmsghdr
	vxcanInfoPeer = 1                    // VXCAN_INFO_PEER (linux/can/vxcan.h); veth's VETH_INFO_PEER is the same
	ifOperUp      = 6                    // IF_OPER_UP (linux/if.h, RFC 2863)
	nlaTypeMask   = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
)

var native = binary.NativeEndian

func nlAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// nlBuilder appends one netlink message. Nested attributes are opened with
// begin and closed with end, which patches the length.
type nlBuilder struct{ b []byte }

func newLinkMsg(typ, flags uint16, seq uint32, ifi unix.IfInfomsg) *nlBuilder {
	m := &nlBuilder{b: make([]byte, nlmsgHdrLen, 128)}
	native.PutUint16(m.b[4:], typ)
	native.PutUint16(m.b[6:], flags)
	native.PutUint32(m.b[8:], seq)
	// nlmsg_pid 0: the kernel assigns the port.
	m.ifinfo(ifi)
	return m
}

func (m *nlBuilder) ifinfo(ifi unix.IfInfomsg) {
	var h [ifinfomsgLen]byte
	h[0] = ifi.Family
	native.PutUint16(h[2:], ifi.Type)
	native.PutUint32(h[4:], uint32(ifi.Index))
	native.PutUint32(h[8:], ifi.Flags)
	native.PutUint32(h[12:], ifi.Change)
	m.b = append(m.b, h[:]...)
}

func (m *nlBuilder) begin(typ uint16) int {
	off := len(m.b)
	m.b = append(m.b, 0, 0, 0, 0)
	native.PutUint16(m.b[off+2:], typ)
	return off
}

func (m *nlBuilder) end(off int) {
	native.PutUint16(m.b[off:], uint16(len(m.b)-off))
	for len(m.b) != nlAlign(len(m.b)) {
		m.b = append(m.b, 0)
	}
}

func (m *nlBuilder) attrString(typ uint16, s string) {
	off := m.begin(typ)
	m.b = append(m.b, s...)
	m.b = append(m.b, 0)
	m.end(off)
}

func (m *nlBuilder) attrU32(typ uint16, v uint32) {
	off := m.begin(typ)
	m.b = native.AppendUint32(m.b, v)
	m.end(off)
}

func (m *nlBuilder) bytes() []byte {
	native.PutUint32(m.b[0:], uint32(len(m.b)))
	return m.b
}

// reqGetLink asks for one link by name (RTM_GETLINK).
func reqGetLink(seq uint32, name string) []byte {
	m := newLinkMsg(unix.RTM_GETLINK, unix.NLM_F_REQUEST, seq, unix.IfInfomsg{Family: unix.AF_UNSPEC})
	m.attrString(unix.IFLA_IFNAME, name)
	return m.bytes()
}

// peerEnd is the other end of a pair as RTM_NEWLINK creates it. Created in
// another network namespace (ns), it is given its MTU at once: cand's
// rtnetlink socket cannot change it there afterwards. It cannot be created up:
// the driver opens it before the pair is linked and refuses (vxcan_open,
// veth_open: ENOTCONN without a peer).
type peerEnd struct {
	name string
	ns   netnsRef
	mtu  uint32 // IFLA_MTU; 0 leaves the driver's
}

// reqNewLink creates link name of kind (what `ip link add dev NAME type
// KIND [peer name PEER]` sends), with a peer in this namespace.
func reqNewLink(seq uint32, name string, kind Kind, peer string) []byte {
	return reqNewPair(seq, name, kind, peerEnd{name: peer})
}

// reqNewPair creates link name of kind with peer (what `ip link add dev NAME
// type KIND peer name PEER [mtu M] [netns NS]` sends; no peer name: no pair).
// IFLA_INFO_DATA holds VXCAN_INFO_PEER: a struct ifinfomsg followed by the
// peer's IFLA_IFNAME, IFLA_MTU and IFLA_NET_NS_FD or IFLA_NET_NS_PID.
func reqNewPair(seq uint32, name string, kind Kind, peer peerEnd) []byte {
	m := newLinkMsg(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL, seq,
		unix.IfInfomsg{Family: unix.AF_UNSPEC})
	m.attrString(unix.IFLA_IFNAME, name)
	li := m.begin(unix.IFLA_LINKINFO)
	m.attrString(unix.IFLA_INFO_KIND, string(kind))
	if peer.name != "" {
		data := m.begin(unix.IFLA_INFO_DATA)
		p := m.begin(vxcanInfoPeer)
		m.ifinfo(unix.IfInfomsg{Family: unix.AF_UNSPEC})
		m.attrString(unix.IFLA_IFNAME, peer.name)
		if peer.mtu > 0 {
			m.attrU32(unix.IFLA_MTU, peer.mtu)
		}
		peer.ns.attr(m)
		m.end(p)
		m.end(data)
	}
	m.end(li)
	return m.bytes()
}

// reqSetMTU sets the MTU of link index (RTM_NEWLINK on an existing link).
func reqSetMTU(seq uint32, index int32, mtu uint32) []byte {
	m := newLinkMsg(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq,
		unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index})
	m.attrU32(unix.IFLA_MTU, mtu)
	return m.bytes()
}

// reqSetUp changes IFF_UP of link index (what `ip link set up/down` sends).
func reqSetUp(seq uint32, index int32, up bool) []byte {
	ifi := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index, Change: unix.IFF_UP}
	if up {
		ifi.Flags = unix.IFF_UP
	}
	return newLinkMsg(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq, ifi).bytes()
}

// reqDelLink deletes link index (RTM_DELLINK); a vxcan peer goes with it.
func reqDelLink(seq uint32, index int32) []byte {
	return newLinkMsg(unix.RTM_DELLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq,
		unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index}).bytes()
}

// nlError is a kernel NLMSG_ERROR with a nonzero error: the errno and the
// extended-ack message (NLMSGERR_ATTR_MSG), if the kernel sent one.
type nlError struct {
	Errno unix.Errno
	Msg   string
}

func (e *nlError) Error() string {
	if e.Msg != "" {
		return e.Errno.Error() + ": " + e.Msg
	}
	return e.Errno.Error()
}

func (e *nlError) Unwrap() error { return e.Errno }

// errMalformed reports a reply that does not parse.
var errMalformed = errors.New("socketcan: malformed netlink reply")

// parseReply finds the message answering request seq in one datagram. It
// returns the payload of an RTM_NEWLINK answer, or nil for an ACK
// (NLMSG_ERROR with error 0), or an *nlError. found is false if no message
// in buf has sequence number seq (a stale reply: read again).
func parseReply(buf []byte, seq uint32) (payload []byte, found bool, err error) {
	for len(buf) >= nlmsgHdrLen {
		// Lengths are compared as u32 before they become an int, which on 32-bit
		// ARM is negative from 2^31 on.
		l32 := native.Uint32(buf[0:])
		typ := native.Uint16(buf[4:])
		flags := native.Uint16(buf[6:])
		s := native.Uint32(buf[8:])
		if l32 < nlmsgHdrLen || l32 > uint32(len(buf)) {
			return nil, false, fmt.Errorf("%w: message length %d with %d bytes left", errMalformed, l32, len(buf))
		}
		l := int(l32)
		body := buf[nlmsgHdrLen:l]
		next := nlAlign(l)
		if next > len(buf) {
			next = len(buf)
		}
		buf = buf[next:]
		if s != seq {
			continue
		}
		switch typ {
		case unix.NLMSG_ERROR:
			return nil, true, parseNlmsgerr(body, flags)
		case unix.NLMSG_DONE, unix.NLMSG_NOOP:
			continue
		case unix.RTM_NEWLINK:
			return body, true, nil
		default:
			return nil, true, fmt.Errorf("%w: unexpected message type %d", errMalformed, typ)
		}
	}
	return nil, false, nil
}

// parseNlmsgerr decodes struct nlmsgerr and its extended-ack attributes.
// Unless NLM_F_CAPPED is set, the kernel echoes the whole request after
// the header; the TLVs (NLM_F_ACK_TLVS) follow it.
func parseNlmsgerr(body []byte, flags uint16) error {
	if len(body) < nlmsgerrLen {
		return fmt.Errorf("%w: NLMSG_ERROR of %d bytes", errMalformed, len(body))
	}
	code := int32(native.Uint32(body[0:]))
	if code == 0 {
		return nil
	}
	e := &nlError{Errno: unix.Errno(-code)}
	if code > 0 {
		e.Errno = unix.Errno(code)
	}
	if flags&unix.NLM_F_ACK_TLVS == 0 {
		return e
	}
	off := nlmsgerrLen
	if flags&unix.NLM_F_CAPPED == 0 {
		echoed := native.Uint32(body[4:]) // the request's nlmsg_len
		if echoed > uint32(len(body)) {
			return e
		}
		off = 4 + nlAlign(int(echoed))
	}
	if off > len(body) {
		return e
	}
	_ = walkAttrs(body[off:], func(typ uint16, p []byte) {
		if typ == unix.NLMSGERR_ATTR_MSG {
			e.Msg = cString(p)
		}
	})
	return e
}

// walkAttrs calls fn for each attribute in b (type without the NESTED and
// BYTEORDER flags). It stops at the first malformed attribute.
func walkAttrs(b []byte, fn func(typ uint16, payload []byte)) error {
	for len(b) >= nlattrHdrLen {
		l := int(native.Uint16(b[0:]))
		if l < nlattrHdrLen || l > len(b) {
			return fmt.Errorf("%w: attribute length %d with %d bytes left", errMalformed, l, len(b))
		}
		fn(native.Uint16(b[2:])&nlaTypeMask, b[nlattrHdrLen:l])
		next := nlAlign(l)
		if next > len(b) {
			next = len(b)
		}
		b = b[next:]
	}
	return nil
}

func cString(p []byte) string {
	for i, c := range p {
		if c == 0 {
			return string(p[:i])
		}
	}
	return string(p)
}

// parseLink decodes an RTM_NEWLINK payload: struct ifinfomsg and the
// attributes cand cares about.
func parseLink(p []byte) (Link, error) {
	if len(p) < ifinfomsgLen {
		return Link{}, fmt.Errorf("%w: RTM_NEWLINK of %d bytes", errMalformed, len(p))
	}
	l := Link{
		Index: int(int32(native.Uint32(p[4:]))),
		Flags: native.Uint32(p[8:]),
	}
	var u32err error
	u32 := func(b []byte) uint32 {
		if len(b) < 4 {
			u32err = fmt.Errorf("%w: u32 attribute of %d bytes", errMalformed, len(b))
			return 0
		}
		return native.Uint32(b)
	}
	err := walkAttrs(p[ifinfomsgLen:], func(typ uint16, b []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			l.Name = cString(b)
		case unix.IFLA_MTU:
			l.MTU = int(u32(b))
		case unix.IFLA_LINK:
			l.PeerIndex = int(u32(b))
		case unix.IFLA_LINK_NETNSID:
			l.PeerElsewhere = true
		case unix.IFLA_OPERSTATE:
			if len(b) >= 1 {
				l.OperState = b[0]
			}
		case unix.IFLA_LINKINFO:
			_ = walkAttrs(b, func(typ uint16, b []byte) {
				if typ == unix.IFLA_INFO_KIND {
					l.Kind = Kind(cString(b))
				}
			})
		}
	})
	if err == nil {
		err = u32err
	}
	return l, err
}

// reqSetName renames link index (what `ip link set dev OLD name NEW` sends);
// the kernel refuses it on a running link (EBUSY) and for a taken name (EEXIST).
func reqSetName(seq uint32, index int32, name string) []byte {
	m := newLinkMsg(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq,
		unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index})
	m.attrString(unix.IFLA_IFNAME, name)
	return m.bytes()
}

// canBittimingLen is sizeof(struct can_bittiming) (linux/can/netlink.h): eight
// u32, bitrate first; the rest (sample point, tq, segments, SJW, BRP) are left 0
// for the kernel to compute or, on a device with a fixed bitrate list such as
// slcan, to check the bitrate against the list (drivers/net/can/dev/bittiming.c,
// can_get_bittiming).
const canBittimingLen = 32

// reqSetCANBitrate sets a CAN link's bitrate (what `ip link set NAME type can
// bitrate RATE` sends): IFLA_LINKINFO{IFLA_INFO_KIND "can",
// IFLA_INFO_DATA{IFLA_CAN_BITTIMING}}. The kernel takes it only while the link
// is down (EBUSY otherwise).
func reqSetCANBitrate(seq uint32, index int32, bitrate uint32) []byte {
	m := newLinkMsg(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, seq,
		unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: index})
	li := m.begin(unix.IFLA_LINKINFO)
	m.attrString(unix.IFLA_INFO_KIND, "can")
	data := m.begin(unix.IFLA_INFO_DATA)
	bt := m.begin(unix.IFLA_CAN_BITTIMING)
	m.b = native.AppendUint32(m.b, bitrate)
	m.b = append(m.b, make([]byte, canBittimingLen-4)...)
	m.end(bt)
	m.end(data)
	m.end(li)
	return m.bytes()
}
