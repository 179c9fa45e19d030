package bridge

import (
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/internal/mono"
	"cand/sim/canbus"
	"cand/socketcan"
)

// A received frame adds its bit times on the wire to cand_rx_bit_times_total, a
// transmitted one to cand_tx_bit_times_total once it is sent: the simulated bus's
// own count of the frames it carried.
func TestBitTimesCounted(t *testing.T) {
	r := newPortRig(t)
	m := r.port.M
	rx := can.Frame{ID: 0x321, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	r.peer.Send(rx)
	r.waitINT()
	if err := r.port.interrupt(mono.Now()); err != nil {
		t.Fatal(err)
	}
	var b [socketcan.FrameSize]byte
	if _, err := unix.Read(r.host, b[:]); err != nil {
		t.Fatal(err)
	}
	if got, want := m.RXBits.Load(), uint64(canbus.FrameBits(rx)); got != want {
		t.Fatalf("rx bit times %d after %v, want %d", got, rx, want)
	}

	tx := can.Frame{ID: 0x1ABCDE, IsExtended: true, Length: 3, Data: can.Data{9, 8, 7}}
	socketcan.Encode(&b, tx)
	if _, err := unix.Write(r.host, b[:]); err != nil {
		t.Fatal(err)
	}
	r.port.sockReadable = true
	if err := r.port.pumpTX(); err != nil {
		t.Fatal(err)
	}
	if got := m.TXBits.Load(); got != 0 {
		t.Fatalf("tx bit times %d before the frame was sent, want 0", got)
	}
	answer := tx
	answer.ID++
	for m.TXFrames.Load() == 0 || m.RXFrames.Load() < 2 {
		r.waitINT()
		if err := r.port.interrupt(mono.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := m.TXBits.Load(), uint64(canbus.FrameBits(tx)); got != want {
		t.Fatalf("tx bit times %d after %v, want %d", got, tx, want)
	}
	if got, want := m.RXBits.Load(), uint64(canbus.FrameBits(rx)+canbus.FrameBits(answer)); got != want {
		t.Fatalf("rx bit times %d after %v and the answer %v, want %d", got, rx, answer, want)
	}
}
