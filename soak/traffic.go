package soak

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/internal/seqcheck"
	"cand/sim/canbus"
	"cand/socketcan"
)

// Frame IDs: cand's TX frames win arbitration over the load peer's.
const (
	txID   = 0x100
	loadID = 0x123
)

// seqCheck follows one stream of counter-carrying 8-byte frames: gaps are losses
// (accounted elsewhere), a counter not above the last one or a payload that is not
// the counter's is a sequence error.
type seqCheck struct {
	last         seqcheck.Last
	frames       uint64
	dups, errors uint64
	reorders     uint64   // of the errors, counters lower than the previous one
	firsts       []string // the first few errors, described
}

// note checks f; it reports whether f is a sequence error (duplicates included).
func (s *seqCheck) note(f can.Frame) bool {
	s.frames++
	c, ok := canbus.Counter(f)
	if !ok || f.Length != 8 || f.Data != canbus.Payload(c, 8) {
		s.errors++
		s.describe("corrupt frame %v", f)
		return true
	}
	switch step, prev := s.last.Note(c, 64); step {
	case seqcheck.Repeat:
		s.dups++
		s.describe("counter %d twice", c)
		return true
	case seqcheck.Back:
		s.errors++
		s.reorders++
		s.describe("counter %d after %d", c, prev)
		return true
	}
	return false
}

func (s *seqCheck) describe(format string, args ...any) {
	if len(s.firsts) < 5 {
		s.firsts = append(s.firsts, fmt.Sprintf(format, args...))
	}
}

// writer sends frame n = 0, 1, ... with ID txID into fd, rate per second, until ctx
// ends. A write the socket refuses (EAGAIN: its queue is full) is not offered and
// counted as such.
type writer struct {
	written, refused atomic.Uint64
}

func (w *writer) run(ctx context.Context, fd int, rate int) {
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	var b [socketcan.FrameSize]byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := w.written.Load()
		socketcan.Encode(&b, can.Frame{ID: txID, Length: 8, Data: canbus.Payload(n, 8)})
		if _, err := unix.Write(fd, b[:]); err != nil {
			w.refused.Add(1)
			continue
		}
		w.written.Add(1)
	}
}

// reader reads cand's socket: the load peer's frames (checked), error frames, and
// anything else (stray). pause makes it stop reading for a while (the slow-reader
// fault).
type reader struct {
	fd     int
	faults *window
	// inFault counts the sequence errors seen while a fault was on or within
	// faultSettle after it; reordersOut the reorders (a counter lower than the
	// previous one) seen outside.
	inFault, reordersOut uint64
	pause                chan time.Duration
	seq                  seqCheck
	errs                 uint64
	stray                uint64
	paused               atomic.Bool
	err                  error
}

func newReader(fd int, faults *window) *reader {
	return &reader{fd: fd, faults: faults, pause: make(chan time.Duration, 1)}
}

// run reads until ctx ends; drain then reads what is left.
func (r *reader) run(ctx context.Context) {
	pfd := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
	for ctx.Err() == nil {
		select {
		case d := <-r.pause:
			r.paused.Store(true)
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			r.paused.Store(false)
		default:
		}
		unix.Poll(pfd, 20)
		if err := r.drain(); err != nil {
			r.err = err
			return
		}
	}
}

// drain reads every record waiting on the socket.
func (r *reader) drain() error {
	var b [socketcan.FrameSize]byte
	for {
		n, err := unix.Read(r.fd, b[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if err != nil {
			return err
		}
		if n != socketcan.FrameSize {
			r.stray++
			continue
		}
		f, k := socketcan.Decode(&b)
		switch {
		case k == socketcan.FrameError:
			r.errs++
		case k == socketcan.FrameData && !f.IsExtended && f.ID == loadID:
			reorders := r.seq.reorders
			switch {
			case !r.seq.note(f):
			case r.faults.near():
				r.inFault++
			case r.seq.reorders != reorders:
				r.reordersOut++
			}
		default:
			r.stray++
			r.seq.describe("stray %v record %v", k, f)
		}
	}
}

// listener is a node on the bus that sends nothing, acknowledges every frame and
// checks cand's TX frames. Its methods run with the bus's world lock held; the
// counters are read once the daemon has stopped.
type listener struct {
	seq seqCheck
}

var _ canbus.Node = (*listener)(nil)

func (l *listener) Pending(int64) (can.Frame, bool) { return can.Frame{}, false }
func (l *listener) TxStart(int64)                   {}
func (l *listener) TxLost(int64)                    {}
func (l *listener) TxDone(int64)                    {}
func (l *listener) TxError(canbus.ErrorKind, int64) {}
func (l *listener) RxError(canbus.ErrorKind, int64) {}
func (l *listener) Acks(int64) bool                 { return true }
func (l *listener) Receive(f can.Frame, _ int64) {
	if !f.IsExtended && !f.IsRemote && f.ID == txID {
		l.seq.note(f)
	}
}
