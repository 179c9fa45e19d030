package bench

import (
	"context"
	"fmt"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/canwire"
	"cand/internal/seqcheck"
	"cand/sim/canbus"
	"cand/socketcan"
)

// stream is one sender's frames as one controller's socket should carry them: a
// peer's (frames it completed on the bus) or the benchmark's own TX frames coming
// back in loopback mode.
type stream struct {
	seqcheck.Window
	port     int
	sends    func(id uint32, ext bool) bool
	seq      func(f can.Frame) (n, mod uint64, ok bool)
	sent     func() uint64 // frames so far: the peer's Sent, or the frames written
	filtered bool          // dropped by the controller's filters: not expected

	bits uint64 // the received frames' wire bits (canwire.Bits)
	now  uint64 // sent() read after the last batch
}

func peerStream(port int, p *canbus.Peer, filtered bool) *stream {
	return &stream{port: port, sends: p.Sends, seq: p.Seq, sent: p.SentNow, filtered: filtered}
}

// take counts f, which carries counter c modulo mod (0: the whole counter), ok
// false when it carries none (seqcheck.Window's Take and TakeBare); sentNow is the
// sender's count read after f arrived.
func (s *stream) take(f can.Frame, c, mod uint64, ok, stopped bool, sentNow uint64) {
	var counted bool
	if ok {
		counted = s.Take(c, mod, stopped, sentNow)
	} else {
		counted = s.TakeBare(stopped)
	}
	if counted {
		s.bits += uint64(canwire.Bits(&f))
	}
}

// counts sums the streams that are expected on the sockets (filtered false) or
// those that are not (filtered true).
type counts struct{ offered, received, gaps, reordered, duplicates, bits uint64 }

func sum(ss []*stream, filtered bool) counts {
	var c counts
	for _, s := range ss {
		if s.filtered != filtered {
			continue
		}
		c.offered += s.Offered()
		c.received += s.Received
		c.gaps += s.Gaps
		c.reordered += s.Reordered
		c.duplicates += s.Duplicates
		c.bits += s.bits
	}
	return c
}

// txWriter writes the workload's TX stream to one socket: frame n (IDs in turn,
// canbus.Payload(n, 8)) is due n periods after the start, on the board's clock
// (the virtual Pi's, whose time passes slower than the host's when it takes host
// stalls out; a real board's is the host's).
type txWriter struct {
	fd      int
	tx      *TXStream
	now     func() int64
	start   int64
	latest  int64 // the latest now() read
	written uint64
	blocked uint64 // writes refused by a full socket buffer (retried)
	b       [socketcan.FrameSize]byte
}

// frame is the writer's n-th frame.
func (t *txWriter) frame(n uint64) can.Frame {
	return can.Frame{ID: t.tx.IDs[n%uint64(len(t.tx.IDs))], IsExtended: t.tx.Extended, Length: 8, Data: canbus.Payload(n, 8)}
}

// due writes the frames due by now and returns how long until the next one is
// due.
func (t *txWriter) due() (time.Duration, error) {
	// The virtual Pi's time may step back a little when it takes out a stall
	// (only what no model has seen yet): pace by the latest time read.
	now := max(t.now(), t.latest)
	t.latest = now
	want := uint64((now-t.start)/int64(t.tx.Period)) + 1
	for t.written < want {
		socketcan.Encode(&t.b, t.frame(t.written))
		if _, err := unix.Write(t.fd, t.b[:]); err != nil {
			if err == unix.EAGAIN || err == unix.EINTR {
				t.blocked++
				break
			}
			return 0, fmt.Errorf("bench: writing a TX frame: %w", err)
		}
		t.written++
	}
	return time.Duration(t.start + int64(t.written)*int64(t.tx.Period) - now), nil
}

// seq is the TX stream's counter, for the frames that come back in loopback mode.
func (t *txWriter) seq(f can.Frame) (n, mod uint64, ok bool) {
	if f.Length != 8 || f.IsRemote {
		return 0, 0, false
	}
	c, ok := canbus.Counter(f)
	return c, 0, ok
}

func (t *txWriter) sends(id uint32, ext bool) bool {
	if ext != t.tx.Extended {
		return false
	}
	for _, x := range t.tx.IDs {
		if x == id {
			return true
		}
	}
	return false
}

// reader is one measured window over the sockets: it writes the TX stream, reads
// every socket, and counts each frame into its stream. It allocates nothing per
// frame.
type reader struct {
	fds     []int // one per controller
	streams []*stream
	tx      *txWriter     // nil without a TX stream
	txDone  func() uint64 // frames the driver reported sent (TX-done), for the drain
	txDone0 uint64
	lost    func() bool // when set, the window ends as soon as it reports a loss

	errorFrames, stray uint64
	elapsed            time.Duration

	batch [256]can.Frame // one socket's frames, read before the senders' counts
}

// newReader reads fds with streams; a TX stream, if any, is written to fds[0],
// paced by now (the board's clock, ns), and, in loopback mode, expected back on
// it: the frames the driver reported sent (txDone) are those offered, in the
// order written.
func newReader(fds []int, streams []*stream, tx *TXStream, loopback bool, now func() int64, txDone func() uint64) *reader {
	r := &reader{fds: fds, streams: streams, txDone: txDone}
	if tx != nil {
		r.tx = &txWriter{fd: fds[0], tx: tx, now: now}
		if loopback {
			// A frame is sent once the driver reports it done, or once it came
			// back: the chip's loopback hands the frame to RX as it completes,
			// and the driver may read it before it handles the TX-done flag.
			w := r.tx
			back := &stream{port: 0, sends: w.sends, seq: w.seq}
			back.sent = func() uint64 { return max(min(r.txDone()-r.txDone0, w.written), back.Next) }
			r.streams = append(r.streams, back)
		}
	}
	return r
}

// txWritten is the TX frames written in the window.
func (r *reader) txWritten() uint64 {
	if r.tx == nil {
		return 0
	}
	return r.tx.written
}

// run measures one window of dur: begin is called at its start and stop at its
// end (before the drain). It then drains for up to drainTimeout: until every
// expected stream has its window's frames and the driver has sent every TX frame
// written.
func (r *reader) run(ctx context.Context, dur time.Duration, begin, stop func()) error {
	var b [socketcan.FrameSize]byte
	pfd := make([]unix.PollFd, len(r.fds))
	for i, fd := range r.fds {
		pfd[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	r.discard()
	if r.txDone != nil {
		r.txDone0 = r.txDone()
	}
	for _, s := range r.streams {
		s.Begin(s.sent())
	}
	begin()
	start := time.Now()
	if r.tx != nil {
		r.tx.start = r.tx.now()
		r.tx.latest = r.tx.start
	}
	deadline := start.Add(dur)
	stopped := false
	var drainUntil time.Time
	for {
		now := time.Now()
		if !stopped && (!now.Before(deadline) || (r.lost != nil && r.lost())) {
			r.elapsed = now.Sub(start)
			for _, s := range r.streams {
				s.Stop(s.sent())
			}
			stop()
			stopped = true
			drainUntil = now.Add(drainTimeout)
		}
		if stopped && (r.complete() || !now.Before(drainUntil)) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := 20 * time.Millisecond
		if r.tx != nil && !stopped {
			next, err := r.tx.due()
			if err != nil {
				return err
			}
			wait = min(wait, max(next, 0))
		}
		ts := unix.NsecToTimespec(int64(wait))
		unix.Ppoll(pfd, &ts, nil)
		for port, fd := range r.fds {
			if err := r.drainSocket(port, fd, &b, stopped); err != nil {
				return err
			}
		}
	}
}

// complete reports whether every expected frame of the window has arrived and
// every TX frame written has been sent.
func (r *reader) complete() bool {
	for _, s := range r.streams {
		if !s.filtered && s.Received < s.Offered() {
			return false
		}
	}
	return r.tx == nil || r.txDone == nil || r.txDone()-r.txDone0 >= r.tx.written
}

func (r *reader) drainSocket(port, fd int, b *[socketcan.FrameSize]byte, stopped bool) error {
	for {
		n := 0
		var rerr error
		for n < len(r.batch) {
			k, err := unix.Read(fd, b[:])
			if err == unix.EAGAIN || err == unix.EINTR {
				break
			}
			if err != nil {
				rerr = fmt.Errorf("bench: reading a socket: %w", err)
				break
			}
			if k != socketcan.FrameSize {
				rerr = fmt.Errorf("bench: %d-byte record from a socket, want %d", k, socketcan.FrameSize)
				break
			}
			f, kind := socketcan.Decode(b)
			switch {
			case kind == socketcan.FrameError:
				r.errorFrames++
			case !kind.Valid():
				r.stray++
			default:
				r.batch[n] = f
				n++
			}
		}
		// Every frame of the batch was sent before these counts are read.
		for _, s := range r.streams {
			if s.port == port {
				s.now = s.sent()
			}
		}
		for _, f := range r.batch[:n] {
			s := r.streamOf(port, f)
			if s == nil {
				r.stray++
				continue
			}
			c, mod, ok := s.seq(f)
			s.take(f, c, mod, ok, stopped, s.now)
		}
		if rerr != nil || n < len(r.batch) {
			return rerr
		}
	}
}

// discard reads and drops what the sockets hold (frames from before the window).
func (r *reader) discard() {
	var b [socketcan.FrameSize]byte
	for _, fd := range r.fds {
		for {
			if _, err := unix.Read(fd, b[:]); err != nil && err != unix.EINTR {
				break
			}
		}
	}
}

func (r *reader) streamOf(port int, f can.Frame) *stream {
	for _, s := range r.streams {
		if s.port == port && s.sends(f.ID, f.IsExtended) {
			return s
		}
	}
	return nil
}
