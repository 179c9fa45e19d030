package canbus

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sys/unix"

	"cand/sim/clock"
)

// defaultTimerSlack is Linux's default timer slack for a normal thread (ns).
const defaultTimerSlack = 50_000

// Run advances the bus on its clock until ctx ends or Close is called: it processes
// events as they fall due, sleeping until the next one, and is woken early (poke)
// when a node has something to send.
//
// Run owns an OS thread with a timer slack of 1 ns and sleeps in ppoll(2), an
// hrtimer, until the next event: Go's timers can wake a goroutine a millisecond
// late. It does not spin: on a machine with few cores a spinning bus thread takes
// the CPU the driver needs, and frames are lost. A driver that reads the chip
// advances the bus itself (AdvanceTo on every SPI access and INT level read), so
// the thread's lateness only delays edge events.
//
// On a clock with a bound CPU thread (sim/clock) the thread moves time only while
// that CPU thread waits for the hardware; while it runs, or is kept off its CPU,
// the thread takes no lock and looks again after clock.Recheck or at the next
// event, and at least every clock.IdleLook.
func (b *Bus) Run(ctx context.Context) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err == nil {
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, defaultTimerSlack, 0, 0, 0)
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		panic(fmt.Sprintf("canbus: eventfd for the bus thread: %v", err))
	}
	b.mu.Lock()
	b.wakeFd = fd
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.wakeFd = -1
		b.mu.Unlock()
		unix.Close(fd)
	}()
	stop := context.AfterFunc(ctx, b.Close)
	defer stop()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	var drain [8]byte
	wait := func(ns int64) {
		var ts *unix.Timespec
		if ns >= 0 {
			t := unix.NsecToTimespec(ns)
			ts = &t
		}
		unix.Ppoll(pfd, ts, nil)
		unix.Read(fd, drain[:])
	}
	for {
		if b.closed.Load() {
			return
		}
		if b.clk.CPURunning() {
			// The CPU thread is running (or runnable but kept off its CPU by
			// the host): its own accesses move the bus's time, and the bus
			// thread does not, so a host stall of the CPU thread is no bus
			// time (sim/clock). No lock is taken. Look again after
			// clock.Recheck, or at the next event if that is later, not
			// sooner: each wake-up of this thread can land on the CPU
			// thread's core and preempt it.
			wait(min(max(clock.Recheck, b.head.Load()-b.clk.Now()), clock.IdleLook))
			continue
		}
		b.mu.Lock()
		held := b.holds > 0 // Release pokes
		if !held {
			if t := b.q.peek(); t != nil && t.at <= b.clk.Now() {
				b.AdvanceTo(b.clk.BusTime(t.at))
			} else if !b.clk.Bound() {
				b.AdvanceTo(b.clk.Now())
			}
		}
		b.Unlock()
		next := b.head.Load()
		have := !held && next != math.MaxInt64
		// Bound, look at the CPU thread at least every IdleLook, so that a
		// thread idle in epoll_wait is seen waiting (sim/clock).
		switch d := next - b.clk.Now(); {
		case b.clk.Bound() && (!have || d > clock.IdleLook):
			wait(clock.IdleLook)
		case !have:
			wait(-1)
		case d > 0:
			wait(d)
		}
	}
}

// poke wakes Run early through its eventfd (lock held).
func (b *Bus) poke() {
	if b.wakeFd >= 0 {
		var one = [8]byte{1}
		unix.Write(b.wakeFd, one[:])
	}
}

// Close stops Run. It takes the lock.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed.Swap(true) {
		b.poke()
	}
}
