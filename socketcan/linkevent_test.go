package socketcan

import (
	"errors"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func doneMsg(seq uint32) []byte {
	b := make([]byte, nlmsgHdrLen+4) // NLMSG_DONE carries an int (the dump's status)
	native.PutUint32(b[0:], uint32(len(b)))
	native.PutUint16(b[4:], unix.NLMSG_DONE)
	native.PutUint16(b[6:], unix.NLM_F_MULTI)
	native.PutUint32(b[8:], seq)
	return b
}

func delLinkMsg(l Link) []byte {
	m := newLinkMsg(unix.RTM_DELLINK, 0, 0, unix.IfInfomsg{Index: int32(l.Index), Flags: l.Flags})
	m.attrString(unix.IFLA_IFNAME, l.Name)
	return m.bytes()
}

func concat(msgs ...[]byte) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, m...)
	}
	return b
}

func collect(t *testing.T, buf []byte) ([]LinkEvent, bool, error) {
	t.Helper()
	var evs []LinkEvent
	done, err := parseLinkEvents(buf, func(e LinkEvent) { evs = append(evs, e) })
	return evs, done, err
}

// What `ip link set vcan0 down`, `up` and `ip link del vcan0` make the kernel
// multicast, and a dump's answer: each message becomes one event with the whole
// state of the link.
func TestParseLinkEvents(t *testing.T) {
	vcan0 := Link{Index: 5, Name: "vcan0", Kind: KindVCAN, MTU: CAN_MTU, Flags: unix.IFF_UP | unix.IFF_RUNNING | unix.IFF_NOARP}
	down := vcan0
	down.Flags = unix.IFF_NOARP
	lo := Link{Index: 1, Name: "lo", MTU: 65536, Flags: unix.IFF_UP | unix.IFF_LOOPBACK}
	for _, tc := range []struct {
		name string
		buf  []byte
		want []LinkEvent
		done bool
	}{
		{"dump answer", concat(linkMsg(7, lo), linkMsg(7, vcan0), doneMsg(7)), []LinkEvent{{Link: lo}, {Link: vcan0}}, true},
		{"set down", linkMsg(0, down), []LinkEvent{{Link: down}}, false},
		{"set up", linkMsg(0, vcan0), []LinkEvent{{Link: vcan0}}, false},
		{"deleted", delLinkMsg(down), []LinkEvent{{Link: Link{Index: 5, Name: "vcan0", Flags: unix.IFF_NOARP}, Deleted: true}}, false},
		{"ack and an address message skipped", concat(ackMsg(3, 0, ""), msgOfType(unix.RTM_NEWADDR), linkMsg(0, vcan0)), []LinkEvent{{Link: vcan0}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, done, err := collect(t, tc.buf)
			if err != nil || done != tc.done || !reflect.DeepEqual(evs, tc.want) {
				t.Fatalf("got %+v done %v err %v\nwant %+v done %v", evs, done, err, tc.want, tc.done)
			}
		})
	}
	if evs, _, _ := collect(t, linkMsg(0, down)); evs[0].Up() {
		t.Error("a link without IFF_UP reports Up")
	}
}

func msgOfType(typ uint16) []byte {
	b := make([]byte, nlmsgHdrLen+8)
	native.PutUint32(b[0:], uint32(len(b)))
	native.PutUint16(b[4:], typ)
	return b
}

// A kernel error (a refused dump) and a truncated message are errors; the events
// before them were delivered.
func TestParseLinkEventsErrors(t *testing.T) {
	vcan0 := Link{Index: 5, Name: "vcan0", Flags: unix.IFF_UP}
	evs, _, err := collect(t, concat(linkMsg(0, vcan0), ackMsg(2, unix.EBUSY, "")))
	if !errors.Is(err, unix.EBUSY) || len(evs) != 1 {
		t.Errorf("EBUSY answer: %+v, %v; want the event before it and EBUSY", evs, err)
	}
	msg := linkMsg(0, vcan0)
	native.PutUint32(msg[0:], uint32(len(msg)+8))
	if _, _, err := collect(t, msg); !errors.Is(err, errMalformed) {
		t.Errorf("message longer than the datagram: %v, want errMalformed", err)
	}
}

func TestDumpLinksRequest(t *testing.T) {
	requireLittleEndian(t)
	want := hx(t, `20000000 1200 0103 09000000 00000000  00 00 0000 00000000 00000000 00000000`) // RTM_GETLINK, REQUEST|DUMP, seq 9
	if got := reqDumpLinks(9); !reflect.DeepEqual(got, want) {
		t.Fatalf("dump request % x, want % x", got, want)
	}
}

func FuzzParseLinkEvents(f *testing.F) {
	f.Add(concat(linkMsg(1, Link{Index: 2, Name: "can0", Flags: unix.IFF_UP}), doneMsg(1)))
	f.Add(delLinkMsg(Link{Index: 2, Name: "can0"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseLinkEvents(b, func(LinkEvent) {})
	})
}
