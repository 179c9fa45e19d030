package mono

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// Cost is what one read of the runtime's clock and one null system call
// (getppid) take here, in ns: the medians of a few short rounds.
type Cost struct {
	ClockNs, SyscallNs float64
}

// Syscall reports whether a clock read costs like a system call: at least half
// a null one. Through the vDSO a read costs a small fraction of a system call
// (tens of ns against hundreds on a Pi 2 to 4); as a system call it costs more
// than a null one (0.79 µs on a Pi 1, yosh.ke.mu/raspberry_pi_getting_time).
func (c Cost) Syscall() bool { return c.SyscallNs > 0 && 2*c.ClockNs >= c.SyscallNs }

func (c Cost) String() string {
	return fmt.Sprintf("a clock read takes %.0f ns, a null system call %.0f ns", c.ClockNs, c.SyscallNs)
}

// Cost measurement: costRounds rounds of costCalls calls each, the median
// round kept (a preemption spoils a round, not the result). About 1 ms on a
// Pi 1.
const (
	costRounds = 9
	costCalls  = 64
)

// MeasureCost times the runtime's clock (Now) against a null system call.
func MeasureCost() Cost {
	var clock, sys [costRounds]float64
	for r := range costRounds {
		t0 := Now()
		for range costCalls {
			Now()
		}
		t1 := Now()
		for range costCalls {
			unix.Getppid()
		}
		t2 := Now()
		per := float64(t1-t0) / (costCalls + 1)
		clock[r] = per
		sys[r] = max(float64(t2-t1)-per, 0) / costCalls
	}
	slices.Sort(clock[:])
	slices.Sort(sys[:])
	return Cost{ClockNs: clock[costRounds/2], SyscallNs: sys[costRounds/2]}
}

// Decide is Detect's verdict with the timing c: what the files said, if they
// said it, with c as evidence (Disagrees when c says otherwise); else what c
// says.
func Decide(v Verdict, c Cost) Verdict {
	if v.Known {
		if c.Syscall() != v.Syscall {
			v.Disagrees = true
			v.Reason += "; but the timing says otherwise: " + c.String()
		} else {
			v.Reason += " (" + c.String() + ")"
		}
		return v
	}
	v.Syscall = c.Syscall()
	if v.Syscall {
		v.Reason += "; " + c.String() + ": a system call"
	} else {
		v.Reason += "; " + c.String() + ": no system call"
	}
	return v
}
