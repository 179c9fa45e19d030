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
