package clock

import (
	"testing"
	"time"
)

// script is a fake host: the test sets the time, the calling thread, its
// voluntary switches, what /proc would say, and (strict rule) the CPU thread's
// CPU time and run delay and the other threads' CPU time.
type script struct {
	now    int64
	tid    int
	nvcsw  int64
	state  byte
	looks  int
	exec   int64 // the CPU thread's CPU time
	rd     int64 // its run delay
	others int64 // the other threads' CPU time
	sys    int64 // its read and write system calls (0: unknown)
}

func newScripted(s *script) *Clock {
	c := New()
	c.h = host{
		now:    func() int64 { return s.now },
		gettid: func() int { return s.tid },
		nvcsw:  func() int64 { return s.nvcsw },
		look:   func(*Clock) byte { s.looks++; return s.state },
		sample: func(*Clock) sample { return sample{exec: s.exec, rd: s.rd, nvcsw: s.nvcsw, sys: s.sys} },
		others: func(*Clock, int64) int64 { return s.others },
		thread: func() uintptr { return uintptr(s.tid) },
	}
	return c
}

const us = int64(time.Microsecond)

// boundOn returns a clock on rule r bound to thread 7 at host time 1 s, with the
// CPU's first access made.
func boundOn(t *testing.T, r Rule) (*Clock, *script) {
	t.Helper()
	s := &script{now: int64(time.Second), tid: 7, state: 'R'}
	c := newScripted(s)
	c.SetRule(r)
	c.bind(7, -1, -1, -1)
	if v := c.Access(); v != s.now {
		t.Fatalf("first access at %d, want host time %d", v, s.now)
	}
	return c, s
}

// removedNothing reports whether st records no removal at all.
func removedNothing(st Stats) bool {
	return st.Removed == [NumCategories]Removal{} && st.MaxRemovalNs == 0
}
