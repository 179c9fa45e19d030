package mcpchip

import (
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
)

// RXHeld counts the frames waiting in RXB0/RXB1; a power cycle wipes them and
// says how many.
func TestRXHeldAndPowerCycleLosing(t *testing.T) {
	r, _, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	if n := r.c.RXHeld(); n != 0 {
		t.Fatalf("RXHeld %d before any frame", n)
	}
	ps[0].Send(can.Frame{ID: 0x10, Length: 1, Data: can.Data{1}})
	ps[0].Send(can.Frame{ID: 0x11, Length: 1, Data: can.Data{2}})
	r.wait(1_000_000)
	if n := r.c.RXHeld(); n != 2 {
		t.Fatalf("RXHeld %d with both buffers full, want 2", n)
	}
	r.readRx(0) // clears RX0IF when CS rises
	if n := r.c.RXHeld(); n != 1 {
		t.Fatalf("RXHeld %d after reading RXB0, want 1", n)
	}
	if wiped := r.c.PowerCycleLosing(r.at); wiped != 1 {
		t.Fatalf("power cycle wiped %d frames, want 1 (RXB1)", wiped)
	}
	if n := r.c.RXHeld(); n != 0 {
		t.Fatalf("RXHeld %d after the power cycle", n)
	}
}

// Unplugged during a transfer, the chip finishes it (the frame read whole, its
// RXnIF cleared at CS's rise) and is absent from then on; plugged back in, it
// answers at once.
func TestUnplugTakesEffectBetweenTransfers(t *testing.T) {
	r, _, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	ps[0].Send(can.Frame{ID: 0x10, Length: 1, Data: can.Data{0x5A}})
	r.wait(1_000_000)
	tx := make([]byte, 14)
	tx[0] = mcp2515.InstrReadRxBuf // RXB0 from SIDH
	rx := make([]byte, len(tx))
	r.c.SetCS(true, r.at)
	for i, b := range tx {
		if i == 3 {
			r.c.Unplug(true) // mid-read
		}
		r.at += byteNs
		rx[i] = r.c.Exchange(b, 0, sclk, r.at)
	}
	r.at += 100
	r.c.SetCS(false, r.at)
	r.at += 100
	if rx[1] != 0x10>>3 || rx[2] != 0x10<<5&0xE0 || rx[5]&0x0F != 1 || rx[6] != 0x5A {
		t.Fatalf("read while unplugging: % x, want frame 0x10 [1] 5a whole", rx)
	}
	if n := r.c.RXHeld(); n != 0 {
		t.Fatalf("RXHeld %d after the read, want 0", n)
	}
	if got := r.status(); got != undriven {
		t.Fatalf("READ STATUS after the transfer: %#02x, want %#02x (unplugged)", got, undriven)
	}
	r.c.Unplug(false)
	if got := r.read(regCANCTRL); got == undriven {
		t.Fatalf("CANCTRL reads %#02x plugged back in", got)
	}
}
