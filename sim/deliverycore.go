package sim

import (
	"sync/atomic"

	"cand/internal/kernelop"
	"cand/sim/clock"
)

// DeliveryCore plays the board core that cand's delivery thread runs on
// (bridge.Pacer, and its kernelop.Meter): the thread keeps its own board time.
// Each batch of socket writes costs the board its user-code running at the
// board's factor and its system calls at the board's kernel cost (KernelCost),
// both from the thread's own CPU time, which leaves out its host run delay; the
// next batch begins only when the board's clock has passed that cost. The
// thread does not spin on the host (bridge.Delivery sleeps instead), and the
// core's own bookkeeping (its CPU-time reads) is charged to nobody. Under the
// host-noise rule (hardware.sim_host_noise: clip, sim/clock noise.go) a system
// call's host time beyond its kind's bound, and a batch's user code beyond the
// bound per frame, are the host's and cost the board nothing.
type DeliveryCore struct {
	// board is the board's time, read without counting: Busy is read on the
	// owner thread too, where Clock.Now would be charged as its clock read.
	board func() int64
	// factor is the user-code factor now, in clock.FactorUnits.
	factor func() int64
	// KernelCost is the board's time for a system call of kind op that took
	// hostNs on the host (nil: hostNs at the user-code factor).
	KernelCost func(op kernelop.Op, hostNs int64) int64
	// cpu is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
	cpu func() int64
	// wakeNs is the board's wake-up path of a parked thread now.
	wakeNs func() int64

	busyUntil atomic.Int64 // board ns (read by the owner thread too: Busy)
	begun     int64        // board ns the batch began at
	cpu0      int64        // thread CPU ns at Begin
	kernHost  int64        // host ns in system calls this batch
	kernBoard int64        // their board cost
	enterAt   int64
	reads     int64 // the core's own CPU-time reads this batch
	f         int64 // the user-code factor for this batch
	stamp     int64 // the core's board time at the last system call's end (Now)
	stamped   bool
	readNs    int64 // the thread CPU time one read takes (readCost)
	readCost  readCost

	// noise: the host-noise rule is on; calls and perFrame are the medians its
	// bounds come from (per kind of system call, and user code per frame).
	noise    bool
	calls    [kernelop.NumOps]clock.NoiseMedian
	perFrame clock.NoiseMedian
	// charged is what the batches so far cost the board (Charged).
	charged struct{ user, kernel, frames, noise atomic.Int64 }
}

// DeliveryCharge is what a delivery core's batches cost the board: its user
// code at the factor and its system calls at the board's kernel cost (board
// ns), and the records they wrote; and the host time the host-noise rule took
// out of them (host ns, charged to nobody).
type DeliveryCharge struct {
	UserNs, KernelNs, Frames, NoiseNs int64
}

// Charged returns what the core's batches have cost so far: its board cost per
// frame, against which a ring that fills is the board's core's throughput and
// not the host's scheduling.
func (c *DeliveryCore) Charged() DeliveryCharge {
	return DeliveryCharge{UserNs: c.charged.user.Load(), KernelNs: c.charged.kernel.Load(), Frames: c.charged.frames.Load(),
		NoiseNs: c.charged.noise.Load()}
}

var _ kernelop.Meter = (*DeliveryCore)(nil)

// NewDeliveryCore returns the delivery core of a board whose time is clk and
// whose user-code factor is clk's.
func NewDeliveryCore(clk *clock.Clock) *DeliveryCore {
	c := &DeliveryCore{board: clk.ModelNow, factor: func() int64 { return clk.CPU().Factor }, cpu: threadCPU,
		wakeNs: func() int64 {
			cpu := clk.CPU()
			if cpu.WakeBoardNs > 0 {
				return cpu.WakeBoardNs // the board's kernel figure (hardware.sim_kernel_cost: board)
			}
			return cpu.WakeHostNs * cpu.Factor / clock.FactorUnit
		}, noise: clk.Noise()}
	const n = 64
	t0 := threadCPU()
	for range n - 1 {
		threadCPU()
	}
	c.readNs = (threadCPU() - t0) / n // until the thread has measured its own (End)
	return c
}

func (c *DeliveryCore) Busy() int64 { return max(c.busyUntil.Load()-c.board(), 0) }

// Begin implements bridge.Pacer: the batch begins when its oldest frame was
// ready or the core became free, whichever is later. The host's delay in running
// the thread is not the board's: its core would have begun then.
func (c *DeliveryCore) Begin(readyNs int64) {
	c.begun = max(min(readyNs, c.board()), c.busyUntil.Load())
	c.kernHost, c.kernBoard, c.reads, c.stamped = 0, 0, 1, false // Begin's read and End's, half each
	c.f = c.factor()
	c.cpu0 = c.cpu()
}

func (c *DeliveryCore) End(frames int) {
	end := c.cpu()
	defer c.measureRead()
	run := c.running(end)
	if c.noise && frames > 0 {
		x := c.perFrame.Excess(run/int64(frames)) * int64(frames)
		run -= x
		c.charged.noise.Add(x)
	}
	user := run * c.f / clock.FactorUnit
	c.busyUntil.Store(c.begun + user + c.kernBoard)
	c.charged.user.Add(user)
	c.charged.kernel.Add(c.kernBoard)
	c.charged.frames.Add(int64(frames))
}

// Woken implements bridge.Pacer: a parked core woken for a frame ready at
// readyNs runs its next batch no earlier than the board's wake-up path later.
func (c *DeliveryCore) Woken(readyNs int64) {
	c.busyUntil.Store(max(c.busyUntil.Load(), min(readyNs, c.board())+c.wakeNs()))
}

// Now is the core's own board time inside a batch (delivery thread): the
// batch's beginning plus what its work so far costs the board. Right after a
// system call (a write's stamp) it is the time the call ended, read there: a
// thread-CPU clock read is itself a system call, and one fewer a frame is the
// least of the core's own time that could be charged as its running.
func (c *DeliveryCore) Now() int64 {
	if c.stamped {
		return c.stamp
	}
	c.reads++ // this one
	return c.boardAt(c.cpu())
}

// running is the batch's user-code CPU time up to the thread CPU time cpu: all
// of it since Begin but the core's reads and the system calls.
func (c *DeliveryCore) running(cpu int64) int64 {
	return max(cpu-c.cpu0-c.reads*c.readNs-c.kernHost, 0)
}

// boardAt is the core's board time at the thread CPU time cpu in a batch.
func (c *DeliveryCore) boardAt(cpu int64) int64 {
	return c.begun + c.running(cpu)*c.f/clock.FactorUnit + c.kernBoard
}

// Enter implements kernelop.Meter for the delivery thread.
func (c *DeliveryCore) Enter(kernelop.Op) {
	c.stamped = false
	c.reads += 2 // this read and Exit's: one inside the call's span, one outside
	c.enterAt = c.cpu()
}

// Exit implements kernelop.Meter for the delivery thread: the call's CPU time
// is charged at the board's kernel cost, not at the user-code factor.
func (c *DeliveryCore) Exit(op kernelop.Op) {
	at := c.cpu()
	host := max(at-c.enterAt-c.readNs, 0)
	c.kernHost += host
	if c.noise && op < kernelop.NumOps {
		x := c.calls[op].Excess(host)
		host -= x
		c.charged.noise.Add(x)
	}
	if c.KernelCost != nil {
		c.kernBoard += c.KernelCost(op, host)
	} else {
		c.kernBoard += host * c.f / clock.FactorUnit
	}
	c.stamp, c.stamped = c.boardAt(at), true
}

// measureRead times one CPU-time read on the delivery thread, between two
// more after a batch (the core's own, outside any batch), and takes the mean of
// the last readSamples as the read's cost (the reads are taken out as a sum):
// a thread-CPU clock read is a system call with no vDSO, and it costs several
// times as much on a busy host as in the measurement when the core is built,
// which charged the difference as the thread's running, 5-8 board µs a frame
// on a Pi 3.
func (c *DeliveryCore) measureRead() {
	t0 := c.cpu()
	t1 := c.cpu()
	if m := c.readCost.add(t1 - t0); m > 0 {
		c.readNs = m
	}
}

// readSamples is how many in-situ read costs make the median.
const readSamples = 15

// readCost holds the last readSamples read costs (ns).
type readCost struct {
	last [readSamples]int64
	n    int
}

// add records ns and returns the mean of the last readSamples (0 until there
// are that many).
func (r *readCost) add(ns int64) int64 {
	r.last[r.n%readSamples] = ns
	r.n++
	if r.n < readSamples {
		return 0
	}
	var sum int64
	for _, v := range r.last {
		sum += v
	}
	return sum / readSamples
}
