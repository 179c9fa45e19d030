package mcp2515_test

import (
	"math/rand/v2"
	"testing"

	"go.einride.tech/can"

	"cand/sim/canbus"
)

// Random traffic (DLC 0..8, 125 kbit/s to 1 Mbit/s), SPI speeds, socket-write
// times and preemptions, deterministic from the seed: every swap the driver
// delivers is one it counted as order-uncertain; none comes from a wrong certainty.
func TestRandomTrafficSwapsAreCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bad := 0
	for run := 0; run < 200; run++ {
		r := newRig(t, []uint32{125_000, 500_000, 1_000_000}[rng.IntN(3)])
		r.anyErr = true
		r.byteNs = int64(800 + rng.IntN(5000))
		r.recvNs = int64(rng.IntN(400_000))
		n := 30
		for i := range n {
			dlc := uint8(rng.IntN(9))
			r.peer.Send(can.Frame{ID: 0x100 + uint32(i), Length: dlc})
		}
		end := r.now + int64(n+2)*int64(canbus.FrameBits(can.Frame{Length: 8})+3)*r.bitNs
		for r.now < end || !r.chip.Level(r.now) {
			if r.chip.Level(r.now) {
				r.advance(int64(1 + rng.IntN(3000)))
				continue
			}
			r.delay = int64(rng.IntN(200_000))
			if _, err := r.ctl.HandleInterrupt(r); err != nil {
				t.Fatal(err)
			}
		}
		swaps := 0
		for i := 1; i < len(r.frames); i++ {
			if r.frames[i].ID < r.frames[i-1].ID {
				swaps++
			}
		}
		if u := r.ctl.Stats().RXOrderUncertain; uint64(swaps) > u {
			bad++
			if bad < 5 {
				t.Errorf("run %d: %d swaps, %d uncertain", run, swaps, u)
			}
		}
	}
}
