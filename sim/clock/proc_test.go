package clock

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/internal/emulator"
	"cand/internal/waitfor"
)

func TestProcParsing(t *testing.T) {
	for _, tc := range []struct {
		line string
		want byte
	}{
		{"1234 (cand) S 1 1234 ...", 'S'},
		{"1234 (a) b) (c) R 1 ...", 'R'},
		{"1234 (x)", 0},
		{"garbage", 0},
	} {
		if got := stateOf([]byte(tc.line)); got != tc.want {
			t.Errorf("stateOf(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
	for _, tc := range []struct {
		line string
		want int
	}{
		{"202 0xc000 0x80 0x0 0x0 0x0 0x0 0x7ffe 0x4711\n", 202},
		{"running\n", -1},
		{"-1 0x7ffe 0x4711\n", -1},
		{"", -1},
	} {
		if got := syscallOf([]byte(tc.line)); got != tc.want {
			t.Errorf("syscallOf(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// The real kernel's view of a bound thread: running, parked by the Go runtime in
// a futex, asleep in another system call.
func TestProcLookOnThisKernel(t *testing.T) {
	if emu := emulator.Name(); emu != "" {
		t.Skipf("under a user-mode emulator (%s): /proc/self/task/TID/syscall shows the host's system call numbers, not %s's", emu, runtime.GOARCH)
	}
	c := New()
	cmd := make(chan string)
	bound := make(chan error)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		bound <- c.BindCPU()
		for what := range cmd {
			switch what {
			case "spin":
				for {
					select {
					case <-done:
					default:
						continue
					}
					break
				}
			case "sleep":
				unix.Nanosleep(&unix.Timespec{Sec: 2}, nil)
			}
		}
	}()
	if err := <-bound; err != nil {
		t.Skipf("cannot bind (no /proc?): %v", err)
	}
	defer c.UnbindCPU()
	waitFor := func(want byte) {
		t.Helper()
		if !waitfor.Until(5*time.Second, func() bool { return c.procLook() == want }) {
			t.Fatalf("the bound thread never looked %q (last %q)", want, c.procLook())
		}
	}
	waitFor('F') // parked in the channel receive: a futex
	cmd <- "spin"
	waitFor('R')
	done <- struct{}{}
	waitFor('F')
	cmd <- "sleep"
	waitFor('S')
	close(cmd)
}

// The strict rule's readings on this kernel: a bound thread's CPU time grows by
// what it spins, its run delay reads, and the other threads' time excludes it.
func TestSampleOnThisKernel(t *testing.T) {
	c := New()
	done := make(chan [2]sample)
	missing := false
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.BindCPU(); err != nil {
			close(done)
			return
		}
		defer c.UnbindCPU()
		missing = c.SchedstatMissing()
		a := c.procSample()
		for t0 := time.Now(); time.Since(t0) < 20*time.Millisecond; {
		}
		done <- [2]sample{a, c.procSample()}
	}()
	s, ok := <-done
	if !ok {
		t.Skip("cannot bind (no /proc?)")
	}
	if missing {
		t.Skip("no /proc/self/task/TID/schedstat on this kernel (CONFIG_SCHED_INFO off): no run delay to read")
	}
	exec := s[1].exec - s[0].exec
	if exec <= 0 || exec > int64(time.Second) {
		t.Errorf("CPU time over a 20 ms spin grew by %v", time.Duration(exec))
	}
	if s[1].rd < s[0].rd {
		t.Errorf("run delay went back: %d -> %d", s[0].rd, s[1].rd)
	}
}

func TestSchedstatParsing(t *testing.T) {
	exec, rd := leadingInt([]byte("123 456 7\n"))
	if exec != 123 || string(rd) != " 456 7\n" {
		t.Errorf("leadingInt = %d, %q", exec, rd)
	}
}
