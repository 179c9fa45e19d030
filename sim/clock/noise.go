package clock

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"
)

// The strict rule's host noise: CPU time a host gives the CPU thread that is
// not the thread's code (docs/clock.md, "Host noise").
//
// A thread's CPU time on a virtual machine holds more than its code: the
// interrupts the guest kernel serves while the thread runs (counted as the
// thread's without CONFIG_IRQ_TIME_ACCOUNTING), and the exits the hypervisor
// serves that the guest's steal time does not see. A locked thread that only
// reads clocks in a loop of a few hundred nanoseconds shows stretches of 20 to
// 200 µs of "CPU time" between two reads, hundreds a second on a loaded host
// (BenchmarkHostNoise). Charged at the board's factor (10 to 35 on a Pi 3), one
// such stretch between two register reads of the SPI engine's FIFO loop is
// several frames of a 1 Mbit/s bus, and their rate follows the host's load, not
// cand's code.
//
// With the rule on (SetNoise), each gap is keyed by where it lies in cand's
// code: the register accesses that begin and end it (block, offset, read or
// write: a site, AccessAt) and the system calls and clock reads between them
// (so that a poll loop's turn and a loop turn's return to the same register
// are apart). The user code's running of every
// gap without a sleep (system calls and clock reads apart: they have their own
// charges) is recorded for its key, and running beyond NoiseTimes times the
// key's median, and beyond NoiseFloor, is taken out as the host's (category
// HostNoise). The same code between the same two accesses does not run eight
// times its median on the board; a stretch of cand's own code that does (a
// rare branch, a larger batch) keeps NoiseFloor. A key's own median counts once
// it has noiseSamples gaps. Before that, its bound comes from the median of
// every keyed gap (the pool): a stretch seen fewer than noiseSamples times is
// held to NoiseTimes times what cand's stretches run at the median, and
// NoiseFloor. Without that, every key started unbounded: a fresh virtual Pi
// charged the host's 50-120 µs stretches (a GPIO level read to an SPI write,
// ~1 µs of code) in full in its first milliseconds, 1-3 board ms each on a Pi 3,
// and lost frames at 10 % of a bus there. Only when the pool itself has fewer
// than noiseSamples gaps is a gap charged in full. What stays charged in full
// besides: the gaps in which the thread slept (parks, wake-ups: their own
// charges), and everything under the rule off.
const (
	// NoiseTimes: running beyond this many times its key's median is the host's.
	NoiseTimes = 8
	// NoiseFloor: running up to this is charged whatever its key's median.
	NoiseFloor = int64(5 * time.Microsecond)
	// noiseKeys is the size of the key table (keys that collide share a
	// median; cand's frame path has a few hundred).
	noiseKeys = 4096
	// noiseSamples is how many gaps make a key's median (or the pool's): the
	// host's noise is a few in a hundred gaps, so eight hold a median of the
	// code's own running.
	noiseSamples = 8
)

// noiseState is the rule's state, written by the CPU thread only.
type noiseState struct {
	on    atomic.Bool
	site  atomic.Uint32 // the previous register access's site: where the gap began
	calls atomic.Uint32 // metered system calls since the previous access
	keys  [noiseKeys]NoiseMedian
	pool  pow2Hist // every keyed gap's running: the bound of a key not yet known
	// n and ns are the clipped gaps and the host ns taken out.
	n, ns atomic.Int64
	// stretch is what each key stands for and its running so far (Stretches).
	stretch [noiseKeys]stretchAcct
}

// stretchAcct is one key's stretch and running, written by the CPU thread.
type stretchAcct struct {
	from, to       atomic.Uint32
	calls, reads   atomic.Uint32
	n, runNs, clip atomic.Int64
}

// Stretch is one stretch of cand's code between two register accesses, as the
// host-noise rule keys it, and the user-code running recorded for it (host ns,
// before the rule took its noise out, and what it took out).
type Stretch struct {
	From, To     uint32 // the sites (Site) of the accesses before and after
	Calls, Reads uint32 // metered system calls and clock reads between (up to 7)
	Gaps         int64
	RunNs        int64
	NoiseNs      int64
}

// Stretches returns the stretches the rule has seen, the most running first:
// where the owner thread's charged running goes, by stretch of its code. Call it
// once the CPU thread has stopped, or take the figures as approximate.
func (c *Clock) Stretches() []Stretch {
	var out []Stretch
	for i := range c.noise.stretch {
		a := &c.noise.stretch[i]
		if n := a.n.Load(); n > 0 {
			out = append(out, Stretch{From: a.from.Load(), To: a.to.Load(), Calls: a.calls.Load(), Reads: a.reads.Load(),
				Gaps: n, RunNs: a.runNs.Load(), NoiseNs: a.clip.Load()})
		}
	}
	slices.SortFunc(out, func(a, b Stretch) int { return cmp.Compare(b.RunNs, a.RunNs) })
	return out
}

// NoiseMedian is the running of one stretch of code, in power-of-two buckets,
// and the host-noise rule's bound on it. Its zero value is empty. Safe for one
// writer and concurrent readers.
type NoiseMedian struct{ pow2Hist }

// Excess records ns of running and returns the part of it beyond the rule's
// bound: NoiseTimes times the median, and NoiseFloor (0 before noiseSamples).
func (h *NoiseMedian) Excess(ns int64) int64 { return h.ExcessOr(ns, 0) }

// ExcessOr is Excess with prior standing for the median until h has its own
// (0: none).
func (h *NoiseMedian) ExcessOr(ns, prior int64) int64 {
	if ns <= 0 {
		return 0
	}
	x := h.BeyondOr(ns, prior)
	h.add(ns)
	return x
}

// BeyondOr is ExcessOr without recording ns: for running that is not the
// stretch's alone (a gap with a sleep in it), held to the stretch's bound.
func (h *NoiseMedian) BeyondOr(ns, prior int64) int64 {
	med := h.medianOf(noiseSamples)
	if med == 0 {
		med = prior
	}
	if bound := max(NoiseTimes*med, NoiseFloor); med != 0 && ns > bound {
		return ns - bound
	}
	return 0
}

// SetNoise turns the host-noise rule on or off (strict rule only).
func (c *Clock) SetNoise(on bool) { c.noise.on.Store(on) }

// Noise reports whether the host-noise rule is on.
func (c *Clock) Noise() bool { return c.noise.on.Load() }

// noiseKey is the key of the gap that ends at a register access at site (0:
// unnamed, the gap is not keyed): the site where it began, this one, and how
// many system calls and clock reads lie between (each up to 7). 0: no key.
func (c *Clock) noiseKey(site uint32) uint32 {
	from := c.noise.site.Swap(site)
	calls := min(c.noise.calls.Swap(0), 7)
	if !c.noise.on.Load() || site == 0 || from == 0 {
		return 0
	}
	reads := uint32(min(c.acct.reads.Load(), 7))
	h := uint64(from)<<32 | uint64(site)
	h = (h ^ uint64(calls<<3|reads)<<56) * 0x9e3779b97f4a7c15
	k := uint32(h>>52)%(noiseKeys-1) + 1
	a := &c.noise.stretch[k]
	a.from.Store(from)
	a.to.Store(site)
	a.calls.Store(calls)
	a.reads.Store(reads)
	return k
}

// Site names a register access for the host-noise rule: its block (1 and up),
// its register's offset, and whether it writes.
func Site(block, off uint32, write bool) uint32 {
	s := block<<24 | (off&0xfffff)<<1
	if write {
		s |= 1
	}
	return s
}

// noiseIn records user, the host ns of a gap's user code, for key and returns
// the part of it that is the host's (0 under key 0). A gap in which the thread
// slept (slept) is not recorded: its running holds the park's or the
// wake-up's, whose board cost is charged apart; only what runs beyond the
// key's bound is taken out.
func (c *Clock) noiseIn(key uint32, user int64, slept bool) int64 {
	if key == 0 || user <= 0 {
		return 0
	}
	h := &c.noise.keys[key]
	a := &c.noise.stretch[key]
	a.n.Add(1)
	a.runNs.Add(user)
	prior := c.noise.pool.medianOf(noiseSamples)
	var x int64
	if slept {
		x = h.BeyondOr(user, prior)
	} else {
		x = h.ExcessOr(user, prior)
		c.noise.pool.add(user)
	}
	if x == 0 {
		return 0
	}
	a.clip.Add(x)
	c.noise.n.Add(1)
	c.noise.ns.Add(x)
	return x
}
