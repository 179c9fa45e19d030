package mcpchip

import (
	"testing"

	"cand/mcp2515"
	"cand/sim/canbus"
	"cand/sim/soc"
)

var (
	_ soc.SPISlave   = (*Chip)(nil)
	_ soc.PinSource  = (*Chip)(nil)
	_ canbus.Node    = (*Chip)(nil)
	_ canbus.Garbler = (*Chip)(nil)
)

const (
	osc    = 16_000_000
	sclk   = 10_000_000
	byteNs = 900 // 9 SCLK periods at 10 MHz
)

// rig drives a chip like the SPI0 model does: CS, then bytes at wire times.
type rig struct {
	t   *testing.T
	c   *Chip
	at  int64 // wire time of the next edge
	int []edge
}

type edge struct {
	high bool
	at   int64
}

func newRig(t *testing.T, bus *canbus.Bus) *rig {
	t.Helper()
	c := New(osc, bus)
	r := &rig{t: t, c: c}
	c.OnINT(func(high bool, at int64) { r.int = append(r.int, edge{high, at}) })
	c.bus.Lock()
	r.at = c.readyAt + 1000 // past the oscillator start-up time
	c.bus.Unlock()
	return r
}

// xfer is one CS-low transaction in mode 0 at 10 MHz.
func (r *rig) xfer(tx ...byte) []byte { return r.xferMode(0, sclk, tx...) }

func (r *rig) xferMode(mode uint8, hz uint32, tx ...byte) []byte {
	rx := make([]byte, len(tx))
	r.c.SetCS(true, r.at)
	for i, b := range tx {
		r.at += byteNs
		rx[i] = r.c.Exchange(b, mode, hz, r.at)
	}
	r.at += 100
	r.c.SetCS(false, r.at)
	r.at += 100
	return rx
}

func (r *rig) read(addr mcp2515.Addr) mcp2515.Bits {
	return mcp2515.Bits(r.xfer(mcp2515.InstrRead, byte(addr), 0)[2])
}

func (r *rig) write(addr mcp2515.Addr, v ...mcp2515.Bits) {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	r.writeBytes(addr, b...)
}

func (r *rig) writeBytes(addr mcp2515.Addr, v ...byte) {
	r.xfer(append([]byte{mcp2515.InstrWrite, byte(addr)}, v...)...)
}

func (r *rig) modify(addr mcp2515.Addr, mask, v mcp2515.Bits) {
	r.xfer(mcp2515.InstrBitModify, byte(addr), byte(mask), byte(v))
}

func (r *rig) status() mcp2515.Status { return mcp2515.Status(r.xfer(mcp2515.InstrReadStatus, 0)[1]) }

func (r *rig) rxStatus() uint8 { return r.xfer(mcp2515.InstrRxStatus, 0)[1] }

// wait moves time on by ns with no SPI traffic (the INT pin is sampled, which advances
// the world like the GPIO model's level read does).
func (r *rig) wait(ns int64) {
	r.at += ns
	r.c.Level(r.at)
}

func (r *rig) expect(addr mcp2515.Addr, want mcp2515.Bits) {
	r.t.Helper()
	if got := r.read(addr); got != want {
		r.t.Fatalf("register %#02x = %#02x, want %#02x", addr, got, want)
	}
}

// setup500k configures 500 kbit/s at 16 MHz (CNF 00 B5 01: 1+6+7+2 TQ of 125 ns),
// the kernel's RX settings (RXB0 any + rollover, RXB1 any) and all interrupts but
// WAK, then the mode; for Normal and Listen-only mode it waits the 11 bit times of
// bus integration, after which the chip takes part in the next frame.
func (r *rig) setup500k(mode mcp2515.Mode, ctrl ...mcp2515.Bits) {
	r.write(mcp2515.RegCNF3, 0x01, 0xB5, 0x00)
	r.write(mcp2515.RegRXB0CTRL, 0x64)
	r.write(mcp2515.RegRXB1CTRL, 0x60)
	r.write(mcp2515.RegCANINTE, 0xBF)
	c := mcp2515.REQOP(mode)
	for _, b := range ctrl {
		c |= b
	}
	r.write(mcp2515.RegCANCTRL, c)
	if got := mcp2515.OPMOD(r.read(mcp2515.RegCANSTAT)); got != mode {
		r.t.Fatalf("OPMOD = %#02x after requesting %#02x", got, mode)
	}
	if mode == mcp2515.ModeNormal || mode == mcp2515.ModeListenOnly {
		r.wait(11 * bit500k)
	}
}

// loadTx fills TXBn with LOAD TX BUFFER: id, ext, dlc byte (RTR included), data.
func (r *rig) loadTx(n int, id uint32, ext bool, dlc uint8, data ...byte) {
	b := []byte{mcp2515.InstrLoadTxBuf | byte(2*n), 0, 0, 0, 0, dlc}
	mcp2515.PutID(b[1:5], id, ext)
	r.xfer(append(b, data...)...)
}

func (r *rig) readRx(n int) []byte {
	return r.xfer(mcp2515.InstrReadRxBuf|byte(4*n), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)[1:]
}
