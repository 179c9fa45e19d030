package mcp2515_test

import (
	"fmt"
	"testing"

	"go.einride.tech/can"

	"cand/sim/canbus"
)

// seqBurst sends n standard DLC-0 frames back to back, their IDs 0x100, 0x101, ...
// the sequence, and services the chip until the bus is quiet; each Received takes
// recvNs (the socket write). It returns how many delivered frames came after a
// frame with a higher ID (swaps) and how many the chip lost (RXnOVR).
func seqBurst(t *testing.T, bitrate uint32, n int, recvNs int64) (r *rig, swaps int, lost uint64) {
	t.Helper()
	r = newRig(t, bitrate)
	r.recvNs = recvNs
	r.anyErr = true // RX1OVR
	for i := range n {
		if !r.peer.Send(can.Frame{ID: 0x100 + uint32(i)}) {
			t.Fatalf("peer queue full at frame %d", i)
		}
	}
	end := r.now + int64(n+2)*int64(canbus.FrameBits(can.Frame{})+3)*r.bitNs
	for r.now < end || !r.chip.Level(r.now) {
		if r.chip.Level(r.now) {
			r.advance(1000)
			continue
		}
		if _, err := r.ctl.HandleInterrupt(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(r.frames); i++ {
		if r.frames[i].ID < r.frames[i-1].ID {
			swaps++
		}
	}
	lost = r.chip.Stats().Lost
	if got := uint64(len(r.frames)) + lost; got != uint64(n) {
		t.Fatalf("recvNs %d: %d frames delivered + %d lost in the chip, want %d", recvNs, len(r.frames), lost, n)
	}
	return r, swaps, lost
}

// Short frames (DLC 0: 47 bit times at 1 Mbit/s) back to back, with a socket write
// that takes 0 to 150 µs: the chip's buffers fill up and overflow. Every frame the
// driver delivers comes in bus order, unless the driver counted the read as one
// whose order it could not know (RXOrderUncertain): a swap it does not count is a
// wrong certainty.
func TestShortFramesUnderOverflowKeepBusOrder(t *testing.T) {
	var total, uncertain, lostAll uint64
	for recvNs := int64(0); recvNs <= 150_000; recvNs += 1000 {
		r, swaps, lost := seqBurst(t, 1_000_000, 60, recvNs)
		u := r.ctl.Stats().RXOrderUncertain
		if uint64(swaps) > u {
			ids := make([]string, len(r.frames))
			for i, f := range r.frames {
				ids[i] = fmt.Sprintf("%x", f.ID)
			}
			t.Errorf("socket write %d µs: %d swapped pairs, %d reads counted order-uncertain; delivered %v", recvNs/1000, swaps, u, ids)
		}
		total += uint64(swaps)
		uncertain += u
		lostAll += lost
	}
	t.Logf("%d swaps, %d order-uncertain reads, %d frames lost in the chip over the sweep", total, uncertain, lostAll)
	if lostAll == 0 {
		t.Fatal("no frame overflowed: the sweep does not reach the case it is for")
	}
}
