package rawsys

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// eventfd is a non-blocking eventfd for the test, closed at its end.
func eventfd(t testing.TB) int {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatalf("eventfd: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func TestReadWriteEventfd(t *testing.T) {
	fd := eventfd(t)
	var b [8]byte
	if _, err := Read(fd, b[:]); !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("read of an empty eventfd: %v, want EAGAIN", err)
	}
	one := [8]byte{3}
	if n, err := Write(fd, one[:]); n != 8 || err != nil {
		t.Fatalf("write: %d, %v; want 8, nil", n, err)
	}
	if n, err := Read(fd, b[:]); n != 8 || err != nil || b[0] != 3 {
		t.Fatalf("read: %d, %v, count %d; want 8, nil, 3", n, err, b[0])
	}
	if _, err := Write(-1, one[:]); !errors.Is(err, unix.EBADF) {
		t.Fatalf("write to fd -1: %v, want EBADF", err)
	}
}

func TestEpollLook(t *testing.T) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatalf("epoll_create1: %v", err)
	}
	defer unix.Close(ep)
	fd := eventfd(t)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: 42}); err != nil {
		t.Fatalf("epoll_ctl: %v", err)
	}
	var evs [4]unix.EpollEvent
	if n, err := EpollLook(ep, evs[:]); n != 0 || err != nil {
		t.Fatalf("look at an idle set: %d, %v; want 0, nil", n, err)
	}
	one := [8]byte{1}
	Write(fd, one[:])
	if n, err := EpollLook(ep, evs[:]); n != 1 || err != nil || evs[0].Fd != 42 || evs[0].Events&unix.EPOLLIN == 0 {
		t.Fatalf("look: %d, %v, %+v; want the eventfd readable", n, err, evs[0])
	}
	if _, err := EpollLook(ep, nil); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("look with no room for events: %v, want EINVAL (epoll_wait(2))", err)
	}
}

func TestNoAllocation(t *testing.T) {
	fd := eventfd(t)
	ep, _ := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	defer unix.Close(ep)
	var evs [4]unix.EpollEvent
	var b [8]byte
	one := [8]byte{1}
	if n := testing.AllocsPerRun(100, func() {
		Write(fd, one[:])
		Read(fd, b[:])
		Read(fd, b[:]) // EAGAIN: an error without an allocation
		EpollLook(ep, evs[:])
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

// voluntarySwitches is the calling thread's voluntary context switches
// (proc(5), /proc/thread-self/status).
func voluntarySwitches(b *testing.B) int64 {
	s, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		b.Skipf("no /proc/thread-self/status: %v", err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	b.Skip("no voluntary_ctxt_switches in /proc/thread-self/status")
	return 0
}

// BenchmarkLockedLook is a locked thread's zero-timeout epoll_wait while other
// goroutines keep every P wanted, through the scheduler (syscall) and raw: the
// voluntary context switches per million calls are the thread losing its P in a
// call and sleeping until it gets one back.
func BenchmarkLockedLook(b *testing.B) {
	for _, raw := range []bool{false, true} {
		name := "syscall"
		if raw {
			name = "raw"
		}
		b.Run(name, func(b *testing.B) {
			ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(ep)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) + 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for x := 0; ; x++ {
						if x%4096 == 0 {
							select {
							case <-stop:
								return
							default:
							}
						}
					}
				}()
			}
			done := make(chan int64)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var evs [4]unix.EpollEvent
				v0 := voluntarySwitches(b)
				b.ResetTimer()
				for range b.N {
					if raw {
						EpollLook(ep, evs[:])
					} else {
						unix.EpollWait(ep, evs[:], 0)
					}
				}
				b.StopTimer()
				done <- voluntarySwitches(b) - v0
			}()
			v := <-done
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(v)*1e6/float64(b.N), "switches/Mcall")
		})
	}
}
