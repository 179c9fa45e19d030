// Package rawsys makes the frame-path threads' non-blocking system calls without
// telling the Go scheduler.
//
// A system call through syscall.Syscall marks the calling goroutine's P as in a
// system call (runtime.entersyscall). The runtime's monitor thread may then hand
// that P to another thread (sysmon's retake: after 20 µs to 10 ms, at once when
// goroutines wait to run), and on return the caller must get a P back
// (runtime.exitsyscall): when none is idle, a thread locked to its goroutine
// sleeps on a futex until one is handed to it (golang/go src/runtime/proc.go,
// retake, exitsyscall, stoplockedm). For the owner thread that is a sleep and a
// wake-up in the middle of its loop, at the moment the process is busiest.
//
// A call that cannot block (epoll_wait with a zero timeout, a read or write on
// a non-blocking descriptor) needs none of that: made raw it keeps its P, as
// a function call does. Only such calls belong here.
package rawsys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// EpollLook is epoll_wait(2) with a zero timeout, as epoll_pwait(2) with no
// signal mask (the call every Linux architecture has).
func EpollLook(ep int, events []unix.EpollEvent) (int, error) {
	var p unsafe.Pointer
	if len(events) > 0 {
		p = unsafe.Pointer(&events[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(p), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Read is read(2) on a non-blocking descriptor.
func Read(fd int, b []byte) (int, error) { return rw(unix.SYS_READ, fd, b) }

// Write is write(2) on a non-blocking descriptor.
func Write(fd int, b []byte) (int, error) { return rw(unix.SYS_WRITE, fd, b) }

// rw is read(2) or write(2) (trap), made raw.
func rw(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Yield gives the calling thread's CPU to another runnable thread, if any
// (sched_yield(2)), without the Go runtime's system-call bookkeeping: the thread
// keeps its P, as it does in the spin it yields from.
func Yield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
