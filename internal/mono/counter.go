package mono

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
)

// Counter is a free-running counter read without a system call: the BCM283x
// System Timer (hw/bcm2835 SystemTimer), or its model on the virtual Pi.
type Counter interface {
	Count() uint64
}

// Sample ties the counter to CLOCK_MONOTONIC: Mono is the monotonic time (ns) at
// which the counter moved on to Count, the start of that count's tick.
type Sample struct {
	Mono  int64
	Count uint64
}

// Tie limits (CounterClock.Tie).
const (
	// tieHistory is how many past samples the rate is measured over: with a tie a
	// second, the rate comes from the last 8 s, where one sample's error of about
	// a microsecond is 1/8 ppm.
	tieHistory = 8
	// maxTieErrNs is the largest error a tie corrects by slewing; a tie further
	// off (only after a reset, or a stop of many minutes) restarts the conversion.
	maxTieErrNs = 1_000_000
	// maxSlewNs caps the 1000 ppm allowance of a long interval between ties.
	maxSlewNs = 1_000_000_000
)

// tie converts counts to monotonic ns: at(c) = t0 + (c − c0) × mult / 2^32.
type tie struct {
	c0   uint64
	t0   int64
	mult uint64 // ns per count × 2^32
}

// at is the monotonic time at which the counter reached c.
func (t *tie) at(c uint64) int64 {
	d := c - t.c0
	if int64(d) < 0 {
		return t.t0 - int64(mulShift(-d, t.mult))
	}
	return t.t0 + int64(mulShift(d, t.mult))
}

// mulShift is d × mult / 2^32, rounded down, exact for any d below 2^54.
func mulShift(d, mult uint64) uint64 {
	hi, lo := bits.Mul64(d, mult)
	return hi<<32 | lo>>32
}

// CounterClock reads CLOCK_MONOTONIC from a Counter: Now converts the counter's
// count with the last tie, a (monotonic, count) pair and a rate that one writer
// (the goroutine that calls Tie, off the frame path) publishes through an atomic
// pointer. Now takes no lock, makes no system call and does not allocate;
// any goroutine may call it.
//
// Its resolution is the counter's tick (1 µs for the System Timer): Now returns
// the middle of the tick the counter is in, so a reading is within half a tick
// of the true time, plus the tie's error. The rate between ties is measured, not
// assumed: the kernel slews CLOCK_MONOTONIC (NTP frequency corrections of up to
// ±500 ppm, MAXFREQ in include/linux/timex.h) while the counter counts its
// crystal. A tie never steps the conversion: it starts where the last one had
// got to and steers its rate so that the error it found is gone by the next
// tie, so Now never goes back (docs/clock-source.md).
type CounterClock struct {
	counter Counter
	nominal uint64 // mult at the counter's nominal rate
	half    int64  // half a tick, ns
	tie     atomic.Pointer[tie]

	// The writer's own state (Tie).
	hist [tieHistory]Sample
	n    int // samples in hist
	end  int // index after the newest

	ties, restarts atomic.Uint64
	lastErr        atomic.Int64
}

// NewCounterClock converts counter, counting at hz, to monotonic ns, tied at first
// by the sample first.
func NewCounterClock(counter Counter, hz uint64, first Sample) (*CounterClock, error) {
	if hz == 0 || hz > 1_000_000_000 {
		return nil, fmt.Errorf("mono: a counter at %d Hz: give its rate, 1 Hz to 1 GHz", hz)
	}
	k := &CounterClock{counter: counter, nominal: uint64(1_000_000_000) << 32 / hz, half: int64(500_000_000 / hz)}
	k.restart(first)
	return k, nil
}

// Now is CLOCK_MONOTONIC in ns from the counter: the middle of its current tick.
func (k *CounterClock) Now() int64 {
	t := k.tie.Load() // before the count: the count is never older than the tie
	return t.at(k.counter.Count()) + k.half
}

// Clock is Now as a Clock.
func (k *CounterClock) Clock() Clock { return k.Now }

// Tie corrects the conversion with a new sample. One goroutine calls it,
// periodically, off the frame path. A sample that is not later than the last one
// is ignored; one that is far off (more than 1 ms or 1000 ppm of the time since
// the last tie) restarts the conversion from it.
func (k *CounterClock) Tie(s Sample) {
	newest := k.hist[(k.end+tieHistory-1)%tieHistory]
	if s.Count == newest.Count && s.Mono >= newest.Mono {
		return
	}
	cur := k.tie.Load()
	pred := cur.at(s.Count)
	err := s.Mono - pred
	oldest := k.hist[(k.end+tieHistory-k.n)%tieHistory]
	dc, dm := s.Count-oldest.Count, s.Mono-oldest.Mono
	interval := s.Count - newest.Count
	limit := max(maxTieErrNs, min((s.Mono-newest.Mono)/1000, maxSlewNs))
	if s.Count < newest.Count || s.Mono <= newest.Mono || err > limit || err < -limit || uint64(dm)>>32 >= dc {
		k.lastErr.Store(err)
		k.restart(s)
		return
	}
	// The measured rate, from the raw samples, plus what takes the error out over
	// one more interval like the last (|err| ≤ 1 s: err × 2^32 fits).
	rate, _ := bits.Div64(uint64(dm)>>32, uint64(dm)<<32, dc)
	corr := err * (1 << 32) / int64(interval)
	mult := int64(rate) + corr
	lo, hi := int64(k.nominal-k.nominal/8), int64(k.nominal+k.nominal/8)
	mult = min(max(mult, lo), hi)
	k.push(s)
	k.tie.Store(&tie{c0: s.Count, t0: pred, mult: uint64(mult)})
	k.ties.Add(1)
	k.lastErr.Store(err)
}

// restart ties the conversion to s alone, at the nominal rate.
func (k *CounterClock) restart(s Sample) {
	k.n, k.end = 0, 0
	k.push(s)
	k.tie.Store(&tie{c0: s.Count, t0: s.Mono, mult: k.nominal})
	k.restarts.Add(1)
}

func (k *CounterClock) push(s Sample) {
	k.hist[k.end] = s
	k.end = (k.end + 1) % tieHistory
	k.n = min(k.n+1, tieHistory)
}

// TieStats is what the ties did.
type TieStats struct {
	Ties     uint64 // corrections by slewing
	Restarts uint64 // restarts, the first tie included
	// LastErrNs is the last tie's error: the monotonic time it sampled less the
	// conversion's prediction of it.
	LastErrNs int64
}

// Stats returns what the ties did so far.
func (k *CounterClock) Stats() TieStats {
	return TieStats{Ties: k.ties.Load(), Restarts: k.restarts.Load(), LastErrNs: k.lastErr.Load()}
}

// ErrNotCounting: SampleEdge saw the counter stand still.
var ErrNotCounting = errors.New("the counter did not move")

// edgeSpin bounds SampleEdge's wait for the counter to move on: a memory-mapped
// register read takes well over 10 ns, so a 1 MHz counter moves within 100 reads,
// and 100000 without a move is a counter that is not counting.
const edgeSpin = 100_000

// SampleEdge samples counter against ref at the start of one of its ticks: it
// reads counter until it moves on, reads ref at once, then counter again, and
// keeps the sample if the counter has not moved again meanwhile (trying up to 8
// times; else the last one, whose ref reading then may be up to a tick late).
// The wait for a tick is at most one tick. It fails with ErrNotCounting if the
// counter does not move in 100000 reads.
func SampleEdge(counter Counter, ref Clock) (Sample, error) {
	var s Sample
	for range 8 {
		c0 := counter.Count()
		c1 := c0
		for i := 0; c1 == c0; i++ {
			if i == edgeSpin {
				return Sample{}, fmt.Errorf("%w in %d reads (it stayed at %d): it is not counting", ErrNotCounting, edgeSpin, c0)
			}
			c1 = counter.Count()
		}
		s = Sample{Mono: ref.Now(), Count: c1}
		if counter.Count() == c1 {
			return s, nil
		}
	}
	return s, nil
}
