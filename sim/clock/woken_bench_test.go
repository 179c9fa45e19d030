package clock

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkWokenThreadCPU measures what the host adds to a freshly woken
// thread's CPU time (outlier.go, woken gaps): a locked thread sleeps in
// epoll_wait for -benchtime iterations, woken each time by a pipe write after
// 1.5 ms, and times its CPU clock from after epoll_wait returned over the
// event's read and some 2 µs of work. Its code is the same every time, so the
// spread is the host's (interrupts counted as the thread's running, the vCPU's
// wake-up). Reported: the p50, p99 and max CPU ns.
//
//	go test -run '^$' -bench WokenThreadCPU -benchtime 1500x ./sim/clock
func BenchmarkWokenThreadCPU(b *testing.B) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		b.Skipf("pipe: %v", err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		b.Skipf("epoll: %v", err)
	}
	defer unix.Close(ep)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p[0])}); err != nil {
		b.Skipf("epoll_ctl: %v", err)
	}
	cpu := func() int64 {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return ts.Nano()
	}
	ns := make([]int64, 0, b.N)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var evs [1]unix.EpollEvent
		var buf [8]byte
		x := 0
		for range b.N {
			unix.EpollWait(ep, evs[:], -1)
			c0 := cpu()
			unix.Read(p[0], buf[:])
			for j := range 2000 {
				x += j * j
			}
			ns = append(ns, cpu()-c0)
			done <- struct{}{}
		}
		_ = x
	}()
	for range b.N {
		time.Sleep(1500 * time.Microsecond)
		unix.Write(p[1], []byte{1})
		<-done
	}
	slices.Sort(ns)
	b.ReportMetric(float64(ns[len(ns)/2]), "p50-cpu-ns")
	b.ReportMetric(float64(ns[len(ns)*99/100]), "p99-cpu-ns")
	b.ReportMetric(float64(ns[len(ns)-1]), "max-cpu-ns")
}
