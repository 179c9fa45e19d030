package clock

import (
	"testing"
	"time"
)

// The dedicated rule's tests: the forgiving rule, kept for comparison
// (docs/clock.md, "The dedicated rule, kept for comparison").

// bound returns a clock on the dedicated rule bound to thread 7 at host time 1 s,
// with the CPU's first access made.
func bound(t *testing.T) (*Clock, *script) {
	t.Helper()
	return boundOn(t, Dedicated)
}

// cpuRemovals is what the dedicated rule took out of the CPU thread's gaps, all
// kinds together (it files them as stall, park or wake-up).
func cpuRemovals(st Stats) Removal {
	var r Removal
	for _, c := range []Category{Stall, Park, WakeUp} {
		r.Count += st.Removed[c].Count
		r.Ns += st.Removed[c].Ns
	}
	return r
}

func TestStallBeyondGraceIsRemoved(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.now += 300 * us // kept off its CPU: no voluntary switch
	v := c.Access()
	if want := start + StallGrace; v != want {
		t.Fatalf("virtual time after a 300 µs stall = start+%d ns, want start+%d (the grace)", v-start, StallGrace)
	}
	if h := c.Host(v); h != s.now {
		t.Errorf("Host(%d) = %d, want the host time %d", v, h, s.now)
	}
	if c.Now() != v {
		t.Errorf("Now = %d, want %d", c.Now(), v)
	}
	want := Removal{Count: 1, Ns: 280 * us}
	if st := c.Stats(); st.Removed[Stall] != want || cpuRemovals(st) != want || st.MaxRemovalNs != 280*us {
		t.Errorf("stats %+v, want one stall of 280 µs", st)
	}
}

func TestGapWithinGraceIsTheDrivers(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.now += StallGrace
	if v := c.Access(); v != start+StallGrace {
		t.Fatalf("virtual = start+%d, want start+%d", v-start, StallGrace)
	}
	if st := c.Stats(); cpuRemovals(st).Count != 0 {
		t.Errorf("stats %+v, want no stall", st)
	}
}

func TestRuntimeParkIsRemoved(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.nvcsw++ // it slept, and no bus thread saw it wait for the hardware
	s.now += 500 * us
	if v := c.Access(); v != start+StallGrace {
		t.Fatalf("virtual = start+%d, want start+%d", v-start, StallGrace)
	}
	if st := c.Stats(); cpuRemovals(st).Count != 1 || st.Removed[Park].Count != 1 {
		t.Errorf("stats %+v, want one stall, a park", st)
	}
}

func TestWaitForTheHardwareIsKept(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.now += 50 * us
	s.state = 'S' // asleep in epoll_wait
	if c.CPURunning() {
		t.Fatal("CPURunning true for a thread asleep outside futex")
	}
	due := s.now
	s.now += 10 * us
	if v := c.BusTime(due); v != s.now {
		t.Fatalf("BusTime = %d, want host time %d", v, s.now)
	}
	s.nvcsw++
	s.now += 400 * us // woken by the edge, late
	if v := c.Access(); v != s.now {
		t.Fatalf("virtual = start+%d after a wait, want start+%d: nothing removed", v-start, s.now-start)
	}
	if st := c.Stats(); !removedNothing(st) {
		t.Errorf("stats %+v, want none", st)
	}
}

func TestCPURunning(t *testing.T) {
	c, s := bound(t)
	s.now += Active - 1
	if !c.CPURunning() || s.looks != 0 {
		t.Fatalf("just accessed: CPURunning must be true without asking /proc (looks %d)", s.looks)
	}
	s.now += 1
	for _, st := range []byte{'R', 'F'} {
		s.state = st
		if !c.CPURunning() {
			t.Errorf("state %c: CPURunning false, want true", st)
		}
	}
	s.now += MaxPark
	if c.CPURunning() {
		t.Error("parked longer than MaxPark: CPURunning true, want false (time must not stop for good)")
	}
	looks := s.looks
	s.state = 'R'
	if c.CPURunning() || s.looks != looks {
		t.Error("a thread seen waiting stays waiting until its next access, without another look")
	}
	c.Access()
	s.now += Active
	if !c.CPURunning() {
		t.Error("after its next access the thread is looked at again")
	}
}

func TestForeignThreadRemovesNothing(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.tid = 8
	s.now += 300 * us
	if v := c.Access(); v != s.now {
		t.Fatalf("virtual = start+%d, want start+%d", v-start, s.now-start)
	}
}

func TestRemovalFloors(t *testing.T) {
	// After a sleep, never below the end of an SPI transfer in flight.
	c, s := bound(t)
	start := s.now
	c.Commit(start + 80*us)
	s.nvcsw++
	s.now += 200 * us
	if v := c.Access(); v != start+80*us {
		t.Errorf("slept through a transfer: virtual = start+%d µs, want start+80 µs (its end)", (v-start)/us)
	}
	// A stall while running may go below it: the transfer is still in flight.
	c, s = bound(t)
	start = s.now
	c.Commit(start + 80*us)
	s.now += 200 * us
	if v := c.Access(); v != start+StallGrace {
		t.Errorf("stalled mid-transfer: virtual = start+%d µs, want start+%d µs", (v-start)/us, StallGrace/us)
	}
	// Never below what a bus thread advanced to.
	c, s = bound(t)
	start = s.now
	s.now += 150 * us
	s.state = 'S'
	c.CPURunning()
	c.BusTime(s.now)
	s.state = 'R'
	c.waiting.Store(0) // as if the look had not happened: only the floor holds
	s.now += 100 * us
	if v := c.Access(); v != start+150*us {
		t.Errorf("virtual = start+%d µs, want start+150 µs (where the bus was advanced to)", (v-start)/us)
	}
}

func TestBusLatenessBeyondGraceIsRemoved(t *testing.T) {
	c, s := bound(t)
	s.now += 20 * us
	s.state = 'S'
	due := s.now
	s.now += 350 * us
	if c.CPURunning() {
		t.Fatal("CPURunning true")
	}
	if v := c.BusTime(due); v != due+BusLateGrace {
		t.Fatalf("BusTime = due+%d µs, want due+%d µs", (v-due)/us, BusLateGrace/us)
	}
	if st := c.Stats(); st.Removed[BusLate] != (Removal{Count: 1, Ns: 250 * us}) {
		t.Errorf("stats %+v, want one late wake-up of 250 µs", st)
	}
}

// The thread that moved the bus to an INT edge may be kept off its CPU by the
// host before it tells the clock: that delay beyond BusLateGrace is the host's,
// and the waiting CPU is woken as if the edge had come on time. While the CPU
// runs, a late edge moves nothing.
func TestEdgeLatenessBeyondGraceIsRemoved(t *testing.T) {
	c, s := bound(t)
	s.now += 20 * us
	s.state = 'S' // in epoll_wait
	if c.CPURunning() {
		t.Fatal("CPURunning true while it waits")
	}
	at := c.BusTime(s.now) // on time: nothing removed
	s.now += 600 * us      // the bus thread kept off its CPU before the edge
	c.Edge(at)
	if v := c.Now(); v != at+BusLateGrace {
		t.Fatalf("virtual after a late edge = edge+%d µs, want edge+%d µs", (v-at)/us, BusLateGrace/us)
	}
	if st := c.Stats(); st.Removed[BusLate] != (Removal{Count: 1, Ns: 500 * us}) {
		t.Errorf("stats %+v, want one late edge of 500 µs", st.Removed[BusLate])
	}

	c, s = bound(t)
	before := c.Now()
	s.now += 600 * us
	c.Edge(before) // running: it sees INT itself
	if v := c.Now(); v != before+600*us {
		t.Errorf("virtual after an edge while running = +%d µs, want +600 µs", (v-before)/us)
	}
}

// An INT edge wakes a waiting CPU thread: from then on the bus thread leaves time
// to it, and its first access removes all but WakeGrace of the wake-up.
func TestEdgeWakesTheWaitingCPU(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.now += 100 * us
	s.state = 'S' // in epoll_wait
	if c.CPURunning() {
		t.Fatal("CPURunning true while it waits")
	}
	c.BusTime(s.now)
	c.Edge(s.now)
	if !c.CPURunning() {
		t.Fatal("CPURunning false right after the edge that wakes it")
	}
	s.nvcsw++
	s.now += 400 * us // the host takes 400 µs to run it
	if v := c.Access(); v != start+100*us+WakeGrace {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (the edge plus WakeGrace)", (v-start)/us, (100*us+WakeGrace)/us)
	}
	if st := c.Stats(); cpuRemovals(st) != (Removal{Count: 1, Ns: 400*us - WakeGrace}) || st.Removed[WakeUp].Count != 1 {
		t.Errorf("stats %+v, want one wake-up stall of %d µs", st, (400*us-WakeGrace)/us)
	}
}

func TestEdgeWhileRunningOrAsleepAgain(t *testing.T) {
	// An edge while the CPU thread runs (it will see INT itself) changes nothing.
	c, s := bound(t)
	c.Edge(s.now)
	s.now += Active
	s.state = 'S'
	if c.CPURunning() {
		t.Error("an edge seen while running kept the bus thread waiting")
	}
	// Woken, but back asleep without touching a register: waiting again.
	c, s = bound(t)
	start := s.now
	s.now += 100 * us
	s.state = 'S'
	c.CPURunning()
	c.Edge(s.now)
	s.now += Recheck
	if c.CPURunning() {
		t.Fatal("asleep again after the edge: CPURunning true, want false")
	}
	s.nvcsw++
	s.now += 300 * us
	if v := c.Access(); v != s.now {
		t.Errorf("virtual = start+%d µs, want start+%d µs: a wait, nothing removed", (v-start)/us, (s.now-start)/us)
	}
}

// A time handed out by Reach is never put in the board's future by a removal.
func TestReachIsAFloor(t *testing.T) {
	c, s := bound(t)
	s.now += 100 * us
	at := c.Reach() // a test injects a fault "now"
	s.now += 200 * us
	if v := c.Access(); v < at {
		t.Fatalf("after a stall, virtual %d < the time handed out %d", v, at)
	}
}

// A waiting CPU thread woken by something else than an INT edge (its socket) is
// found runnable by a look after WaitRecheck: its wait ends then, and what the
// host takes beyond WakeGrace to run it is removed.
func TestWaitEndsWhenFoundRunnable(t *testing.T) {
	c, s := bound(t)
	start := s.now
	s.now += 100 * us
	s.state = 'S'
	if c.CPURunning() {
		t.Fatal("CPURunning true while it waits")
	}
	looks := s.looks
	s.state = 'R' // woken by the socket, kept off its CPU
	s.now += WaitRecheck - 1
	if c.CPURunning() || s.looks != looks {
		t.Fatal("a wait seen less than WaitRecheck ago was looked at again")
	}
	s.now += 1
	seen := s.now
	if !c.CPURunning() {
		t.Fatal("found runnable after WaitRecheck: CPURunning false, want true")
	}
	s.nvcsw++
	s.now += 2 * int64(time.Millisecond)
	want := seen - start + WakeGrace
	if v := c.Access(); v != start+want {
		t.Fatalf("virtual = start+%d µs, want start+%d µs (the wait, then WakeGrace)", (v-start)/us, want/us)
	}
	if st := c.Stats(); st.Removed[WakeUp].Count != 1 {
		t.Errorf("stats %+v, want one slow wake-up", st)
	}
}
