package bridge

import (
	"testing"

	"golang.org/x/sys/unix"

	"cand/socketcan"
)

// BenchmarkSocketLook compares the two ways the poll window could look for a TX
// frame without sleeping, when none is there: a recv on the socket that returns
// EAGAIN (the TX path's own ReadFrame), and a zero-timeout epoll_wait on a set of
// the socket, an INT line's event fd and the control eventfd, which looks at all of
// them at once. With more than one port, the recv is paid per port.
func BenchmarkSocketLook(b *testing.B) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	b.Run("recv", func(b *testing.B) {
		var buf [socketcan.FrameSize]byte
		var drops uint32
		for b.Loop() {
			if _, err := socketcan.ReadFrame(fds[1], &buf, &drops); err != unix.EAGAIN {
				b.Fatalf("recv: %v, want EAGAIN", err)
			}
		}
	})
	b.Run("epoll_wait", func(b *testing.B) {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(ep)
		ctl, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(ctl)
		var pipe [2]int
		if err := unix.Pipe2(pipe[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			b.Fatal(err)
		}
		defer unix.Close(pipe[0])
		defer unix.Close(pipe[1])
		for i, fd := range []int{fds[1], pipe[0], ctl} {
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
			if i == 0 {
				ev.Events |= unix.EPOLLET
			}
			if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
				b.Fatal(err)
			}
		}
		var events [16]unix.EpollEvent
		for b.Loop() {
			if n, err := unix.EpollWait(ep, events[:], 0); n != 0 || err != nil {
				b.Fatalf("epoll_wait: %d events, %v; want none", n, err)
			}
		}
	})
}
