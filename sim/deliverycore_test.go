package sim

import (
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
	c.Begin()
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
	c.Begin()
	cpu += 500
	c.End(0)
	if b := c.Busy(); b != 500*11 {
		t.Fatalf("busy %d, want %d", b, 500*11)
	}
}
