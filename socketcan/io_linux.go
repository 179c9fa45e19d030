package socketcan

import (
	"errors"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrFrameSize is returned by ReadFrame when a record is not exactly one
// struct can_frame: a CAN FD frame (the socket must not enable
// CAN_RAW_FD_FRAMES) or a stand-in peer writing other sizes.
var ErrFrameSize = errors.New("socketcan: record is not a 16-byte struct can_frame; do not enable CAN_RAW_FD_FRAMES, and write whole frames")

// oobWords sizes ReadFrame's control buffer in uint64s (for cmsghdr
// alignment): CMSG_SPACE(4) for SO_RXQ_OVFL is 24 bytes on 64-bit and 16 on
// 32-bit; 64 bytes leave room for one more small cmsg such as SO_TIMESTAMP.
const oobWords = 8

// ReadFrame receives one 16-byte record from fd into b with recvmsg(2)
// (MSG_DONTWAIT, so it never blocks) and returns its size. If the record
// carries an SO_RXQ_OVFL control message, *drops is set to its value: the
// kernel's running count of frames dropped because this socket's receive
// queue was full. The kernel sends it only once something was dropped, so
// *drops is left as it was otherwise; drops may be nil.
//
// Errors: unix.EAGAIN when nothing is queued (wait on epoll and retry),
// io.EOF when a stream or seqpacket peer closed, ErrFrameSize for a record
// of another size (b then holds its first bytes), or the errno. EINTR is
// retried. ReadFrame does not allocate.
func ReadFrame(fd int, b *[FrameSize]byte, drops *uint32) (n int, err error) {
	var oob [oobWords]uint64
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(FrameSize)
	msg := unix.Msghdr{Iov: &iov, Control: (*byte)(unsafe.Pointer(&oob[0]))}
	msg.SetIovlen(1)
	msg.SetControllen(oobWords * 8)
	for {
		// MSG_DONTWAIT: it cannot block, so it is made raw (rawsys).
		r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		n = int(r)
		break
	}
	if msg.Controllen > 0 && drops != nil {
		oobBytes := (*[oobWords * 8]byte)(unsafe.Pointer(&oob[0]))
		parseDrops(oobBytes[:msg.Controllen], drops)
	}
	switch {
	case n == 0:
		return 0, io.EOF
	case n != FrameSize || msg.Flags&unix.MSG_TRUNC != 0:
		return n, ErrFrameSize
	}
	return n, nil
}

// parseDrops walks the control messages in oob and stores the u32 payload
// of a SOL_SOCKET/SO_RXQ_OVFL message in *drops. Malformed input stops the
// walk; it never reads outside oob.
func parseDrops(oob []byte, drops *uint32) {
	const hdr = unix.SizeofCmsghdr // already CMSG_ALIGNed on every arch
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_RXQ_OVFL && l >= hdr+4 {
			*drops = *(*uint32)(unsafe.Pointer(&oob[hdr]))
		}
		next := cmsgAlign(l)
		if next >= len(oob) {
			return
		}
		oob = oob[next:]
	}
}

// cmsgAlign rounds n up to the alignment of control messages (CMSG_ALIGN:
// sizeof(long)).
func cmsgAlign(n int) int {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return (n + a - 1) &^ (a - 1)
}

// WriteFrame writes one 16-byte record to fd with write(2). On a full queue
// it returns unix.EAGAIN (socket buffer full) or unix.ENOBUFS (the
// interface's TX queue is full; vcan and vxcan have none, real CAN devices
// do): count it and retry when the fd is writable. EINTR is retried. It
// does not allocate. fd must be non-blocking (as Open's and the daemon's
// socket pairs are): the call is made raw, keeping the thread's P (rawsys).
func WriteFrame(fd int, b *[FrameSize]byte) error {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), FrameSize)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		if r != FrameSize {
			return io.ErrShortWrite
		}
		return nil
	}
}
