package socketcan

import (
	"io"
	"unsafe"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"
)

// MaxBatch is the most frames a Batch holds: what one READ STATUS of an MCP2515
// can find to read (its two RX buffers).
const MaxBatch = 2

// Batch is up to MaxBatch frames, encoded as struct can_frame, written to a
// socket in their order with one system call: write(2) for one frame,
// sendmmsg(2) for more, one message per frame (a CAN_RAW socket, like a
// SOCK_SEQPACKET or SOCK_DGRAM socketpair, takes one frame per message). Its
// zero value is empty; it must not be copied once used, since its message
// headers point into it. Nothing it does allocates.
type Batch struct {
	frames [MaxBatch][FrameSize]byte
	iov    [MaxBatch]unix.Iovec
	msgs   [MaxBatch]unix.Mmsghdr
	n      int
}

// Add encodes f as the batch's next frame; it reports false, adding nothing, if
// the batch is full.
func (b *Batch) Add(f can.Frame) bool {
	if b.n == MaxBatch {
		return false
	}
	Encode(&b.frames[b.n], f)
	b.n++
	return true
}

// Len is the number of frames in the batch.
func (b *Batch) Len() int { return b.n }

// Reset empties the batch.
func (b *Batch) Reset() { b.n = 0 }

// Write writes the frames from index from on (EINTR retried) and returns how
// many of them the socket took, in order. If that is fewer than all, err is why
// frame from+n was refused (as WriteFrame reports it; the frames after it were
// not tried: call Write again from from+n+1 to try them).
func (b *Batch) Write(fd, from int) (n int, err error) {
	switch left := b.n - from; {
	case left <= 0:
		return 0, nil
	case left == 1:
		if err := WriteFrame(fd, &b.frames[from]); err != nil {
			return 0, err
		}
		return 1, nil
	}
	for i := from; i < b.n; i++ {
		b.iov[i] = unix.Iovec{Base: &b.frames[i][0]}
		b.iov[i].SetLen(FrameSize)
		b.msgs[i] = unix.Mmsghdr{Hdr: unix.Msghdr{Iov: &b.iov[i]}}
		b.msgs[i].Hdr.SetIovlen(1)
	}
	for {
		// sendmmsg(2): the number of messages sent; an error only if the first
		// failed (a later one's error is reported by the next call).
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[from])), uintptr(b.n-from), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		n = int(r)
		break
	}
	for i := from; i < from+n; i++ {
		if b.msgs[i].Len != FrameSize {
			return i - from, io.ErrShortWrite
		}
	}
	if from+n < b.n {
		// The next one was refused: its error, from its own write.
		if err := WriteFrame(fd, &b.frames[from+n]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
