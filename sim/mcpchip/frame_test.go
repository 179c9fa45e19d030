package mcpchip

import (
	"bytes"
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
	"cand/sim/canbus"
)

const bit500k = 2000 // ns

func u8(v uint8) *uint8 { return &v }

func TestLoopbackFrameAndReadRxBuffer(t *testing.T) {
	r := newRig(t, nil)
	r.setup500k(mcp2515.ModeLoopback)
	r.loadTx(0, 0x123, false, 4, 0xDE, 0xAD, 0xBE, 0xEF)
	start := r.at
	r.xfer(mcp2515.InstrRTS | mcp2515.RTSTXB0)
	rts := start + byteNs // end of the RTS byte
	f := can.Frame{ID: 0x123, Length: 4, Data: can.Data{0xDE, 0xAD, 0xBE, 0xEF}}
	eof := rts + int64(canbus.FrameBits(f)-3)*bit500k
	r.wait(eof - 1 - 2*byteNs - r.at) // the status byte is the second one
	if s := r.status(); s != mcp2515.StatusTXB0REQ {
		t.Fatalf("READ STATUS 1 ns before EOF = %#02x, want TXB0REQ only", s)
	}
	if s := r.status(); s != mcp2515.StatusTX0IF|mcp2515.StatusRX0IF {
		t.Fatalf("READ STATUS after EOF = %#02x, want TX0IF|RX0IF", s)
	}
	if len(r.int) != 1 || r.int[0] != (edge{false, eof}) {
		t.Fatalf("INT edges %v, want falling at EOF %d", r.int, eof)
	}
	if s := r.rxStatus(); s != 0x40 {
		t.Fatalf("RX STATUS = %#02x, want 40 (RXB0, std data, RXF0)", s)
	}
	// READ RX BUFFER 0x90: SIDH SIDL EID8 EID0 DLC D0..D7; RX0IF clears on CS rise.
	r.c.SetCS(true, r.at)
	got := make([]byte, 14)
	for i, b := range []byte{0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} {
		r.at += byteNs
		got[i] = r.c.Exchange(b, 0, sclk, r.at)
	}
	if st := mcp2515.Status(r.c.readStatus()); st&mcp2515.StatusRX0IF == 0 {
		t.Fatal("RX0IF cleared before CS rose")
	}
	r.at += 100
	r.c.SetCS(false, r.at)
	want := []byte{0xFF, 0x24, 0x60, 0, 0, 4, 0xDE, 0xAD, 0xBE, 0xEF}
	if !bytes.Equal(got[:10], want) {
		t.Fatalf("READ RX BUFFER = % x, want % x", got[:10], want)
	}
	if s := r.status(); s != mcp2515.StatusTX0IF {
		t.Fatalf("READ STATUS after READ RX BUFFER = %#02x, want TX0IF", s)
	}
	// 0x96: RXB1 from D0 (empty buffer: zeros); 0x92: RXB0 from D0.
	if got := r.xfer(0x92, 0, 0); !bytes.Equal(got, []byte{0xFF, 0xDE, 0xAD}) {
		t.Fatalf("READ RX BUFFER 0x92 = % x", got)
	}
	if s := r.c.Stats(); s.Sent != 1 || s.Received != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestFiltersAndMasks(t *testing.T) {
	type flt struct {
		id  uint32
		ext bool
	}
	for _, tc := range []struct {
		name       string
		m0, m1     flt // mask IDs (ext = mask given as 29 bits)
		f          [6]flt
		rxm0, rxm1 uint8
		frame      can.Frame
		wantRXS    uint8 // RX STATUS after the frame
	}{
		{"std exact RXF1", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x123, false}, {0x200, false}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x123}, 0x41},
		{"std masked RXF0", flt{0x700, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x123, false}, {}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x1AB}, 0x40},
		{"std to RXB1 RXF4", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x101, false}, {0x200, false}, {0x201, false}, {0x202, false}, {0x203, false}}, 0, 0,
			can.Frame{ID: 0x202}, 0x84},
		{"std remote RXF5", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x101, false}, {0x200, false}, {0x201, false}, {0x202, false}, {0x203, false}}, 0, 0,
			can.Frame{ID: 0x203, IsRemote: true}, 0x8D},
		{"std rejected", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x101, false}, {0x200, false}, {0x201, false}, {0x202, false}, {0x203, false}}, 0, 0,
			can.Frame{ID: 0x300}, 0x00},
		{"ext filter ignores std", flt{0, false}, flt{0, false},
			[6]flt{{0x100, true}, {0x100, true}, {0x100, true}, {0x100, true}, {0x100, true}, {0x100, true}}, 0, 0,
			can.Frame{ID: 0x100}, 0x00},
		{"ext exact RXF2", flt{0x1FFFFFFF, true}, flt{0x1FFFFFFF, true},
			[6]flt{{0x100, false}, {0x1234567, true}, {0x12345678, true}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x12345678, IsExtended: true}, 0x92},
		{"ext remote, low bits masked", flt{0x1FFFFF00, true}, flt{0, false},
			[6]flt{{0x12345600, true}, {}, {}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x123456AB, IsExtended: true, IsRemote: true}, 0x58},
		{"std data bytes via EID8/EID0", flt{0x7FF<<18 | 0xFFFF, true}, flt{0x7FF, false},
			[6]flt{{0x100<<18 | 0xCAFE, true}, {}, {0x7FF, false}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x100, Length: 2, Data: can.Data{0xCA, 0xFE}}, 0x40},
		{"std data bytes mismatch", flt{0x7FF<<18 | 0xFFFF, true}, flt{0x7FF, false},
			[6]flt{{0x100<<18 | 0xCAFE, true}, {}, {0x7FF, false}, {}, {}, {}}, 0, 0,
			can.Frame{ID: 0x100, Length: 2, Data: can.Data{0xCA, 0xFF}}, 0x00},
		{"RXM any on RXB0", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {}, {}, {}, {}, {}}, 0x60, 0,
			can.Frame{ID: 0x555, IsExtended: true}, 0x50},
		{"std only (RXM 01): data bytes ignored", flt{0x7FF<<18 | 0xFFFF, true}, flt{0x7FF, false},
			[6]flt{{0x100<<18 | 0xCAFE, true}, {}, {0x7FF, false}, {}, {}, {}}, 0x20, 0,
			can.Frame{ID: 0x100, Length: 2, Data: can.Data{0xCA, 0xFF}}, 0x40},
		{"RXM 10 ext only", flt{0, false}, flt{0x7FF, false},
			[6]flt{{0, false}, {0, true}, {0x7FF, false}, {}, {}, {}}, 0x40, 0,
			can.Frame{ID: 0x10}, 0x00},
		{"RXM any on RXB1", flt{0x7FF, false}, flt{0x7FF, false},
			[6]flt{{0x100, false}, {0x100, false}, {}, {}, {}, {}}, 0, 0x60,
			can.Frame{ID: 0x555}, 0x82},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			put := func(addr mcp2515.Addr, f flt, filter bool) {
				b := make([]byte, 4)
				if f.ext {
					mcp2515.PutID(b, f.id, true)
					if !filter {
						b[1] &^= byte(mcp2515.SIDLEXIDE)
					}
				} else {
					mcp2515.PutID(b, f.id, false)
				}
				if tc.name[:3] == "std" && filter && f.ext { // std filter with data bytes
					b[1] &^= byte(mcp2515.SIDLEXIDE)
				}
				r.writeBytes(addr, b...)
			}
			put(mcp2515.RegRXM0SIDH, tc.m0, false)
			put(mcp2515.RegRXM1SIDH, tc.m1, false)
			for n, f := range tc.f {
				put(mcp2515.RXFnSIDH(n), f, true)
			}
			r.write(mcp2515.RegCNF3, 0x01, 0xB5, 0x00)
			r.write(mcp2515.RegRXB0CTRL, mcp2515.Bits(tc.rxm0))
			r.write(mcp2515.RegRXB1CTRL, mcp2515.Bits(tc.rxm1))
			r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeLoopback))
			dlc := tc.frame.Length
			if tc.frame.IsRemote {
				dlc |= byte(mcp2515.DLCRTR)
			}
			r.loadTx(0, tc.frame.ID, tc.frame.IsExtended, dlc, tc.frame.Data[:tc.frame.Length]...)
			r.xfer(mcp2515.InstrRTS | 1)
			r.wait(200 * bit500k)
			if got := r.rxStatus(); got != tc.wantRXS {
				t.Fatalf("RX STATUS = %#02x, want %#02x", got, tc.wantRXS)
			}
		})
	}
}

// busRig is a chip at 500 kbit/s on a bus with peers.
func busRig(t *testing.T, peers ...canbus.PeerSpec) (*rig, *canbus.Bus, []*canbus.Peer) {
	t.Helper()
	b := canbus.New(500_000)
	var ps []*canbus.Peer
	for _, c := range peers {
		p, err := canbus.NewPeer(b, c)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	r := newRig(t, b)
	return r, b, ps
}

func listener(name string) canbus.PeerSpec {
	return canbus.PeerSpec{Kind: canbus.PeerPeriodic, Name: name, IDs: []uint32{0x7FF}}
}

func TestRolloverAndOverflow(t *testing.T) {
	for _, bukt := range []bool{true, false} {
		r, _, ps := busRig(t, listener("p"))
		r.setup500k(mcp2515.ModeNormal)
		if !bukt {
			r.write(mcp2515.RegRXB0CTRL, 0x60)
		}
		frames := []can.Frame{{ID: 0x10, Length: 1, Data: can.Data{1}}, {ID: 0x11, Length: 1, Data: can.Data{2}}, {ID: 0x12, Length: 1, Data: can.Data{3}}}
		for _, f := range frames {
			ps[0].Send(f)
		}
		r.wait(1_000_000)
		intf, eflg := r.read(mcp2515.RegCANINTF), r.read(mcp2515.RegEFLG)
		rx0 := r.readRx(0)
		if rx0[0] != 0x02 || rx0[5] != 1 {
			t.Fatalf("bukt=%v: RXB0 = % x, want frame 0x10", bukt, rx0)
		}
		if bukt {
			if intf != mcp2515.IntRX0|mcp2515.IntRX1|mcp2515.IntERR || eflg != mcp2515.EFLGRX1OVR {
				t.Fatalf("rollover: CANINTF %#02x EFLG %#02x, want 23 80", intf, eflg)
			}
			if rx1 := r.readRx(1); rx1[0] != 0x02 || rx1[1] != 0x20 || rx1[5] != 2 {
				t.Fatalf("RXB1 = % x, want frame 0x11", rx1)
			}
			r.expect(mcp2515.RegRXB1CTRL, 0x60) // FILHIT 0: RXF0 rolled over
		} else if intf != mcp2515.IntRX0|mcp2515.IntERR || eflg != mcp2515.EFLGRX0OVR {
			t.Fatalf("no rollover: CANINTF %#02x EFLG %#02x, want 21 40", intf, eflg)
		}
		if s := r.c.Stats(); s.Lost != map[bool]uint64{true: 1, false: 2}[bukt] {
			t.Fatalf("bukt=%v: lost %d", bukt, s.Lost)
		}
		// ERRIF cannot be cleared while an overflow flag is set.
		r.modify(mcp2515.RegCANINTF, mcp2515.IntERR, 0)
		if r.read(mcp2515.RegCANINTF)&mcp2515.IntERR == 0 {
			t.Fatal("ERRIF cleared while EFLG.RXnOVR is set")
		}
		r.write(mcp2515.RegEFLG, 0)
		r.modify(mcp2515.RegCANINTF, mcp2515.IntERR, 0)
		if r.read(mcp2515.RegCANINTF)&mcp2515.IntERR != 0 {
			t.Fatal("ERRIF not cleared after EFLG")
		}
	}
}

func TestTxPriorityOrder(t *testing.T) {
	r, _, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	// Equal IDs so bus arbitration can't reorder: only the chip's choice matters.
	r.loadTx(0, 0x100, false, 1, 0)
	r.loadTx(1, 0x100, false, 1, 1)
	r.loadTx(2, 0x100, false, 1, 2)
	r.write(mcp2515.RegTXB0CTRL, 0x03)
	r.write(mcp2515.RegTXB1CTRL, 0x01)
	r.write(mcp2515.RegTXB2CTRL, 0x03)
	r.xfer(mcp2515.InstrRTS | 7)
	r.wait(2_000_000)
	var order []byte
	for _, rec := range ps[0].Received() {
		order = append(order, rec.Frame.Data[0])
	}
	if !bytes.Equal(order, []byte{2, 0, 1}) {
		t.Fatalf("buffers sent in order %v, want TXB2 (TXP 3), TXB0 (TXP 3), TXB1 (TXP 1)", order)
	}
	if s := r.status(); s != mcp2515.StatusTX0IF|mcp2515.StatusTX1IF|mcp2515.StatusTX2IF {
		t.Fatalf("READ STATUS = %#02x", s)
	}
}

func TestOneShotLostArbitration(t *testing.T) {
	r, b, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal, mcp2515.CANCTRLOSM)
	r.loadTx(0, 0x200, false, 0)
	b.Lock()
	b.AdvanceTo(r.at)
	b.Unlock()
	// While the peer's first frame is on the wire both queue; at the next SOF the
	// peer's 0x100 wins over the chip's 0x200.
	ps[0].Send(can.Frame{ID: 0x7F0, Length: 8})
	ps[0].Send(can.Frame{ID: 0x100})
	r.xfer(mcp2515.InstrWrite, byte(mcp2515.RegTXB0CTRL), byte(mcp2515.TXBCTRLTXREQ))
	r.wait(1_000_000)
	if got := r.read(mcp2515.RegTXB0CTRL); got != mcp2515.TXBCTRLMLOA {
		t.Fatalf("TXB0CTRL = %#02x, want MLOA only (one-shot: no retry)", got)
	}
	if s := r.c.Stats(); s.Sent != 0 || s.ArbLost != 1 {
		t.Fatalf("stats %+v", s)
	}
	if got := r.read(mcp2515.RegCANINTF); got != mcp2515.IntRX0|mcp2515.IntRX1 {
		t.Fatalf("CANINTF = %#02x, want the peer's two frames and no TX0IF", got)
	}
	r.write(mcp2515.RegCANINTF, 0)
	// Without OSM the lost frame goes out at the next SOF.
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	ps[0].Send(can.Frame{ID: 0x7F0, Length: 8})
	ps[0].Send(can.Frame{ID: 0x100})
	r.xfer(mcp2515.InstrWrite, byte(mcp2515.RegTXB0CTRL), byte(mcp2515.TXBCTRLTXREQ))
	r.wait(1_000_000)
	if got := r.read(mcp2515.RegTXB0CTRL); got != mcp2515.TXBCTRLMLOA {
		t.Fatalf("TXB0CTRL = %#02x, want MLOA left from the lost round, TXREQ clear", got)
	}
	if s := r.c.Stats(); s.Sent != 1 || s.ArbLost != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestListenOnly(t *testing.T) {
	r, _, ps := busRig(t, listener("a"), listener("b"))
	r.setup500k(mcp2515.ModeListenOnly)
	r.loadTx(0, 0x55, false, 0)
	r.xfer(mcp2515.InstrRTS | 1)
	ps[0].Send(can.Frame{ID: 0x42, Length: 1, Data: can.Data{7}})
	r.wait(1_000_000)
	if s := r.status(); s != mcp2515.StatusRX0IF|mcp2515.StatusTXB0REQ {
		t.Fatalf("READ STATUS = %#02x: want the frame received, TXB0 still pending", s)
	}
	if len(ps[1].Received()) != 1 {
		t.Fatalf("peer b received %v", ps[1].Received())
	}
	// Alone with one peer, a listen-only chip does not ACK.
	r2, _, ps2 := busRig(t, listener("a"))
	r2.setup500k(mcp2515.ModeListenOnly)
	ps2[0].Send(can.Frame{ID: 0x42})
	r2.wait(1_000_000)
	if s := ps2[0].Stats(); s.Sent != 0 || s.TxErrors == 0 {
		t.Fatalf("peer stats %+v: want ACK errors only", s)
	}
	if s := r2.status(); s != 0 {
		t.Fatalf("chip received an unacknowledged frame: status %#02x", s)
	}
}

// Bus integration (ISO 11898-1): a chip that comes on the bus takes part only after
// 11 recessive bits. A frame already on the wire is neither received nor ACKed; the
// next one is.
func TestComingOnTheBusSkipsTheFrameInProgress(t *testing.T) {
	for _, mode := range []mcp2515.Mode{mcp2515.ModeNormal, mcp2515.ModeListenOnly} {
		r, b, ps := busRig(t, listener("a"), listener("b"))
		r.setup500k(mcp2515.ModeConfig)
		f := can.Frame{ID: 0x10, Length: 8}
		ps[0].Send(f)
		r.wait(20 * bit500k)
		eof := b.Stats().LastSOF + int64(canbus.FrameBits(f)-3)*bit500k
		r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mode)) // 20 bits into the frame
		r.wait(eof + 1 - r.at)
		if intf := r.read(mcp2515.RegCANINTF); intf != 0 {
			t.Fatalf("mode %#02x: CANINTF %#02x: the frame in progress was received", mode, intf)
		}
		if s := ps[0].Stats(); s.Sent != 1 || s.TxErrors != 0 {
			t.Fatalf("mode %#02x: sender %+v: peer b's ACK alone should carry the frame", mode, s)
		}
		ps[0].Send(f)
		r.wait(300 * bit500k)
		r.expect(mcp2515.RegCANINTF, mcp2515.IntRX0)
		if s := r.c.Stats(); s.Received != 1 || s.RxErrors != 0 {
			t.Fatalf("mode %#02x: stats %+v", mode, s)
		}
	}
	// Alone with the sender, the chip does not ACK the frame in progress: the sender
	// sees an ACK error and repeats the frame, which the chip then takes.
	r, b, ps := busRig(t, listener("a"))
	r.setup500k(mcp2515.ModeConfig)
	ps[0].Send(can.Frame{ID: 0x10})
	r.wait(20 * bit500k)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.wait(300 * bit500k)
	if s := b.Stats(); s.Errors != 1 || s.Frames != 1 {
		t.Fatalf("bus %+v: want one ACK error, then the repeated frame", s)
	}
	r.expect(mcp2515.RegCANINTF, mcp2515.IntRX0) // no MERRF: it was not on the bus for the error
}

// Coming on an idle bus with a frame pending, the chip starts it 11 bit times later.
func TestComingOnTheBusStartsNoFrameFor11Bits(t *testing.T) {
	r, b, ps := busRig(t, listener("a"))
	r.setup500k(mcp2515.ModeConfig)
	r.loadTx(0, 0x123, false, 0)
	r.xfer(mcp2515.InstrRTS | 1) // pending; Configuration mode sends nothing
	on := r.at + 3*byteNs        // the WRITE's data byte ends
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.wait(200 * bit500k)
	if len(ps[0].Received()) != 1 {
		t.Fatal("the pending frame did not go out")
	}
	if sof := b.Stats().LastSOF; sof != on+11*bit500k {
		t.Fatalf("SOF %d ns after coming on the bus, want %d", sof-on, 11*bit500k)
	}
}
