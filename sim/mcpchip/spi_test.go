package mcpchip

import (
	"bytes"
	"testing"

	"cand/mcp2515"
)

func TestResetValuesAndMirrors(t *testing.T) {
	r := newRig(t, nil)
	tx := make([]byte, 2+128)
	tx[0], tx[1] = mcp2515.InstrRead, 0x00
	regs := r.xfer(tx...)[2:]
	for a := 0; a < 128; a++ {
		want := byte(0)
		switch {
		case a&0x0F == 0x0E:
			want = 0x80 // CANSTAT: Configuration mode
		case a&0x0F == 0x0F:
			want = 0x87 // CANCTRL
		case mcp2515.Addr(a) == mcp2515.RegTXRTSCTRL:
			want = 0x38
		}
		if regs[a] != want {
			t.Errorf("reset value of %#02x = %#02x, want %#02x", a, regs[a], want)
		}
	}
	// A write to a mirror is a write to CANCTRL.
	r.write(0x5F, 0x80|mcp2515.CANCTRLOSM)
	r.expect(mcp2515.RegCANCTRL, 0x88)
	r.expect(0x7F, 0x88)
}

func TestOscillatorStartUp(t *testing.T) {
	c := New(osc, nil)
	c.bus.Lock()
	ready := c.readyAt
	c.bus.Unlock()
	r := &rig{t: t, c: c, at: ready - 8000 + 1000} // 1 µs after power-on (OST 8 µs at 16 MHz)
	if got := r.xfer(mcp2515.InstrRead, byte(mcp2515.RegCANCTRL), 0); !bytes.Equal(got, []byte{0xFF, 0xFF, 0xFF}) {
		t.Fatalf("READ during start-up = % x, want ff ff ff", got)
	}
	if s := c.Stats(); s.Ignored != 3 {
		t.Fatalf("ignored %d bytes, want 3", s.Ignored)
	}
	r.at = ready
	r.expect(mcp2515.RegCANCTRL, 0x87)
	// RESET: registers back to defaults, SPI ignored again for 128 OSC1 cycles.
	r.write(mcp2515.RegCANINTE, 0x3F)
	r.xfer(mcp2515.InstrReset)
	if got := r.xfer(mcp2515.InstrRead, byte(mcp2515.RegCANINTE), 0)[2]; got != 0xFF {
		t.Fatalf("READ right after RESET = %#02x, want ff (start-up)", got)
	}
	r.at += 8000
	r.expect(mcp2515.RegCANINTE, 0)
}

func TestReadWriteAutoIncrement(t *testing.T) {
	r := newRig(t, nil)
	// Filters 0..2 (0x00..0x0B): writable in Configuration mode; SIDL bits 4 and 2 unimplemented.
	in := []byte{0x11, 0xFF, 0x33, 0x44, 0x55, 0x14, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC}
	r.writeBytes(0x00, in...)
	got := r.xfer(append([]byte{mcp2515.InstrRead, 0x00}, make([]byte, 12)...)...)[2:]
	want := []byte{0x11, 0xEB, 0x33, 0x44, 0x55, 0x00, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC}
	if !bytes.Equal(got, want) {
		t.Fatalf("filters read back % x, want % x", got, want)
	}
	// Address wraps from 0x7F to 0x00.
	if got := r.xfer(mcp2515.InstrRead, 0x7F, 0, 0); got[2] != 0x87 || got[3] != 0x11 {
		t.Fatalf("READ 0x7F.. = % x, want 87 11", got[2:])
	}
	// Outside Configuration mode filters, masks and CNF are read-only.
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeListenOnly))
	r.write(0x00, 0x5A)
	r.write(mcp2515.RegRXM0SIDH, 0x5A)
	r.write(mcp2515.RegCNF1, 0x5A)
	r.expect(0x00, 0x11)
	r.expect(mcp2515.RegRXM0SIDH, 0x00)
	r.expect(mcp2515.RegCNF1, 0x00)
	// Read-only registers and bits.
	r.write(mcp2515.RegCANSTAT, 0xFF)
	r.expect(mcp2515.RegCANSTAT, mcp2515.ModeListenOnly)
	r.write(mcp2515.RegTEC, 0xFF, 0xFF)
	r.expect(mcp2515.RegTEC, 0)
	r.expect(mcp2515.RegREC, 0)
	r.write(mcp2515.RegTXB0CTRL, 0x73) // ABTF|MLOA|TXERR read-only, bit 2 unimplemented
	r.expect(mcp2515.RegTXB0CTRL, 0x03)
	r.write(mcp2515.RegRXB0CTRL, 0xFF)
	r.expect(mcp2515.RegRXB0CTRL, 0x66) // RXM, BUKT, BUKT1 (copy)
	r.write(mcp2515.RegRXB1CTRL, 0xFF)
	r.expect(mcp2515.RegRXB1CTRL, 0x60)
	r.write(mcp2515.RegRXB0CTRL+1, 0xFF) // RX buffers are read-only
	r.expect(mcp2515.RegRXB0CTRL+1, 0x00)
	r.write(mcp2515.RegEFLG, 0xFF)
	r.expect(mcp2515.RegEFLG, 0xC0)
	r.write(mcp2515.RegTXB1CTRL+mcp2515.BufSIDL, 0xFF, 0xFF, 0xFF, 0xFF)
	if got := r.xfer(mcp2515.InstrRead, byte(mcp2515.RegTXB1CTRL+mcp2515.BufSIDL), 0, 0, 0, 0)[2:]; !bytes.Equal(got, []byte{0xEB, 0xFF, 0xFF, 0x4F}) {
		t.Fatalf("TXB1 SIDL..DLC = % x, want eb ff ff 4f", got)
	}
}

// TXRTSCTRL (register 3-2): BnRTSM are writable only in Configuration mode
// (datasheet §10.1); BnRTS read the pins (unconnected: pulled up, 1), or 0 for a pin
// in request-to-send mode.
func TestTXRTSCTRLConfigurationModeOnly(t *testing.T) {
	r := newRig(t, nil)
	r.expect(mcp2515.RegTXRTSCTRL, 0x38)
	r.write(mcp2515.RegTXRTSCTRL, 0xFF)
	r.expect(mcp2515.RegTXRTSCTRL, 0x07)
	r.modify(mcp2515.RegTXRTSCTRL, 0x06, 0)
	r.expect(mcp2515.RegTXRTSCTRL, 0x31) // B0RTSM; B2RTS, B1RTS read their pins
	for _, mode := range []mcp2515.Mode{mcp2515.ModeListenOnly, mcp2515.ModeLoopback, mcp2515.ModeSleep, mcp2515.ModeNormal} {
		r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mode))
		r.write(mcp2515.RegTXRTSCTRL, 0x06)
		r.modify(mcp2515.RegTXRTSCTRL, 0x07, 0x02)
		r.expect(mcp2515.RegTXRTSCTRL, 0x31)
		r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	}
	r.modify(mcp2515.RegTXRTSCTRL, 0x07, 0)
	r.expect(mcp2515.RegTXRTSCTRL, 0x38)
}

func TestBitModify(t *testing.T) {
	r := newRig(t, nil)
	r.write(mcp2515.RegCANINTF, 0xA5)
	r.modify(mcp2515.RegCANINTF, 0x0F, 0x0A)
	r.expect(mcp2515.RegCANINTF, 0xAA)
	// CNF3 is bit-modifiable; unimplemented bits stay 0.
	r.modify(mcp2515.RegCNF3, 0x07, 0xFF)
	r.expect(mcp2515.RegCNF3, 0x07)
	// TXB0SIDH is not: the mask is forced to 0xFF, a byte write.
	r.write(mcp2515.RegTXB0CTRL+mcp2515.BufSIDH, 0xF0)
	r.modify(mcp2515.RegTXB0CTRL+mcp2515.BufSIDH, 0x01, 0x0F)
	r.expect(mcp2515.RegTXB0CTRL+mcp2515.BufSIDH, 0x0F)
	// Bytes after BIT MODIFY's data are ignored.
	r.xfer(mcp2515.InstrBitModify, byte(mcp2515.RegCANINTE), 0xFF, 0x01, 0xFF, 0xFF)
	r.expect(mcp2515.RegCANINTE, 0x01)
	r.expect(mcp2515.RegCANINTF+1, 0x00)
}

func TestReadStatusAndRxStatus(t *testing.T) {
	r := newRig(t, nil)
	r.write(mcp2515.RegCANINTF, mcp2515.IntRX1|mcp2515.IntTX0|mcp2515.IntTX2)
	r.modify(mcp2515.RegTXB1CTRL, mcp2515.TXBCTRLTXREQ, mcp2515.TXBCTRLTXREQ) // Config mode: stays pending
	want := byte(mcp2515.StatusRX1IF | mcp2515.StatusTX0IF | mcp2515.StatusTXB1REQ | mcp2515.StatusTX2IF)
	got := r.xfer(mcp2515.InstrReadStatus, 0, 0, 0)
	if !bytes.Equal(got, []byte{0xFF, want, want, want}) {
		t.Fatalf("READ STATUS = % x, want ff then %02x repeated", got, want)
	}
	// RX STATUS for RXB1 holding a rolled-over RXF1 hit: 10 (RXB1), type std data, 111.
	got = r.xfer(mcp2515.InstrRxStatus, 0, 0)
	if !bytes.Equal(got, []byte{0xFF, 0x86, 0x86}) {
		t.Fatalf("RX STATUS = % x, want ff 86 86", got)
	}
}

func TestCorruptedModesAndClock(t *testing.T) {
	r := newRig(t, nil)
	// Mode 1: the chip sees 0x03 as 0x01 (unknown: ignored) and the master reads
	// MISO one bit late.
	got := r.xferMode(1, sclk, mcp2515.InstrRead, byte(mcp2515.RegCANCTRL), 0)
	if bytes.Equal(got, []byte{0xFF, 0xFF, 0x87}) {
		t.Fatal("mode 1 read CANCTRL correctly")
	}
	// 20 MHz: READ STATUS (0xA0) is seen as 0x50, ignored.
	r.xferMode(0, 20_000_000, mcp2515.InstrWrite, byte(mcp2515.RegCANINTE), 0xFF)
	r.expect(mcp2515.RegCANINTE, 0)
	if s := r.c.Stats(); s.Corrupted != 6 {
		t.Fatalf("corrupted exchanges %d, want 6", s.Corrupted)
	}
	// Mode 3 works.
	if got := r.xferMode(3, sclk, mcp2515.InstrRead, byte(mcp2515.RegCANCTRL), 0); got[2] != 0x87 {
		t.Fatalf("mode 3 READ CANCTRL = %#02x", got[2])
	}
}

func TestINTPin(t *testing.T) {
	r := newRig(t, nil)
	r.write(mcp2515.RegCANINTF, mcp2515.IntTX0) // flag without enable: INT stays high
	if len(r.int) != 0 || !r.c.Level(r.at) {
		t.Fatalf("INT low with CANINTE = 0: edges %v", r.int)
	}
	t1 := r.at + 2*byteNs
	r.write(mcp2515.RegCANINTE, mcp2515.IntTX0)
	if len(r.int) != 1 || r.int[0] != (edge{false, t1 + byteNs}) || r.c.Level(r.at) {
		t.Fatalf("edges %v, want falling at %d", r.int, t1+byteNs)
	}
	r.expect(mcp2515.RegCANSTAT, 0x80|mcp2515.ICODTXB0)
	r.modify(mcp2515.RegCANINTF, mcp2515.IntTX0, 0)
	if len(r.int) != 2 || !r.int[1].high || !r.c.Level(r.at) {
		t.Fatalf("edges %v, want rising after the flag clear", r.int)
	}
}

func TestExchangeNoAlloc(t *testing.T) {
	r := newRig(t, nil)
	r.c.SetCS(true, r.at)
	r.c.Exchange(mcp2515.InstrReadStatus, 0, sclk, r.at)
	if n := testing.AllocsPerRun(1000, func() {
		r.at += byteNs
		r.c.Exchange(0, 0, sclk, r.at)
	}); n != 0 {
		t.Fatalf("Exchange allocates %v times per byte", n)
	}
}
