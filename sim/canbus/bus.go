// Package canbus is the virtual Pi's CAN bus: a real-time discrete-event model of
// one classical CAN bus (ISO 11898-1) that paces frames at the bitrate with their
// exact stuffed length, arbitrates bitwise between nodes, ACKs, signals errors so
// nodes can keep their error counters, and injects faults. Peers (periodic, answer,
// load) are nodes built from a PeerSpec.
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
package canbus

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/sim/clock"
)

// ErrorKind is the error a node detects (ISO 11898-1 §10.9).
type ErrorKind uint8

const (
	BitError   ErrorKind = iota + 1 // transmitted bit differs from the bus
	StuffError                      // six equal bits where stuffing applies
	FormError                       // fixed-form bit field has an illegal bit
	AckError                        // transmitter saw no dominant ACK slot
	// DominantBits: eight more dominant bits after an error flag (stuck bus). ISO
	// rule: every transmitter adds 8 to TEC, every receiver 8 to REC.
	DominantBits
)

var errorNames = [...]string{"none", "bit", "stuff", "form", "ack", "dominant"}

func (e ErrorKind) String() string {
	if int(e) < len(errorNames) {
		return errorNames[e]
	}
	return "unknown"
}

// Node is a CAN controller on the bus. All methods run with the world lock held and
// must not block. Times are the bus's clock (Clock: sim/clock's virtual ns; host
// CLOCK_MONOTONIC for a bus made with New).
type Node interface {
	// Pending is asked at each start of frame: the frame the node would transmit now.
	// It has no side effects. A node that answers ok takes part in arbitration and
	// then gets TxStart (it won) or TxLost (it lost).
	Pending(at int64) (f can.Frame, ok bool)
	// TxStart: the frame from Pending won arbitration and is on the wire. One of
	// TxDone or TxError follows.
	TxStart(at int64)
	// TxLost: the frame from Pending lost arbitration; it may compete at the next SOF.
	TxLost(at int64)
	// TxDone: the frame was acknowledged and completed (end of EOF).
	TxDone(at int64)
	// TxError: the node's transmission failed; an error frame follows.
	TxError(e ErrorKind, at int64)
	// Receive: a valid frame the node did not send (end of EOF).
	Receive(f can.Frame, at int64)
	// RxError: the node, as a receiver, detected an error (or saw an error frame).
	RxError(e ErrorKind, at int64)
	// Acks reports whether the node drives the ACK slot (not listen-only, not
	// bus-off, configured for this bitrate).
	Acks(at int64) bool
}

// Garbler is implemented by nodes that can be out of step with the bus (e.g. an
// MCP2515 whose CNF registers give another bitrate): a frame such a node wins is
// destroyed by a bit error.
type Garbler interface {
	Garbled(at int64) bool
}

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

type candidate struct {
	f  can.Frame
	ok bool
}

type attached struct {
	n Node
	g Garbler // nil if n is not a Garbler
}

// onWire is the frame on the bus.
type onWire struct {
	f   can.Frame
	tx  int // transmitting node, -1 if none
	sof int64
	len int // stuffed SOF..CRC bits
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

// Kick tells the bus a node has a frame to send from time at on. Lock held.
func (b *Bus) Kick(at int64) {
	if b.bitrate == 0 || b.stuck || b.busy || b.sof.Armed() {
		return
	}
	if at < b.idleAt {
		at = b.idleAt
	}
	b.Schedule(b.sof, at)
}

// RecessiveSequences counts the sequences of 11 consecutive recessive bits seen on
// the bus up to at (idle time and the ACK-delimiter+EOF+intermission after each
// frame both count). Bus-off recovery needs 128 of them. Lock held.
func (b *Bus) RecessiveSequences(at int64) int64 {
	n := b.seq
	if b.recessive && b.bitrate != 0 && at > b.recSince {
		n += (at - b.recSince) / b.Bits(11)
	}
	return n
}

// NextRecessiveSequence is the earliest time RecessiveSequences can reach n: exact
// while the bus stays recessive, a lower bound while it is dominant. Lock held.
func (b *Bus) NextRecessiveSequence(n int64) int64 {
	from := b.now
	if b.recessive {
		from = b.recSince
	}
	t := from + (n-b.seq)*b.Bits(11)
	if t < b.now {
		t = b.now
	}
	return t
}

func (b *Bus) goDominant(at int64) {
	if b.recessive {
		b.seq = b.RecessiveSequences(at)
		b.recessive = false
	}
}

func (b *Bus) goRecessive(at int64) {
	if !b.recessive {
		b.recessive = true
		b.recSince = at
	}
}

func (b *Bus) emit(ev Event) {
	if b.observe != nil {
		b.observe(ev)
	}
}

// poke wakes Run early (lock held).
func (b *Bus) poke() {
	if b.wakeFd >= 0 {
		var one = [8]byte{1}
		unix.Write(b.wakeFd, one[:])
	}
}

// startOfFrame runs arbitration among the nodes with a pending frame.
func (b *Bus) startOfFrame(at int64) {
	if b.stuck {
		return
	}
	win := -1
	var key uint32
	for i := range b.nodes {
		f, ok := b.nodes[i].n.Pending(at)
		b.cands[i] = candidate{f: f, ok: ok}
		if !ok {
			continue
		}
		if k := arbKey(f); win < 0 || k < key {
			win, key = i, k
		}
	}
	if win < 0 {
		b.busy = false
		return
	}
	b.busy = true
	b.goDominant(at)
	for i := range b.cands {
		if b.cands[i].ok && i != win {
			b.stats.ArbLosses++
			b.nodes[i].n.TxLost(at)
		}
	}
	f := b.cands[win].f
	b.cur.f, b.cur.tx, b.cur.sof, b.cur.len = f, win, at, stuffedLen(f)
	b.stats.LastSOF = at
	b.nodes[win].n.TxStart(at)
	b.emit(Event{Kind: EvSOF, At: at, Frame: f, From: win, Bits: b.cur.len + tailBits})
	garbled := b.nodes[win].g != nil && b.nodes[win].g.Garbled(at)
	if garbled || (b.errLeft > 0 && at >= b.errFrom) {
		if !garbled {
			b.errLeft--
		}
		// The error hits after the control field (unstuffed position).
		pos := 19
		if f.IsExtended {
			pos = 39
		}
		b.errKind = BitError
		b.Schedule(b.errT, at+b.Bits(pos))
		return
	}
	b.idleAt = at + b.Bits(b.cur.len+tailBits)
	b.Schedule(b.ack, at+b.Bits(b.cur.len+ackSlotEnd))
}

// ackSlot: at the end of the ACK slot the transmitter knows whether anyone ACKed.
func (b *Bus) ackSlot(at int64) {
	acked := false
	if !(at >= b.noAckFrom && at < b.noAckTo) {
		for i := range b.nodes {
			if i != b.cur.tx && b.nodes[i].n.Acks(at) {
				acked = true
				break
			}
		}
	}
	if acked {
		b.goRecessive(at) // ACK delimiter + EOF + intermission: 11 recessive bits
		b.Schedule(b.eof, b.cur.sof+b.Bits(b.cur.len+eofEnd))
		return
	}
	b.errorFrame(AckError, FormError, at)
}

func (b *Bus) injectedError(at int64) { b.errorFrame(b.errKind, b.errKind, at) }

// errorFrame: the transmitter gets txErr, every other node rxErr; an error flag (6),
// delimiter (8) and intermission (3) follow.
func (b *Bus) errorFrame(txErr, rxErr ErrorKind, at int64) {
	tx := b.cur.tx
	b.stats.Errors++
	b.nodes[tx].n.TxError(txErr, at)
	for i := range b.nodes {
		if i != tx {
			b.nodes[i].n.RxError(rxErr, at)
		}
	}
	b.emit(Event{Kind: EvError, At: at, Frame: b.cur.f, From: tx, Err: txErr})
	b.finish(at + b.Bits(errorBits+ifsBits))
	b.goRecessive(at + b.Bits(6))
}

// finish ends the current frame: the bus is busy until idle, then the next SOF.
func (b *Bus) finish(idle int64) {
	b.stats.BusyNs += idle - b.cur.sof
	b.idleAt = idle
	b.cur.tx = -1
	b.Schedule(b.sof, idle)
}

// endOfFrame delivers the frame: receivers first, then the transmitter's TxDone.
func (b *Bus) endOfFrame(at int64) {
	tx, f := b.cur.tx, b.cur.f
	for i := range b.nodes {
		if i != tx {
			b.nodes[i].n.Receive(f, at)
		}
	}
	b.nodes[tx].n.TxDone(at)
	b.stats.Frames++
	b.stats.LastFrameE = at
	b.emit(Event{Kind: EvFrame, At: at, Frame: f, From: tx, Bits: b.cur.len + tailBits})
	b.finish(b.cur.sof + b.Bits(b.cur.len+tailBits))
}

// Run owns an OS thread with a timer slack of 1 ns and sleeps in ppoll(2) (an
// hrtimer: here ~20–60 µs late at the median) until the next event: Go's timers woke
// it about a millisecond late. It does not spin: on a 2-core machine a spinning bus
// thread took the CPU the driver needed (measured with the bench package at 100 %
// load, 1 Mbit/s: 84–143 frames lost in 4 s with a 60 µs spin, 2–40 without). A
// driver that reads the chip advances the bus itself (AdvanceTo on every SPI access
// and INT level read), so the thread's lateness only delays edge events.
//
// On a clock with a bound CPU thread (sim/clock) the thread moves time only while
// that CPU thread waits for the hardware; while it runs, or is kept off its CPU,
// the thread takes no lock and looks again after clock.Recheck or at the next
// event, and at least every clock.IdleLook.

// defaultTimerSlack is Linux's default timer slack for a normal thread (ns).
const defaultTimerSlack = 50_000

// Run advances the bus on its clock until ctx ends or Close is called: it processes
// events as they fall due, sleeping until the next one, and is woken early when a
// node has something to send.
func (b *Bus) Run(ctx context.Context) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err == nil {
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, defaultTimerSlack, 0, 0, 0)
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		panic(fmt.Sprintf("canbus: eventfd for the bus thread: %v", err))
	}
	b.mu.Lock()
	b.wakeFd = fd
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.wakeFd = -1
		b.mu.Unlock()
		unix.Close(fd)
	}()
	stop := context.AfterFunc(ctx, b.Close)
	defer stop()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	var drain [8]byte
	wait := func(ns int64) {
		var ts *unix.Timespec
		if ns >= 0 {
			t := unix.NsecToTimespec(ns)
			ts = &t
		}
		unix.Ppoll(pfd, ts, nil)
		unix.Read(fd, drain[:])
	}
	for {
		if b.closed.Load() {
			return
		}
		if b.clk.CPURunning() {
			// The CPU thread is running (or runnable but kept off its CPU by
			// the host): its own accesses move the bus's time, and the bus
			// thread does not, so a host stall of the CPU thread is no bus
			// time (sim/clock). No lock is taken. Look again after
			// clock.Recheck, or at the next event if that is later: each
			// wake-up of this thread can land on the CPU thread's core and
			// preempt it (at 10 µs rechecks, measured: the CPU thread touched
			// a register only every ~26 µs for stretches, and lost frames).
			wait(min(max(clock.Recheck, b.head.Load()-b.clk.Now()), clock.IdleLook))
			continue
		}
		b.mu.Lock()
		held := b.holds > 0 // Release pokes
		if !held {
			if t := b.q.peek(); t != nil && t.at <= b.clk.Now() {
				b.AdvanceTo(b.clk.BusTime(t.at))
			} else if !b.clk.Bound() {
				b.AdvanceTo(b.clk.Now())
			}
		}
		b.Unlock()
		next := b.head.Load()
		have := !held && next != math.MaxInt64
		// Bound, look at the CPU thread at least every IdleLook, so that a
		// thread idle in epoll_wait is seen waiting (sim/clock).
		switch d := next - b.clk.Now(); {
		case b.clk.Bound() && (!have || d > clock.IdleLook):
			wait(clock.IdleLook)
		case !have:
			wait(-1)
		case d > 0:
			wait(d)
		}
	}
}

// Close stops Run. It takes the lock.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed.Swap(true) {
		b.poke()
	}
}
