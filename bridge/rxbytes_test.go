package bridge

import (
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/internal/mono"
	"cand/socketcan"
)

// An isolated received frame through the SPI engine on the register model costs 2
// SPI transfers (READ STATUS, READ RX BUFFER) and no byte the frame does not need:
// 2 + 6 + its data bytes, counted in cand_interrupt_spi_{transfers,bytes}_total.
func TestIsolatedFrameSPICost(t *testing.T) {
	r := newPortRig(t)
	m := r.port.M
	var b [socketcan.FrameSize]byte
	for _, c := range []struct {
		f     can.Frame
		bytes uint64
	}{
		{can.Frame{ID: 0x100}, 8},
		{can.Frame{ID: 0x101, Length: 1, Data: can.Data{0x5A}}, 9},
		{can.Frame{ID: 0x102, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}, 16},
		{can.Frame{ID: 0x103, IsRemote: true, Length: 8}, 8},
		{can.Frame{ID: 0x104, Length: 1, Data: can.Data{0xA5}}, 9}, // after an 8-byte frame in the same buffer
	} {
		transfers, bytes := m.RXSPITransfers.Load(), m.RXSPIBytes.Load()
		r.peer.Send(c.f)
		r.waitINT()
		if err := r.port.interrupt(mono.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Read(r.host, b[:]); err != nil {
			t.Fatalf("%v: the frame did not reach the socket: %v", c.f, err)
		}
		if got, _ := socketcan.Decode(&b); got != c.f {
			t.Fatalf("socket got %v, want %v", got, c.f)
		}
		if dt, db := m.RXSPITransfers.Load()-transfers, m.RXSPIBytes.Load()-bytes; dt != 2 || db != c.bytes {
			t.Errorf("%v: %d SPI transfers, %d bytes; want 2 and %d", c.f, dt, db, c.bytes)
		}
	}
}
