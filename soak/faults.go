package soak

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"cand/sim"
)

// Fault is one kind of fault the injector picks.
type Fault int

const (
	FaultBusOff        Fault = iota // every frame destroyed for a while: cand's TEC climbs to bus-off
	FaultStuckDominant              // the bus held dominant
	FaultChipReset                  // the MCP2515 power-cycled (a brown-out): its RX buffers wiped
	FaultINTStorm                   // INT held low with no flag set
	FaultSlowReader                 // the RX reader stops reading; the socket queue fills
	numFaults
)

var faultNames = [numFaults]string{"bus-off", "stuck dominant", "chip reset", "INT storm", "slow reader"}

func (f Fault) String() string { return faultNames[f] }

// How long each fault lasts, and the quiet time between faults: uniform in
// [gapMin, gapMax), shorter for a short run (gaps) so that it sees several faults.
const (
	busOffFor     = 300 * time.Millisecond
	stuckFor      = 200 * time.Millisecond
	intStormFor   = time.Second
	slowReaderFor = 2 * time.Second
	gapMin        = 2 * time.Second
	gapMax        = 8 * time.Second
)

// faultSettle is how long after a fault a frame still counts as in its window: the
// frames that waited in the chip and the socket while it lasted.
const faultSettle = time.Second

// window tells whether a fault is on, or ended less than faultSettle ago.
type window struct {
	on    atomic.Bool
	ended atomic.Int64 // host ns, time.Now().UnixNano()
}

func (w *window) begin() { w.on.Store(true) }
func (w *window) end()   { w.ended.Store(time.Now().UnixNano()); w.on.Store(false) }
func (w *window) near() bool {
	return w.on.Load() || time.Now().UnixNano()-w.ended.Load() < int64(faultSettle)
}

// injector injects random faults into controller 0 of pi until ctx ends.
type injector struct {
	gapMin, gapMax time.Duration
	pi             *sim.Pi
	rd             *reader
	win            *window
	rng            *rand.Rand
	counts         [numFaults]uint64 // read once run has returned
	lostIn         [numFaults]uint64 // frames the chip lost (RXnOVR) in each kind of fault's windows
	injected       atomic.Uint64
	wiped          uint64 // frames chip resets wiped from the RX buffers
}

func (in *injector) run(ctx context.Context) {
	for {
		gap := in.gapMin + time.Duration(in.rng.Int64N(int64(in.gapMax-in.gapMin)))
		if !wait(ctx, gap) {
			return
		}
		f := Fault(in.rng.IntN(int(numFaults)))
		in.counts[f]++
		in.injected.Add(1)
		lost := in.pi.Node(0).Chip.Stats().Lost
		in.win.begin()
		in.inject(ctx, f)
		in.win.end()
		wait(ctx, faultSettle)
		in.lostIn[f] += in.pi.Node(0).Chip.Stats().Lost - lost
	}
}

// inject applies f and, for a fault that lasts, waits for its end and undoes it
// (also when ctx ends meanwhile).
func (in *injector) inject(ctx context.Context, f Fault) {
	n := in.pi.Node(0)
	clk := in.pi.Clock()
	switch f {
	case FaultBusOff:
		n.Bus.InjectErrors(clk.Reach(), 1<<30)
		wait(ctx, busOffFor)
		n.Bus.InjectErrors(clk.Reach(), 0)
	case FaultStuckDominant:
		now := clk.Reach()
		n.Bus.StuckDominant(now, now+int64(stuckFor))
		wait(ctx, stuckFor)
	case FaultChipReset:
		in.wiped += uint64(n.Chip.PowerCycleLosing(clk.Reach()))
	case FaultINTStorm:
		n.Wiring.HoldINTLow(true)
		wait(ctx, intStormFor)
		n.Wiring.HoldINTLow(false)
	case FaultSlowReader:
		in.rd.pause <- slowReaderFor
		wait(ctx, slowReaderFor)
	}
}

// gaps returns the range of the quiet time between faults for a run of d.
func gaps(d time.Duration) (lo, hi time.Duration) {
	return min(gapMin, d/40), min(gapMax, d/10)
}

// wait waits d or until ctx ends; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
