package bridge

import (
	"testing"

	"go.einride.tech/can"

	"cand/canwire"
)

// The default ring holds 10 ms of the densest traffic: back-to-back DLC 0 standard
// frames at 1 Mbit/s, with the ID that needs the fewest bit times.
func TestRingHoldsABurst(t *testing.T) {
	fewest := uint32(1 << 31)
	for id := range uint32(0x800) {
		fewest = min(fewest, canwire.Bits(&can.Frame{ID: id}))
	}
	const burstNs, bitNs = 10_000_000, 1_000 // 10 ms at 1 Mbit/s
	need := burstNs / (int(fewest) * bitNs)
	if RingFrames < need {
		t.Fatalf("RingFrames = %d, want at least %d (%d-bit frames for 10 ms)", RingFrames, need, fewest)
	}
	if RingFrames&(RingFrames-1) != 0 {
		t.Fatalf("RingFrames = %d is not a power of two", RingFrames)
	}
}

// Entries come out in the order they went in, across the ring's wrap, and only
// once published; a full ring refuses a slot; the high-water mark is kept.
func TestRingOrderWrapAndFull(t *testing.T) {
	r := newRing(4)
	next, want := byte(0), byte(0)
	put := func(n int) {
		for range n {
			e := r.slot()
			if e == nil {
				t.Fatalf("no slot with %d waiting", r.next-r.head.Load())
			}
			e.rec[0] = next
			next++
			r.commit()
		}
	}
	take := func(n int) {
		for range n {
			e := r.peek()
			if e == nil {
				t.Fatalf("nothing to take, want entry %d", want)
			}
			if e.rec[0] != want {
				t.Fatalf("took entry %d, want %d", e.rec[0], want)
			}
			want++
			r.pop()
		}
	}
	for round := range 5 {
		put(3)
		if e := r.peek(); e != nil {
			t.Fatalf("round %d: entry %d visible before publish", round, e.rec[0])
		}
		r.publish()
		take(2)
		put(2) // 3 waiting: wraps
		r.publish()
		if r.slot() != nil && r.waiting() != 3 {
			t.Fatalf("round %d: %d waiting, want 3", round, r.waiting())
		}
		put(1)
		if r.slot() != nil {
			t.Fatalf("round %d: a slot in a full ring", round)
		}
		r.publish()
		take(4)
	}
	if r.high != 4 {
		t.Fatalf("high-water mark %d, want 4", r.high)
	}
}
