package mcpchip_test

import (
	"bytes"
	"testing"

	"cand/mcp2515"
	"cand/sim/mcpchip"
)

// The SPI master FuzzSPI plays: mode 0 at the MCP2515's maximum clock, a byte every
// 900 ns (8 SCLK periods and a gap), and 16 MHz on the chip.
const (
	fuzzOsc    = 16_000_000
	fuzzByteNs = 900
	fuzzSettle = 1_000_000 // well past the oscillator start-up time (128 OSC1 cycles)
)

// A FuzzSPI script is a sequence of operations, each a header byte (operation in
// bits 0..2, argument in bits 3..7) and the bytes it sends:
//
//	0..3  one CS-low transaction of arg+1 bytes, mode 0 at 10 MHz (while the script
//	      holds CS low: the bytes only)
//	4     the same, in the mode (bits 0..1) and at 10 or 20 MHz (bit 2) of the next byte
//	5     wait 2^(arg&15) µs
//	6     CS alone: asserted if arg is odd, else released
//	7     RESET
const (
	opXfer  = 0
	opBad   = 4
	opWait  = 5
	opCS    = 6
	opReset = 7
)

func xferOp(b ...byte) []byte { return append([]byte{byte(len(b)-1)<<3 | opXfer}, b...) }

func waitOp(log2us byte) []byte { return []byte{log2us<<3 | opWait} }

// spiRun drives one chip through a script, checking as it goes that MISO floats
// (0xFF) while CS is high and during an instruction byte, and that the INT pin
// reads what the chip last reported.
type spiRun struct {
	t      *testing.T
	c      *mcpchip.Chip
	at     int64
	cs     bool
	intHi  bool
	bad    uint64 // bytes exchanged in a mode or at a clock the chip does not support
	nbytes uint64
}

// newSPIRun powers on a chip; t may be nil for a run that checks nothing.
func newSPIRun(t *testing.T) *spiRun {
	c := mcpchip.New(fuzzOsc, nil)
	r := &spiRun{t: t, c: c, intHi: true}
	c.OnINT(func(high bool, _ int64) { r.intHi = high })
	r.at = c.Bus().Clock().Now() + fuzzSettle
	return r
}

func (r *spiRun) setCS(active bool) {
	r.at += 50
	r.c.SetCS(active, r.at)
	r.cs = active
}

// xfer is one transaction: CS falls, the bytes, CS rises; or, while the script holds
// CS low, just the bytes.
func (r *spiRun) xfer(mode uint8, hz uint32, tx []byte) []byte {
	r.t.Helper()
	fresh := !r.cs
	r.setCS(true)
	rx := make([]byte, len(tx))
	for i, b := range tx {
		r.at += fuzzByteNs
		rx[i] = r.c.Exchange(b, mode, hz, r.at)
		r.nbytes++
		if (mode != 0 && mode != 3) || hz > mcp2515.InstrMaxSCLK {
			r.bad++
		}
	}
	if fresh && len(rx) > 0 && rx[0] != 0xFF {
		r.t.Fatalf("MISO %#02x during the instruction byte %#02x", rx[0], tx[0])
	}
	if fresh {
		r.setCS(false)
	}
	r.checkINT()
	return rx
}

// frozen is a transaction at one instant: no time passes, so nothing on the chip
// changes but what the bytes do.
func (r *spiRun) frozen(tx ...byte) []byte {
	rx := make([]byte, len(tx))
	r.c.SetCS(true, r.at)
	for i, b := range tx {
		rx[i] = r.c.Exchange(b, 0, mcp2515.InstrMaxSCLK, r.at)
	}
	r.c.SetCS(false, r.at)
	return rx
}

func (r *spiRun) checkINT() {
	r.t.Helper()
	if got := r.c.Level(r.at); got != r.intHi {
		r.t.Fatalf("INT reads %v, the chip last reported %v", got, r.intHi)
	}
}

func (r *spiRun) run(script []byte) {
	r.t.Helper()
	take := func(n int) []byte {
		n = min(n, len(script))
		b := script[:n]
		script = script[n:]
		return b
	}
	for len(script) > 0 {
		h := take(1)[0]
		arg := int(h >> 3)
		switch op := h & 7; {
		case op < opBad:
			r.xfer(0, mcp2515.InstrMaxSCLK, take(arg+1))
		case op == opBad:
			p := take(1)
			if len(p) == 0 {
				return
			}
			hz := uint32(mcp2515.InstrMaxSCLK)
			if p[0]&4 != 0 {
				hz *= 2
			}
			r.xfer(p[0]&3, hz, take(arg+1))
		case op == opWait:
			r.at += 1000 << (arg & 15)
			r.checkINT()
		case op == opCS:
			r.setCS(arg&1 != 0)
			if !r.cs {
				r.at += fuzzByteNs
				if got := r.c.Exchange(0xA5, 0, mcp2515.InstrMaxSCLK, r.at); got != 0xFF {
					r.t.Fatalf("MISO %#02x with CS high", got)
				}
			}
			r.checkINT()
		case op == opReset:
			r.xfer(0, mcp2515.InstrMaxSCLK, []byte{mcp2515.InstrReset})
		}
	}
}

// checkStatus: READ STATUS and RX STATUS say what CANINTF and TXBnCTRL say
// (datasheet figures 12-8 and 12-9), and INT is low exactly while an enabled flag
// is set (§7), all read at one instant.
func (r *spiRun) checkStatus() {
	r.t.Helper()
	regs := r.frozen(mcp2515.InstrRead, byte(mcp2515.RegCANINTE), 0, 0)
	inte, intf := mcp2515.Bits(regs[2]), mcp2515.Bits(regs[3])
	var txreq [3]bool
	for n := range txreq {
		txreq[n] = mcp2515.Bits(r.frozen(mcp2515.InstrRead, byte(mcp2515.TXBnCTRL(n)), 0)[2])&mcp2515.TXBCTRLTXREQ != 0
	}
	want := mcp2515.Status(intf & (mcp2515.IntRX0 | mcp2515.IntRX1))
	for n, req := range txreq {
		if req {
			want |= mcp2515.StatusTXB0REQ << (2 * n)
		}
		if intf&(mcp2515.IntTX0<<n) != 0 {
			want |= mcp2515.StatusTX0IF << (2 * n)
		}
	}
	if got := r.frozen(mcp2515.InstrReadStatus, 0, 0); mcp2515.Status(got[1]) != want || mcp2515.Status(got[2]) != want {
		r.t.Fatalf("READ STATUS % x with CANINTF %#02x and TXREQ %v; want %#02x", got[1:], intf, txreq, want)
	}
	msgs := byte(0)
	if intf&mcp2515.IntRX0 != 0 {
		msgs |= byte(mcp2515.RxStatusMsgRXB0)
	}
	if intf&mcp2515.IntRX1 != 0 {
		msgs |= byte(mcp2515.RxStatusMsgRXB1)
	}
	if got := r.frozen(mcp2515.InstrRxStatus, 0)[1]; got&mcp2515.RxStatusMsgMask != msgs {
		r.t.Fatalf("RX STATUS %#02x with CANINTF %#02x", got, intf)
	}
	if low := !r.c.Level(r.at); low != (intf&inte != 0) {
		r.t.Fatalf("INT low = %v with CANINTF %#02x and CANINTE %#02x", low, intf, inte)
	}
}

// dump reads the whole register file at one instant.
func (r *spiRun) dump() []byte {
	return r.frozen(append([]byte{mcp2515.InstrRead, 0}, make([]byte, mcp2515.RegisterFileSize)...)...)[2:]
}

// FuzzSPI feeds the chip model any SPI traffic: instructions, addresses and data,
// CS patterns, unsupported modes and clocks, RESETs and waits in between (so that
// requested frames go out in loopback and modes change). The model never panics,
// MISO floats while CS is high, its status instructions and INT agree with its
// registers, and a RESET brings back exactly the power-on register file.
func FuzzSPI(f *testing.F) {
	fresh := newSPIRun(nil).dump()
	// What the driver does: configure 500 kbit/s (CNF3..CNF1, CANINTE), the RX
	// buffers and loopback, load TXB0 and request it, wait for the frame, read
	// it, clear the flags.
	setup := [][]byte{
		xferOp(mcp2515.InstrWrite, byte(mcp2515.RegCNF3), 0x01, 0xB5, 0x00, 0xBF),
		xferOp(mcp2515.InstrWrite, byte(mcp2515.RegRXB0CTRL), 0x64),
		xferOp(mcp2515.InstrWrite, byte(mcp2515.RegRXB1CTRL), 0x60),
		xferOp(mcp2515.InstrWrite, byte(mcp2515.RegCANCTRL), mcp2515.ModeLoopback),
		xferOp(mcp2515.InstrLoadTxBuf, 0x24, 0x60, 0, 0, 2, 0xDE, 0xAD),
	}
	service := [][]byte{
		waitOp(9),
		xferOp(mcp2515.InstrReadStatus, 0),
		xferOp(mcp2515.InstrReadRxBuf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		xferOp(mcp2515.InstrBitModify, byte(mcp2515.RegCANINTF), 0xFF, 0),
	}
	f.Add(bytes.Join(append(append(setup, xferOp(mcp2515.InstrRTS|1)), service...), nil))
	// TXREQ written, and an RTS in mode 1,1, with CS held low afterwards (erratum 5:
	// the frame repeats).
	held := func(op ...byte) []byte { return bytes.Join([][]byte{{1<<3 | opCS}, op, waitOp(9), {opCS}}, nil) }
	f.Add(bytes.Join(append(append(setup, held(xferOp(mcp2515.InstrWrite, byte(mcp2515.RegTXB0CTRL), byte(mcp2515.TXBCTRLTXREQ))...)), service...), nil))
	f.Add(bytes.Join(append(append(setup, held(opBad, 3, mcp2515.InstrRTS|1)), service...), nil))
	// Mode 1 corrupts; a RESET inside a write; a READ across the end of the map.
	f.Add(bytes.Join([][]byte{
		{2<<3 | opBad, 1, mcp2515.InstrWrite, byte(mcp2515.RegCANINTE), 0xFF},
		xferOp(mcp2515.InstrWrite, byte(mcp2515.RegCANINTE), mcp2515.InstrReset), {opReset},
		xferOp(mcp2515.InstrRead, 0x7E, 0, 0, 0),
	}, nil))
	f.Fuzz(func(t *testing.T, script []byte) {
		r := newSPIRun(t)
		r.run(script)
		if r.cs {
			r.setCS(false)
		}
		r.at += fuzzSettle // past the start-up time of a RESET in the script
		r.checkStatus()
		if s := r.c.Stats(); s.Corrupted > r.bad || s.Ignored > r.nbytes {
			t.Fatalf("stats %+v after %d bytes, %d of them in a bad mode or clock", s, r.nbytes, r.bad)
		}

		r.xfer(0, mcp2515.InstrMaxSCLK, []byte{mcp2515.InstrReset})
		r.at += fuzzSettle
		if got := r.dump(); !bytes.Equal(got, fresh) {
			t.Fatalf("registers after RESET\n% x\nwant the power-on values\n% x", got, fresh)
		}
		r.checkStatus()
		if !r.c.Level(r.at) {
			t.Fatal("INT low after RESET")
		}
	})
}
