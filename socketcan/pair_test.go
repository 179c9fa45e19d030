package socketcan

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// annotated drops the # comments of an annotated hex layout.
func annotated(t *testing.T, s string) []byte {
	t.Helper()
	var clean []string
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		clean = append(clean, line)
	}
	return hx(t, strings.Join(clean, " "))
}

func TestPairRequestBytes(t *testing.T) {
	requireLittleEndian(t)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"peer in a namespace file", reqNewPair(3, "vxcan0", KindVXCAN, peerEnd{name: "vxcan1", ns: netnsRef{fd: 8}, mtu: 16}), `
			70000000 1000 0506 03000000 00000000 # len 112, RTM_NEWLINK, REQUEST|ACK|EXCL|CREATE, seq 3
			00 00 0000 00000000 00000000 00000000
			0b00 0300 767863616e30 00 00          # IFLA_IFNAME "vxcan0"
			4400 1200                             # IFLA_LINKINFO, 68 bytes
			  0a00 0100 767863616e 00 0000        #   IFLA_INFO_KIND "vxcan"
			  3400 0200                           #   IFLA_INFO_DATA, 52 bytes
			    3000 0100                         #     VXCAN_INFO_PEER, 48 bytes
			      00 00 0000 00000000 00000000 00000000 # struct ifinfomsg
			      0b00 0300 767863616e31 00 00    #     IFLA_IFNAME "vxcan1"
			      0800 0400 10000000              #     IFLA_MTU 16
			      0800 1c00 07000000              #     IFLA_NET_NS_FD 7`},
		{"peer in a process's namespace", reqNewPair(4, "can0p", KindVXCAN, peerEnd{name: "can0", ns: netnsRef{pid: 4242}, mtu: 16}), `
			70000000 1000 0506 04000000 00000000 # len 112
			00 00 0000 00000000 00000000 00000000
			0a00 0300 63616e3070 00 0000          # IFLA_IFNAME "can0p"
			4400 1200                             # IFLA_LINKINFO, 68 bytes
			  0a00 0100 767863616e 00 0000        #   IFLA_INFO_KIND "vxcan"
			  3400 0200                           #   IFLA_INFO_DATA, 52 bytes
			    3000 0100                         #     VXCAN_INFO_PEER, 48 bytes
			      00 00 0000 00000000 00000000 00000000
			      0900 0300 63616e30 00 000000    #     IFLA_IFNAME "can0"
			      0800 0400 10000000              #     IFLA_MTU 16
			      0800 1300 92100000              #     IFLA_NET_NS_PID 4242`},
		{"peer here is reqNewLink's", reqNewPair(3, "vxcan0", KindVXCAN, peerEnd{name: "vxcan1"}), "" +
			"60000000 1000 0506 03000000 00000000 00 00 0000 00000000 00000000 00000000 0b00 0300 767863616e30 00 00" +
			"3400 1200 0a00 0100 767863616e 00 0000 2400 0200 2000 0100 00 00 0000 00000000 00000000 00000000 0b00 0300 767863616e31 00 00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if want := annotated(t, tc.want); !bytes.Equal(tc.got, want) {
				t.Errorf("request bytes\n got %x\nwant %x", tc.got, want)
			}
		})
	}
	if !bytes.Equal(reqNewLink(3, "vxcan0", KindVXCAN, "vxcan1"), reqNewPair(3, "vxcan0", KindVXCAN, peerEnd{name: "vxcan1"})) {
		t.Error("reqNewLink with a peer differs from reqNewPair with that peer here")
	}
}

func TestParseLinkPeerElsewhere(t *testing.T) {
	requireLittleEndian(t)
	// RTM_NEWLINK for can0p: index 7, IFLA_LINK 3, IFLA_LINK_NETNSID 0.
	b := hx(t, `44000000 1000 0000 01000000 00000000
		00 00 1801 07000000 00000000 00000000
		0a00 0300 63616e3070 00 0000
		0800 0500 03000000
		0800 2500 00000000
		0800 0400 10000000`)
	p, _, err := parseReply(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := parseLink(p)
	want := Link{Index: 7, Name: "can0p", MTU: 16, PeerIndex: 3, PeerElsewhere: true}
	if err != nil || l != want {
		t.Fatalf("got %+v, %v\nwant %+v", l, err, want)
	}
}

// With the peer in another namespace, the pair is created with the peer's MTU
// in the request, and the peer is not looked up afterwards (it is not in
// cand's namespace).
func TestEnsureCreatesPairWithPeerInANamespace(t *testing.T) {
	a := Link{Index: 7, Name: "can0p", Kind: KindVXCAN, MTU: 72, PeerIndex: 3, PeerElsewhere: true}
	ns := netnsRef{pid: 4242}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "can0p"), ackMsg(1, unix.ENODEV, "")},
		{reqNewPair(2, "can0p", KindVXCAN, peerEnd{name: "can0", ns: ns, mtu: 16}), ackMsg(2, 0, "")},
		{reqGetLink(3, "can0p"), linkMsg(3, a)},
		{reqSetMTU(4, 7, 16), ackMsg(4, 0, "")},
		{reqSetUp(5, 7, true), ackMsg(5, 0, "")},
	})
	spec := LinkSpec{Name: "can0p", Kind: KindVXCAN, Peer: "can0", PeerNetNS: NetNS{PID: 4242}, MTU: CAN_MTU}
	created, err := (&linker{rt: rt}).ensureSpec(spec, ns)
	if !created || err != nil {
		t.Fatalf("ensure = %v, %v; want true, nil", created, err)
	}
	done()
}

func TestEnsureReusesPairWithPeerInANamespace(t *testing.T) {
	a := Link{Index: 7, Name: "can0p", Kind: KindVXCAN, MTU: 16, PeerIndex: 3, PeerElsewhere: true}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "can0p"), linkMsg(1, a)},
		{reqSetUp(2, 7, true), ackMsg(2, 0, "")},
	})
	spec := LinkSpec{Name: "can0p", Kind: KindVXCAN, Peer: "can0", PeerNetNS: NetNS{Path: "/run/netns/app"}, MTU: CAN_MTU}
	if created, err := (&linker{rt: rt}).ensureSpec(spec, netnsRef{fd: 5}); created || err != nil {
		t.Fatalf("ensure = %v, %v; want false, nil", created, err)
	}
	done()
}

func TestEnsurePeerInTheWrongNamespace(t *testing.T) {
	tests := []struct {
		name string
		link Link
		ns   NetNS
		want string
	}{
		{"peer here, namespace asked", Link{Index: 7, Name: "can0p", Kind: KindVXCAN, MTU: 16, PeerIndex: 8}, NetNS{Path: "/run/netns/app"},
			"socketcan: the peer of can0p is in this network namespace, not in /run/netns/app; delete can0p (`ip link del can0p`) to have the pair made again there"},
		{"peer elsewhere, none asked", Link{Index: 7, Name: "can0p", Kind: KindVXCAN, MTU: 16, PeerIndex: 3, PeerElsewhere: true}, NetNS{},
			"socketcan: the peer of can0p is in another network namespace, but this one was asked for (no netns configured); delete can0p (`ip link del can0p`) to have the pair made again, or configure the namespace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, done := fakeKernel(t, []step{{reqGetLink(1, "can0p"), linkMsg(1, tc.link)}})
			spec := LinkSpec{Name: "can0p", Kind: KindVXCAN, Peer: "can0", PeerNetNS: tc.ns, MTU: CAN_MTU}
			if _, err := (&linker{rt: rt}).ensureSpec(spec, netnsRef{}); err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			done()
		})
	}
}

// Down is sent only to a link that is up, up only to one that is down.
func TestSetUpAndDown(t *testing.T) {
	up := Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 16, Flags: unix.IFF_UP | unix.IFF_RUNNING}
	down := Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 16}
	rt, done := fakeKernel(t, []step{
		{reqGetLink(1, "vcan0"), linkMsg(1, up)},
		{reqSetUp(2, 3, false), ackMsg(2, 0, "")},
		{reqGetLink(3, "vcan0"), linkMsg(3, down)},
		{reqGetLink(4, "vcan0"), linkMsg(4, up)},
	})
	lk := &linker{rt: rt}
	for _, want := range []bool{false, false, true} {
		if err := lk.setUp("vcan0", want); err != nil {
			t.Fatal(err)
		}
	}
	done()
}

func TestSetDownMissingLink(t *testing.T) {
	rt, done := fakeKernel(t, []step{{reqGetLink(1, "gone0"), ackMsg(1, unix.ENODEV, "")}})
	err := (&linker{rt: rt}).setUp("gone0", false)
	want := "socketcan: look up link gone0: no such device: no such interface; create it with EnsureLink"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	done()
}

func TestEnsureRefusesNamespaceWithoutPeer(t *testing.T) {
	_, err := Ensure(LinkSpec{Name: "vcan0", Kind: KindVCAN, PeerNetNS: NetNS{PID: 1}})
	if err == nil || err.Error() != "socketcan: vcan0: only a pair's peer can be placed in another network namespace" {
		t.Fatalf("got %v", err)
	}
}

func TestNetNSString(t *testing.T) {
	for _, tc := range []struct {
		n    NetNS
		want string
	}{{NetNS{}, "this network namespace"}, {NetNS{Path: "/run/netns/a"}, "/run/netns/a"}, {NetNS{PID: 12}, "the network namespace of PID 12"}} {
		if got := tc.n.String(); got != tc.want || tc.n.IsZero() != (tc.n == NetNS{}) {
			t.Errorf("%+v: %q, want %q", tc.n, got, tc.want)
		}
	}
}

// A pair here goes down peer first (the applications' end), then cand's end;
// with the peer in another namespace only cand's end is reachable.
func TestTakeDown(t *testing.T) {
	up := func(index int, name string) Link {
		return Link{Index: index, Name: name, Kind: KindVXCAN, MTU: 16, Flags: unix.IFF_UP}
	}
	t.Run("peer here", func(t *testing.T) {
		rt, done := fakeKernel(t, []step{
			{reqGetLink(1, "can0"), linkMsg(1, up(8, "can0"))},
			{reqSetUp(2, 8, false), ackMsg(2, 0, "")},
			{reqGetLink(3, "can0p"), linkMsg(3, up(7, "can0p"))},
			{reqSetUp(4, 7, false), ackMsg(4, 0, "")},
		})
		if err := (&linker{rt: rt}).takeDown(LinkSpec{Name: "can0p", Kind: KindVXCAN, Peer: "can0"}); err != nil {
			t.Fatal(err)
		}
		done()
	})
	t.Run("peer elsewhere", func(t *testing.T) {
		rt, done := fakeKernel(t, []step{
			{reqGetLink(1, "can0p"), linkMsg(1, up(7, "can0p"))},
			{reqSetUp(2, 7, false), ackMsg(2, 0, "")},
		})
		if err := (&linker{rt: rt}).takeDown(LinkSpec{Name: "can0p", Kind: KindVXCAN, Peer: "can0", PeerNetNS: NetNS{PID: 9}}); err != nil {
			t.Fatal(err)
		}
		done()
	})
	t.Run("vcan", func(t *testing.T) {
		rt, done := fakeKernel(t, []step{
			{reqGetLink(1, "vcan0"), linkMsg(1, Link{Index: 3, Name: "vcan0", Kind: KindVCAN, MTU: 16, Flags: unix.IFF_UP})},
			{reqSetUp(2, 3, false), ackMsg(2, 0, "")},
		})
		if err := (&linker{rt: rt}).takeDown(LinkSpec{Name: "vcan0", Kind: KindVCAN}); err != nil {
			t.Fatal(err)
		}
		done()
	})
}
