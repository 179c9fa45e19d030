package bridge

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/waitfor"
)

// An isolated frame is not the owner's when another frame already waits in the
// chip (INT asserted after the drain), nor when a second record waits in the
// ring: then the parked thread is woken, and it writes them.
func TestIsolatedFrameNotTheOwnersUnderLoad(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	line := &levelLine{}
	p.intr = line
	var now atomic.Int64
	now.Store(10_000_000)
	d := &Delivery{SpinNs: 1_000_000, Clock: now.Load}
	if err := d.start([]*Port{p}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.halt)
	waitParked(t, d, &now, 2_000_000) // past the spin since it started: it parks

	line.low = true // the next frame is in the chip already
	f0 := can.Frame{ID: 0x10, Length: 1, Data: can.Data{1}}
	p.Received(&f0)
	p.deliver()
	r.expect("INT asserted", f0)
	if s := d.Stats(); s.Isolated != 0 || s.Wakes != 1 {
		t.Fatalf("INT asserted: isolated %d, wakes %d; want 0 and 1", s.Isolated, s.Wakes)
	}
	line.low = false
	waitParked(t, d, &now, 100_000_000) // the thread spins on this clock: past its spin, it parks
	f1 := can.Frame{ID: 0x11, Length: 1, Data: can.Data{2}}
	f2 := can.Frame{ID: 0x12, Length: 1, Data: can.Data{3}}
	p.Received(&f1)
	p.Received(&f2)
	p.deliver()
	r.expect("two records", f1, f2)
	if s := d.Stats(); s.Isolated != 0 || s.Wakes != 2 {
		t.Fatalf("two records: isolated %d, wakes %d; want 0 and 2", s.Isolated, s.Wakes)
	}
}

// Whoever writes them, the owner or the thread on its way to park or out of
// it, every frame reaches the socket once and in bus order: isolated frames and
// bursts in a random mix, the thread spinning on a clock that runs (go test
// -race watches the hand-over of the ring).
func TestIsolatedAndBurstFramesInBusOrder(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	var now atomic.Int64
	d := &Delivery{SpinNs: 20_000, Clock: func() int64 { return now.Add(1_000) }}
	if err := d.start([]*Port{p}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.halt)
	rng := rand.New(rand.NewPCG(1, 2))
	id := uint32(0)
	for id < 2000 {
		if rng.IntN(3) == 0 {
			now.Add(100_000) // a quiet bus: the thread parks, the next is isolated
		}
		var want []can.Frame
		for range 1 + rng.IntN(3) {
			f := can.Frame{ID: id & 0x7FF, Length: 2, Data: can.Data{byte(id), byte(id >> 8)}}
			id++
			want = append(want, f)
			p.Received(&f)
		}
		p.deliver()
		// Read each drain's frames before the next: a socketpair's queue is
		// short (net.unix.max_dgram_qlen), and a write it refuses is a loss.
		r.expect("a drain's frames", want...)
	}
	waitfor.Cond(t, 10*time.Second, "every frame counted", func() bool {
		s := d.Stats()
		return s.Frames+s.Isolated == uint64(id)
	})
	if s := d.Stats(); s.Isolated == 0 || s.Frames == 0 {
		t.Fatalf("isolated %d, by the thread %d: the mix did not exercise both", s.Isolated, s.Frames)
	}
	if n := p.M.RXFrames.Load(); n != uint64(id) {
		t.Fatalf("cand_rx_frames_total %d, want %d", n, id)
	}
}

// The owner's write of an isolated frame, from the chip's INT to the socket,
// allocates nothing.
func TestIsolatedFrameAllocatesNothing(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	d := &Delivery{} // no thread: parked, as one that spun out
	d.ports = []*Port{p}
	d.state.Store(dtParked)
	p.dt = d
	allocs := r.allocsPerFrame(nil)
	if s := d.Stats(); s.Isolated != 21 || s.Wakes != 0 {
		t.Fatalf("isolated %d, wakes %d; want every frame the owner's (21) and no wake", s.Isolated, s.Wakes)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per isolated frame", allocs)
	}
}
