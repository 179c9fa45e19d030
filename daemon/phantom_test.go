package daemon

import (
	"testing"
	"time"

	"cand/internal/waitfor"
	"cand/mcp2515"
)

// A chip reset between READ STATUS and READ RX BUFFER (the reset at the READ RX
// BUFFER's first byte): the read falls into the chip's oscillator start-up and reads
// 0xFF. cand delivers no frame from it (the all-0xFF read-out was once delivered as
// 1FFFFFFF#R8), counts it in cand_rx_invalid_reads_total, re-initialises the chip,
// and frames flow again; every frame adds up.
func TestChipResetBeforeRXReadDeliversNoPhantom(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	m := r.d.Owner.Ports[0].M
	r.expectPeerFrames(3, 0x100, "before")
	wiped := make(chan int, 1)
	r.pi.Node(0).Wiring.ResetAtInstruction(func(b byte) bool { return b&0xF9 == mcp2515.InstrReadRxBuf }, func(n int) { wiped <- n })
	var n int
	select {
	case n = <-wiped:
	case <-time.After(10 * time.Second):
		t.Fatal("no READ RX BUFFER within 10 s")
	}
	r.books.mu.Lock()
	r.books.wiped[0] += n
	r.books.mu.Unlock()
	waitfor.Cond(t, 5*time.Second, "the invalid read to be counted and the chip re-initialised", func() bool {
		return m.RXInvalidReads.Load() == 1 && m.ChipResets.Load() == 1
	})
	r.expectPeerFrames(3, 0x100, "after the reset")
	if got := m.RXInvalidReads.Load(); got != 1 {
		t.Fatalf("cand_rx_invalid_reads_total %d, want 1", got)
	}
	r.checkConservation()
}
