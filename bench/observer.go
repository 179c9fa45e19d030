package bench

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/daemon"
	"cand/sim"
	"cand/sim/mcpchip"
)

// Observer watches a scenario's measured window. RunScenario starts every
// observer in one loop when the window opens (Begin), stops them when the
// offered frames end (Stop), and, once the frames still on their way have
// drained and before the daemon stops, has each write its figures (End), in
// the order listed.
type Observer interface {
	Begin()
	Stop()
	End(res *ScenarioResult)
}

// LossWatcher is an Observer that the reader also tells, between its reads of
// the sockets, whether the window has lost a frame yet and how (why:
// rx_overflow or sequence_gap).
type LossWatcher interface {
	Observer
	Loss(lost bool, why string)
}

// Watched is what an observer added to a scenario (Scenario.Observe) is given
// of the run: the virtual Pi before the daemon starts, the daemon's frame-path
// threads from Begin on, the streams' missing frames at End.
type Watched struct {
	Pi      *sim.Pi
	Bitrate uint32
	Threads daemon.Threads
	streams []*stream
}

// Missing is the frame a stream found missing first.
type Missing struct {
	// Nth is its counter: the number of frames its sender completed before it.
	Nth uint64
	// Sends reports whether the stream's sender sends id; Seq reads a frame's
	// counter modulo mod (0: whole; ok false: none).
	Sends func(id uint32, ext bool) bool
	Seq   func(f can.Frame) (n, mod uint64, ok bool)
}

// Missing lists the first missing frame of every stream that lost one: its
// first gap, or, without one, the frame expected next if the window's last
// frames never arrived.
func (w *Watched) Missing() []Missing {
	var out []Missing
	for _, s := range w.streams {
		if s.filtered {
			continue
		}
		want := s.FirstGap
		if s.Gaps == 0 {
			if s.Next >= s.End {
				continue
			}
			want = s.Next
		}
		out = append(out, Missing{Nth: want, Sends: s.sends, Seq: s.seq})
	}
	return out
}

// The built-in observers: window (pipeline.go), portsWindow (traffic.go),
// arbWatch, busyWatch and heartbeatWatch below.

func (w *window) Begin()                  { w.begin() }
func (w *window) Stop()                   { w.stop() }
func (w *window) End(res *ScenarioResult) { w.end() }

func (w *portsWindow) Begin()                  { w.begin() }
func (w *portsWindow) Stop()                   {}
func (w *portsWindow) End(res *ScenarioResult) { w.d = w.deltas() }

// arbWatch counts the first controller's lost arbitrations (its TX frames that
// lost the bus to another node's) over the window.
type arbWatch struct {
	chip *mcpchip.Chip
	arb0 uint64
}

func (a *arbWatch) Begin() { a.arb0 = a.chip.Stats().ArbLost }
func (a *arbWatch) Stop()  {}
func (a *arbWatch) End(res *ScenarioResult) {
	res.TXArbLost = a.chip.Stats().ArbLost - a.arb0
}

// busyWatch measures the owner thread's busy fraction over the window: its CPU
// time, read from the thread's CPU-time clock (clock_gettime with the clock ID
// the kernel makes for a thread: MAKE_THREAD_CPUCLOCK in
// include/linux/posix-timers.h, ((~tid) << 3) | CPUCLOCK_PERTHREAD_MASK |
// CPUCLOCK_SCHED; nanosecond-exact, unlike utime+stime in
// /proc/self/task/TID/stat), over the wall time.
type busyWatch struct {
	tid   int // the owner thread (Daemon.Threads)
	cpu0  time.Duration
	wall0 time.Time
	busy  float64 // -1 when not measured
	err   error
}

// newBusyWatch watches the owner thread of h's daemon, once it has made a loop
// turn since the daemon was ready, for up to 2 s: the window then opens on a
// running loop.
func newBusyWatch(h *harness) *busyWatch {
	b := &busyWatch{tid: h.d.Threads().Owner}
	if b.tid == 0 {
		b.err = fmt.Errorf("bench: the daemon reported no owner thread")
		return b
	}
	if b.err = ownerTurn(h.d.Owner, 2*time.Second); b.err != nil {
		b.tid = 0
	}
	return b
}

// ownerTurn waits up to timeout for the owner's next loop turn.
func ownerTurn(o *bridge.Owner, timeout time.Duration) error {
	t0 := o.LoopStats().Turns
	deadline := time.Now().Add(timeout)
	for o.LoopStats().Turns == t0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the owner thread made no loop turn within %v", timeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// threadCPU is thread tid's CPU time so far.
func threadCPU(tid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^tid<<3|6), &ts); err != nil {
		return 0, fmt.Errorf("bench: CPU clock of thread %d: %w", tid, err)
	}
	return time.Duration(ts.Nano()), nil
}

func (b *busyWatch) Begin() {
	b.busy = -1
	if b.tid == 0 {
		return
	}
	b.cpu0, b.err = threadCPU(b.tid)
	b.wall0 = time.Now()
}

func (b *busyWatch) Stop() {
	if b.tid == 0 || b.err != nil {
		return
	}
	cpu, err := threadCPU(b.tid)
	if err != nil {
		b.err = err
		return
	}
	if wall := time.Since(b.wall0); wall > 0 {
		b.busy = float64(cpu-b.cpu0) / float64(wall)
	}
}

// End records the busy fraction, or why it is unknown.
func (b *busyWatch) End(res *ScenarioResult) {
	res.OwnerBusy = b.busy
	if b.err != nil {
		res.OwnerBusy, res.OwnerBusyError = -1, b.err.Error()
	}
}

// heartbeatEvery is how often heartbeatWatch samples the owner's heartbeat.
const heartbeatEvery = time.Millisecond

// heartbeatWatch samples the owner thread's heartbeat age (bridge.Owner.HeartbeatAge,
// host CLOCK_MONOTONIC: the time systemd's watchdog runs on) over the window,
// from a goroutine of its own, and keeps the oldest it saw. A sample is at most
// heartbeatEvery late, so an age it misses is at most that much older.
//
// On the virtual Pi the host's time is not the board's: the strict rule takes
// out of the board's time what the host did to the owner thread (run delay,
// its own stalls) and holds it while the owner waits for the simulator's own
// delivery thread, and charges cand's running at the board's speed. board (the
// board's time as its hardware reached it, Clock.Reached) gives the age the
// board saw: from the board's time at the sample before the one that first
// saw the beat, so it is never younger than the board's age. The host's age
// is kept beside it.
type heartbeatWatch struct {
	age     func() int64
	at      func() int64 // the last beat's host time
	board   func() int64 // the board's time (nil: the host's is the board's)
	stop    chan struct{}
	done    chan struct{}
	most    atomic.Int64 // in the board's time
	mostRaw atomic.Int64 // in the host's
	sampled bool
}

// beatLook carries what heartbeatWatch.sample needs from one sample to the next.
type beatLook struct {
	beat    int64 // the last beat's host time seen
	boardAt int64 // the board's time taken for it
	prev    int64 // the board's time at the previous sample
	started bool
}

// sample is one look at the heartbeat: its age in the board's time and in the
// host's.
func (h *heartbeatWatch) sample(l *beatLook) (age, raw int64) {
	raw = h.age()
	if h.board == nil {
		return raw, raw
	}
	now := h.board()
	switch at := h.at(); {
	case !l.started:
		// The beat came before the first sample: its board time is unknown,
		// taken as the host's age back from now.
		l.beat, l.boardAt, l.started = at, now-raw, true
	case at != l.beat:
		l.beat, l.boardAt = at, l.prev
	}
	l.prev = now
	return now - l.boardAt, raw
}

func (h *heartbeatWatch) Begin() {
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(h.done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		var l beatLook
		for {
			a, raw := h.sample(&l)
			if a > h.most.Load() {
				h.most.Store(a)
			}
			if raw > h.mostRaw.Load() {
				h.mostRaw.Store(raw)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
}

func (h *heartbeatWatch) Stop() {
	if h.stop == nil {
		return
	}
	close(h.stop)
	<-h.done
	h.stop, h.sampled = nil, true
}

// End records the oldest heartbeat age seen, in ms, in the board's time and in
// the host's.
func (h *heartbeatWatch) End(res *ScenarioResult) {
	if h.sampled {
		ms, raw := float64(h.most.Load())/1e6, float64(h.mostRaw.Load())/1e6
		res.HeartbeatMaxMs, res.HeartbeatHostMaxMs = &ms, &raw
	}
}

// deliveryWatch measures the delivery thread over the window on the host: its
// CPU time and its run delay (runnable, not running: the second field of
// /proc/thread-self/schedstat, proc(5)). On the virtual Pi a frame leaves the
// RX ring when that host thread writes it, so a run delay as long as the ring
// holds frames shows the host, not the board, filling the ring.
type deliveryWatch struct {
	tid       int // 0: no delivery thread
	stats     func() bridge.DeliveryStats
	core      *sim.DeliveryCore // the board's core it plays (nil: none)
	stats0    bridge.DeliveryStats
	charge0   sim.DeliveryCharge
	cpu0, rd0 int64
	cpu, rd   int64
	wall0     time.Time
	wall      time.Duration
	measured  bool
}

// newDeliveryWatch watches d's delivery thread, if it has one.
func newDeliveryWatch(d *daemon.Daemon) *deliveryWatch {
	w := &deliveryWatch{tid: d.Threads().Delivery}
	if dt := d.Owner.Delivery; dt != nil {
		w.stats = dt.Stats
		w.core, _ = dt.Pacer.(*sim.DeliveryCore)
	}
	return w
}

func (d *deliveryWatch) sample() (cpu, rd int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", d.tid))
	if err != nil {
		return 0, 0, false
	}
	if n, _ := fmt.Sscan(string(b), &cpu, &rd); n != 2 {
		return 0, 0, false
	}
	return cpu, rd, true
}

func (d *deliveryWatch) Begin() {
	if d.tid == 0 || d.stats == nil {
		return
	}
	d.stats0 = d.stats()
	if d.core != nil {
		d.charge0 = d.core.Charged()
	}
	d.cpu0, d.rd0, d.measured = d.sample()
	d.wall0 = time.Now()
}

func (d *deliveryWatch) Stop() {
	if !d.measured {
		return
	}
	cpu, rd, ok := d.sample()
	d.cpu, d.rd, d.wall, d.measured = cpu-d.cpu0, rd-d.rd0, time.Since(d.wall0), ok
}

// End records the thread's busy fraction and run delay (0 and -1: not measured).
func (d *deliveryWatch) End(res *ScenarioResult) {
	res.DeliveryBusy, res.DeliveryRunDelayMs = -1, -1
	if d.tid != 0 && d.stats != nil {
		s := d.stats()
		res.DeliveryCatchUps = s.CatchUps - d.stats0.CatchUps
		res.DeliveryWakes = s.Wakes - d.stats0.Wakes
		res.DeliveryIsolated = s.Isolated - d.stats0.Isolated
	}
	if d.core != nil {
		c, c0 := d.core.Charged(), d.charge0
		if n := float64(c.Frames - c0.Frames); n > 0 {
			res.DeliveryBoardUs = &PerFrameUs{User: float64(c.UserNs-c0.UserNs) / n / 1e3, Kernel: float64(c.KernelNs-c0.KernelNs) / n / 1e3,
				Noise: float64(c.NoiseNs-c0.NoiseNs) / n / 1e3}
		}
	}
	if d.measured && d.wall > 0 {
		res.DeliveryBusy = float64(d.cpu) / float64(d.wall)
		res.DeliveryRunDelayMs = float64(d.rd) / 1e6
	}
}
