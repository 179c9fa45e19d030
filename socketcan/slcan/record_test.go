package slcan

import (
	"testing"

	"go.einride.tech/can"

	"cand/socketcan"
)

func TestAppendRecordFrames(t *testing.T) {
	var rec [socketcan.FrameSize]byte
	socketcan.Encode(&rec, can.Frame{ID: 0x321, Length: 2, Data: can.Data{0xaa, 0xbb}})
	out, ok := AppendRecord([]byte("x"), &rec)
	if !ok || string(out) != "xt3212AABB\r" {
		t.Fatalf("got %q %v", out, ok)
	}
	rec = [socketcan.FrameSize]byte{0x23, 0x01, 0, 0, 9} // len 9: CAN FD or garbage
	if out, ok := AppendRecord(nil, &rec); ok || len(out) != 0 {
		t.Fatalf("bad length: got %q %v, want nothing", out, ok)
	}
}

func errRecord(build func(e *socketcan.ErrorFrame)) *[socketcan.FrameSize]byte {
	var e socketcan.ErrorFrame
	build(&e)
	var rec [socketcan.FrameSize]byte
	e.Encode(&rec)
	return &rec
}

func TestAppendRecordErrorFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(e *socketcan.ErrorFrame)
		want  string
	}{
		{"warning", func(e *socketcan.ErrorFrame) {
			e.Controller(socketcan.CAN_ERR_CRTL_TX_WARNING)
			e.Counters(100, 3)
		}, "sw003100\r"},
		{"passive", func(e *socketcan.ErrorFrame) {
			e.Controller(socketcan.CAN_ERR_CRTL_RX_PASSIVE)
			e.Counters(128, 130)
		}, "sp130128\r"},
		{"bus-off", func(e *socketcan.ErrorFrame) {
			e.Add(socketcan.CAN_ERR_BUSOFF)
			e.Counters(255, 0)
		}, "sb000255\r"},
		{"back to active", func(e *socketcan.ErrorFrame) {
			e.Controller(socketcan.CAN_ERR_CRTL_ACTIVE)
			e.Counters(0, 0)
		}, "sa000000\r"},
		{"restarted, no counters", func(e *socketcan.ErrorFrame) {
			e.Add(socketcan.CAN_ERR_RESTARTED)
		}, "sa000000\r"},
		{"rx overflow with counters", func(e *socketcan.ErrorFrame) {
			e.Controller(socketcan.CAN_ERR_CRTL_RX_OVERFLOW)
			e.Counters(0, 97)
		}, "sw097000\re1o\r"},
		{"rx overflow alone", func(e *socketcan.ErrorFrame) {
			e.Controller(socketcan.CAN_ERR_CRTL_RX_OVERFLOW)
		}, "e1o\r"},
		{"protocol errors", func(e *socketcan.ErrorFrame) {
			e.Add(socketcan.CAN_ERR_ACK | socketcan.CAN_ERR_BUSERROR)
			e.Protocol(socketcan.CAN_ERR_PROT_BIT0|socketcan.CAN_ERR_PROT_BIT1|socketcan.CAN_ERR_PROT_FORM|socketcan.CAN_ERR_PROT_STUFF, 0)
			e.Controller(socketcan.CAN_ERR_CRTL_TX_OVERFLOW)
		}, "e6abBfsO\r"},
		{"crc", func(e *socketcan.ErrorFrame) {
			e.Protocol(socketcan.CAN_ERR_PROT_BIT, socketcan.CAN_ERR_PROT_LOC_CRC_SEQ)
		}, "e1c\r"},
		{"nothing slcan carries", func(e *socketcan.ErrorFrame) {
			e.Add(socketcan.CAN_ERR_TX_TIMEOUT)
			e.LostArbitration(3)
			e.Transceiver(socketcan.CAN_ERR_TRX_CANH_NO_WIRE)
		}, ""},
	} {
		out, ok := AppendRecord(nil, errRecord(tc.build))
		if !ok || string(out) != tc.want {
			t.Errorf("%s: got %q %v, want %q", tc.name, out, ok, tc.want)
		}
	}
}

func TestErrorStateFromCounters(t *testing.T) {
	for _, tc := range []struct {
		tec, rec uint8
		want     State
	}{{0, 0, StateActive}, {95, 0, StateActive}, {0, 96, StateWarning}, {127, 0, StateWarning}, {128, 0, StatePassive}, {0, 255, StatePassive}} {
		e := socketcan.ErrorFrame{}
		e.Counters(tc.tec, tc.rec)
		if s, ok := ErrorState(&e); !ok || s != tc.want {
			t.Errorf("TEC %d REC %d: %c %v, want %c", tc.tec, tc.rec, s, ok, tc.want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		if k.String() == "" || k.String() == "invalid" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(200).String() != "invalid" {
		t.Error("an out-of-range kind has a name")
	}
}
