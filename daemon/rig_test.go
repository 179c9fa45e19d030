package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/sim"
	"cand/socketcan"
)

// rig runs the whole daemon in-process on the virtual Pi, with one end of a
// SOCK_SEQPACKET socketpair as each controller's CAN socket (same 16-byte frames
// as a raw CAN socket). The test holds the other end: what it reads is what
// candump would show, what it writes is what cansend would send.
type rig struct {
	t      testing.TB
	cfg    *config.Config
	pi     *sim.Pi
	host   []int // the test's ends (see hostFd)
	d      *Daemon
	cancel context.CancelFunc
	done   chan error

	err error // what Run returned (set by stop)
	// expectErr: the test makes the daemon fail, and checks err itself.
	expectErr bool
	hostMu    sync.Mutex // host, once the test runs (a recreated interface replaces an end)
	links     *fakeLinks // the link-event source, with rigOptions.links
	log       *logBuffer // everything the daemon logged
	books     books      // what the test wrote and read, for checkConservation
}

// startRig runs the daemon with cfg (see rigConfig) and returns once every
// controller is bridging. The daemon stops when the test ends.
func startRig(t testing.TB, cfg *config.Config, o rigOptions) *rig {
	t.Helper()
	pi, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, cfg: cfg, pi: pi, done: make(chan error, 1)}
	var daemonEnds []int
	for _, cc := range cfg.Controllers {
		if cc.Interface.Kind == config.KindNone {
			// The daemon makes its own socketpair and hands the other end to
			// socketcand; the test talks to socketcand.
			r.host = append(r.host, -1)
			daemonEnds = append(daemonEnds, -1)
			continue
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		// A deep queue on the daemon's side: the stand-in for SO_RCVBUFFORCE.
		unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
		r.host = append(r.host, fds[0])
		daemonEnds = append(daemonEnds, fds[1])
	}
	t.Cleanup(func() {
		for _, fd := range append(r.host, daemonEnds...) {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	})
	r.log = &logBuffer{hook: o.onLog}
	r.books.init(len(cfg.Controllers))
	for _, fn := range o.before {
		fn(pi)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	ready := make(chan *Daemon, 1)
	opt := Options{Version: "test", Log: slog.New(slog.NewTextHandler(r.log, nil)), Sockets: daemonEnds, Sim: pi,
		MetricsListener: ln, Ready: func(d *Daemon) { ready <- d }, ConfigPath: o.configPath}
	if o.links {
		r.links = newFakeLinks(r)
		opt.Links = r.links
	}
	go func() {
		r.done <- Run(ctx, cfg, opt)
	}()
	select {
	case r.d = <-ready:
	case err := <-r.done:
		t.Fatalf("daemon exited before ready: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("daemon not ready after 20s")
	}
	r.books.startSampling(r)
	t.Cleanup(r.stop)
	return r
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
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case r.err = <-r.done:
		if r.err != nil && !r.expectErr {
			r.t.Errorf("daemon: %v", r.err)
		}
	case <-time.After(10 * time.Second):
		r.t.Error("daemon did not stop within 10s")
	}
	r.books.stopSampling(r)
}

// waitExit waits up to d for the daemon to stop by itself and returns what Run
// returned.
func (r *rig) waitExit(d time.Duration) error {
	r.t.Helper()
	select {
	case r.err = <-r.done:
	case <-time.After(d):
		r.t.Fatalf("daemon did not stop by itself within %v", d)
	}
	r.cancel()
	r.cancel = nil
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

// waitFor polls cond every millisecond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}
