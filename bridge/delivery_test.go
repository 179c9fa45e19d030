package bridge

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/internal/kernelop"
	"cand/internal/waitfor"
	"cand/socketcan"
)

// readN reads n records from the test's end of the socketpair, waiting for each.
func (r *portRig) readN(n int) []can.Frame {
	r.t.Helper()
	var got []can.Frame
	var b [socketcan.FrameSize]byte
	waitfor.Cond(r.t, 10*time.Second, "the delivery thread's frames on the socket", func() bool {
		for len(got) < n {
			if _, err := unix.Read(r.host, b[:]); err != nil {
				if err == unix.EAGAIN {
					return false
				}
				r.t.Fatal(err)
			}
			f, _ := socketcan.Decode(&b)
			got = append(got, f)
		}
		return true
	})
	return got
}

// expect reads len(want) records and fails unless they are want, in order.
func (r *portRig) expect(what string, want ...can.Frame) {
	r.t.Helper()
	got := r.readN(len(want))
	for i := range want {
		if got[i] != want[i] {
			r.t.Fatalf("%s: frame %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// A parked delivery thread is woken once per burst, not per frame: while frames
// keep coming it spins (its spin is measured on a clock the test holds still),
// and it writes every frame in bus order. Once the spin has run out it parks, and
// the next burst wakes it once again; the burst's first frame, isolated until the
// second comes, the owner writes itself.
func TestDeliveryThreadWakesOncePerBurst(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	var now atomic.Int64
	d := &Delivery{SpinNs: 1_000, Clock: now.Load}
	if err := d.start([]*Port{p}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.halt)
	id := uint32(0)
	for burst := 1; burst <= 3; burst++ {
		waitParked(t, d, &now, 10_000) // past the spin: it parks
		var want []can.Frame
		for range 20 { // 20 drains of one frame each
			f := can.Frame{ID: id, Length: 1, Data: can.Data{byte(id)}}
			id++
			want = append(want, f)
			p.Received(&f)
			p.deliver()
		}
		r.expect(fmt.Sprintf("burst %d", burst), want...)
		if s := d.Stats(); s.Wakes != uint64(burst) {
			t.Fatalf("after %d bursts of 20 frames: %d wakes, want %d", burst, s.Wakes, burst)
		}
	}
	if s := d.Stats(); s.Frames != 57 || s.Isolated != 3 {
		t.Fatalf("%d frames written by the thread and %d by the owner, want 57 and each burst's first", s.Frames, s.Isolated)
	}
	if n := p.M.RXFrames.Load(); n != 60 {
		t.Fatalf("cand_rx_frames_total %d, want 60", n)
	}
}

// waitParked waits for the delivery thread (spinning on the test's clock now)
// to park, moving the clock on by step at each look where it has not: a thread
// that reads the clock for its last batch only after the test moved it would
// otherwise spin on that clock for good.
func waitParked(t *testing.T, d *Delivery, now *atomic.Int64, step int64) {
	t.Helper()
	waitfor.Cond(t, 10*time.Second, "the delivery thread parked", func() bool {
		if d.parked() {
			return true
		}
		now.Add(step)
		return false
	})
}

// fixedCore is a Pacer whose board core takes cost board ns per frame, on a board
// clock the test moves.
type fixedCore struct {
	now, cost int64
	busyUntil int64
	begun     int64
}

func (c *fixedCore) Busy() int64    { return max(c.busyUntil-c.now, 0) }
func (c *fixedCore) Begin(int64)    { c.begun = c.now }
func (c *fixedCore) End(frames int) { c.busyUntil = c.begun + int64(frames)*c.cost }
func (c *fixedCore) Woken(int64)    {}

// The delivery thread's throughput is its board core's: with 150 board µs a
// frame against a frame every 100 µs it keeps up with two frames in three, so
// the ring fills at one frame per 300 µs, is full after about 19 ms (64 × 300 µs),
// and from then on the frames it cannot take are lost, counted. The thread is
// stepped by the test (no goroutine) on the board's clock; it writes what waits
// as one batch, so it may run ahead of its core by at most one ring.
func TestDeliveryCappedByItsCore(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	p.errorFrames = false // only data frames in the ring
	p.ring = newRing(64)
	core := &fixedCore{cost: 150_000}
	d := &Delivery{Pacer: core}
	d.ports = []*Port{p}
	p.dt = d
	const frames, every = 600, 100_000
	firstLoss := -1
	for i := range frames {
		core.now = int64(i) * every
		f := can.Frame{ID: uint32(i & 0x7FF), Length: 8}
		p.Received(&f)
		p.deliver()
		d.step()
		r.readAll()
		if firstLoss < 0 && p.M.RXRingDrops.Load() > 0 {
			firstLoss = i
		}
	}
	r.readAll()
	written, waiting, lost := p.M.RXFrames.Load(), p.ring.waiting(), p.M.RXRingDrops.Load()
	if e := p.M.SocketWriteErrs.Load(); e != 0 {
		t.Fatalf("%d socket write errors", e)
	}
	t.Logf("written %d, waiting %d, lost %d, first lost frame %d", written, waiting, lost, firstLoss)
	if written+waiting+lost != frames {
		t.Fatalf("written %d + waiting %d + lost %d != %d frames", written, waiting, lost, frames)
	}
	capacity := uint64((frames-1)*every/core.cost + 1)
	if written < capacity-1 || written > capacity+64 {
		t.Fatalf("%d frames written in %d ms, want %d (one per 150 µs) up to one ring more", written, frames*every/1_000_000, capacity)
	}
	if firstLoss < 150 || firstLoss > 260 {
		t.Fatalf("first frame lost at %d, want about 192 (ring full after 64 × 300 µs)", firstLoss)
	}
}

// The delivery thread's path allocates nothing per frame: the owner's drain
// into the ring and its publish and wake, and the thread's write (stepped here
// on the test's goroutine, with the same code the thread runs).
func TestDeliveryPathAllocatesNothing(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	d := &Delivery{}
	d.ports = []*Port{p}
	p.dt = d
	allocs := r.allocsPerFrame(func() {
		if n, _ := d.step(); n != 1 {
			t.Fatalf("the delivery step wrote %d frames, want 1", n)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per received frame", allocs)
	}
}

// countingCore is a Pacer whose core is never busy; it counts its wake-ups.
type countingCore struct{ woken atomic.Int64 }

func (c *countingCore) Busy() int64 { return 0 }
func (c *countingCore) Begin(int64) {}
func (c *countingCore) End(int)     {}
func (c *countingCore) Woken(int64) { c.woken.Add(1) }

// wakeMeter counts the owner's metered wakes.
type wakeMeter struct{ wakes atomic.Int64 }

func (m *wakeMeter) Enter(op kernelop.Op) {
	if op == kernelop.Wake {
		m.wakes.Add(1)
	}
}
func (m *wakeMeter) Exit(kernelop.Op) {}

// On the virtual Pi the delivery thread parks on the host at once, but its board
// core spins for SpinNs of board time after a batch: a frame in that time is
// found without a wake, so the owner's wake costs nothing and counts as the
// simulator's (SpinWakes). Once the spin is over the wake is the board's: metered
// on the owner, and the core's wake-up charged (Woken). An isolated frame (the
// first after the core parked, SpinNs after the owner's last one) the owner
// writes itself, and nobody is woken.
func TestDeliverySpinPlayedInBoardTime(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	var now atomic.Int64
	core := &countingCore{}
	var owner wakeMeter
	d := &Delivery{SpinNs: 1_000_000, Clock: now.Load, Pacer: core}
	d.ownerKernel = &owner
	if err := d.start([]*Port{p}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.halt)
	frame := func(id uint32) {
		f := can.Frame{ID: id, Length: 1, Data: can.Data{byte(id)}}
		p.Received(&f)
		p.deliver()
		r.expect("the socket", f)
		waitfor.Cond(t, 10*time.Second, "the delivery thread parked", d.parked)
	}
	want := func(at string, wakes, spinWakes, isolated uint64) {
		t.Helper()
		s := d.Stats()
		if s.Wakes != wakes || s.SpinWakes != spinWakes || s.Isolated != isolated || uint64(owner.wakes.Load()) != wakes || uint64(core.woken.Load()) != wakes {
			t.Fatalf("after %s: wakes %d, spin wakes %d, isolated %d, metered %d, core woken %d; want %d, %d, %d, %d, %d", at,
				s.Wakes, s.SpinWakes, s.Isolated, owner.wakes.Load(), core.woken.Load(), wakes, spinWakes, isolated, wakes, wakes)
		}
	}
	waitfor.Cond(t, 10*time.Second, "the delivery thread parked", d.parked)
	now.Store(10_000_000)
	frame(1) // the first, the core parked since the start: the owner writes it
	want("an isolated frame", 0, 0, 1)
	now.Add(100_000)
	frame(2) // 0.1 ms later: a burst's, the core woken for it
	want("a second frame 0.1 ms later", 1, 0, 1)
	now.Add(500_000)
	frame(3) // 0.5 ms after the core's batch: still spinning on the board
	want("a frame within the core's spin", 1, 1, 1)
	now.Add(2_000_000)
	frame(4) // 2 ms later: parked on the board, isolated again
	want("a frame after the spin", 1, 1, 2)
	now.Add(100_000)
	frame(5)
	want("a second frame 0.1 ms later", 2, 1, 2)
	if s := d.Stats(); s.Frames != 3 {
		t.Fatalf("the thread wrote %d frames, want 3", s.Frames)
	}
}

// idleCore is a Pacer whose board core is never busy, or always busy (busy).
type idleCore struct{ busy atomic.Bool }

func (c *idleCore) Busy() int64 {
	if c.busy.Load() {
		return 1
	}
	return 0
}
func (c *idleCore) Begin(int64) {}
func (c *idleCore) End(int)     {}
func (c *idleCore) Woken(int64) {}

// On the virtual Pi a full ring whose frames the board's delivery core would be
// taking (it is not busy, and still spinning) is the simulator's thread being
// late: the owner waits for it with the board's time held, and loses nothing.
// Where the board's core is busy, or parked (woken only after the drain), the
// ring is as full as it looks: the frame is lost, counted, and nobody waits.
func TestDeliveryCatchUpOnlyWhereTheBoardsCoreWouldTake(t *testing.T) {
	for _, tc := range []struct {
		name     string
		busy     bool
		spinning bool
		waits    bool
	}{
		{"late thread", false, true, true},
		{"core busy", true, true, false},
		{"core parked", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPortRig(t)
			p := r.port
			p.errorFrames = false
			p.ring = newRing(4)
			var now atomic.Int64
			now.Store(1_000_000)
			core := &idleCore{}
			core.busy.Store(tc.busy)
			holds := 0
			d := &Delivery{Pacer: core, Clock: now.Load, Hold: func(wait func()) { holds++; wait() }}
			if err := d.start([]*Port{p}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(d.halt)
			waitfor.Cond(t, 10*time.Second, "the delivery thread parked", d.parked)
			if tc.spinning {
				d.spinUntil.Store(now.Load() + 1_000_000)
			}
			var want []can.Frame
			for i := range 5 {
				f := can.Frame{ID: uint32(i), Length: 1, Data: can.Data{byte(i)}}
				want = append(want, f)
				p.Received(&f)
				if i == 3 {
					p.ring.publish() // published, the thread not woken: late
				}
			}
			lost := p.M.RXRingDrops.Load()
			if tc.waits {
				if lost != 0 || holds != 1 || d.Stats().CatchUps != 1 {
					t.Fatalf("%d lost, %d holds, %d catch-ups; want none lost and one wait", lost, holds, d.Stats().CatchUps)
				}
				p.deliver()
				got := r.readN(5)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("frame %d is %v, want %v", i, got[i], want[i])
					}
				}
				return
			}
			if lost != 1 || holds != 0 || d.Stats().CatchUps != 0 {
				t.Fatalf("%d lost, %d holds, %d catch-ups; want one lost and no wait", lost, holds, d.Stats().CatchUps)
			}
		})
	}
}
