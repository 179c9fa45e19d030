package daemon

import (
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/config"
	"cand/internal/waitfor"
	"cand/socketcan"
)

// Acceptance filters: only IDs that pass RXM0/RXF0..1 or RXM1/RXF2..5 reach the
// socket; the others never leave the chip. The peers send their IDs back to back,
// which can overflow the default Pi 3 at its idle clocks: a Pi 4 at force_turbo
// (docs/clock.md).
func TestFilters(t *testing.T) {
	r := newRigConfig(t).board(config.SimBoardPi4).forceTurbo().
		peer(periodicPeer("a", 4*time.Millisecond, 1, 0x100, 0x150, 0x200, 0x201, 0x2FF)).
		peer(extended(periodicPeer("x", 5*time.Millisecond, 1, 0x18DAF110, 0x18DAF111))).
		filters(filter(0x7FF), filter(0x700), filter(0x100), extendedFilter(0x18DAF111), filter(0x200)).
		start()
	// mask1 0x700 with filter 0x200 accepts 0x200..0x2FF; mask0 0x7FF with RXF0/RXF1
	// accepts exactly 0x100. RXF1 is extended but RXM0 is a standard mask: its EID
	// bits are 0 (don't care), so RXF1 accepts every extended ID whose top 11 bits
	// match 0x18DAF111's.
	seen := r.countDataByID(120)
	for _, id := range []uint32{0x150} {
		if seen[id] != 0 {
			t.Errorf("ID %#x passed the filters %d times", id, seen[id])
		}
	}
	for _, id := range []uint32{0x100, 0x200, 0x201, 0x2FF, 0x18DAF110, 0x18DAF111} {
		if seen[id] == 0 {
			t.Errorf("ID %#x never arrived (seen %v)", id, seen)
		}
	}
	r.checkConservation()
}

// Loopback mode: what cand sends comes straight back from the chip and never
// reaches the bus.
func TestLoopbackMode(t *testing.T) {
	r := newRigConfig(t).mode(config.ModeLoopback).peer(answerPeer("echo", 1)).start()
	for i := 0; i < 50; i++ {
		f := can.Frame{ID: 0x222, Length: 2, Data: can.Data{byte(i), 0xAA}}
		r.write(0, f)
		got, k, err := r.read(0, 5*time.Second)
		if err != nil || k != socketcan.FrameData || got != f {
			t.Fatalf("frame %d: got %v %v %v, want %v", i, got, k, err, f)
		}
	}
	if st := r.pi.Node(0).Peers[0].Stats(); st.Received != 0 || st.Sent != 0 {
		t.Fatalf("the bus saw traffic in loopback mode: %+v", st)
	}
	r.checkConservation()
}

// Listen-only mode: cand receives the bus's traffic but never transmits or ACKs.
func TestListenOnlyMode(t *testing.T) {
	r := newRigConfig(t).
		mode(config.ModeListenOnly).
		peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).
		peer(answerPeer("echo", 1)).
		start()
	r.write(0, can.Frame{ID: 0x7EE, Length: 1, Data: can.Data{1}})
	got := r.countDataByID(40)
	if got[0x100] == 0 || got[0x101] == 0 || len(got) != 2 {
		t.Fatalf("frames by ID %v, want only 0x100 and its answers 0x101", got)
	}
	for _, p := range r.pi.Node(0).Peers {
		for _, rec := range p.Received() {
			if rec.Frame.ID == 0x7EE || rec.Frame.ID == 0x7EF {
				t.Fatalf("peer %s received %v: listen-only cand transmitted", p.Name(), rec.Frame)
			}
		}
	}
	r.checkConservation()
}

// One-shot mode: with nobody to ACK, the frame is tried once (TEC = 8 after one
// ACK error), dropped and counted; no error frame, since the state stays active.
func TestOneShotMode(t *testing.T) {
	r := newRigConfig(t).oneShot().start()
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	m := r.d.Owner.Ports[0].M
	waitfor.Cond(t, 5*time.Second, "the one-shot frame to be dropped", func() bool { return m.TXDropped.Load() == 1 })
	waitfor.Cond(t, 5*time.Second, "TEC 8", func() bool { return m.TEC.Load() == 8 })
	if f, k, err := r.read(0, 100*time.Millisecond); err == nil {
		t.Fatalf("unexpected %v frame %v", k, f)
	}
	if m.TXFrames.Load() != 0 || m.TEC.Load() != 8 {
		t.Fatalf("tx frames %d, TEC %d; want 0 and 8 (one attempt)", m.TXFrames.Load(), m.TEC.Load())
	}
	r.checkConservation()
}
