package sim

import (
	"runtime"

	"golang.org/x/sys/unix"

	"cand/internal/kernelop"
	"cand/internal/mono"
	"cand/sim/clock"
)

// The host's side of the board's kernel figures (board.go, KernelWork): the same
// work as UnixBench's system call, pipe and context switch tests, measured here
// (docs/boards.md, "What the board's kernel costs").

// measureSyscalls returns the host's time for one system call of the system call
// test's loop: dup, close, getppid, getuid, and getgid in place of umask (both
// read or swap a field of the task; umask would change the process's file mode
// mask meanwhile). The fastest of workRuns runs, per call; 0 if no pipe.
func measureSyscalls() float64 {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	best := int64(-1)
	for range workRuns {
		t0 := mono.Now()
		for range workLoops {
			if fd, err := unix.Dup(p[0]); err == nil {
				unix.Close(fd)
			}
			unix.Getppid()
			unix.Getuid()
			unix.Getgid()
		}
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	return float64(best) / workLoops / 5
}

// measurePipe returns the host's time for a 512-byte write and read on one pipe
// in one thread, the fastest of workRuns runs; 0 if no pipe.
func measurePipe() float64 {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	var buf [512]byte
	best := int64(-1)
	for range workRuns {
		t0 := mono.Now()
		for range workLoops {
			if _, err := unix.Write(p[1], buf[:]); err != nil {
				return 0
			}
			if _, err := unix.Read(p[0], buf[:]); err != nil {
				return 0
			}
		}
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	return float64(best) / workLoops
}

// measureRoundTrip returns the host's fastest round trip of an 8-byte token
// between two goroutines locked to their threads over two pipes (each blocks in
// read(2) until the other writes): two wake-ups, as the context switch test
// passes its token between two processes. 0 if no pipes.
func measureRoundTrip() float64 {
	var there, back [2]int
	if err := unix.Pipe2(there[:], unix.O_CLOEXEC); err != nil {
		return 0
	}
	if err := unix.Pipe2(back[:], unix.O_CLOEXEC); err != nil {
		unix.Close(there[0])
		unix.Close(there[1])
		return 0
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		var b [8]byte
		for {
			if n, err := unix.Read(there[0], b[:]); n <= 0 {
				if err == unix.EINTR {
					continue
				}
				return // the write end closed: done
			}
			unix.Write(back[1], b[:])
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := int64(-1)
	var b [8]byte
	deadline := mono.Now() + int64(handOffBudget)
	for i := 0; i < roundTrips && (i < 10 || mono.Now() < deadline); i++ {
		t0 := mono.Now()
		if _, err := unix.Write(there[1], b[:]); err != nil {
			break
		}
		if _, err := readFull(back[0], b[:]); err != nil {
			break
		}
		if d := mono.Now() - t0; best < 0 || d < best {
			best = d
		}
	}
	unix.Close(there[1])
	<-done
	unix.Close(there[0])
	unix.Close(back[0])
	unix.Close(back[1])
	return float64(max(best, 0))
}

// readFull reads len(b) bytes from fd, retrying after a signal.
func readFull(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// measureMeter returns the host time of the strict clock's Enter and Exit around
// a system call, beyond the part of it the clock counts as the call's: the
// fastest of gapRuns runs of meterCalls pairs with no call between them, on a
// clock bound to this thread. 0 if the clock cannot bind (no /proc).
func measureMeter() float64 { return onBoundClock(meterOn) }

func meterOn(clk *clock.Clock) float64 {
	var cpu clock.CPU
	cpu.KernelFactor[kernelop.SocketWrite] = clock.FactorUnit
	clk.SetCPU(cpu)
	best := -1.0
	for range gapRuns {
		before := clk.Stats().Kernel[kernelop.SocketWrite].HostNs
		t0 := mono.Now()
		meterLoop(clk, meterCalls)
		d := mono.Now() - t0
		in := clk.Stats().Kernel[kernelop.SocketWrite].HostNs - before
		best = minOf(best, float64(d-in)/meterCalls)
	}
	return max(best, 0)
}

// meterLoop enters and leaves n empty socket writes on m, an interface call each
// as the bridge makes them (not inlined: the compiler must not see m's type).
//
//go:noinline
func meterLoop(m kernelop.Meter, n int) {
	for range n {
		m.Enter(kernelop.SocketWrite)
		m.Exit(kernelop.SocketWrite)
	}
}

// minOf is the smaller of m and v, or v if m < 0 (none yet).
func minOf(m, v float64) float64 {
	if m < 0 || v < m {
		return v
	}
	return m
}

// nowReads is how many clock reads measureNow times in each run.
const nowReads = 20000

// measureNow returns the host time of one clock read on the clock's CPU thread,
// the fastest of gapRuns runs.
func measureNow() float64 { return onBoundClock(nowOn) }

func nowOn(clk *clock.Clock) float64 {
	best := -1.0
	var sink int64
	for range gapRuns {
		t0 := mono.Now()
		for range nowReads {
			sink += clk.Now()
		}
		best = minOf(best, float64(mono.Now()-t0)/nowReads)
	}
	_ = sink
	return max(best, 0)
}

// onBoundClock runs measure on a new clock bound to this thread, locked to it,
// and returns what it measured; 0 if the clock cannot bind (no /proc).
func onBoundClock(measure func(*clock.Clock) float64) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clk := clock.New()
	if err := clk.BindCPU(); err != nil {
		return 0
	}
	defer clk.UnbindCPU()
	return measure(clk)
}
