package gpio

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"

	"cand/internal/rawsys"
)

// ErrTornEvent means a read returned a byte count that is not a multiple of EventSize.
// The kernel never does that; a pipe does only if its writer wrote part of an event,
// so writers (the simulator) must write whole events, each write(2) at most PIPE_BUF
// bytes so that it is atomic.
var ErrTornEvent = errors.New("gpio: read returned part of a 48-byte gpio_v2_line_event: the writer must write whole events")

// ErrEventBuffer means ReadEvents was given room for no event.
var ErrEventBuffer = errors.New("gpio: ReadEvents needs len(buf) ≥ 48 and len(ev) ≥ 1")

// ReadEvents makes one read(2) on fd of up to min(len(buf)/EventSize, len(ev)) events
// into the caller's buf and decodes them into ev[:n]. It does not allocate.
//
// On a non-blocking fd with nothing queued it returns 0, unix.EAGAIN. A read of 0 bytes
// (the writer of a pipe closed it) returns 0, io.EOF. A read that ends inside an event
// returns the whole events before it and ErrTornEvent; the partial event is lost.
// EINTR is retried. The same code reads a line request fd and the simulator's pipe.
func ReadEvents(fd int, buf []byte, ev []Event) (n int, err error) {
	max := min(len(buf)/EventSize, len(ev))
	if max == 0 {
		return 0, ErrEventBuffer
	}
	var got int
	for {
		got, err = rawsys.Read(fd, buf[:max*EventSize]) // a non-blocking line fd
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	if got == 0 {
		return 0, io.EOF
	}
	n = got / EventSize
	for i := range n {
		ev[i].Decode(buf[i*EventSize:])
	}
	if got%EventSize != 0 {
		return n, ErrTornEvent
	}
	return n, nil
}
