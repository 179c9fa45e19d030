package bridge

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"cand/internal/kernelop"
	"cand/internal/mono"
	"cand/internal/rawsys"
)

// DefaultSpinNs is how long the delivery thread keeps looking for frames after
// its last one before it parks: at 1 Mbit/s about eight DLC 8 frame times, so
// that under load it never parks between frames and nothing is woken per frame.
const DefaultSpinNs = int64(1_000_000)

// Delivery is the delivery thread: on a board with more than one core it writes
// the frames the owner thread's drains put in the ports' rings to their sockets,
// so that the owner spends its time on the chips. It spins for SpinNs after its
// last frame, then parks; the owner wakes a parked thread once its drain has
// emptied the chip (at most once per burst: under load the thread does not park).
// An isolated frame, the first after SpinNs without any, the owner writes itself
// while the thread stays parked (isolated.go): one socket write instead of a
// wake-up and the other core's. Frames reach each socket in ring order, which is
// bus order.
type Delivery struct {
	// Setup runs on the delivery thread, locked to it, before it serves: its CPU
	// and real-time priority (below the owner's). Its error stops cand.
	Setup func() error
	// SpinNs is the spin before parking (0: park as soon as the rings are empty).
	SpinNs int64
	// Pacer plays the thread's core on the virtual Pi (nil: a real core). With a
	// Pacer the thread does not spin on the host: it parks at once, and its spin
	// is played in the board's time instead (a wake while the board's core would
	// still be spinning is the simulator's, and costs the owner nothing).
	Pacer Pacer
	// Clock is the board's time as this thread may read it (nil: CLOCK_MONOTONIC).
	Clock mono.Clock
	// Stamp is the time the thread's writes are stamped with for the latency
	// metrics (nil: Clock): on the virtual Pi its board core's own time.
	Stamp mono.Clock
	// Kernel is told around the thread's socket writes (nil: not metered).
	Kernel kernelop.Meter
	// Look, with a Pacer, is the board's time as the simulator looks at it to
	// play the core's spin: read on the owner thread it is not the owner's
	// clock read, which the board would be charged for (nil: Clock).
	Look mono.Clock
	// Hold, with a Pacer, runs a wait of the owner thread for this thread with
	// the board's time held (the virtual Pi's clock): see catchUp. nil: the
	// owner never waits for it.
	Hold func(wait func())

	ports       []*Port
	ownerKernel kernelop.Meter // the owner's Kernel, for its wakes
	wakeFd      int
	// state says who may consume the rings: the thread (dtRunning), nobody
	// while it parks (dtParked), or the owner writing an isolated frame
	// (dtOwner, isolated.go).
	state atomic.Int32
	// ownerAt is when the owner last wrote an isolated frame (owner thread).
	ownerAt int64
	stop    atomic.Bool
	// spinUntil is, with a Pacer, the board time until which the board's core
	// spins after its last batch: a wake before it is the simulator's.
	spinUntil atomic.Int64
	boardWake atomic.Bool // the owner woke the board's core from its park
	done      chan struct{}
	stats     deliveryStats
}

// Pacer plays the delivery thread's board core on the virtual Pi: what the
// thread's own work costs on the board, so that its throughput is the board's
// and not the host's.
type Pacer interface {
	// Busy is how long (board ns) the board's core is still busy with the
	// previous batch: a new batch begins only once it is 0.
	Busy() int64
	// Begin starts a batch of writes whose oldest frame entered its ring at
	// readyNs (board time): on an idle core the batch begins then, not when the
	// host got round to running the thread.
	Begin(readyNs int64)
	// End charges the batch of frames writes from the thread's own CPU time
	// since Begin, its host run delay left out.
	End(frames int)
	// Woken charges the board's wake-up of a parked thread: the next batch
	// begins no earlier than that after readyNs, when its frame was ready.
	Woken(readyNs int64)
}

// DeliveryStats counts the delivery thread's work.
type DeliveryStats struct {
	Wakes uint64 // times the owner woke it from its park
	// SpinWakes are wakes of the simulator's thread while the board's core was
	// still spinning: on the board nobody is woken (with a Pacer only).
	SpinWakes uint64
	Parks     uint64 // times it parked
	Batches   uint64 // passes over the rings that wrote frames
	Frames    uint64 // records written
	// Isolated are records the owner wrote itself while the thread was
	// parked (isolated.go), not in Frames.
	Isolated uint64
	// CatchUps are the owner's waits for a late simulator thread (catchUp;
	// with a Pacer only).
	CatchUps uint64
}

type deliveryStats struct {
	wakes, spinWakes, parks, batches, frames, catchUps, isolated atomic.Uint64
}

// Stats returns the counts so far. Safe from any goroutine.
func (d *Delivery) Stats() DeliveryStats {
	return DeliveryStats{Wakes: d.stats.wakes.Load(), SpinWakes: d.stats.spinWakes.Load(), Parks: d.stats.parks.Load(),
		Batches: d.stats.batches.Load(), Frames: d.stats.frames.Load(), CatchUps: d.stats.catchUps.Load(),
		Isolated: d.stats.isolated.Load()}
}

// start starts the thread for ports and returns once its Setup has run.
func (d *Delivery) start(ports []*Port) error {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("delivery thread: eventfd: %w", err)
	}
	d.wakeFd, d.ports, d.done = fd, ports, make(chan struct{})
	d.stop.Store(false)
	for _, p := range ports {
		p.dt = d
	}
	setup := make(chan error, 1)
	go d.run(setup)
	if err := <-setup; err != nil {
		<-d.done
		unix.Close(fd)
		for _, p := range ports {
			p.dt = nil
		}
		return err
	}
	return nil
}

// halt stops the thread and waits for it; what is left in the rings is the
// owner's to write (drain.go).
func (d *Delivery) halt() {
	if d.stop.Swap(true) {
		return
	}
	var one = [8]byte{1}
	unix.Write(d.wakeFd, one[:])
	<-d.done
	unix.Close(d.wakeFd)
	for _, p := range d.ports {
		p.dt = nil
	}
}

// wake wakes the thread if it is parked (owner thread, after a drain).
func (d *Delivery) wake() {
	if !d.state.CompareAndSwap(dtParked, dtRunning) {
		return
	}
	var one = [8]byte{1}
	if d.spinning() {
		// The board's core is still spinning: it finds the frames itself. The
		// wake is the simulator's: metered as such, charged to nobody.
		d.stats.spinWakes.Add(1)
		k := meter{d.ownerKernel}
		k.enter(kernelop.SimOnly)
		rawsys.Write(d.wakeFd, one[:])
		k.exit(kernelop.SimOnly)
		return
	}
	d.stats.wakes.Add(1)
	d.boardWake.Store(true)
	k := meter{d.ownerKernel}
	k.enter(kernelop.Wake)
	rawsys.Write(d.wakeFd, one[:]) // an eventfd write blocks only at a count of 2^64-2
	k.exit(kernelop.Wake)
}

// spinning reports, with a Pacer, whether the board's core is still in its spin
// after its last batch (the simulator's look: Look, charged to nobody).
func (d *Delivery) spinning() bool {
	if d.Pacer == nil {
		return false
	}
	look := d.Look
	if look == nil {
		look = d.Clock
	}
	return look.Now() < d.spinUntil.Load()
}

// catchUpLimit bounds, in host time, the owner's wait in catchUp.
const catchUpLimit = int64(50_000_000)

// catchUp is the virtual Pi's answer to a full ring (owner thread, in a drain):
// where the board's delivery core would be taking frames from it now (not busy
// with a batch, and awake or still spinning), the ring is full only because the
// simulator's thread that plays that core is late on the host. The owner then
// waits for it with the board's time held, which the board does not see, until
// the thread has taken a frame (or its core became busy, or catchUpLimit of
// host time passed). It returns whether it waited. Without a Pacer and Hold (a
// real core) it never waits: the ring is as full as it looks.
func (d *Delivery) catchUp(r *rxRing) bool {
	if d.Pacer == nil || d.Hold == nil || r.waiting() == 0 || d.Pacer.Busy() > 0 {
		return false // nothing it could take yet, or the board's core is busy
	}
	if d.parked() {
		if !d.spinning() {
			return false // the board's core parked too: woken after the drain
		}
		d.wake() // the simulator's wake: the board's core is spinning
	}
	d.Hold(func() {
		limit := mono.Now() + catchUpLimit
		for r.full() && d.Pacer.Busy() == 0 && !d.stop.Load() && mono.Now() < limit {
			rawsys.Yield()
		}
	})
	d.stats.catchUps.Add(1)
	return true
}

// pacerStep is the longest the simulator's delivery thread sleeps at once while
// the board's core is busy (host ns).
const pacerStep = 20_000

func (d *Delivery) run(setup chan<- error) {
	defer close(d.done)
	runtime.LockOSThread() // never unlocked: the thread may carry real-time settings
	if d.Setup != nil {
		if err := d.Setup(); err != nil {
			setup <- err
			return
		}
	}
	setup <- nil
	spin := d.SpinNs
	if d.Pacer != nil {
		spin = 0 // played in the board's time (spinUntil)
		// Its waits for the board's core are short and must end on time: the
		// default timer slack (50 µs) would idle the core a frame's time per
		// batch at 1 Mbit/s.
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	}
	last := d.Clock.Now()
	for !d.stop.Load() {
		switch n, busy := d.step(); {
		case busy > 0:
			// The board's core is still on the last batch: the simulator's
			// thread sleeps the rest of it, in steps of at most pacerStep, as
			// the board's time leaps ahead of the host's when the owner's
			// running is charged.
			ts := unix.NsecToTimespec(min(busy, pacerStep))
			unix.Nanosleep(&ts, nil)
		case n > 0:
			if spin > 0 {
				last = d.Clock.Now()
			}
		case spin > 0 && d.Clock.Now()-last < spin:
		default:
			d.park()
			if spin > 0 {
				last = d.Clock.Now()
			}
		}
	}
}

// step writes what the rings hold, as one batch, unless the Pacer says the
// board's core is busy (busy > 0). It returns the records written.
func (d *Delivery) step() (n int, busy int64) {
	if !d.waiting() {
		return 0, 0
	}
	if d.Pacer != nil {
		ready := d.oldest()
		if d.boardWake.Swap(false) {
			d.Pacer.Woken(ready)
		}
		if busy := d.Pacer.Busy(); busy > 0 {
			return 0, busy
		}
		d.Pacer.Begin(ready)
	}
	k := meter{d.Kernel}
	stamp := d.Stamp
	if stamp == nil {
		stamp = d.Clock
	}
	for _, p := range d.ports {
		n += p.writeOut(k, stamp)
	}
	if d.Pacer != nil {
		d.Pacer.End(n)
		d.spinUntil.Store(d.Clock.Now() + d.Pacer.Busy() + d.SpinNs)
	}
	d.stats.batches.Add(1)
	d.stats.frames.Add(uint64(n))
	return n, 0
}

// oldest is when the oldest published record entered its ring (board time).
func (d *Delivery) oldest() int64 {
	t := int64(math.MaxInt64)
	for _, p := range d.ports {
		if e := p.ring.peek(); e != nil {
			t = min(t, e.pushNs)
		}
	}
	return t
}

// waiting reports whether any ring holds published records.
func (d *Delivery) waiting() bool {
	for _, p := range d.ports {
		if p.ring.waiting() > 0 {
			return true
		}
	}
	return false
}

// Who may consume the rings (Delivery.state).
const (
	dtRunning int32 = iota // the thread
	dtParked               // nobody: the thread is parked, or on its way to
	dtOwner                // the owner, writing an isolated frame (isolated.go)
)

// parked reports whether the thread is parked (or on its way to), its rings
// left alone.
func (d *Delivery) parked() bool { return d.state.Load() == dtParked }

// park blocks until the owner wakes the thread. It says it is parked before it
// looks at the rings a last time, and the owner publishes before it looks at
// the state, so a frame published meanwhile is never left behind: the thread
// takes it back unless the owner is writing it (the ring's only record: the
// owner leaves nothing, and wakes the thread for what comes later).
func (d *Delivery) park() {
	d.state.Store(dtParked)
	if (d.waiting() || d.stop.Load()) && d.state.CompareAndSwap(dtParked, dtRunning) {
		return
	}
	d.stats.parks.Add(1)
	var b [8]byte
	for {
		_, err := unix.Read(d.wakeFd, b[:])
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	d.state.Store(dtRunning) // the owner's wake set it already; halt's did not
}

// writeOut writes what p's ring holds to p's socket (delivery thread) and
// returns how many records it wrote. A write error is counted here and handed to
// the owner thread, which classifies it (deliveryErr).
func (p *Port) writeOut(k meter, clk mono.Clock) int {
	n := 0
	for ; ; n++ {
		e := p.ring.peek()
		if e == nil {
			return n
		}
		if err := p.write(e, k, clk); err != nil {
			p.lateWriteErr(err)
		}
		p.ring.pop()
	}
}

// lateWriteErr counts a write error of the delivery thread and keeps the first
// one for the owner (its own function: err escapes only on this path).
func (p *Port) lateWriteErr(err error) {
	p.M.SocketWriteErrs.Inc()
	p.lateErr.CompareAndSwap(nil, &err)
}

// deliveryErr classifies a socket write error the delivery thread met (owner
// thread): an interface down or gone, or a failure that ends the port.
func (p *Port) deliveryErr() {
	if e := p.lateErr.Swap(nil); e != nil {
		p.classifyWriteErr(*e)
	}
}
