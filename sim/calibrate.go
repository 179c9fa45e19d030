package sim

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"cand/hw/bcm2835"
	"cand/internal/mono"
	"cand/sim/clock"
	"cand/sim/soc"
)

// Calibration is how fast this host runs the frame path's kind of work, measured
// when a virtual Pi is built, against which the board profiles' figures for the
// same work give the CPU factor (docs/boards.md).
type Calibration struct {
	// KernelNs is the host's time for one pass of the calibration kernel
	// (the fastest of several runs: the host's own speed, not its load).
	KernelNs float64
	// HandOffNs is the host's time for one park and hand-back of a locked
	// thread (half the fastest round trip between two locked goroutines).
	HandOffNs float64
	// WokenNs is the CPU time of a locked thread woken from a blocking read
	// (going to sleep in it and returning from it, the fastest of several): the
	// woken side's part of a wake-up, which the owner's own CPU time after an INT
	// edge already holds (docs/boards.md, "The board's other costs").
	WokenNs float64
	// GapOverheadNs is the simulator's own host time between two register
	// accesses with no driver code between them (the clock's reads and the
	// calls of the board's register view, bus-stall gate included, less what a
	// real board's register read runs): the strict rule does not scale it.
	GapOverheadNs float64
	// SyscallNs, PipeNs and RoundTripNs are the host's time for the kernel work
	// the boards' UnixBench figures measure (KernelWork), the fastest of several
	// runs: a system call of the system call test's mix, a 512-byte pipe write
	// and read, a token's round trip between two locked threads over two pipes.
	SyscallNs, PipeNs, RoundTripNs float64
	// NowNs is the host time of one of the clock's reads on its CPU thread (a
	// clock.Clock.Now, counting included), the fastest of several runs.
	NowNs float64
	// MeterNs is the host time of the clock's Enter and Exit around a metered
	// system call, outside the call: the simulator's own, not scaled.
	MeterNs float64
}

// work is the host's time for kernel work w (0: not measured).
func (c Calibration) work(w KernelWork) float64 {
	switch w {
	case Syscall:
		return c.SyscallNs
	case Pipe:
		return c.PipeNs
	case RoundTrip:
		return c.RoundTripNs
	}
	return 0
}

const (
	// A continuous-calibration burst on the owner thread (sim/clock, calib.go):
	// burstWarm passes untimed, then the fastest of burstRuns runs of
	// burstPasses; 500 passes, ~110 µs on the anchor core (more where the kernel
	// is cold: docs/boards.md).
	burstWarm    = 400
	burstRuns    = 4
	burstPasses  = 25
	kernelPasses = 100 // per run
	kernelRuns   = 50
	handOffTrips = 200
	// handOffBudget bounds the hand-off measurement on a loaded host.
	handOffBudget = 50 * time.Millisecond
	gapAccesses   = 2000 // per run
	gapRuns       = 3
	// The kernel work: the fastest of workRuns runs of workLoops loops
	// (syscalls, pipe) or of roundTrips single trips (within handOffBudget).
	workRuns   = 10
	workLoops  = 100
	roundTrips = 200
	meterCalls = 2000 // per run, of gapRuns
)

// Calibrate measures this host.
func Calibrate() Calibration {
	return Calibration{KernelNs: measureKernel(), HandOffNs: measureHandOff(), WokenNs: measureWoken(), GapOverheadNs: measureGapOverhead(),
		SyscallNs: measureSyscalls(), PipeNs: measurePipe(), RoundTripNs: measureRoundTrip(), MeterNs: measureMeter(),
		NowNs: measureNow()}
}

// measureKernel times kernelPasses passes of the kernel kernelRuns times and
// returns the fastest run's time per pass.
func measureKernel() float64 {
	var w kernelWork
	best := int64(-1)
	for range kernelRuns {
		t0 := mono.Now()
		for i := range kernelPasses {
			w.pass(uint32(i))
		}
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	w.total.Add(w.sum) // the result, so that no pass is optimised away
	return float64(best) / kernelPasses
}

// burstKernel is the kernel as the strict rule's continuous calibration runs it
// on the owner thread (sim/clock, calib.go), with its own state.
type burstKernel struct {
	w    kernelWork
	seed uint32
}

func newBurstKernel() clock.Kernel {
	k := &burstKernel{}
	return clock.Kernel{Run: k.run, Warm: burstWarm, Runs: burstRuns, Passes: burstPasses}
}

func (k *burstKernel) run(n int) {
	for range n {
		k.w.pass(k.seed)
		k.seed = (k.seed + 1) % kernelPasses // the passes measureKernel times
	}
	k.w.total.Add(k.w.sum) // the result, so that no pass is optimised away
}

// kernelWork is the calibration kernel: per pass, what the frame path does to
// one 8-byte CAN frame, written once here and never changed (the factor is a
// property of the host and the board, not of cand's code, whose own changes the
// factor must not cancel): pack the identifier and data into the MCP2515's
// 13-byte buffer layout and back, into a 16-byte SocketCAN record, count the
// frame's stuff bits with a bitwise CRC-15 on the way, find a latency bucket in a
// table and add to counters.
type kernelWork struct {
	chip   [13]byte
	rec    [16]byte
	bounds [24]int64
	counts [24]atomic.Uint64
	sum    uint64
	total  atomic.Uint64
}

func (w *kernelWork) pass(seed uint32) {
	if w.bounds[0] == 0 {
		for i := range w.bounds {
			w.bounds[i] = int64(1000) << (i / 2) * int64(2+i%2) / 2
		}
	}
	id := (seed*2654435761 + 0x123) & 0x7FF
	var data [8]byte
	x := seed*1103515245 + 12345
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	// Into the chip's TXBnSIDH..TXBnD7 layout, and out again.
	w.chip[0], w.chip[1], w.chip[4] = byte(id>>3), byte(id<<5), 8
	copy(w.chip[5:], data[:])
	got := uint32(w.chip[0])<<3 | uint32(w.chip[1])>>5
	var back [8]byte
	copy(back[:], w.chip[5:13])
	// Into a SocketCAN record: id, length, data.
	w.rec[0], w.rec[1], w.rec[2], w.rec[3] = byte(got), byte(got>>8), 0, 0
	w.rec[4] = w.chip[4] & 0x0F
	copy(w.rec[8:], back[:])
	// CRC-15 (polynomial 0x4599) over the identifier and data, counting stuff bits.
	crc, run, last, stuff := uint16(0), 0, byte(2), 0
	for i := range 11 + 64 {
		var bit byte
		if i < 11 {
			bit = byte(got>>(10-i)) & 1
		} else {
			bit = w.rec[8+(i-11)/8] >> (7 - (i-11)%8) & 1
		}
		next := bit ^ byte(crc>>14)&1
		crc <<= 1
		if next != 0 {
			crc ^= 0x4599
		}
		if bit == last {
			if run++; run == 5 {
				stuff, run, last = stuff+1, 1, bit^1
			}
		} else {
			run, last = 1, bit
		}
	}
	// A latency bucket and the counters.
	ns := int64(x>>8)&0xFFFFF + int64(stuff)
	b := 0
	for b < len(w.bounds)-1 && ns > w.bounds[b] {
		b++
	}
	w.counts[b].Add(1)
	w.total.Add(uint64(ns))
	w.sum += uint64(crc&0x7FFF) + uint64(stuff)
}

// measureHandOff returns half the fastest round trip between two goroutines
// locked to their threads: each hand-off parks one thread in a futex and wakes
// the other, as the Go runtime does to a preempted locked goroutine.
func measureHandOff() float64 {
	ping, pong := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range ping {
			pong <- struct{}{}
		}
	}()
	defer close(ping)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := int64(-1)
	deadline := mono.Now() + int64(handOffBudget)
	for i := 0; i < handOffTrips && (i < 10 || mono.Now() < deadline); i++ {
		t0 := mono.Now()
		ping <- struct{}{}
		<-pong
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	return float64(best) / 2
}

// measureWoken returns the smallest CPU time of a locked thread across a
// blocking read(2) of a pipe that another locked goroutine writes to once the
// reader is asleep in it: its entry into the sleep and its return to user space,
// as the owner's epoll_wait for an INT edge has them.
func measureWoken() float64 {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	go1 := make(chan struct{})
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		b := []byte{1}
		for range go1 {
			for !sleepingIn(tid) {
				runtime.Gosched()
			}
			unix.Write(p[1], b)
		}
	}()
	defer func() { close(go1); <-done }()
	best := int64(-1)
	var b [1]byte
	deadline := mono.Now() + int64(handOffBudget)
	for i := 0; i < handOffTrips/4 && (i < 10 || mono.Now() < deadline); i++ {
		go1 <- struct{}{}
		t0 := threadCPU()
		if _, err := unix.Read(p[0], b[:]); err != nil {
			return 0
		}
		if d := threadCPU() - t0; best < 0 || d < best {
			best = d
		}
	}
	return float64(best)
}

// measureGapOverhead runs register reads back to back through the board's
// register view (boardView, as the driver reaches SPI0) on a scratch SoC and
// clock bound to this thread, and returns the smallest mean gap between them
// less the host time of a read as the driver makes it on a real board
// (measureBareRead): what the simulator itself puts in every gap. 0 if the
// clock cannot bind (no /proc).
func measureGapOverhead() float64 { return onBoundClock(gapOverheadOn) }

func gapOverheadOn(clk *clock.Clock) float64 {
	clk.SetFactor(2 * clock.FactorUnit) // scaled time beyond host time = the gaps
	// An access costs the board more than the model's host time, as on every
	// board profile (AccessNs ≥ 124 ns): Leave takes the same branch as there.
	clk.SetAccessNs(int64(time.Microsecond))
	var stall soc.BusStall
	view := boardView(&stall, soc.NewOn(250_000_000, bcm2835.SoCBCM2837, clk).SPI0(), clk, &governor{next: math.MaxInt64})
	best := -1.0
	for range gapRuns {
		before := clk.Stats().ScaledNs
		readLoop(view, gapAccesses)
		if g := float64(clk.Stats().ScaledNs-before) / gapAccesses; best < 0 || g < best {
			best = g
		}
	}
	return max(best-measureBareRead(), 0)
}

// measureBareRead returns the host time of one register read through
// hw/bcm2835's MMIO (the real board's Regs) over ordinary memory, with the loop
// around it (the fastest of gapRuns runs): the driver's own part of a gap, which
// the board's view replaces and which the board charges as the driver's running.
func measureBareRead() float64 {
	words := make([]uint32, bcm2835.BlockSize/4)
	m, err := bcm2835.NewMMIO[bcm2835.SPIReg](unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), bcm2835.BlockSize))
	if err != nil {
		return 0
	}
	best := int64(-1)
	for range gapRuns {
		t0 := mono.Now()
		readLoop(m, gapAccesses)
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	return float64(best) / gapAccesses
}

// readLoop reads SPI0's CS register n times through r, an interface call each
// as the driver makes it (not inlined: the compiler must not see r's type).
//
//go:noinline
func readLoop(r bcm2835.Regs[bcm2835.SPIReg], n int) {
	for range n {
		r.Load(bcm2835.SPICS)
	}
}

// sleepingIn reports whether thread tid of this process is asleep (state S).
func sleepingIn(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return true // cannot tell: write now
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'S'
}

// threadCPU is the calling thread's CPU time, ns.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}
