// Package canbus is the virtual Pi's CAN bus: a real-time discrete-event model of
// one classical CAN bus (ISO 11898-1) that paces frames at the bitrate with their
// exact stuffed length, arbitrates bitwise between nodes, ACKs, signals errors so
// nodes can keep their error counters, and injects faults. Peers (periodic, answer,
// load, errors) are nodes built from a PeerSpec.
//
// One world lock: the bus's mutex protects the bus and every attached node's state.
// Node callbacks and timers run with it held. The bus advances lazily (AdvanceTo,
// called by the chip model on every SPI access with the access's wire time) and from
// its Run goroutine, so events are processed in time order whatever the goroutine
// scheduling (time never goes back: an access evaluated after the goroutine passed its
// wire time sees the later state; holding the bus during a transaction avoids that).
// While a node holds the bus (Hold, e.g. the chip while its chip select
// is active and bytes are shifted lazily) the goroutine does not advance it: only the
// holder's wire times do.
//
// Files:
//   - bus.go: the Bus, its world lock, its time (AdvanceTo, Schedule, Hold),
//     observer events and counters;
//   - node.go: what a node on the bus implements (Node, Garbler) and ErrorKind;
//   - frame.go: the frame state machine (start of frame and arbitration, ACK
//     slot, end of frame, error frames);
//   - bits.go: the frame's wire layout, bit stuffing, CRC and arbitration order;
//   - recessive.go: recessive-sequence counting for bus-off recovery;
//   - fault.go: fault injection (errors, missing ACKs, a stuck-dominant bus);
//   - timer.go: the discrete-event queue;
//   - runner.go: Run, the host thread that advances the bus in real time, and Close;
//   - peer.go: the simulated peers (PeerSpec, Peer); payload.go: their data;
//     peeropts.go: data lengths per ID, remote frames, stuffing payloads, the
//     errors peer and Seq; stuffing.go: data with the fewest or most stuff bits.
package canbus

import (
	"math"
	"sync"
	"sync/atomic"

	"go.einride.tech/can"

	"cand/sim/clock"
)

// EventKind classifies an Event.
type EventKind uint8

const (
	EvSOF     EventKind = iota + 1 // a frame started; Frame/From = the arbitration winner
	EvFrame                        // a frame completed and was delivered
	EvError                        // an error frame started (Err, From = transmitter or -1)
	EvStuck                        // the bus went stuck dominant
	EvRelease                      // the stuck-dominant fault ended
)

// Event is what an observer (OnEvent) sees: for tests and tracing.
type Event struct {
	Kind  EventKind
	At    int64
	Frame can.Frame
	From  int // index of the transmitting node in attach order, -1 if none
	Bits  int // EvSOF/EvFrame: the frame's FrameBits
	Err   ErrorKind
}

// Stats are the bus's counters.
type Stats struct {
	Frames     uint64 // frames completed and delivered
	Errors     uint64 // error frames (ACK, injected, garbled, stuck)
	ArbLosses  uint64 // TxLost calls
	BusyNs     int64  // time the bus carried frames (SOF to end of intermission) or error frames
	LastSOF    int64
	LastFrameE int64 // end of EOF of the last delivered frame
}

type attached struct {
	n Node
	g Garbler // nil if n is not a Garbler
}

// Bus is one CAN bus. The zero value is not usable; use New.
type Bus struct {
	mu      sync.Mutex
	bitrate uint32
	nodes   []attached
	cands   []candidate
	q       timerHeap
	now     int64
	holds   int
	observe func(Event)
	stats   Stats

	// the wire
	busy                bool  // from SOF until an SOF timer finds nobody pending
	idleAt              int64 // end of the intermission after the current/last frame or error frame
	cur                 onWire
	sof, ack, eof, errT *Timer
	errKind             ErrorKind

	// recessive-sequence counting (bus-off recovery needs 128 × 11 recessive bits)
	recessive bool
	recSince  int64
	seq       int64

	// faults
	errLeft            int
	errFrom            int64
	noAckFrom, noAckTo int64
	stuck              bool
	stuckOn, stuckOff  *Timer
	stuckTick          *Timer
	stuckUntil         int64

	clk *clock.Clock

	// wakeFd is the Run thread's eventfd (-1 while Run is not running).
	wakeFd int
	flush  func()       // AfterUnlock
	closed atomic.Bool  // Close was called; read by Run without the lock
	head   atomic.Int64 // the earliest event's time (math.MaxInt64: none), for the same
}

// New returns a bus at bitrate bit/s on host time. bitrate 0 is a bus without a
// wire (nothing is ever sent): a private world for a chip model used alone.
func New(bitrate uint32) *Bus { return NewOn(bitrate, clock.New()) }

// NewOn returns a bus at bitrate bit/s whose Run thread keeps clk's time (the
// virtual Pi's clock, shared with its SoC).
func NewOn(bitrate uint32, clk *clock.Clock) *Bus {
	b := &Bus{
		clk:       clk,
		bitrate:   bitrate,
		recessive: true,
		cur:       onWire{tx: -1},
		wakeFd:    -1,
	}
	b.head.Store(math.MaxInt64)
	b.sof = NewTimer(b.startOfFrame)
	b.ack = NewTimer(b.ackSlot)
	b.eof = NewTimer(b.endOfFrame)
	b.errT = NewTimer(b.injectedError)
	b.stuckOn = NewTimer(b.stuckStart)
	b.stuckOff = NewTimer(b.stuckEnd)
	b.stuckTick = NewTimer(b.stuckBits)
	b.q.h = make([]*Timer, 0, 32)
	return b
}

// Clock is the time base the bus runs on.
func (b *Bus) Clock() *clock.Clock { return b.clk }

// Bitrate is the bus's bitrate in bit/s.
func (b *Bus) Bitrate() uint32 { return b.bitrate }

// Lock takes the world lock.
func (b *Bus) Lock() { b.mu.Lock() }

// Unlock releases the world lock.
func (b *Bus) Unlock() {
	flush := b.flush
	b.flush = nil
	b.mu.Unlock()
	if flush != nil {
		flush()
	}
}

// AfterUnlock makes fn run once, right after the world lock is next released
// (by Unlock or the Run thread), outside it: for work that wakes another thread
// which will want the lock (an edge event for the driver). Lock held; one fn
// at a time (a later call replaces an earlier one).
func (b *Bus) AfterUnlock(fn func()) { b.flush = fn }

// Bits returns the duration of n bit times in ns (0 on a bus without a wire).
func (b *Bus) Bits(n int) int64 {
	if b.bitrate == 0 {
		return 0
	}
	return int64(n) * 1_000_000_000 / int64(b.bitrate)
}

// Attach connects n to the bus. It takes the lock.
func (b *Bus) Attach(n Node) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g, _ := n.(Garbler)
	b.nodes = append(b.nodes, attached{n: n, g: g})
	b.cands = append(b.cands, candidate{})
}

// OnEvent registers an observer called (lock held, must not block) on every bus event.
func (b *Bus) OnEvent(fn func(Event)) {
	b.mu.Lock()
	b.observe = fn
	b.mu.Unlock()
}

// Stats returns the bus's counters. It takes the lock.
func (b *Bus) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Now is the time the bus has been advanced to. Lock held.
func (b *Bus) Now() int64 { return b.now }

// Schedule arms t at at (clamped to Now). Lock held.
func (b *Bus) Schedule(t *Timer, at int64) {
	if at < b.now {
		at = b.now
	}
	b.q.arm(t, at)
	b.syncHead()
	if b.q.peek() == t {
		b.poke() // the Run goroutine may be sleeping past it
	}
}

// Cancel disarms t. Lock held.
func (b *Bus) Cancel(t *Timer) {
	b.q.cancel(t)
	b.syncHead()
}

// syncHead publishes the earliest event's time for Run's lock-free look. Lock held.
func (b *Bus) syncHead() {
	if t := b.q.peek(); t != nil {
		b.head.Store(t.at)
	} else {
		b.head.Store(math.MaxInt64)
	}
}

// Hold stops the Run goroutine from advancing the bus until the matching Release:
// only AdvanceTo calls move time meanwhile. Lock held.
func (b *Bus) Hold() { b.holds++ }

// Release ends a Hold. Lock held.
func (b *Bus) Release() {
	if b.holds > 0 {
		b.holds--
	}
	if b.holds == 0 {
		b.poke()
	}
}

// AdvanceTo processes every event due at or before now, in time order, and moves the
// bus's time to now (time never goes back: an earlier now only processes nothing).
// Lock held.
func (b *Bus) AdvanceTo(now int64) {
	for {
		t := b.q.peek()
		if t == nil || t.at > now {
			break
		}
		b.q.cancel(t)
		b.syncHead()
		if t.at > b.now {
			b.now = t.at
		}
		t.fn(t.at)
	}
	if now > b.now {
		b.now = now
	}
}

func (b *Bus) emit(ev Event) {
	if b.observe != nil {
		b.observe(ev)
	}
}
