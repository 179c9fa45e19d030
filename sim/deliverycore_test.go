package sim

import (
	"runtime"
	"testing"

	"cand/internal/kernelop"
	"cand/sim/clock"
)

// The delivery core charges a batch its user-code running at the board's factor
// and its system calls at the board's kernel cost, from the thread's CPU time;
// the next batch waits until the board's clock has passed that cost.
func TestDeliveryCoreCharges(t *testing.T) {
	var board, cpu int64
	c := &DeliveryCore{
		board:  func() int64 { return board },
		factor: func() int64 { return 11 * clock.FactorUnit },
		cpu:    func() int64 { return cpu },
		KernelCost: func(op kernelop.Op, host int64) int64 {
			if op != kernelop.SocketWrite {
				t.Fatalf("charged a %v", op)
			}
			return 2 * host
		},
	}
	board = 1_000_000
	if b := c.Busy(); b != 0 {
		t.Fatalf("busy %d before any batch", b)
	}
	c.Begin(board)
	for range 3 { // three frames: 300 ns of user code and a 4 µs write each
		cpu += 300
		c.Enter(kernelop.SocketWrite)
		cpu += 4_000
		c.Exit(kernelop.SocketWrite)
	}
	c.End(3)
	want := int64(3*300*11 + 3*4_000*2)
	if b := c.Busy(); b != want {
		t.Fatalf("busy %d board ns after the batch, want %d", b, want)
	}
	board += want - 1
	if b := c.Busy(); b != 1 {
		t.Fatalf("busy %d, want 1", b)
	}
	// A batch begun late (the core was idle) starts from the board's time.
	board += 10_000
	c.Begin(board)
	cpu += 500
	c.End(0)
	if b := c.Busy(); b != 500*11 {
		t.Fatalf("busy %d, want %d", b, 500*11)
	}
}

// The host's delay in running the delivery thread is not the board's: a batch
// whose frame was ready before the thread ran begins when the frame was ready
// (after the wake-up path, if the core was parked), and its writes are stamped
// in the core's own time.
func TestDeliveryCoreLeavesOutTheHostsDelay(t *testing.T) {
	var board, cpu int64
	c := &DeliveryCore{
		board:  func() int64 { return board },
		factor: func() int64 { return 2 * clock.FactorUnit },
		cpu:    func() int64 { return cpu },
		wakeNs: func() int64 { return 30_000 },
	}
	board = 5_000_000 // the thread runs 1 ms after the frame was ready
	c.Woken(4_000_000)
	if b := c.Busy(); b != 0 {
		t.Fatalf("busy %d: the wake-up (30 µs after 4 ms) is long over at 5 ms", b)
	}
	c.Begin(4_000_000)
	cpu += 1_000
	if now := c.Now(); now != 4_030_000+2_000 {
		t.Fatalf("the core's time %d, want %d (ready + wake-up + 1 µs at factor 2)", now, 4_030_000+2_000)
	}
	c.End(1)
	if b := c.Busy(); b != 0 {
		t.Fatalf("busy %d, want 0", b)
	}
}

// Under the host-noise rule a write whose host time is far beyond its kind's
// median, and a batch's user code far beyond its median per frame, are the
// host's: charged up to the bound (clock.NoiseTimes × the median, at least
// clock.NoiseFloor), the rest counted in Charged's NoiseNs.
func TestDeliveryCoreClipsHostNoise(t *testing.T) {
	var board, cpu int64
	c := &DeliveryCore{
		board:      func() int64 { return board },
		factor:     func() int64 { return 11 * clock.FactorUnit },
		cpu:        func() int64 { return cpu },
		KernelCost: func(_ kernelop.Op, host int64) int64 { return 2 * host },
		noise:      true,
	}
	batch := func(user, write int64) int64 {
		board += c.Busy() + 1_000_000
		c.Begin(board)
		cpu += user
		c.Enter(kernelop.SocketWrite)
		cpu += write
		c.Exit(kernelop.SocketWrite)
		c.End(1)
		return c.Busy()
	}
	for range 64 { // medians: user 300 ns (bucket top 512), write 4 µs (4,096)
		batch(300, 4_000)
	}
	if b, want := batch(300, 500_000), int64(300*11+8*4_096*2); b != want {
		t.Errorf("a 500 µs write: busy %d, want %d (the write charged at 8 × 4,096 ns)", b, want)
	}
	if b, want := batch(200_000, 4_000), int64(clock.NoiseFloor*11+4_000*2); b != want {
		t.Errorf("200 µs of user code: busy %d, want %d (clipped to NoiseFloor)", b, want)
	}
	if want := int64(500_000 - 8*4_096 + 200_000 - clock.NoiseFloor); c.Charged().NoiseNs != want {
		t.Errorf("NoiseNs %d, want %d", c.Charged().NoiseNs, want)
	}
	c.noise = false
	if b, want := batch(300, 500_000), int64(300*11+500_000*2); b != want {
		t.Errorf("rule off: busy %d, want %d (charged in full)", b, want)
	}
}

// The owner thread looks at the delivery core (Busy) to decide whether to wait
// for the simulator's late thread: the simulator's look, not a clock read of
// the owner's that the board would be charged for.
func TestDeliveryCoreLookedAtForFree(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clk := clock.New()
	clk.SetRule(clock.Strict)
	if err := clk.BindCPU(); err != nil {
		t.Skipf("cannot bind the clock: %v", err)
	}
	t.Cleanup(clk.UnbindCPU)
	clk.SetCPU(clock.CPU{Factor: clock.FactorUnit, ClockReadHostNs: 20, ClockReadBoardNs: 1_000})
	core := NewDeliveryCore(clk)
	clk.Access()
	for range 10 {
		core.Busy()
	}
	clk.Access()
	if n := clk.Stats().ClockReads; n != 0 {
		t.Fatalf("%d clock reads charged for looking at the core, want 0", n)
	}
	clk.Now() // the owner's own read
	clk.Access()
	if n := clk.Stats().ClockReads; n != 1 {
		t.Fatalf("%d clock reads charged after one of the owner's, want 1", n)
	}
}
