package soc

import (
	"testing"
	"time"

	"cand/hw/bcm2835"
	"cand/internal/waitfor"
)

// A stalled bus holds a register read until Resume, then completes it with the
// register's value; off, accesses go straight through.
func TestBusStallWedgesAnAccessUntilResume(t *testing.T) {
	s := New(400_000_000, bcm2835.SoCBCM2837)
	var stall BusStall
	gpio := Gate(&stall, s.GPIO())
	gpio.Store(bcm2835.GPFSEL0, 1) // GPIO0 output
	if got := gpio.Load(bcm2835.GPFSEL0); got != 1 {
		t.Fatalf("GPFSEL0 = %d before the stall, want 1", got)
	}
	stall.Stall()
	got := make(chan uint32, 1)
	go func() { got <- gpio.Load(bcm2835.GPFSEL0) }()
	waitfor.Cond(t, 5*time.Second, "the read to reach the stalled bus", func() bool { return stall.Waiting() == 1 })
	select {
	case v := <-got:
		t.Fatalf("the read completed (%d) while the bus was stalled", v)
	default:
	}
	stall.Resume()
	select {
	case v := <-got:
		if v != 1 {
			t.Fatalf("GPFSEL0 = %d after the stall, want 1", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not complete within 5 s of Resume")
	}
	if n := stall.Waiting(); n != 0 {
		t.Fatalf("%d accesses still waiting", n)
	}
}
