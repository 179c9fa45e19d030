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

// After a register access longer than LookGap the clock rebases its account,
// reading the CPU thread's counters in /proc: a few µs of the clock's own work,
// and a preemption in it is the host's. Neither is the board's: the board
// advances by the access's cost and then by the driver's running only, not by
// the rebase charged as running at the board's speed in the next short gap.
// (Charged so, a run of long accesses each moved the board by a CAN frame's time
// inside one SPI transfer, and the MCP2515's counters read in that transfer lagged
// its flags read later in the same transfer.)
func TestRebaseAfterALongAccessIsNotTheBoards(t *testing.T) {
	const f = 18 * FactorUnit
	for _, tc := range []struct {
		name           string
		running, taken int64 // the rebase's running, and host time it lost to a preemption
	}{
		{"its running", 6 * us, 0},
		{"preempted in it", 2 * us, 300 * us},
	} {
		c, s := strictOn(t, f, CPU{AccessNs: 100})
		read := c.h.sample
		c.h.sample = func(c *Clock) sample {
			s.busy(tc.running) // reading /proc
			s.now += tc.taken
			return read(c)
		}
		v0 := c.Access()
		s.busy(50 * us) // the model's work inside the access
		c.Leave()
		s.busy(us) // the driver's running, a short gap
		v1 := c.Access()
		if want := 100 + scaled(us, f); v1-v0 != want {
			t.Errorf("%s: the board advanced %d ns over a 50 µs access, its rebase (%d µs running, %d µs preempted) and 1 µs of running; want %d ns: the access's 100 ns and the running at the board's speed",
				tc.name, v1-v0, tc.running/us, tc.taken/us, want)
		}
		if got, want := c.Stats().Removed[Model].Ns, 50*us+tc.running+tc.taken-100; got != want {
			t.Errorf("%s: removed as register_model %d ns, want %d: the access's and its rebase's host time beyond the access's 100 ns", tc.name, got, want)
		}
	}
}
