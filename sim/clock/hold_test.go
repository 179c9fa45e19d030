package clock

import "testing"

// While the CPU thread holds the board's time (a wait for the simulator's own
// thread), the board stands still for every reader and the bus threads leave
// time alone; afterwards the wait's 5 ms of host time are gone, the board
// charged one register access for it.
func TestHoldStopsTheBoard(t *testing.T) {
	const access = 200
	c, s := strictOn(t, 3*FactorUnit, CPU{AccessNs: access})
	v0 := c.Now()
	var during, model int64
	running := false
	c.Hold(func() {
		s.now += 5_000 * us // the host thread waited for is late
		s.state = 'S'       // the CPU thread sleeps or yields meanwhile
		during, model, running = c.Now(), c.ModelNow(), c.CPURunning()
		s.state = 'R'
	})
	if during != v0 || model != v0 {
		t.Errorf("during the hold: Now +%d ns, ModelNow +%d ns; want the board still (+0)", during-v0, model-v0)
	}
	if !running {
		t.Error("CPURunning false during the hold: a bus thread would move the board's time")
	}
	if v := c.Now(); v != v0+access {
		t.Errorf("after the hold: board +%d ns, want +%d (one register access)", v-v0, access)
	}
	if r := c.Stats().Removed[Model]; r.Ns < 5_000*us-access {
		t.Errorf("removed as a register model's %+v, want the wait's 5 ms", r)
	}
}

// Off the CPU thread a hold does not stop the board.
func TestHoldElsewhereLetsTimeRun(t *testing.T) {
	c, s := strictOn(t, 3*FactorUnit, CPU{})
	v0 := c.Now()
	s.tid = 8 // another thread
	c.Hold(func() { s.now += 1_000 * us })
	if v := c.Now(); v != v0+1_000*us {
		t.Errorf("board +%d ns after a hold on another thread, want +%d", v-v0, 1_000*us)
	}
}
