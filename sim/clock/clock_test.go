package clock

import (
	"testing"
	"time"
)

func TestUnboundIsHostTime(t *testing.T) {
	s := &script{now: 5 * us, tid: 1}
	c := newScripted(s)
	s.now += 10 * int64(time.Millisecond)
	if v := c.Access(); v != s.now {
		t.Fatalf("Access = %d, want %d", v, s.now)
	}
	if c.CPURunning() {
		t.Error("CPURunning true on an unbound clock")
	}
	if v := c.BusTime(0); v != s.now {
		t.Errorf("BusTime = %d, want %d (no lateness removed when unbound)", v, s.now)
	}
	if st := c.Stats(); !removedNothing(st) || st.ChargedNs() != 0 {
		t.Errorf("stats %+v, want none", st)
	}
}

// Reached is the time of the latest register access, not host time since: a
// thread other than the CPU's reads a time the board has had.
func TestReachedIsTheHardwaresTime(t *testing.T) {
	s := &script{now: 5 * us, tid: 1}
	c := newScripted(s)
	v := c.Access()
	s.now += 40 * int64(time.Millisecond) // e.g. the CPU thread on the host's runqueue
	if r := c.Reached(); r != v {
		t.Errorf("Reached = %d, want the last access's %d", r, v)
	}
	if n := c.Now(); n != s.now {
		t.Errorf("Now = %d, want host time %d", n, s.now)
	}
}
