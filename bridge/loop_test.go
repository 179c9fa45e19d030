package bridge

import (
	"testing"
	"time"
)

// levelLine is an INT level the test sets: the poll window sees what it says,
// whatever the chip does.
type levelLine struct{ low bool }

func (l *levelLine) Asserted() bool { return l.low }

// pollOwner is an owner with the rig's port, a poll window of a second, and the
// port's INT level under the test's control.
func pollOwner(t *testing.T) (*Owner, *levelLine) {
	r := newPortRig(t)
	line := &levelLine{}
	r.port.intr = line
	r.port.pollWindow = time.Second
	return &Owner{Ports: []*Port{r.port}}, line
}

// With INT high the window polls PollsPerTurn times per call and stays open: the
// loop gets its turn between the calls however long the window.
func TestPollWindowReturnsEveryPollsPerTurn(t *testing.T) {
	o, _ := pollOwner(t)
	for call := 1; call <= 3; call++ {
		if err := o.pollWindow(); err != nil {
			t.Fatal(err)
		}
		if o.sched.polls != uint64(call*PollsPerTurn) || !o.win.open {
			t.Fatalf("after call %d: %d polls, open %v; want %d, open", call, o.sched.polls, o.win.open, call*PollsPerTurn)
		}
	}
	if o.sched.windows != 1 || o.sched.ints != 0 {
		t.Fatalf("%d windows, %d interrupts; want 1 window, none", o.sched.windows, o.sched.ints)
	}
}

// With INT held low (each poll finds an interrupt) every call handles exactly one
// and returns; after WindowRearms the window closes, the next call rests (no
// poll: the loop sleeps in epoll_wait), and the one after opens a new window.
func TestPollWindowCapsInterruptsAndRests(t *testing.T) {
	o, line := pollOwner(t)
	line.low = true
	for call := 1; call <= WindowRearms; call++ {
		if err := o.pollWindow(); err != nil {
			t.Fatal(err)
		}
		if o.sched.polls != uint64(call) || o.sched.ints != uint64(call) {
			t.Fatalf("after call %d: %d polls, %d interrupts; want %d of each", call, o.sched.polls, o.sched.ints, call)
		}
		if open := call < WindowRearms; o.win.open != open {
			t.Fatalf("after call %d: open %v, want %v", call, o.win.open, open)
		}
	}
	if o.sched.capped != 1 || o.sched.maxRearms != WindowRearms || !o.win.rest {
		t.Fatalf("capped %d, most re-arms of a window %d, rest %v; want 1, %d, true", o.sched.capped, o.sched.maxRearms, o.win.rest, WindowRearms)
	}
	if err := o.pollWindow(); err != nil {
		t.Fatal(err)
	}
	if o.sched.polls != WindowRearms || o.win.open || o.win.rest {
		t.Fatalf("resting call: %d polls, open %v, rest %v; want %d polls, closed, rest over", o.sched.polls, o.win.open, o.win.rest, WindowRearms)
	}
	if err := o.pollWindow(); err != nil {
		t.Fatal(err)
	}
	if o.sched.windows != 2 || o.sched.polls != WindowRearms+1 {
		t.Fatalf("after the rest: %d windows, %d polls; want 2, %d", o.sched.windows, o.sched.polls, WindowRearms+1)
	}
}

// A window whose deadline passed while the thread was not running (no poll for a
// whole window) goes on, the gap counting towards its cap; one that passed while it
// polled closes.
func TestPollWindowOutlivesAGapInTheThreadsRunning(t *testing.T) {
	o, _ := pollOwner(t)
	if err := o.pollWindow(); err != nil {
		t.Fatal(err)
	}
	length := o.win.length
	o.win.deadline -= 2 * length // the window's time passed ...
	o.win.last -= 2 * length     // ... with no poll in it
	if err := o.pollWindow(); err != nil {
		t.Fatal(err)
	}
	if !o.win.open || o.win.rearms != 1 || o.sched.polls != 2*PollsPerTurn {
		t.Fatalf("after a gap: open %v, %d re-arms, %d polls; want open, 1, %d", o.win.open, o.win.rearms, o.sched.polls, 2*PollsPerTurn)
	}
	o.win.deadline -= 2 * length // the window's time passed while it polled
	if err := o.pollWindow(); err != nil {
		t.Fatal(err)
	}
	if o.win.open || o.win.rest || o.sched.polls != 2*PollsPerTurn {
		t.Fatalf("after a quiet window: open %v, rest %v, %d polls; want closed, no rest, %d", o.win.open, o.win.rest, o.sched.polls, 2*PollsPerTurn)
	}
}

// beat publishes the counts: the most polls and window interrupts between two
// turns, as LoopStats reads them from another goroutine.
func TestLoopStatsPublishedEachTurn(t *testing.T) {
	o, line := pollOwner(t)
	o.beat()
	o.pollWindow() // PollsPerTurn polls, INT high
	o.beat()
	line.low = true
	o.pollWindow() // one poll, one interrupt
	o.beat()
	want := LoopStats{Turns: 3, Polls: PollsPerTurn + 1, Windows: 1, MaxPollsPerTurn: PollsPerTurn,
		MaxInterruptsPerTurn: 1, MaxWindowRearms: 1}
	if got := o.LoopStats(); got != want {
		t.Fatalf("LoopStats %+v, want %+v", got, want)
	}
}
