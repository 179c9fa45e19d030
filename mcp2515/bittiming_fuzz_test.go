package mcp2515_test

import (
	"fmt"
	"strings"
	"testing"

	"cand/mcp2515"
)

// FuzzTimingFromCNF: any CNF1..CNF3 decode to a timing that passes the datasheet's
// rules, or to an error that quotes the registers and says which rule they break
// (or that the oscillator is out of range). A timing decoded comes back the same
// when built from its segments and packed (which sets BTLMODE, writes PS2 into
// CNF3 and drops SOF and WAKFIL).
func FuzzTimingFromCNF(f *testing.F) {
	for _, c := range [][3]byte{{0x00, 0xB5, 0x01}, {0x01, 0xBF, 0x02}, {0x00, 0x80, 0x80}, {0x3F, 0x3F, 0xC7}} {
		f.Add(uint32(16_000_000), c[0], c[1], c[2])
	}
	f.Add(uint32(8_000_000), byte(0x00), byte(0x90), byte(0x02))
	f.Fuzz(func(t *testing.T, osc uint32, cnf1, cnf2, cnf3 byte) {
		bt, err := mcp2515.TimingFromCNF(osc, cnf1, cnf2, cnf3)
		if err != nil {
			msg := err.Error()
			regs := fmt.Sprintf("cnf1 0x%02x cnf2 0x%02x cnf3 0x%02x: ", cnf1, cnf2, cnf3)
			if !strings.HasPrefix(msg, "oscillator ") && (!strings.HasPrefix(msg, regs) || len(msg) < len(regs)+20) {
				t.Fatalf("error %q does not quote the registers and the broken rule", msg)
			}
			return
		}
		if err := bt.Check(); err != nil || bt.CNF1 != cnf1 || bt.CNF2 != cnf2 || bt.CNF3 != cnf3 {
			t.Fatalf("%v: Check %v", bt, err)
		}
		if bt.Bitrate == 0 || bt.SamplePoint == 0 || bt.SamplePoint >= 1000 || bt.TQ == 0 {
			t.Fatalf("%v", bt)
		}
		seg, err := mcp2515.TimingFromSegments(osc, bt.BRP, bt.PropSeg, bt.PhaseSeg1, bt.PhaseSeg2, bt.SJW)
		if err != nil {
			t.Fatalf("%v: segments refused: %v", bt, err)
		}
		seg.TripleSampling = bt.TripleSampling
		seg.Pack()
		ps2 := byte(bt.PhaseSeg2 - 1) // in CNF3 with BTLMODE; without, PS2 follows PS1
		if mcp2515.Bits(cnf2)&mcp2515.CNF2BTLMODE != 0 && ps2 != byte(mcp2515.Bits(cnf3)&mcp2515.CNF3PHSEG2) {
			t.Fatalf("%v: phase-seg2 is not CNF3's", bt)
		}
		if seg.CNF1 != cnf1 || seg.CNF2 != cnf2|byte(mcp2515.CNF2BTLMODE) || seg.CNF3 != ps2 {
			t.Fatalf("%v packs to cnf1 0x%02x cnf2 0x%02x cnf3 0x%02x", bt, seg.CNF1, seg.CNF2, seg.CNF3)
		}
		back, err := mcp2515.TimingFromCNF(osc, seg.CNF1, seg.CNF2, seg.CNF3)
		back.CNF1, back.CNF2, back.CNF3 = cnf1, cnf2, cnf3
		if err != nil || back != bt {
			t.Fatalf("%v\nround trip %v, %v", bt, back, err)
		}
	})
}

// FuzzID: an identifier written with PutID reads back with GetID, masked to 11 or 29
// bits; four register bytes read with GetID and written back keep every identifier
// bit (SIDH, SIDL SID[2:0] and EXIDE, and for an extended ID EID[17:0]).
func FuzzID(f *testing.F) {
	f.Add(uint32(0x123), false, []byte{0x24, 0x60, 0, 0})
	f.Add(uint32(0x18DAF110), true, []byte{0xC6, 0xCA, 0xF1, 0x10})
	f.Fuzz(func(t *testing.T, id uint32, ext bool, raw []byte) {
		var b [4]byte
		mcp2515.PutID(b[:], id, ext)
		mask := uint32(0x7FF)
		if ext {
			mask = 0x1FFFFFFF
		}
		if got, gotExt := mcp2515.GetID(b[:]); got != id&mask || gotExt != ext {
			t.Fatalf("PutID(%#x, %v) = % x reads back as %#x, %v", id, ext, b, got, gotExt)
		}

		var r [4]byte
		copy(r[:], raw)
		got, gotExt := mcp2515.GetID(r[:])
		if gotExt != (mcp2515.Bits(r[1])&mcp2515.SIDLEXIDE != 0) {
			t.Fatalf("% x: extended %v", r, gotExt)
		}
		mcp2515.PutID(b[:], got, gotExt)
		keep := [4]byte{0xFF, byte(0xE0 | mcp2515.SIDLEXIDE), 0, 0}
		if gotExt {
			keep = [4]byte{0xFF, byte(0xE0 | mcp2515.SIDLEXIDE | mcp2515.SIDLEIDMask), 0xFF, 0xFF}
		}
		for i := range b {
			if b[i] != r[i]&keep[i] {
				t.Fatalf("% x read as %#x (extended %v), written back as % x", r, got, gotExt, b)
			}
		}
	})
}
