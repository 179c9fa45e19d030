package gpio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl issues one ioctl(2) with a pointer argument, retrying EINTR (Go's preemption
// signals interrupt system calls). It returns the bare errno so that callers on the
// frame path can test it without allocating; 0 means success.
func ioctl(fd int, req uint32, arg unsafe.Pointer) unix.Errno {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e != unix.EINTR {
			return e
		}
	}
}
