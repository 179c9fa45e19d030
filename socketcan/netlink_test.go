package socketcan

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hx decodes hex with spaces and newlines, for byte layouts annotated
// field by field. The expected messages below are little-endian (amd64,
// arm, arm64: every platform cand runs on).
func hx(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

func requireLittleEndian(t *testing.T) {
	if native.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are written for little-endian hosts")
	}
}

func TestRequestBytes(t *testing.T) {
	requireLittleEndian(t)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"getlink", reqGetLink(1, "vcan0"), `
			2c000000 1200 0100 01000000 00000000 # nlmsghdr: len 44, RTM_GETLINK, NLM_F_REQUEST, seq 1, pid 0
			00 00 0000 00000000 00000000 00000000 # ifinfomsg: AF_UNSPEC
			0a00 0300 7663616e30 00 0000          # IFLA_IFNAME "vcan0\0" + pad`},
		{"newlink vcan", reqNewLink(2, "cand0", KindVCAN, ""), `
			3c000000 1000 0506 02000000 00000000 # len 60, RTM_NEWLINK, REQUEST|ACK|EXCL|CREATE, seq 2
			00 00 0000 00000000 00000000 00000000
			0a00 0300 63616e6430 00 0000          # IFLA_IFNAME "cand0"
			1000 1200                             # IFLA_LINKINFO, 16 bytes
			  0900 0100 7663616e 00 000000        #   IFLA_INFO_KIND "vcan"`},
		{"newlink vxcan", reqNewLink(3, "vxcan0", KindVXCAN, "vxcan1"), `
			60000000 1000 0506 03000000 00000000 # len 96
			00 00 0000 00000000 00000000 00000000
			0b00 0300 767863616e30 00 00          # IFLA_IFNAME "vxcan0"
			3400 1200                             # IFLA_LINKINFO, 52 bytes
			  0a00 0100 767863616e 00 0000        #   IFLA_INFO_KIND "vxcan"
			  2400 0200                           #   IFLA_INFO_DATA, 36 bytes
			    2000 0100                         #     VXCAN_INFO_PEER, 32 bytes
			      00 00 0000 00000000 00000000 00000000 # struct ifinfomsg
			      0b00 0300 767863616e31 00 00    #     IFLA_IFNAME "vxcan1"`},
		{"set mtu", reqSetMTU(4, 7, 16), `
			28000000 1000 0500 04000000 00000000 # len 40, RTM_NEWLINK, REQUEST|ACK
			00 00 0000 07000000 00000000 00000000 # ifindex 7
			0800 0400 10000000                    # IFLA_MTU 16`},
		{"set up", reqSetUp(5, 7, true), `
			20000000 1000 0500 05000000 00000000
			00 00 0000 07000000 01000000 01000000 # flags IFF_UP, change IFF_UP`},
		{"set down", reqSetUp(6, 7, false), `
			20000000 1000 0500 06000000 00000000
			00 00 0000 07000000 00000000 01000000 # flags 0, change IFF_UP`},
		{"dellink", reqDelLink(7, 9), `
			20000000 1100 0500 07000000 00000000 # RTM_DELLINK
			00 00 0000 09000000 00000000 00000000`},
		{"rename", reqSetName(8, 9, "can0"), `
			2c000000 1000 0500 08000000 00000000 # len 44, RTM_NEWLINK, REQUEST|ACK
			00 00 0000 09000000 00000000 00000000 # ifindex 9
			0900 0300 63616e30 00 000000          # IFLA_IFNAME "can0"`},
		{"can bitrate", reqSetCANBitrate(9, 9, 500000), `
			54000000 1000 0500 09000000 00000000 # len 84
			00 00 0000 09000000 00000000 00000000
			3400 1200                             # IFLA_LINKINFO, 52 bytes
			  0800 0100 63616e00                  #   IFLA_INFO_KIND "can"
			  2800 0200                           #   IFLA_INFO_DATA, 40 bytes
			    2400 0100                         #     IFLA_CAN_BITTIMING, struct can_bittiming
			      20a10700 00000000 00000000 00000000 00000000 00000000 00000000 00000000 # bitrate 500000`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if want := annotated(t, tc.want); !bytes.Equal(tc.got, want) {
				t.Errorf("request bytes\n got %x\nwant %x", tc.got, want)
			}
		})
	}
}

// Canned kernel replies.
const (
	// ACK of seq 2, capped (NETLINK_CAP_ACK): nlmsgerr{0, request header}.
	replyAck = `24000000 0200 0001 02000000 00000000  00000000  3c000000 1000 0506 02000000 00000000`
	// ENODEV (-19) for seq 1.
	replyNoDev = `24000000 0200 0001 01000000 00000000  edffffff  2c000000 1200 0100 01000000 00000000`
	// EOPNOTSUPP (-95) for seq 2, capped, with NLMSGERR_ATTR_MSG "Unknown device type".
	replyUnknownType = `3c000000 0200 0003 02000000 00000000  a1ffffff  3c000000 1000 0506 02000000 00000000
		1800 0100 556e6b6e6f776e20646576696365207479706500`
	// RTM_NEWLINK for vcan0: ARPHRD_CAN (280), index 5, UP|RUNNING|NOARP,
	// IFLA_IFNAME, IFLA_MTU 16, IFLA_OPERSTATE 6 (up), IFLA_LINKINFO{kind vcan}.
	replyLink = `4c000000 1000 0000 01000000 00000000
		00 00 1801 05000000 c1000000 00000000
		0a00 0300 7663616e30 00 0000
		0800 0400 10000000
		0500 1000 06 000000
		1000 1200 0900 0100 7663616e 00 000000`
)

func TestParseReply(t *testing.T) {
	requireLittleEndian(t)
	t.Run("ack", func(t *testing.T) {
		p, found, err := parseReply(hx(t, replyAck), 2)
		if p != nil || !found || err != nil {
			t.Fatalf("got %x %v %v, want nil true nil", p, found, err)
		}
	})
	t.Run("stale seq", func(t *testing.T) {
		_, found, err := parseReply(hx(t, replyAck), 3)
		if found || err != nil {
			t.Fatalf("got found=%v err=%v, want false nil", found, err)
		}
	})
	t.Run("enodev", func(t *testing.T) {
		_, found, err := parseReply(hx(t, replyNoDev), 1)
		var ne *nlError
		if !found || !errors.As(err, &ne) || ne.Errno != unix.ENODEV || ne.Msg != "" || !errors.Is(err, unix.ENODEV) {
			t.Fatalf("got found=%v err=%#v, want ENODEV without text", found, err)
		}
	})
	t.Run("extended ack capped", func(t *testing.T) {
		_, _, err := parseReply(hx(t, replyUnknownType), 2)
		if got, want := err.Error(), "operation not supported: Unknown device type"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("extended ack uncapped", func(t *testing.T) {
		// Without NLM_F_CAPPED the whole 32-byte request is echoed before the TLVs.
		b := hx(t, `48000000 0200 0002 05000000 00000000  f0ffffff
			20000000 1000 0500 05000000 00000000  00 00 0000 07000000 01000000 01000000
			1300 0100 446576696365206973206275737900 00`)
		_, _, err := parseReply(b, 5)
		if !errors.Is(err, unix.EBUSY) || err.Error() != "device or resource busy: Device is busy" {
			t.Fatalf("got %v, want EBUSY with text", err)
		}
	})
	t.Run("link", func(t *testing.T) {
		p, found, err := parseReply(hx(t, replyLink), 1)
		if !found || err != nil {
			t.Fatalf("found=%v err=%v", found, err)
		}
		l, err := parseLink(p)
		want := Link{Index: 5, Name: "vcan0", Kind: KindVCAN, MTU: 16, Flags: 0xc1, OperState: 6}
		if err != nil || l != want {
			t.Fatalf("got %+v, %v\nwant %+v", l, err, want)
		}
		if !l.Up() {
			t.Error("Up() = false for IFF_UP")
		}
	})
	t.Run("truncated", func(t *testing.T) {
		b := hx(t, replyLink)
		_, _, err := parseReply(b[:len(b)-8], 1)
		if !errors.Is(err, errMalformed) {
			t.Fatalf("got %v, want errMalformed", err)
		}
	})
}

// fakeKernel answers rtnetlink requests from a script: each step names the
// exact request it expects and the reply to give.
type step struct {
	req   []byte
	reply []byte
}

func fakeKernel(t *testing.T, steps []step) (roundTrip, func()) {
	t.Helper()
	i := 0
	rt := func(req []byte) ([]byte, error) {
		if i >= len(steps) {
			t.Fatalf("unexpected request %d: %x", i+1, req)
		}
		s := steps[i]
		i++
		if !bytes.Equal(req, s.req) {
			t.Fatalf("request %d\n got %x\nwant %x", i, req, s.req)
		}
		return s.reply, nil
	}
	return rt, func() {
		t.Helper()
		if i != len(steps) {
			t.Errorf("%d of %d requests sent", i, len(steps))
		}
	}
}

// Reply builders for the flow tests (the exact layouts are pinned above).
func ackMsg(seq uint32, errno unix.Errno, text string) []byte {
	flags := uint16(unix.NLM_F_CAPPED)
	var tlv []byte
	if text != "" {
		flags |= unix.NLM_F_ACK_TLVS
		m := &nlBuilder{}
		m.attrString(unix.NLMSGERR_ATTR_MSG, text)
		tlv = m.b
	}
	b := make([]byte, nlmsgHdrLen+nlmsgerrLen)
	native.PutUint16(b[4:], unix.NLMSG_ERROR)
	native.PutUint16(b[6:], flags)
	native.PutUint32(b[8:], seq)
	native.PutUint32(b[16:], uint32(-int32(errno)))
	b = append(b, tlv...)
	native.PutUint32(b[0:], uint32(len(b)))
	return b
}

func linkMsg(seq uint32, l Link) []byte {
	m := newLinkMsg(unix.RTM_NEWLINK, 0, seq, unix.IfInfomsg{Index: int32(l.Index), Flags: l.Flags})
	m.attrString(unix.IFLA_IFNAME, l.Name)
	m.attrU32(unix.IFLA_MTU, uint32(l.MTU))
	if l.PeerIndex != 0 {
		m.attrU32(unix.IFLA_LINK, uint32(l.PeerIndex))
	}
	if l.PeerElsewhere {
		m.attrU32(unix.IFLA_LINK_NETNSID, 0)
	}
	if l.Kind != "" {
		li := m.begin(unix.IFLA_LINKINFO)
		m.attrString(unix.IFLA_INFO_KIND, string(l.Kind))
		m.end(li)
	}
	return m.bytes()
}

func TestEnsureCreatesVXCANPair(t *testing.T) {
	a := Link{Index: 7, Name: "vxcan0", Kind: KindVXCAN, MTU: 72, PeerIndex: 8}
	b := Link{Index: 8, Name: "vxcan1", Kind: KindVXCAN, MTU: 72, PeerIndex: 7}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "vxcan0"), ackMsg(1, unix.ENODEV, "")},
		{reqNewLink(2, "vxcan0", KindVXCAN, "vxcan1"), ackMsg(2, 0, "")},
		{reqGetLink(3, "vxcan0"), linkMsg(3, a)},
		{reqSetMTU(4, 7, 16), ackMsg(4, 0, "")},
		{reqSetUp(5, 7, true), ackMsg(5, 0, "")},
		{reqGetLink(6, "vxcan1"), linkMsg(6, b)},
		{reqSetMTU(7, 8, 16), ackMsg(7, 0, "")},
		{reqSetUp(8, 8, true), ackMsg(8, 0, "")},
	})
	created, err := (&linker{rt: rt}).ensure("vxcan0", KindVXCAN, "vxcan1", CAN_MTU)
	if !created || err != nil {
		t.Fatalf("ensure = %v, %v; want true, nil", created, err)
	}
	done()
}

func TestEnsureExistingUpLinkWithWrongMTU(t *testing.T) {
	// Up with MTU 72: down, MTU 16, up (the kernel refuses the MTU change
	// on a running CAN link).
	l := Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 72, Flags: unix.IFF_UP}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "vcan0"), linkMsg(1, l)},
		{reqSetUp(2, 3, false), ackMsg(2, 0, "")},
		{reqSetMTU(3, 3, 16), ackMsg(3, 0, "")},
		{reqSetUp(4, 3, true), ackMsg(4, 0, "")},
	})
	created, err := (&linker{rt: rt}).ensure("vcan0", KindVCAN, "", CAN_MTU)
	if created || err != nil {
		t.Fatalf("ensure = %v, %v; want false, nil", created, err)
	}
	done()
}

func TestEnsureReadyLinkSendsOnlyALookup(t *testing.T) {
	l := Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 16, Flags: unix.IFF_UP}
	rt, done := fakeKernel(t, []step{{reqGetLink(1, "vcan0"), linkMsg(1, l)}})
	if created, err := (&linker{rt: rt}).ensure("vcan0", KindVCAN, "", CAN_MTU); created || err != nil {
		t.Fatalf("ensure = %v, %v", created, err)
	}
	done()
}

func TestEnsureErrors(t *testing.T) {
	tests := []struct {
		name  string
		steps func() []step
		kind  Kind
		peer  string
		want  string
	}{
		{"real can device", func() []step {
			return []step{{reqGetLink(1, "can0"), linkMsg(1, Link{Index: 2, Name: "can0", Kind: "can", MTU: 16})}}
		}, KindVCAN, "",
			`socketcan: interface can0 exists with kind "can" (a real CAN controller driven by a kernel driver), not vcan: refusing to use it; pick another interface name in the configuration, or delete it (` + "`ip link del can0`" + `) if it is stale`},
		{"ethernet", func() []step {
			return []step{{reqGetLink(1, "can0"), linkMsg(1, Link{Index: 2, Name: "can0", MTU: 1500})}}
		}, KindVCAN, "", `socketcan: interface can0 exists with no link kind (a physical or loopback device), not vcan`},
		{"no vcan module", func() []step {
			return []step{
				{reqGetLink(1, "can0"), ackMsg(1, unix.ENODEV, "")},
				{reqNewLink(2, "can0", KindVCAN, ""), ackMsg(2, unix.EOPNOTSUPP, "Unknown device type")},
			}
		}, KindVCAN, "",
			"socketcan: create vcan link can0: operation not supported (kernel: Unknown device type): the kernel does not know link type \"vcan\"; run `modprobe vcan` (and list it in /etc/modules-load.d), or use a kernel with CONFIG_CAN_VCAN"},
		{"no permission", func() []step {
			return []step{
				{reqGetLink(1, "can0"), ackMsg(1, unix.ENODEV, "")},
				{reqNewLink(2, "can0", KindVXCAN, "peer0"), ackMsg(2, unix.EPERM, "")},
			}
		}, KindVXCAN, "peer0",
			"socketcan: create vxcan link can0: operation not permitted: needs CAP_NET_ADMIN; run as root or add AmbientCapabilities=CAP_NET_ADMIN"},
		{"busy", func() []step {
			return []step{
				{reqGetLink(1, "can0"), linkMsg(1, Link{Index: 4, Name: "can0", Kind: KindVCAN, MTU: 72})},
				{reqSetMTU(2, 4, 16), ackMsg(2, unix.EBUSY, "")},
			}
		}, KindVCAN, "",
			"socketcan: set MTU 16 on can0: device or resource busy: the MTU of a CAN link can only change while it is down; run `ip link set can0 down` and retry"},
		{"wrong peer", func() []step {
			return []step{
				{reqGetLink(1, "x0"), linkMsg(1, Link{Index: 4, Name: "x0", Kind: KindVXCAN, MTU: 16, Flags: unix.IFF_UP, PeerIndex: 5})},
				{reqGetLink(2, "x9"), linkMsg(2, Link{Index: 9, Name: "x9", Kind: KindVXCAN, MTU: 16, Flags: unix.IFF_UP, PeerIndex: 10})},
			}
		}, KindVXCAN, "x9",
			`socketcan: x0 is a vxcan link but x9 is not its peer (kind "vxcan", index 9, peer index 5); delete x0 or configure the right peer name`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, done := fakeKernel(t, tc.steps())
			name := "can0"
			if tc.name == "wrong peer" {
				name = "x0"
			}
			_, err := (&linker{rt: rt}).ensure(name, tc.kind, tc.peer, CAN_MTU)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			done()
		})
	}
}

func TestValidKind(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		peer string
		ok   bool
	}{
		{KindVCAN, "", true}, {KindVXCAN, "p", true},
		{KindVCAN, "p", false}, {KindVXCAN, "", false}, {"can", "", false}, {"veth", "p", false},
	} {
		if err := validKind(tc.kind, tc.peer); (err == nil) != tc.ok {
			t.Errorf("validKind(%q, %q) = %v", tc.kind, tc.peer, err)
		}
	}
}

func TestRenameTakesTheLinkDownFirst(t *testing.T) {
	l := Link{Index: 3, Name: "can5", Kind: "can", MTU: 16, Flags: unix.IFF_UP}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "can5"), linkMsg(1, l)},
		{reqSetUp(2, 3, false), ackMsg(2, 0, "")},
		{reqSetName(3, 3, "can0"), ackMsg(3, unix.EEXIST, "")},
	})
	err := (&linker{rt: rt}).rename("can5", "can0")
	if !errors.Is(err, unix.EEXIST) {
		t.Fatalf("rename to a taken name: %v, want EEXIST", err)
	}
	done()
}

func TestDeleteAndUp(t *testing.T) {
	l := Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 16}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "vcan0"), linkMsg(1, l)},
		{reqSetUp(2, 3, true), ackMsg(2, 0, "")},
		{reqGetLink(3, "vcan0"), linkMsg(3, l)},
		{reqDelLink(4, 3), ackMsg(4, 0, "")},
	})
	lk := &linker{rt: rt}
	if err := lk.setUp("vcan0", true); err != nil {
		t.Fatal(err)
	}
	if err := lk.del("vcan0"); err != nil {
		t.Fatal(err)
	}
	done()
}

// FuzzParseReply: a datagram gives an RTM_NEWLINK payload (which parseLink then
// reads), an ACK, the kernel's error with its errno, or errMalformed; never a
// payload and an error together. The ACK and error builders of the fake kernel,
// fed the same bytes, come back as they were built.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{replyAck, replyNoDev, replyUnknownType, replyLink} {
		f.Add(hx(f, s), uint32(1))
		f.Add(hx(f, s), uint32(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, seq uint32) {
		p, found, err := parseReply(b, seq)
		switch {
		case err != nil:
			checkNetlinkError(t, err)
			if p != nil {
				t.Fatalf("payload %x with error %v", p, err)
			}
		case p != nil:
			if !found {
				t.Fatalf("payload %x without a message of seq %d", p, seq)
			}
			if l, err := parseLink(p); err != nil {
				checkNetlinkError(t, err)
			} else {
				checkLinkRoundTrip(t, l)
			}
		}

		// The bytes as an errno and an extended-ack text, through ackMsg.
		var errno unix.Errno
		var text string
		if len(b) >= 2 {
			errno, text = unix.Errno(native.Uint16(b)), cString(b[2:min(len(b), 512)])
		}
		p, found, err = parseReply(ackMsg(seq, errno, text), seq)
		var ne *nlError
		switch {
		case !found || p != nil:
			t.Fatalf("ackMsg(%d, %d, %q): found=%v payload %x", seq, errno, text, found, p)
		case errno == 0 && err != nil:
			t.Fatalf("ACK of seq %d read as %v", seq, err)
		case errno != 0 && (!errors.As(err, &ne) || ne.Errno != errno || ne.Msg != text || !errors.Is(err, errno)):
			t.Fatalf("ackMsg(%d, %d, %q) read as %#v", seq, errno, text, err)
		}
	})
}

// FuzzParseLink: an RTM_NEWLINK payload gives a Link or errMalformed; a Link read
// comes back the same from the message the fake kernel builds of it.
func FuzzParseLink(f *testing.F) {
	b := hx(f, replyLink)
	f.Add(b[nlmsgHdrLen:])
	f.Fuzz(func(t *testing.T, p []byte) {
		l, err := parseLink(p)
		if err != nil {
			checkNetlinkError(t, err)
			return
		}
		checkLinkRoundTrip(t, l)
	})
}

// checkNetlinkError: a parse failure is errMalformed saying what is wrong, or the
// kernel's nonzero errno.
func checkNetlinkError(t *testing.T, err error) {
	t.Helper()
	var ne *nlError
	switch {
	case errors.As(err, &ne):
		if ne.Errno == 0 || err.Error() == "" {
			t.Fatalf("kernel error without an errno: %#v", ne)
		}
	case errors.Is(err, errMalformed):
		if len(err.Error()) <= len(errMalformed.Error()+": ") {
			t.Fatalf("%q does not say what is malformed", err)
		}
	default:
		t.Fatalf("error %#v is neither errMalformed nor the kernel's", err)
	}
}

// checkLinkRoundTrip: linkMsg(l) parses back to l (linkMsg does not write
// IFLA_OPERSTATE).
func checkLinkRoundTrip(t *testing.T, l Link) {
	t.Helper()
	p, found, err := parseReply(linkMsg(9, l), 9)
	if !found || err != nil {
		t.Fatalf("linkMsg(%+v): found=%v err=%v", l, found, err)
	}
	got, err := parseLink(p)
	l.OperState = 0
	if err != nil || got != l {
		t.Fatalf("round trip of %+v gave %+v, %v", l, got, err)
	}
}

func TestDeleteMissingLink(t *testing.T) {
	rt, done := fakeKernel(t, []step{{reqGetLink(1, "gone0"), ackMsg(1, unix.ENODEV, "")}})
	err := (&linker{rt: rt}).del("gone0")
	want := "socketcan: delete link gone0: no such device: no such interface (already deleted, or its vxcan peer was)"
	if !errors.Is(err, unix.ENODEV) || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	done()
}
