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

// Write writes each frame once, in order (EINTR retried), and returns each
// one's error, nil if the socket took it: as WriteFrame reports it, the error of
// a frame sendmmsg(2) refused coming from its own write.
func (b *Batch) Write(fd int) (errs [MaxBatch]error) {
	if b.n == 1 {
		errs[0] = WriteFrame(fd, &b.frames[0])
		return errs
	}
	for i := range b.n {
		b.iov[i] = unix.Iovec{Base: &b.frames[i][0]}
		b.iov[i].SetLen(FrameSize)
		b.msgs[i] = unix.Mmsghdr{Hdr: unix.Msghdr{Iov: &b.iov[i]}}
		b.msgs[i].Hdr.SetIovlen(1)
	}
	for from := 0; from < b.n; {
		// sendmmsg(2) returns the number of messages sent; it fails only if the
		// first one did (a later one's error would come with the next call).
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[from])), uintptr(b.n-from), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		n := 0
		if e == 0 {
			n = int(r)
		}
		for i := from; i < from+n; i++ {
			if b.msgs[i].Len != FrameSize {
				errs[i] = io.ErrShortWrite
			}
		}
		from += n
		if from < b.n {
			// The first not sent: its error, from its own write.
			errs[from] = WriteFrame(fd, &b.frames[from])
			from++
		}
	}
	return errs
}
