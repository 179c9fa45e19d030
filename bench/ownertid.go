package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/hw/pinout"
	"cand/sim"
)

// The owner thread's CPU time over the window is its busy fraction. The daemon
// does not say which thread it is, so the benchmark finds its thread ID from the
// outside, in one of two ways:
//   - on the virtual Pi, a spy on an unused GPIO input: only the owner thread reads
//     the GPIO level register once the daemon is ready (INT levels), so the spy,
//     armed then, records the thread ID (gettid) of its next read;
//   - on a real board, the thread blocked in a system call on the epoll instance
//     that watches the controller's socket (/proc/self/fdinfo lists each epoll
//     fd's watched fds as "tfd:", /proc/self/task/TID/syscall a blocked thread's
//     system call and arguments, proc(5)); it is found while the owner waits for
//     work, before the benchmark writes any frame.
//
// The CPU time is the thread's CPU-time clock (clock_gettime with the clock ID the
// kernel makes for a thread: MAKE_THREAD_CPUCLOCK in include/linux/posix-timers.h,
// ((~tid) << 3) | CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED), nanosecond-exact
// unlike utime+stime in /proc/self/task/TID/stat.

// tidSpy is a GPIO input source that records the thread reading it once armed.
type tidSpy struct {
	armed atomic.Bool
	tid   atomic.Int64
}

// Level implements soc.PinSource: the pin reads high (as with its pull-up).
func (s *tidSpy) Level(at int64) bool {
	if s.armed.Load() {
		s.tid.Store(int64(unix.Gettid()))
		s.armed.Store(false)
	}
	return true
}

// attachTIDSpy attaches a spy to the first GPIO of bank 0 that cfg leaves unused.
func attachTIDSpy(pi *sim.Pi, cfg *config.Config) (*tidSpy, error) {
	used := map[int]bool{pinout.PinCE0: true, pinout.PinCE1: true, pinout.PinMISO: true, pinout.PinMOSI: true, pinout.PinSCLK: true}
	for _, cc := range cfg.Controllers {
		used[cc.IntGPIO] = true
		used[cc.SPI.ChipSelect.Pin()] = true
	}
	a := cfg.Hardware.AnalyzerPins
	used[a.Interrupt], used[a.SPI], used[a.SocketWrite] = true, true, true
	for pin := 2; pin < 28; pin++ {
		if used[pin] {
			continue
		}
		s := &tidSpy{}
		if err := pi.SoCModel().AttachInput(pin, s); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("bench: no free GPIO for the owner thread's spy")
}

// wait arms the spy and waits up to timeout for the owner thread's next GPIO read.
func (s *tidSpy) wait(timeout time.Duration) (int, error) {
	s.tid.Store(0)
	s.armed.Store(true)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if tid := s.tid.Load(); tid != 0 {
			return int(tid), nil
		}
		time.Sleep(time.Millisecond)
	}
	s.armed.Store(false)
	return 0, fmt.Errorf("bench: the owner thread read no GPIO level within %v", timeout)
}

// epollTID finds the thread blocked on the epoll instance that watches fd, for up
// to timeout.
func epollTID(fd int, timeout time.Duration) (int, error) {
	ep, err := epollOf(fd)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(timeout)
	for {
		tids, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return 0, fmt.Errorf("bench: listing threads: %w", err)
		}
		for _, e := range tids {
			raw, err := os.ReadFile("/proc/self/task/" + e.Name() + "/syscall")
			if err != nil {
				continue
			}
			if f := strings.Fields(string(raw)); len(f) >= 2 && f[0] != "running" {
				if a, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64); err == nil && int(a) == ep {
					return strconv.Atoi(e.Name())
				}
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("bench: no thread blocked on epoll fd %d within %v", ep, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// epollOf is the epoll fd of this process that watches fd.
func epollOf(fd int) (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, fmt.Errorf("bench: listing fds: %w", err)
	}
	want := strconv.Itoa(fd)
	for _, e := range ents {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		raw, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		// One line per watched fd: "tfd: %8d events: %8x data: %16llx ..."
		// (fs/eventpoll.c, ep_show_fdinfo).
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "tfd:" && f[1] == want {
				return strconv.Atoi(e.Name())
			}
		}
	}
	return 0, fmt.Errorf("bench: no epoll instance watches fd %d", fd)
}

// threadCPU is thread tid's CPU time so far.
func threadCPU(tid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^tid<<3|6), &ts); err != nil {
		return 0, fmt.Errorf("bench: CPU clock of thread %d: %w", tid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// busyWatch measures a thread's busy fraction over a window.
type busyWatch struct {
	tid   int
	cpu0  time.Duration
	wall0 time.Time
	busy  float64 // -1 when not measured
	err   error
}

func (b *busyWatch) begin() {
	b.busy = -1
	if b.tid == 0 {
		return
	}
	b.cpu0, b.err = threadCPU(b.tid)
	b.wall0 = time.Now()
}

func (b *busyWatch) end() {
	if b.tid == 0 || b.err != nil {
		return
	}
	cpu, err := threadCPU(b.tid)
	if err != nil {
		b.err = err
		return
	}
	if wall := time.Since(b.wall0); wall > 0 {
		b.busy = float64(cpu-b.cpu0) / float64(wall)
	}
}
