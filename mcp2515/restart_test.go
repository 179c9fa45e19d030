package mcp2515_test

import (
	"testing"

	"go.einride.tech/can"

	"cand/sim/canbus"
)

// After Init (a restart: RESET, TXBnCTRL written 0) the frames still leave in load
// order: the priorities given before the restart are gone from the chip too.
func TestTransmitKeepsOrderAfterInit(t *testing.T) {
	r := newRig(t, 500_000)
	sent := []can.Frame{frameN(7), frameN(5), frameN(3)}
	for round := range 2 {
		if round == 1 {
			if err := r.ctl.Init(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range sent {
			if _, err := r.ctl.Transmit(&sent[i]); err != nil {
				t.Fatalf("round %d frame %d: %v", round, i, err)
			}
		}
		// The three frames and the peer's three answers, serviced as they come.
		for range 8 {
			r.advance(int64(canbus.FrameBits(sent[0])+3) * r.bitNs)
			if _, err := r.ctl.HandleInterrupt(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := r.peer.Received()
	if len(got) != 6 {
		t.Fatalf("peer received %d frames, want 6: %v", len(got), got)
	}
	for i, rec := range got {
		if want := sent[i%3]; rec.Frame != want {
			t.Fatalf("bus frame %d is %v, want %v", i, rec.Frame, want)
		}
	}
}
