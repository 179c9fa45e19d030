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
