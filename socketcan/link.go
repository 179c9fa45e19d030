package socketcan

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Kind is a link type as rtnetlink names it (IFLA_INFO_KIND).
type Kind string

// The link types cand bridges to. A real controller reports "can".
const (
	KindVCAN  Kind = "vcan"  // virtual CAN: every socket on the host sees cand's frames
	KindVXCAN Kind = "vxcan" // virtual CAN tunnel: a pair, frames cross to the peer
)

func (k Kind) kconfig() string {
	switch k {
	case KindVCAN:
		return "CONFIG_CAN_VCAN"
	case KindVXCAN:
		return "CONFIG_CAN_VXCAN"
	}
	return "support for " + string(k)
}

// CAN_MTU is the MTU of a classic-CAN-only interface (sizeof(struct
// can_frame)); vcan and vxcan default to CANFD_MTU (72).
const CAN_MTU = FrameSize

// Link is what rtnetlink reports about an interface.
type Link struct {
	Index     int    // ifindex
	Name      string // IFLA_IFNAME
	Kind      Kind   // IFLA_LINKINFO/IFLA_INFO_KIND; "" for devices without one (lo, most hardware NICs)
	MTU       int    // IFLA_MTU
	Flags     uint32 // ifi_flags: unix.IFF_UP, unix.IFF_RUNNING, ...
	OperState uint8  // IFLA_OPERSTATE (RFC 2863; 6 is up)
	PeerIndex int    // IFLA_LINK: for vxcan, the ifindex of the peer
	// PeerElsewhere: IFLA_LINK_NETNSID is present, so the peer (PeerIndex)
	// is in another network namespace.
	PeerElsewhere bool
}

// Up reports whether the link is administratively up (IFF_UP).
func (l Link) Up() bool { return l.Flags&unix.IFF_UP != 0 }

// roundTrip sends one rtnetlink request and returns one reply datagram.
// The real one is a NETLINK_ROUTE socket; tests fake it at the message
// level.
type roundTrip func(req []byte) (reply []byte, err error)

// linker runs rtnetlink exchanges with increasing sequence numbers.
type linker struct {
	rt  roundTrip
	seq uint32
}

func (l *linker) next() uint32 { l.seq++; return l.seq }

// exchange sends req (built with sequence number seq) and returns the
// RTM_NEWLINK payload of the answer, nil for an ACK, or the kernel's error.
func (l *linker) exchange(seq uint32, req []byte) ([]byte, error) {
	for range 16 { // skip a bounded number of stale datagrams
		reply, err := l.rt(req)
		if err != nil {
			return nil, err
		}
		req = nil // only the first call sends
		payload, found, err := parseReply(reply, seq)
		if found || err != nil {
			return payload, err
		}
	}
	return nil, fmt.Errorf("%w: no answer with sequence number %d", errMalformed, seq)
}

// get returns the link called name; errors.Is(err, unix.ENODEV) if none.
func (l *linker) get(name string) (Link, error) {
	seq := l.next()
	p, err := l.exchange(seq, reqGetLink(seq, name))
	if err != nil {
		return Link{}, err
	}
	if p == nil {
		return Link{}, fmt.Errorf("%w: RTM_GETLINK %s answered with an ACK", errMalformed, name)
	}
	return parseLink(p)
}

func (l *linker) ack(req func(seq uint32) []byte) error {
	seq := l.next()
	_, err := l.exchange(seq, req(seq))
	return err
}

// extMsg returns the kernel's extended-ack text of err, if any.
func extMsg(err error) string {
	var ne *nlError
	if errors.As(err, &ne) {
		return ne.Msg
	}
	return ""
}

// wrap turns a kernel error into one that names the cause and the fix.
func wrap(op, name string, kind Kind, err error) error {
	if err == nil {
		return nil
	}
	var ne *nlError
	if errors.As(err, &ne) {
		return linkError(op, name, kind, ne.Errno, ne.Msg)
	}
	return linkError(op, name, kind, err, "")
}

// ensure is EnsureLink over l; it accepts any kind so tests can run the
// same sequence with veth (whose peer attribute has vxcan's layout).
func (l *linker) ensure(name string, kind Kind, peer string, mtu int) (created bool, err error) {
	return l.ensureSpec(LinkSpec{Name: name, Kind: kind, Peer: peer, MTU: mtu}, netnsRef{})
}

// ensureSpec is Ensure over l; ns is spec.PeerNetNS, opened.
func (l *linker) ensureSpec(spec LinkSpec, ns netnsRef) (created bool, err error) {
	name, kind, peer := spec.Name, spec.Kind, spec.Peer
	link, err := l.get(name)
	switch {
	case errors.Is(err, unix.ENODEV):
		end := peerEnd{name: peer, ns: ns}
		if !ns.isZero() {
			end.mtu = uint32(max(spec.MTU, 0))
		}
		if err := l.ack(func(seq uint32) []byte { return reqNewPair(seq, name, kind, end) }); err != nil {
			return false, wrap("create "+string(kind)+" link", name, kind, err)
		}
		created = true
		if link, err = l.get(name); err != nil {
			return created, wrap("look up new link", name, kind, err)
		}
	case err != nil:
		return false, wrap("look up link", name, kind, err)
	}
	if link.Kind != kind {
		return created, mismatch(link, kind)
	}
	if peer != "" && link.PeerElsewhere != !spec.PeerNetNS.IsZero() {
		return created, placement(link, spec)
	}
	if err := l.configure(link, kind, spec.MTU); err != nil {
		return created, err
	}
	if peer == "" || link.PeerElsewhere {
		// A peer in another namespace got its MTU when it was created; it is
		// brought up there, by the namespace's owner (`ip -n NS link set PEER
		// up`): rtnetlink changes only the links of its socket's namespace.
		return created, nil
	}
	pl, err := l.get(peer)
	if err != nil {
		return created, wrap("look up "+string(kind)+" peer", peer, kind, err)
	}
	if pl.Kind != kind || (link.PeerIndex != 0 && link.PeerIndex != pl.Index) {
		return created, fmt.Errorf("socketcan: %s is a %s link but %s is not its peer (kind %q, index %d, peer index %d); delete %s or configure the right peer name",
			name, kind, peer, pl.Kind, pl.Index, link.PeerIndex, name)
	}
	return created, l.configure(pl, kind, spec.MTU)
}

// placement explains an existing pair whose peer is not in the namespace spec
// asks for.
func placement(link Link, spec LinkSpec) error {
	if link.PeerElsewhere {
		return fmt.Errorf("socketcan: the peer of %s is in another network namespace, but this one was asked for (no netns configured); delete %s (`ip link del %s`) to have the pair made again, or configure the namespace",
			link.Name, link.Name, link.Name)
	}
	return fmt.Errorf("socketcan: the peer of %s is in this network namespace, not in %s; delete %s (`ip link del %s`) to have the pair made again there",
		link.Name, spec.PeerNetNS, link.Name, link.Name)
}

// configure sets the MTU (taking the link down first if needed: the CAN
// drivers refuse an MTU change on a running link with EBUSY) and brings
// the link up.
func (l *linker) configure(link Link, kind Kind, mtu int) error {
	idx := int32(link.Index)
	up := link.Up()
	if mtu > 0 && link.MTU != mtu {
		if up {
			if err := l.ack(func(seq uint32) []byte { return reqSetUp(seq, idx, false) }); err != nil {
				return wrap("take down (to change the MTU)", link.Name, kind, err)
			}
			up = false
		}
		if err := l.ack(func(seq uint32) []byte { return reqSetMTU(seq, idx, uint32(mtu)) }); err != nil {
			return wrap(fmt.Sprintf("set MTU %d on", mtu), link.Name, kind, err)
		}
	}
	if !up {
		if err := l.ack(func(seq uint32) []byte { return reqSetUp(seq, idx, true) }); err != nil {
			return wrap("bring up", link.Name, kind, err)
		}
	}
	return nil
}

func mismatch(link Link, want Kind) error {
	what := fmt.Sprintf("kind %q", link.Kind)
	switch link.Kind {
	case "":
		what = "no link kind (a physical or loopback device)"
	case "can":
		what = `kind "can" (a real CAN controller driven by a kernel driver)`
	}
	return fmt.Errorf("socketcan: interface %s exists with %s, not %s: refusing to use it; pick another interface name in the configuration, or delete it (`ip link del %s`) if it is stale",
		link.Name, what, want, link.Name)
}

func (l *linker) del(name string) error {
	link, err := l.get(name)
	if errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("socketcan: delete link %s: %w: no such interface (already deleted, or its vxcan peer was)", name, unix.ENODEV)
	}
	if err != nil {
		return wrap("look up link", name, "", err)
	}
	return wrap("delete link", name, link.Kind, l.ack(func(seq uint32) []byte { return reqDelLink(seq, int32(link.Index)) }))
}

// up sets IFF_UP on link name.
func (l *linker) up(name string) error { return l.setUp(name, true) }

// setUp sets or clears IFF_UP on link name (what `ip link set NAME up|down`
// does); a link already so is left alone.
func (l *linker) setUp(name string, up bool) error {
	link, err := l.get(name)
	if err != nil {
		return wrap("look up link", name, "", err)
	}
	if link.Up() == up {
		return nil
	}
	op := "bring up"
	if !up {
		op = "take down"
	}
	return wrap(op, name, link.Kind, l.ack(func(seq uint32) []byte { return reqSetUp(seq, int32(link.Index), up) }))
}

func validKind(kind Kind, peer string) error {
	switch {
	case kind == KindVCAN && peer != "":
		return fmt.Errorf("socketcan: a vcan link has no peer (got %q); use KindVXCAN for a pair, or no peer", peer)
	case kind == KindVXCAN && peer == "":
		return errors.New("socketcan: a vxcan link needs a peer name; set one (e.g. the name the other namespace will use)")
	case kind != KindVCAN && kind != KindVXCAN:
		return fmt.Errorf("socketcan: link kind %q is not supported; use vcan or vxcan", kind)
	}
	return nil
}

// LinkSpec is a link Ensure makes.
type LinkSpec struct {
	Name string // the interface the caller opens
	Kind Kind
	// Peer is the other end of a vxcan pair (KindVXCAN only; "" for vcan).
	Peer string
	// PeerNetNS is the network namespace the peer is created in (zero: the
	// caller's), as `ip link add NAME type vxcan peer name PEER netns NS` does.
	PeerNetNS NetNS
	// MTU is CAN_MTU for classic CAN; 0 leaves the driver's.
	MTU int
}

// Ensure makes spec.Name a running vcan or vxcan link with the given MTU: if
// it exists it must already be of that kind (a real "can" device or an
// Ethernet is refused), with its peer where spec says; otherwise it is created
// (for vxcan, with the peer). The MTU is set while the link is down, then the
// link is brought up, and so is a vxcan peer in this namespace. A peer created
// in another namespace gets the MTU and stays down until that namespace brings
// it up; it is left alone afterwards. created reports whether this call
// created the link. It needs CAP_NET_ADMIN (in the peer's namespace too).
func Ensure(spec LinkSpec) (created bool, err error) {
	if err := validKind(spec.Kind, spec.Peer); err != nil {
		return false, err
	}
	if !spec.PeerNetNS.IsZero() && spec.Peer == "" {
		return false, fmt.Errorf("socketcan: %s: only a pair's peer can be placed in another network namespace", spec.Name)
	}
	ns, closeNS, err := spec.PeerNetNS.open()
	if err != nil {
		return false, err
	}
	defer closeNS()
	err = withRoute(func(rt roundTrip) error {
		var e error
		created, e = (&linker{rt: rt}).ensureSpec(spec, ns)
		return e
	})
	return created, err
}

// EnsureLink is Ensure for a link whose peer, if any, is in this namespace.
func EnsureLink(name string, kind Kind, peer string, mtu int) (created bool, err error) {
	return Ensure(LinkSpec{Name: name, Kind: kind, Peer: peer, MTU: mtu})
}

// DeleteLink deletes interface name (a vxcan peer goes with it).
func DeleteLink(name string) error {
	return withRoute(func(rt roundTrip) error { return (&linker{rt: rt}).del(name) })
}

// LinkUp sets IFF_UP on interface name.
func LinkUp(name string) error { return SetLinkUp(name, true) }

// SetLinkUp sets (up) or clears IFF_UP on interface name. A CAN interface that
// is down refuses its sockets' writes with ENETDOWN (net/can/af_can.c,
// can_send) and delivers nothing to them.
func SetLinkUp(name string, up bool) error {
	return withRoute(func(rt roundTrip) error { return (&linker{rt: rt}).setUp(name, up) })
}

// TakeDown clears IFF_UP on spec's link and, first, on its vxcan peer if that
// is in this namespace: writes on either end then fail with ENETDOWN
// (net/can/af_can.c, can_send). A peer in another namespace stays up there
// but loses its carrier with its other end (vxcan_close).
func TakeDown(spec LinkSpec) error {
	return withRoute(func(rt roundTrip) error { return (&linker{rt: rt}).takeDown(spec) })
}

func (l *linker) takeDown(spec LinkSpec) error {
	if spec.Peer != "" && spec.PeerNetNS.IsZero() {
		if err := l.setUp(spec.Peer, false); err != nil {
			return err
		}
	}
	return l.setUp(spec.Name, false)
}

// LinkState returns what rtnetlink reports about interface name.
func LinkState(name string) (Link, error) {
	var link Link
	err := withRoute(func(rt roundTrip) error {
		var err error
		link, err = (&linker{rt: rt}).get(name)
		if errors.Is(err, unix.ENODEV) {
			return fmt.Errorf("socketcan: no interface %s: %w; create it with EnsureLink", name, err)
		}
		return err
	})
	return link, err
}

// RenameLink renames interface from to name, taking it down first if it is up
// (the kernel renames only a link that is down). It needs CAP_NET_ADMIN; a name
// that is taken is refused with EEXIST.
func RenameLink(from, name string) error {
	return withRoute(func(rt roundTrip) error { return (&linker{rt: rt}).rename(from, name) })
}

func (l *linker) rename(from, name string) error {
	link, err := l.get(from)
	if err != nil {
		return wrap("look up link", from, "", err)
	}
	if link.Up() {
		if err := l.ack(func(seq uint32) []byte { return reqSetUp(seq, int32(link.Index), false) }); err != nil {
			return wrap("take down (to rename it)", from, link.Kind, err)
		}
	}
	if err := l.ack(func(seq uint32) []byte { return reqSetName(seq, int32(link.Index), name) }); err != nil {
		return wrap("rename to "+name, from, link.Kind, err)
	}
	return nil
}

// SetCANBitrate sets the bitrate of CAN interface name, which must be down (as
// `ip link set NAME type can bitrate RATE`). A device with a fixed list of
// bitrates (slcan) refuses any other with EINVAL.
func SetCANBitrate(name string, bitrate uint32) error {
	return withRoute(func(rt roundTrip) error {
		l := &linker{rt: rt}
		link, err := l.get(name)
		if err != nil {
			return wrap("look up link", name, "", err)
		}
		return wrap(fmt.Sprintf("set bitrate %d on", bitrate), name, link.Kind,
			l.ack(func(seq uint32) []byte { return reqSetCANBitrate(seq, int32(link.Index), bitrate) }))
	})
}
