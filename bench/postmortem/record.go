package postmortem

import (
	"runtime"
	"runtime/metrics"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bench"
	"cand/internal/mono"
	"cand/sim"
	"cand/sim/canbus"
	"cand/sim/clock"
	"cand/sim/clock/gaptrace"
)

const (
	// pmTraceGaps is how many looked-at gaps the clock keeps: several seconds at
	// the envelope's low loads, some tens of ms at full load, far more than the
	// ms between a loss and the reader seeing it.
	pmTraceGaps = 16384
	// pmTapFrames is how many frame ends the bus observer keeps (at full load on
	// 1 Mbit/s, 0-byte frames, some 0.2 s).
	pmTapFrames = 4096
	// pmGCSamples is how many changes of the GC cycle count the reader keeps.
	pmGCSamples = 64
)

// tapFrame is one frame that completed on the bus: its end, the index of the
// node that sent it (attach order) and how many frames that node had completed
// before it (its peer's counter).
type tapFrame struct {
	At   int64
	From int
	Nth  uint64
	F    can.Frame
	// IntLowAtStart: the INT line was low at the frame's start of frame
	// (the chip had a flag set already, so taking the frame made no falling
	// edge).
	IntLowAtStart bool
	// Host is the host time (CLOCK_MONOTONIC) the frame was delivered at and
	// Tid the thread that advanced the bus to it (the owner's register access,
	// or the bus thread).
	Host int64
	Tid  int
	// Late is how far the board's clock was past the frame's end when it was
	// delivered (the time the delivering thread advanced the bus to).
	Late int64
}

// busTap observes the bus (canbus.Bus.OnEvent, lock held): a ring of frame ends.
type busTap struct {
	recs [pmTapFrames]tapFrame
	n    uint64
	per  [16]uint64 // frames completed per sending node (index < 16)
	// intLow reads the INT line (the edge line's level: its own lock, no
	// system call; nil: not read); sofLow is it at the last start of frame.
	intLow func() bool
	sofLow bool
	now    func() int64 // the board's clock
}

func (t *busTap) event(ev canbus.Event) {
	if ev.Kind == canbus.EvSOF {
		t.sofLow = t.intLow != nil && t.intLow()
		return
	}
	if ev.Kind != canbus.EvFrame || ev.From < 0 || ev.From >= len(t.per) {
		return
	}
	late := int64(0)
	if t.now != nil {
		late = t.now() - ev.At
	}
	t.recs[t.n%pmTapFrames] = tapFrame{At: ev.At, From: ev.From, Nth: t.per[ev.From], F: ev.Frame, IntLowAtStart: t.sofLow,
		Host: mono.Now(), Tid: unix.Gettid(), Late: late}
	t.per[ev.From]++
	t.n++
}

// frames is the ring oldest first. Bus lock held.
func (t *busTap) frames() []tapFrame {
	if t.n < pmTapFrames {
		return append([]tapFrame(nil), t.recs[:t.n]...)
	}
	i := t.n % pmTapFrames
	return append(append([]tapFrame(nil), t.recs[i:]...), t.recs[:i]...)
}

// gcSample is the GC cycle count at a host time (CLOCK_MONOTONIC).
type gcSample struct {
	Host   int64
	Cycles uint64
}

// gcWatch reads the runtime's GC counters without stopping the world.
type gcWatch struct {
	s      []metrics.Sample // cycles, pauses histogram
	ring   [pmGCSamples]gcSample
	n      int
	last   uint64
	cycles uint64 // at begin
	pauses []uint64
}

func newGCWatch() *gcWatch {
	return &gcWatch{s: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/sched/pauses/total/gc:seconds"}}}
}

func (g *gcWatch) read() (cycles uint64, pauses *metrics.Float64Histogram) {
	metrics.Read(g.s)
	if g.s[0].Value.Kind() == metrics.KindUint64 {
		cycles = g.s[0].Value.Uint64()
	}
	if g.s[1].Value.Kind() == metrics.KindFloat64Histogram {
		pauses = g.s[1].Value.Float64Histogram()
	}
	return cycles, pauses
}

// begin notes the counters at the window's start.
func (g *gcWatch) begin() {
	c, p := g.read()
	g.cycles, g.last = c, c
	if p != nil {
		g.pauses = append([]uint64(nil), p.Counts...)
	}
}

// sample records a change of the cycle count (the reader's loop, between reads).
func (g *gcWatch) sample() {
	metrics.Read(g.s[:1])
	if g.s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if c := g.s[0].Value.Uint64(); c != g.last {
		g.ring[g.n%pmGCSamples] = gcSample{Host: mono.Now(), Cycles: c}
		g.n++
		g.last = c
	}
}

// GCActivity is what the garbage collector did in the window up to the capture.
type GCActivity struct {
	// Cycles completed since the window's start; Pauses the stop-the-world
	// pauses in them (/sched/pauses/total/gc:seconds) and MaxPauseUs the upper
	// bound of the highest bucket that has one.
	Cycles     uint64  `json:"cycles"`
	Pauses     uint64  `json:"pauses"`
	MaxPauseUs float64 `json:"max_pause_us"`
	// LastCycleBeforeLossMs is how long before the capture (host ms) the reader
	// last saw the cycle count move (-1: not in the window), to within its read
	// interval; CycleNearLoss says it moved within pmGCNear of the stretch
	// before the loss.
	LastCycleBeforeCaptureMs float64 `json:"last_cycle_before_capture_ms"`
	CycleNearLoss            bool    `json:"cycle_near_loss"`
}

// activity is g since begin, at host time now.
func (g *gcWatch) activity(now int64) (GCActivity, []gcSample) {
	c, p := g.read()
	a := GCActivity{Cycles: c - g.cycles, LastCycleBeforeCaptureMs: -1}
	if p != nil && len(p.Counts) == len(g.pauses) {
		for i, n := range p.Counts {
			d := n - g.pauses[i]
			a.Pauses += d
			if d > 0 && i+1 < len(p.Buckets) {
				a.MaxPauseUs = p.Buckets[i+1] * 1e6
			}
		}
	}
	var ss []gcSample
	for i := max(g.n-pmGCSamples, 0); i < g.n; i++ {
		ss = append(ss, g.ring[i%pmGCSamples])
	}
	if len(ss) > 0 {
		a.LastCycleBeforeCaptureMs = float64(now-ss[len(ss)-1].Host) / 1e6
	}
	return a, ss
}

// postMortem is one step's recording and, after its first loss, the copy.
type postMortem struct {
	run  *bench.Watched
	pi   *sim.Pi
	tap  *busTap
	gc   *gcWatch
	ring *gaptrace.Ring // the clock's last looked-at gaps
	// boardStart is the board's time at the window's start.
	boardStart int64

	captured bool
	trigger  string
	host     int64 // host time of the capture
	board    int64 // the board's time then (Reached)
	trace    []clock.GapRecord
	frames   []tapFrame
	cpu      clock.CPU
	armHz    uint32
	armMinHz uint32
	armMaxHz uint32
	gcAct    GCActivity
	gcRing   []gcSample
	// dropped0 and dropped are the INT line's edge events dropped to a full
	// buffer (soc.EdgeLine.Dropped) at the window's start and the capture.
	dropped0, dropped uint64
}

// newPostMortem turns on the virtual Pi's gap trace and observes its first
// bus. Call it before the daemon starts.
func newPostMortem(run *bench.Watched) *postMortem {
	pi := run.Pi
	edge := pi.Node(0).Edge
	pm := &postMortem{run: run, pi: pi, ring: gaptrace.New(pmTraceGaps), tap: &busTap{intLow: func() bool { return !edge.Level() }, now: pi.Clock().Now}, gc: newGCWatch()}
	pi.Clock().TraceGaps(pm.ring)
	pi.Node(0).Bus.OnEvent(pm.tap.event)
	return pm
}

// Begin is the window's start.
func (pm *postMortem) Begin() {
	pm.boardStart = pm.pi.Clock().Reached()
	pm.dropped0 = pm.pi.Node(0).Edge.Dropped()
	pm.gc.begin()
}

// Stop is the end of the offered frames: the recording goes on through the
// drain, until a loss.
func (pm *postMortem) Stop() {}

// Loss is called by the reader between reads: lost reports the window's first
// loss (trigger names it); the first time it does, the state is copied.
func (pm *postMortem) Loss(lost bool, trigger string) {
	if pm.captured {
		return
	}
	pm.gc.sample()
	if !lost {
		return
	}
	pm.captured = true
	pm.trigger = trigger
	pm.host = mono.Now()
	clk := pm.pi.Clock()
	pm.board = clk.Reached()
	pm.trace = pm.ring.Records()
	bus := pm.pi.Node(0).Bus
	bus.Lock()
	pm.frames = pm.tap.frames()
	bus.Unlock()
	pm.cpu = clk.CPU()
	pm.armHz, _ = pm.pi.Clocks()
	b := pm.pi.Board()
	pm.armMinHz, pm.armMaxHz = b.ARMMinHz, b.ARMMaxHz
	pm.gcAct, pm.gcRing = pm.gc.activity(pm.host)
	pm.dropped = pm.pi.Node(0).Edge.Dropped()
}

// pmGCNear is how close (host time) a GC cycle count change must be to the
// stretch before a loss to count as near it: the reader's read interval at the
// envelope's loads is well below it.
const pmGCNear = int64(5 * time.Millisecond)

// memPauses are the GC stop-the-world pauses runtime.MemStats keeps (its last
// 256), as host CLOCK_MONOTONIC spans. It stops the world: after the capture only.
func memPauses() [][2]int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	off := time.Now().UnixNano() - mono.Now() // wall - monotonic
	var out [][2]int64
	for i := uint32(0); i < min(ms.NumGC, 256); i++ {
		k := (ms.NumGC - 1 - i) % 256
		end := int64(ms.PauseEnd[k]) - off
		out = append(out, [2]int64{end - int64(ms.PauseNs[k]), end})
	}
	return out
}
