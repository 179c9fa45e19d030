package mcp2515_test

import (
	"errors"
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
)

// resetBeforeRead power-cycles the chip (a brown-out) right before the first READ RX
// BUFFER, after the READ STATUS that found the frame; wait is the time between the
// reset and that read.
func resetBeforeRead(r *rig, wait int64) {
	done := false
	r.before = func(op mcp2515.Op) {
		if op == mcp2515.OpReadRxBuf && !done {
			done = true
			r.chip.PowerCycle(r.now)
			r.now += wait
		}
	}
}

// checkDropped asserts that the interrupt delivered no frame, counted one invalid
// read and reported the chip reset for re-initialisation.
func checkDropped(t *testing.T, r *rig, done bool, err error) {
	t.Helper()
	if err != nil || !done {
		t.Fatalf("HandleInterrupt: done=%v err=%v, want done and no error", done, err)
	}
	if len(r.frames) != 0 {
		t.Fatalf("delivered %v, want nothing: the read-back was no frame", r.frames)
	}
	if n := r.ctl.Stats().RXInvalidReads; n != 1 {
		t.Fatalf("RXInvalidReads = %d, want 1", n)
	}
	if len(r.errs) != 1 || !r.errs[0].ChipReset {
		t.Fatalf("error events %+v, want one ChipReset", r.errs)
	}
}

// A chip reset between READ STATUS and READ RX BUFFER: the read falls in the
// oscillator start-up, MISO reads 0xFF, which sets bits an RX buffer reads as 0.
// No frame is delivered (it was 1FFFFFFF#R8); the chip is reported reset.
func TestResetBeforeReadDeliversNoPhantom(t *testing.T) {
	r := newRig(t, 500_000)
	r.anyErr = true
	r.peer.Send(frameN(0))
	r.waitINT()
	resetBeforeRead(r, 0)
	done, err := r.ctl.HandleInterrupt(r)
	checkDropped(t, r, done, err)
}

// The same reset with the read after the oscillator start-up: the chip answers,
// its RX buffer reads 0x00 (the model's power-on value). That is also a valid frame
// (ID 0, DLC 0), so the driver checks the chip, finds it reset, and drops it.
func TestResetBeforeLateReadDeliversNoZeroFrame(t *testing.T) {
	r := newRig(t, 500_000)
	r.anyErr = true
	r.peer.Send(frameN(0))
	r.waitINT()
	resetBeforeRead(r, 20_000) // 20 µs: past the 8 µs start-up at 16 MHz
	done, err := r.ctl.HandleInterrupt(r)
	checkDropped(t, r, done, err)
}

// A real frame with ID 0 and DLC 0 reads back all 0x00 too: the chip check passes
// and the frame is delivered, at the cost of one more transfer.
func TestZeroFrameIsDelivered(t *testing.T) {
	r := newRig(t, 500_000)
	r.peer.Send(can.Frame{})
	r.waitINT()
	r.resetCounts()
	done, err := r.ctl.HandleInterrupt(r)
	if err != nil || !done {
		t.Fatalf("HandleInterrupt: done=%v err=%v", done, err)
	}
	if len(r.frames) != 1 || r.frames[0] != (can.Frame{}) {
		t.Fatalf("frames %v, want [000#]", r.frames)
	}
	if r.xfers != 3 || r.ctl.Stats().RXInvalidReads != 0 {
		t.Fatalf("%d transfers, %d invalid reads; want 3 (READ STATUS, READ RX BUFFER, the check) and 0", r.xfers, r.ctl.Stats().RXInvalidReads)
	}
}

// A chip unplugged between READ STATUS and READ RX BUFFER reads 0xFF and then fails
// the check: ErrNoChip, for the owner's recovery; no frame.
func TestUnplugBeforeReadReportsNoChip(t *testing.T) {
	r := newRig(t, 500_000)
	r.peer.Send(frameN(0))
	r.waitINT()
	r.before = func(op mcp2515.Op) {
		if op == mcp2515.OpReadRxBuf {
			r.chip.Unplug(true)
		}
	}
	_, err := r.ctl.HandleInterrupt(r)
	if !errors.Is(err, mcp2515.ErrNoChip) {
		t.Fatalf("HandleInterrupt: %v, want ErrNoChip", err)
	}
	if len(r.frames) != 0 || r.ctl.Stats().RXInvalidReads != 1 {
		t.Fatalf("frames %v, %d invalid reads; want none and 1", r.frames, r.ctl.Stats().RXInvalidReads)
	}
}
