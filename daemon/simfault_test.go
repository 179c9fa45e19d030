package daemon

import (
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/waitfor"
)

// hardware.sim_stall_bus_after: the virtual Pi's peripheral bus stalls that long
// after start, cand says so, the owner thread wedges on it (so the watchdog stops
// WATCHDOG=1, TestWatchdogUnderLoadAndWhenWedged), and a stop still ends cleanly.
func TestSimStallBusAfter(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 10*time.Millisecond, 8, 0x100)).stallBusAfter(300 * time.Millisecond).start()
	r.next(0, "a periodic frame before the stall", id(0x100))
	r.waitLog(5*time.Second, "level=WARN", `msg="virtual Pi: peripheral bus stalled (hardware.sim_stall_bus_after): the owner thread wedges at its next register access"`, "after=300ms")
	stall := r.pi.BusStall()
	waitfor.Cond(t, 5*time.Second, "the owner thread to wedge on the stalled bus", func() bool { return stall.Waiting() > 0 })
	r.stop()
	if r.err != nil {
		t.Fatalf("stop with the bus stalled: %v, want a clean exit", r.err)
	}
}

// controllers[].sim.chip_absent: the controller's chip is missing from the start;
// its interface is served, cand_chip_up is 0, and the other controller bridges.
func TestSimChipAbsent(t *testing.T) {
	notify := listenReady(t)
	r := newRigConfig(t).named("a", "vcan0").chipAbsent().
		controller("b", "vcan1").chipSelect("ce1", false).intGPIO(24).peer(answerPeer("echo-b", 2)).
		start()
	servedWithoutChip(t, notify, r)
	answer := can.Frame{ID: 0x400, Length: 1, Data: can.Data{7}}
	r.write(1, answer)
	answer.ID += 2
	r.next(1, "controller b's answer while a's chip is absent", frameOf(answer))
}
