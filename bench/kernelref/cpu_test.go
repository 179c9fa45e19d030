package kernelref

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/hw/bcm2835"
	"cand/metrics"
	"cand/sim/clock"
)

// hostWork is work on the host only: a busy loop, system calls and a garbage
// collection (a stop-the-world parks the thread). It returns the host time it
// took.
func hostWork(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var b [16]byte
	for range 50 {
		unix.Write(fds[1], b[:])
		unix.Read(fds[0], b[:])
	}
	runtime.GC()
	x := 0
	for time.Since(start) < 2*time.Millisecond {
		x++
	}
	runtime.KeepAlive(x)
	return time.Since(start)
}

// modelRegs stands for a register model that spends host time in every access:
// it reads the board's time with Access, as sim/soc's models do.
type modelRegs struct {
	clk  *clock.Clock
	work func()
}

func (m modelRegs) Load(off bcm2835.GPIOReg) uint32     { m.clk.Access(); m.work(); return 0 }
func (m modelRegs) Store(off bcm2835.GPIOReg, v uint32) { m.clk.Access(); m.work() }

// The reference's host code takes no board time: on a clock bound under the
// strict rule at 8 times the host's cost of user code, 2 ms and more of host
// work (its Go code, system calls, a garbage collection), and a register
// model's host time, leave the board's time where it was but for the host time
// between two spans (the clock's own code closing a span: a few microseconds at
// most, against at least 16 ms had the work been charged), which the next
// charge absorbs: after it the board's time is the start's plus the charge. A
// host stall that falls between two spans passes on the board (the clock
// counts the thread's CPU time there as running; cpu.go), so on a loaded host
// an attempt may see one: the test passes when one of five attempts is exact.
func TestHostWorkTakesNoBoardTime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clk := clock.New()
	clk.SetCPU(clock.CPU{Factor: 8 * clock.FactorUnit, AccessNs: 250, Cores: 4})
	if err := clk.BindCPU(); err != nil {
		t.Skipf("cannot bind the clock to this thread: %v", err)
	}
	defer clk.UnbindCPU()
	cpu, restore, err := newBoardCPU(clk)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	if c := clk.CPU(); c.Factor != clock.FactorUnit || c.AccessNs != 0 {
		t.Errorf("clock CPU while the reference runs %+v, want factor 1 and free accesses", c)
	}
	var failed []string
	for range 5 {
		msgs := hostWorkAttempt(t, clk, cpu)
		if len(msgs) == 0 {
			return
		}
		failed = append(failed, strings.Join(msgs, "; "))
	}
	t.Errorf("in each of 5 attempts:\n%s", strings.Join(failed, "\n"))
}

// hostWorkAttempt checks what host work, register accesses with model work and
// a charge do to the board's time, from a fresh start; it returns what was wrong.
func hostWorkAttempt(t *testing.T, clk *clock.Clock, cpu *boardCPU) []string {
	// The host time between spans: the clock's own code at the end of a long
	// span's Leave (its look at the thread in /proc is taken out) runs before
	// the next span opens.
	const slack = int64(5 * time.Microsecond)
	var msgs []string
	cpu.settle()
	at0 := cpu.now()
	host := hostWork(t)
	cpu.to(at0) // closes the span the work ran in
	if d := cpu.now() - at0; d < 0 || d > slack {
		msgs = append(msgs, fmt.Sprintf("%v of host work moved the board's time by %v, want 0 (at most %v between spans)", host, time.Duration(d), time.Duration(slack)))
	}
	regs := regs(cpu, modelRegs{clk: clk, work: func() { hostWork(t) }}, false, 0)
	at1 := cpu.now()
	regs.Store(0, 1)
	regs.Load(0)
	if d := cpu.now() - at1; d < 0 || d > 2*slack {
		msgs = append(msgs, fmt.Sprintf("two register accesses with 2 ms of model work each moved the board's time by %v, want 0", time.Duration(d)))
	}
	// The charge absorbs what little passed between spans.
	cpu.charge(int64(Pi2.ThreadWake))
	if d := cpu.now() - at0; d < int64(Pi2.ThreadWake) || d > int64(Pi2.ThreadWake)+slack || cpu.debt > slack {
		msgs = append(msgs, fmt.Sprintf("host work and a charge of %v moved the board's time by %v (debt left %v), want the charge", Pi2.ThreadWake, time.Duration(d), time.Duration(cpu.debt)))
	}
	return msgs
}

// The reference's accounting, on a fake board clock that host work cannot move:
// a transfer of n bytes costs exactly SyncSetup + n byte times + InCS +
// SyncReturn, so one isolated frame's handler run (4 transfers, 26 bytes) costs
// 4 × 14.72 µs + 26 × 0.9 µs, whatever the host spent delivering the frame.
func TestHandlerRunCostsItsCharges(t *testing.T) {
	var board int64
	c := &fakeChip{}
	c.load(0, frame(0x123, 1))
	p, _, _ := newTestPort(c)
	p.deliver = func(*can.Frame) { hostWork(t) }
	p.now = func() int64 { return board }
	p.charge = func(d time.Duration) { board += int64(d) }
	p.cs = func() mark { return mark{at: board} }
	p.up = func(m mark, d int64) { board = max(board, m.at+d) }
	p.byteNs = 900
	if err := p.ist(); err != nil {
		t.Fatal(err)
	}
	want := 4*Pi2.PerTransfer() + 26*900*time.Nanosecond
	if got := time.Duration(board); got != want {
		t.Errorf("one isolated frame's handler run cost %v on the board, want %v", got, want)
	}
}

// Board time that passed beyond what the reference asked for is debt; a piece
// of 20 µs or more (the clock's LookGap) is a host stall, counted with its time.
func TestLeaksAreDebtAndStallsCounted(t *testing.T) {
	var late, stalls, stallNs metrics.Counter
	c := &boardCPU{late: &late, stalls: &stalls, stallTime: &stallNs}
	for _, leak := range []int64{50, 19_999, 20_000, 300_000} {
		prev := c.at
		c.at += leak
		c.moved(prev, prev)
	}
	if c.debt != 340_049 || c.stallSeq != 2 || stalls.Load() != 2 || stallNs.Load() != 320_000 {
		t.Errorf("debt %d, stalls %d (%d counted, %d ns), want 340049, 2, 2, 320000 ns", c.debt, c.stallSeq, stalls.Load(), stallNs.Load())
	}
	c.settle()
	if late.Load() != 340_049 || c.debt != 0 {
		t.Errorf("settled: late %d, debt %d; want 340049 and 0", late.Load(), c.debt)
	}
}
