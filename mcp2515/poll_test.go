package mcp2515_test

import (
	"testing"

	"go.einride.tech/can"
)

// Poll with nothing flagged: READ STATUS and the error pass's READ, nothing else.
func TestPollIdleCostsTwoTransfers(t *testing.T) {
	r := newRig(t, 500_000)
	r.resetCounts()
	if err := r.ctl.Poll(r); err != nil {
		t.Fatal(err)
	}
	if r.xfers != 2 || len(r.frames) != 0 {
		t.Fatalf("%d transfers, frames %v; want 2 transfers, none", r.xfers, r.frames)
	}
}

// Poll reads what waits in both buffers in bus order, without looking at INT, and
// stops at the status pass that finds them empty.
func TestPollReadsBothBuffersInOrder(t *testing.T) {
	r := newRig(t, 500_000)
	r.bothFull(frameN(0), frameN(1))
	r.resetCounts()
	if err := r.ctl.Poll(r); err != nil {
		t.Fatal(err)
	}
	want := []can.Frame{frameN(0), frameN(1)}
	if len(r.frames) != 2 || r.frames[0] != want[0] || r.frames[1] != want[1] {
		t.Fatalf("frames %v, want %v", r.frames, want)
	}
	// READ STATUS, two READ RX BUFFERs (both full: the 4-byte error-flag check),
	// READ STATUS finding nothing, the error pass.
	if r.xfers != 6 {
		t.Fatalf("%d transfers, want 6", r.xfers)
	}
	if !r.chip.Level(r.now) {
		t.Fatal("INT still asserted after Poll")
	}
}
