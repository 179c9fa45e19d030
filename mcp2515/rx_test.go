package mcp2515_test

import (
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
)

// thenSPI is the rig's transport with TransferThen: the chip select stays low
// between the two parts, byte after byte on the rig's virtual clock.
type thenSPI struct{ *rig }

func (s thenSPI) TransferThen(op mcp2515.Op, tx, rx []byte, first int, more func([]byte) int) (int, error) {
	r := s.rig
	r.chip.SetCS(true, r.now)
	shift := func(from, to int) {
		for i := from; i < to; i++ {
			r.now += r.byteNs
			rx[i] = r.chip.Exchange(tx[i], 0, 10_000_000, r.now)
		}
	}
	shift(0, first)
	n := first + more(rx[:first])
	if n > len(tx) {
		r.t.Fatalf("more asked for %d bytes of a %d-byte transfer", n, len(tx))
	}
	shift(first, n)
	r.chip.SetCS(false, r.now)
	r.now += 50
	r.xfers++
	r.bytes += n
	return n, nil
}

// An isolated received frame costs 2 transfers, READ STATUS and READ RX BUFFER, and
// no byte the frame does not need: 2 + 6 + its data bytes (none for a remote frame).
func TestIsolatedFrameReadsOnlyItsBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     can.Frame
		bytes int
	}{
		{"dlc 0", can.Frame{ID: 0x123}, 8},
		{"dlc 1", can.Frame{ID: 0x123, Length: 1, Data: can.Data{0xA5}}, 9},
		{"dlc 8", frameN(3), 16},
		{"dlc 8 extended", can.Frame{ID: 0x1234567, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}, 16},
		{"dlc 1 extended", can.Frame{ID: 0x1234567, IsExtended: true, Length: 1, Data: can.Data{9}}, 9},
		{"remote dlc 8", can.Frame{ID: 0x123, IsRemote: true, Length: 8}, 8},
		{"remote dlc 4 extended", can.Frame{ID: 0x1234567, IsExtended: true, IsRemote: true, Length: 4}, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRigOn(t, 500_000, func(r *rig) mcp2515.SPI { return thenSPI{r} })
			// Earlier frames leave their data in the buffer: what a shorter frame
			// does not clock must not show up in it.
			r.peer.Send(can.Frame{ID: 0x7FF, Length: 8, Data: can.Data{0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE}})
			r.waitINT()
			if done, err := r.ctl.HandleInterrupt(r); err != nil || !done {
				t.Fatalf("HandleInterrupt: done=%v err=%v", done, err)
			}
			r.frames = nil
			r.peer.Send(c.f)
			r.waitINT()
			r.resetCounts()
			done, err := r.ctl.HandleInterrupt(r)
			if err != nil || !done {
				t.Fatalf("HandleInterrupt: done=%v err=%v", done, err)
			}
			if len(r.frames) != 1 || r.frames[0] != c.f {
				t.Fatalf("frames %v, want [%v]", r.frames, c.f)
			}
			if r.xfers != 2 || r.bytes != c.bytes {
				t.Fatalf("%d transfers, %d bytes; want 2 and %d", r.xfers, r.bytes, c.bytes)
			}
			if lvl := r.chip.Level(r.now); !lvl {
				t.Fatal("INT still asserted after the frame was read: RXnIF did not clear when CS rose")
			}
		})
	}
}
