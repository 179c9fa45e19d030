package daemon

import (
	"testing"
	"time"

	"cand/config"
	"cand/internal/kernelop"
	"cand/internal/waitfor"
)

// On the virtual Pi the owner's system calls are metered by the board's clock,
// which charges them at the board's kernel cost; with
// hardware.sim_kernel_cost: user_factor the clock is still the meter (it takes
// the simulator's own calls out) but charges the owner's as running: none is
// counted metered.
func TestOwnerSystemCallsAreMetered(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	if _, _, err := r.read(0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	clk := r.d.Pi.Clock()
	if r.d.Owner.Kernel != kernelop.Meter(clk) {
		t.Fatalf("owner's meter %v, want the virtual Pi's clock", r.d.Owner.Kernel)
	}
	// The INT line's event read (the owner's; the socket writes may be a
	// delivery thread's, on its own core), whose Exit may follow the frame.
	waitfor.Cond(t, 5*time.Second, "a metered event read", func() bool { return clk.Stats().Kernel[kernelop.EventRead].Calls > 0 })

	r = newRigConfig(t).kernelCost(config.SimKernelCostUserFactor).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	if _, _, err := r.read(0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	clk = r.d.Pi.Clock()
	if r.d.Owner.Kernel != kernelop.Meter(clk) {
		t.Fatalf("user_factor: owner's meter %T, want the virtual Pi's clock", r.d.Owner.Kernel)
	}
	for op, k := range clk.Stats().Kernel {
		if op != int(kernelop.SimOnly) && k.Calls != 0 {
			t.Errorf("user_factor: %d %v calls metered, want none", k.Calls, kernelop.Op(op))
		}
	}
}
