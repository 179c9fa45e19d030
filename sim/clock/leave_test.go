package clock

import "testing"

// A preemption of the CPU thread at the end of a register access (after the
// access's time is taken, before the next gap starts) is the host's: the next
// look finds it neither running nor runnable nor asleep, and removes it as
// steal. It must not pass into the board's time outside every account.
func TestPreemptionAtTheEndOfAnAccessIsRemoved(t *testing.T) {
	const stolen = 5000 * us
	c, s := strictOn(t, 3*FactorUnit, CPU{AccessNs: 100})
	now := c.h.now
	preempt := false
	c.h.now = func() int64 {
		v := now()
		if preempt {
			preempt = false
			s.now += stolen // the vCPU is taken away right after this read
		}
		return v
	}
	v0 := c.Access()
	preempt = true
	c.Leave()
	s.busy(us)
	v1 := c.Access()
	if d := v1 - v0; d > 100*us {
		t.Errorf("the board advanced %d µs over an access and 1 µs of running with %d µs stolen after the access: want about the access's 100 ns and 3 µs of running (stats %+v)",
			d/us, stolen/us, c.Stats().Removed)
	}
	if st := c.Stats(); st.Removed[Steal].Ns < stolen-20*us {
		t.Errorf("removed as steal %d µs, want the %d µs stolen", st.Removed[Steal].Ns/us, stolen/us)
	}
}
