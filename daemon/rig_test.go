package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/inproc"
	"cand/sim"
	"cand/socketcan"
)

// rig runs the whole daemon in-process on the virtual Pi, with one end of a
// SOCK_SEQPACKET socketpair as each controller's CAN socket (same 16-byte frames
// as a raw CAN socket). The test holds the other end: what it reads is what
// candump would show, what it writes is what cansend would send.
type rig struct {
	t    testing.TB
	cfg  *config.Config
	pi   *sim.Pi
	h    *inproc.Harness[*Daemon]
	host []int // the test's ends (see hostFd): h.Host, or an interface's sockets
	d    *Daemon

	stopped bool  // by stop or waitExit
	err     error // what Run returned (set by stop)
	// expectErr: the test makes the daemon fail, and checks err itself.
	expectErr bool
	hostMu    sync.Mutex // host, once the test runs (a recreated interface replaces an end)
	links     *fakeLinks // the link-event source, with rigOptions.links
	log       *logBuffer // everything the daemon logged
	books     books      // what the test wrote and read, for checkConservation
}

// rigQueues are the rig's socket queues: deep on the daemon's receiving side (the
// stand-in for SO_RCVBUFFORCE) and on the test's sending side.
func rigQueues() inproc.Queues { return inproc.Queues{HostSend: 8 << 20, DaemonReceive: 8 << 20} }

// startRig runs the daemon with cfg (see rigConfig) and returns once every
// controller is bridging. The daemon stops when the test ends.
func startRig(t testing.TB, cfg *config.Config, o rigOptions) *rig {
	t.Helper()
	pi, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, cfg: cfg, pi: pi}
	r.log = &logBuffer{hook: o.onLog}
	r.books.init(len(cfg.Controllers))
	for _, fn := range o.before {
		fn(pi)
	}
	opt := Options{Version: "test", Log: slog.New(slog.NewTextHandler(r.log, nil)), Sim: pi, ConfigPath: o.configPath}
	if o.links {
		r.links = newFakeLinks(r)
		opt.Links = r.links
	}
	r.start(inproc.Options{
		Controllers: len(cfg.Controllers),
		// The daemon makes its own socketpair and hands the other end to
		// socketcand; the test talks to socketcand.
		NoSocket: func(i int) bool { return cfg.Controllers[i].Interface.Kind == config.KindNone },
		Queues:   rigQueues(),
		Metrics:  true,
	}, opt)
	r.host = r.h.Host
	r.books.startSampling(r)
	return r
}

// start runs the daemon with opt, on the sockets and listener that po makes, until
// it is ready; the test ends it (stop) and then closes the sockets.
func (r *rig) start(po inproc.Options, opt Options) {
	r.t.Helper()
	h, err := inproc.Start(context.Background(), po, func(ctx context.Context, e inproc.Env[*Daemon]) error {
		if po.Controllers > 0 {
			opt.Sockets = e.Sockets
		}
		if po.Metrics {
			opt.MetricsListener = e.Metrics
		}
		opt.Ready = e.Ready
		return Run(ctx, r.cfg, opt)
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.h, r.d = h, h.D
	r.t.Cleanup(func() { h.Close() })
	r.t.Cleanup(r.stop) // first: cleanups run last one first
}

// hostFd is the test's end of controller i's socket now.
func (r *rig) hostFd(i int) int {
	r.hostMu.Lock()
	defer r.hostMu.Unlock()
	return r.host[i]
}

// logStages logs each controller's stage latencies (for diagnosing failures).
func (r *rig) logStages() {
	for i, p := range r.d.Owner.Ports {
		m := p.M
		r.t.Logf("controller %d: int_to_handler %v | handler_to_cs %v | rx_end_to_end %v | int_handled %v | tx_socket_to_rts %v | overflows %d rx %d tx %d",
			i, m.IntToHandler.Snapshot(), m.HandlerToCS.Snapshot(), m.RXEndToEnd.Snapshot(), m.IntHandled.Snapshot(), m.TXSocketToRTS.Snapshot(),
			m.RXOverflows.Load(), m.RXFrames.Load(), m.TXFrames.Load())
	}
}

func (r *rig) stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	ok, err := r.h.Stop()
	r.err = err
	switch {
	case !ok:
		r.t.Errorf("daemon did not stop within %v", inproc.StopTimeout)
	case err != nil && !r.expectErr:
		r.t.Errorf("daemon: %v", err)
	}
	r.books.stopSampling(r)
}

// waitExit waits up to d for the daemon to stop by itself and returns what Run
// returned.
func (r *rig) waitExit(d time.Duration) error {
	r.t.Helper()
	ok, err := r.h.Exited(d)
	if !ok {
		r.t.Fatalf("daemon did not stop by itself within %v", d)
	}
	r.err, r.stopped = err, true
	r.books.stopSampling(r)
	return r.err
}

// read returns the next frame the daemon wrote for controller i, waiting up to d.
func (r *rig) read(i int, d time.Duration) (can.Frame, socketcan.FrameKind, error) {
	var b [socketcan.FrameSize]byte
	deadline := time.Now().Add(d)
	for {
		fd := r.hostFd(i)
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		left := time.Until(deadline)
		if left <= 0 {
			return can.Frame{}, 0, errors.New("timeout")
		}
		unix.Poll(pfd, int(left/time.Millisecond)+1)
		n, err := unix.Read(fd, b[:])
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return can.Frame{}, 0, err
		}
		if n != socketcan.FrameSize {
			return can.Frame{}, 0, errors.New("short record")
		}
		f, k := socketcan.Decode(&b)
		r.books.noteRead(i, f, k)
		return f, k, nil
	}
}

func (r *rig) write(i int, f can.Frame) {
	var b [socketcan.FrameSize]byte
	socketcan.Encode(&b, f)
	for {
		fd := r.hostFd(i)
		_, err := unix.Write(fd, b[:])
		if err == unix.EAGAIN || err == unix.ENOBUFS {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			unix.Poll(pfd, 100)
			continue
		}
		if err != nil {
			r.t.Error(err) // may run on a sender goroutine: no Fatal
			return
		}
		r.books.noteWrite(i, f)
		return
	}
}

// readAll collects the frames cand writes for controller i until none arrives for
// quiet.
func (r *rig) readAll(i int, quiet time.Duration) []can.Frame {
	var out []can.Frame
	for {
		f, k, err := r.read(i, quiet)
		if err != nil {
			return out
		}
		if k == socketcan.FrameError {
			f.ID |= socketcan.CAN_ERR_FLAG
		}
		out = append(out, f)
	}
}

// countDataByID reads n data frames of controller 0, each within 5 s, and counts
// them by ID. RX-overflow error frames may come between them: a test of what
// passes (filters, modes) on a loaded host can meet an overflow, which its
// conservation check accounts for. Anything else fails the test.
func (r *rig) countDataByID(n int) map[uint32]int {
	r.t.Helper()
	byID := map[uint32]int{}
	for i := 0; i < n; {
		f, k, err := r.read(0, 5*time.Second)
		switch {
		case err == nil && isRXOverflow(f, k):
		case err != nil || k != socketcan.FrameData:
			r.t.Fatalf("frame %d: %v %v %v", i, f, k, err)
		default:
			byID[f.ID]++
			i++
		}
	}
	return byID
}

// isRXOverflow tells whether f is cand's RX-overflow error frame.
func isRXOverflow(f can.Frame, k socketcan.FrameKind) bool {
	return k == socketcan.FrameError && f.ID&^socketcan.CAN_ERR_CNT == socketcan.CAN_ERR_CRTL && f.Data[1] == socketcan.CAN_ERR_CRTL_RX_OVERFLOW
}

// expectAnswer reads until a data frame arrives and checks it is want. Error frames
// before it may only be controller-state reports (a restarted controller on a bus
// still stuck counts receive errors).
func (r *rig) expectAnswer(want can.Frame) {
	r.t.Helper()
	for {
		f, k, err := r.read(0, 5*time.Second)
		switch {
		case err != nil:
			r.t.Fatalf("waiting for %v: %v", want, err)
		case k == socketcan.FrameError && f.ID&^socketcan.CAN_ERR_CNT == socketcan.CAN_ERR_CRTL:
			continue
		case k != socketcan.FrameData || f != want:
			r.t.Fatalf("got %v %v, want %v", f, k, want)
		}
		return
	}
}
