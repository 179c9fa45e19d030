package daemon

import (
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/waitfor"
	"cand/socketcan"
	"cand/socketcand/protocol"
	"cand/socketcand/sctest"
)

// A controller without a SocketCAN interface, served by socketcand: a client's
// frames, 29-bit and 11-bit, a message split across writes, reach the
// answering peer on the virtual Pi's bus exactly, its answers come back as
// "< frame ... >", and control mode reports cand's counters.
func TestSocketcandBothWays(t *testing.T) {
	r := newRigConfig(t).noInterface().peer(answerPeer("echo", 1)).socketcand().start()
	c := sctest.Raw(t, r.d.SocketcandAddr, "vcan0")
	before := time.Now()
	c.Send("< se", "nd 1ABC", "DEF0 2 1 f", "1 >")
	c.Frame(can.Frame{ID: 0x1ABCDEF1, IsExtended: true, Length: 2, Data: can.Data{0x01, 0xF1}}, before)
	c.Send("< send 123 3 de ad be >")
	c.Frame(can.Frame{ID: 0x124, Length: 3, Data: can.Data{0xDE, 0xAD, 0xBE}}, before)

	got := r.pi.Node(0).Peers[0].Received()
	want := []can.Frame{
		{ID: 0x1ABCDEF0, IsExtended: true, Length: 2, Data: can.Data{0x01, 0xF1}},
		{ID: 0x123, Length: 3, Data: can.Data{0xDE, 0xAD, 0xBE}},
	}
	if len(got) != len(want) {
		t.Fatalf("the answering peer received %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Frame != want[i] {
			t.Fatalf("bus frame %d: %v, want %v", i, got[i].Frame, want[i])
		}
	}

	m := r.d.Owner.Ports[0].M
	waitfor.Cond(t, 5*time.Second, "both frames counted as transmitted", func() bool { return m.TXFrames.Load() == 2 })
	c.Send("< controlmode >")
	c.Expect("< ok >")
	c.Send("< statistics 100 >")
	c.Expect("< stat 5 2 5 2 >")
}

// A frame nobody acknowledges: the client sees cand's error frames, the
// controller's state reports (CAN_ERR_CRTL) and then the TX timeout
// (CAN_ERR_TX_TIMEOUT), as "< error ... >".
func TestSocketcandErrorFrames(t *testing.T) {
	r := newRigConfig(t).noInterface().txTimeout(50 * time.Millisecond).socketcand().start()
	c := sctest.Raw(t, r.d.SocketcandAddr, "vcan0")
	c.Send("< send 123 1 01 >")
	var classes []uint32
	for {
		msg, m := c.NextParsed()
		if m.Kind != protocol.KindErrorFrame {
			t.Fatalf("after error frames %#x: %q", classes, msg)
		}
		e := m.ErrorFrame
		classes = append(classes, e.Class)
		if e.Class == socketcan.CAN_ERR_TX_TIMEOUT {
			break
		}
		if e.Class != socketcan.CAN_ERR_CRTL|socketcan.CAN_ERR_CNT || e.Data[1]&(socketcan.CAN_ERR_CRTL_TX_WARNING|socketcan.CAN_ERR_CRTL_TX_PASSIVE) == 0 {
			t.Fatalf("%q: want a TX warning or passive report (class %#x), or the TX timeout", msg, socketcan.CAN_ERR_CRTL|socketcan.CAN_ERR_CNT)
		}
	}
	if len(classes) < 2 {
		t.Fatalf("error frames %#x: want the state reports before the timeout", classes)
	}
}
