package daemon

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/internal/waitfor"
	"cand/mcp2515"
	"cand/metrics"
	"cand/socketcan"
	"cand/socketcan/slcan"
)

// fakeSLCANLinks records what the adapter does to its netdev.
type fakeSLCANLinks struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeSLCANLinks) SetUp(name string, up bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, map[bool]string{true: "up", false: "down"}[up])
	return nil
}

func (f *fakeSLCANLinks) IsUp(string) (bool, error) { return true, nil }

func (f *fakeSLCANLinks) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ",")
}

// slcanBench is an adapter on a plain pseudo-terminal: the test writes the
// kernel's lines to the slave and reads cand's there, and plays the owner
// thread on the other end of the socketpair (owner), unless owner is given.
type slcanBench struct {
	t     *testing.T
	a     *slcanPort
	slave *os.File
	owner int // the test's end of the socketpair
	links *fakeSLCANLinks
	kick  chan struct{}
	m     *metrics.Controller
	rates chan uint32 // bitrates inForce recorded
	got   strings.Builder
	seen  int // how much of got an expect matched
}

func newSLCANBench(t *testing.T, owner *bridge.Owner, pairFd int, cc *config.Controller) *slcanBench {
	t.Helper()
	master, slave, err := slcan.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	b := &slcanBench{t: t, slave: slave, links: &fakeSLCANLinks{}, kick: make(chan struct{}, 1), rates: make(chan uint32, 8)}
	if pairFd < 0 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		b.owner, pairFd = fds[0], fds[1]
		t.Cleanup(func() { unix.Close(fds[0]) })
	}
	if owner == nil {
		owner = &bridge.Owner{}
	}
	b.m = metrics.New("test").AddController("sim0", "can0")
	if cc == nil {
		cc = &config.Controller{Name: "sim0", Bitrate: 500_000, OscillatorHz: 16_000_000, RestartMs: new(uint32)}
	}
	b.a = &slcanPort{i: 0, cc: cc, name: "can0", log: slog.New(slog.NewTextHandler(io.Discard, nil)), m: b.m, owner: owner,
		inForce: func(bt mcp2515.BitTiming) { b.rates <- bt.Bitrate }, kickc: b.kick, links: b.links,
		master: master, closeTT: func() error { slave.Close(); return master.Close() },
		pair: os.NewFile(uintptr(pairFd), "pair")}
	b.a.rate.Store(500_000)
	b.a.start()
	t.Cleanup(b.a.close)
	return b
}

func (b *slcanBench) kernelWrites(s string) {
	b.t.Helper()
	if _, err := b.slave.Write([]byte(s)); err != nil {
		b.t.Fatal(err)
	}
}

// expect reads the slave until what cand wrote since the last match holds want
// (or one of more).
func (b *slcanBench) expect(want string, more ...string) {
	b.t.Helper()
	buf := make([]byte, 4096)
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, w := range append([]string{want}, more...) {
			if k := strings.Index(b.got.String()[b.seen:], w); k >= 0 {
				b.seen += k + len(w)
				return
			}
		}
		b.slave.SetReadDeadline(deadline)
		n, err := b.slave.Read(buf)
		if err != nil {
			b.t.Fatalf("waiting for %q, got %q: %v", want, b.got.String(), err)
		}
		b.got.Write(buf[:n])
	}
}

// ownerReads reads one record from the socketpair as the owner would.
func (b *slcanBench) ownerReads() (can.Frame, socketcan.FrameKind) {
	b.t.Helper()
	var rec [socketcan.FrameSize]byte
	waitfor.Cond(b.t, 10*time.Second, "a record from the adapter", func() bool {
		n, err := unix.Read(b.owner, rec[:])
		return err == nil && n == socketcan.FrameSize
	})
	return socketcan.Decode(&rec)
}

func (b *slcanBench) ownerWrites(build func(rec *[socketcan.FrameSize]byte)) {
	b.t.Helper()
	var rec [socketcan.FrameSize]byte
	build(&rec)
	if _, err := unix.Write(b.owner, rec[:]); err != nil {
		b.t.Fatal(err)
	}
}

func errorRecord(build func(e *socketcan.ErrorFrame)) func(rec *[socketcan.FrameSize]byte) {
	return func(rec *[socketcan.FrameSize]byte) {
		var e socketcan.ErrorFrame
		build(&e)
		e.Encode(rec)
	}
}

// The kernel's frames reach the owner in order; commands open and close the
// link (with a prompt to the link watch); lines cand does not take are counted,
// and the frames after them still go through.
func TestSLCANFromKernel(t *testing.T) {
	b := newSLCANBench(t, nil, -1, nil)
	b.kernelWrites("C\rS6\rO\rt1238DEADBEEF00112233\rV\rt12\rT12ABCDEF2AA55\rr1230\r")
	for _, want := range []can.Frame{
		{ID: 0x123, Length: 8, Data: can.Data{0xde, 0xad, 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33}},
		{ID: 0x12abcdef, IsExtended: true, Length: 2, Data: can.Data{0xaa, 0x55}},
		{ID: 0x123, IsRemote: true},
	} {
		if f, k := b.ownerReads(); !k.Valid() || f != want {
			t.Fatalf("owner read %v %+v, want %+v", k, f, want)
		}
	}
	waitfor.Cond(t, 5*time.Second, "the lines counted", func() bool { return b.a.lines[slcan.Malformed].Load() == 1 })
	for k, want := range map[slcan.Kind]uint64{slcan.Frame: 3, slcan.Bitrate: 1, slcan.Open: 1, slcan.Close: 1, slcan.Unknown: 1, slcan.Malformed: 1} {
		if got := b.a.lines[k].Load(); got != want {
			t.Errorf("%v lines: %d, want %d", k, got, want)
		}
	}
	if st := b.a.linkState(); st != bridge.LinkUp {
		t.Errorf("after O: link %v, want up", st)
	}
	<-b.kick
	b.kernelWrites("C\r")
	<-b.kick
	waitfor.Cond(t, 5*time.Second, "the link down after C", func() bool { return b.a.linkState() == bridge.LinkDown })
}

// The owner's frames and error frames reach the kernel as lines; after a bus-off
// the controller recovered from, the netdev is taken down and up (the kernel's
// slcan turned its carrier off), while the link the controller follows stays up.
func TestSLCANToKernel(t *testing.T) {
	b := newSLCANBench(t, nil, -1, nil)
	b.kernelWrites("O\r")
	// The owner's lines do not wait for O: wait for it here, or the link
	// checked at the end may be the one before O was read.
	waitfor.Cond(t, 5*time.Second, "the link up after O", func() bool { return b.a.linkState() == bridge.LinkUp })
	b.ownerWrites(func(rec *[socketcan.FrameSize]byte) {
		socketcan.Encode(rec, can.Frame{ID: 0x321, Length: 2, Data: can.Data{0xaa, 0xbb}})
	})
	b.expect("t3212AABB\r")
	b.ownerWrites(errorRecord(func(e *socketcan.ErrorFrame) {
		e.Controller(socketcan.CAN_ERR_CRTL_RX_PASSIVE | socketcan.CAN_ERR_CRTL_RX_OVERFLOW)
		e.Counters(128, 130)
	}))
	b.expect("sp130128\re1o\r")
	b.ownerWrites(errorRecord(func(e *socketcan.ErrorFrame) {
		e.Add(socketcan.CAN_ERR_BUSOFF)
		e.Counters(255, 0)
	}))
	b.expect("sb000255\r")
	if got := b.links.got(); got != "" {
		t.Fatalf("netdev changed at bus-off: %s", got)
	}
	b.ownerWrites(errorRecord(func(e *socketcan.ErrorFrame) { e.Add(socketcan.CAN_ERR_RESTARTED) }))
	b.expect("sa000000\r")
	waitfor.Cond(t, 5*time.Second, "the netdev down and up", func() bool { return b.links.got() == "down,up" })
	if st := b.a.linkState(); st != bridge.LinkUp {
		t.Errorf("link %v after the carrier cycle, want up", st)
	}
}

// While the owner's socket stays full, the pseudo-terminal is still read: a
// command after many frames is taken within the kernel's second, and a frame
// that found no room in cmdSlack is dropped, counted and reported to the kernel
// as a TX overrun.
func TestSLCANBackPressureKeepsCommandsMoving(t *testing.T) {
	b := newSLCANBench(t, nil, -1, nil)
	// The smallest send buffer the kernel grants: a few records.
	if err := unix.SetsockoptInt(int(b.a.pair.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF, 1); err != nil {
		t.Fatal(err)
	}
	b.kernelWrites("O\r")
	var lines strings.Builder
	for i := range 200 {
		lines.Write(slcan.AppendFrame(nil, can.Frame{ID: uint32(i), Length: 1, Data: can.Data{byte(i)}}))
	}
	b.kernelWrites(lines.String())
	b.expect("e1O\r")
	start := time.Now()
	b.kernelWrites("C\r")
	waitfor.Cond(t, 5*time.Second, "C read behind the full queue", func() bool { return b.a.linkState() == bridge.LinkDown })
	t.Logf("C taken %v after it was written, behind %d dropped frames", time.Since(start), b.a.dropped.Load())
	if b.a.dropped.Load() == 0 || b.m.TXDropped.Load() != b.a.dropped.Load() {
		t.Fatalf("dropped %d, cand_tx_dropped_total %d", b.a.dropped.Load(), b.m.TXDropped.Load())
	}
	// Every frame is either in the socket or counted dropped.
	n := uint64(0)
	var rec [socketcan.FrameSize]byte
	for {
		if _, err := unix.Read(b.owner, rec[:]); err != nil {
			break
		}
		n++
	}
	waitfor.Cond(t, 5*time.Second, "the rest of the frames accounted for", func() bool {
		for {
			if _, err := unix.Read(b.owner, rec[:]); err != nil {
				break
			}
			n++
		}
		return n+b.a.dropped.Load() == 200
	})
}

// An S the MCP2515 cannot make is refused: the link stays down and the netdev
// is set down. A rate equal to the one in force changes nothing.
func TestSLCANRefusedBitrate(t *testing.T) {
	// Too slow a crystal for 1 Mbit/s.
	b := newSLCANBench(t, nil, -1, &config.Controller{Name: "sim0", Bitrate: 500_000, OscillatorHz: 1_000_000, RestartMs: new(uint32)})
	b.kernelWrites("C\rS8\rO\r")
	waitfor.Cond(t, 5*time.Second, "the netdev set down", func() bool { return b.links.got() == "down" })
	if st := b.a.linkState(); st != bridge.LinkDown || !b.a.refused.Load() {
		t.Fatalf("link %v, refused %v; want down, refused", st, b.a.refused.Load())
	}
	b.kernelWrites("C\rS6\rO\r")
	waitfor.Cond(t, 5*time.Second, "the link up at the rate in force", func() bool { return b.a.linkState() == bridge.LinkUp })
	select {
	case r := <-b.rates:
		t.Fatalf("bitrate %d recorded; the rate in force was asked for", r)
	default:
	}
}

// On the daemon: `S5` reprograms the controller to 250 kbit/s (its frames are
// then destroyed on the 500 kbit/s bus, which the error state lines show), and
// `S6` brings it back: the answering peer answers again.
func TestSLCANBitrateReprogramsTheController(t *testing.T) {
	r := newRigConfig(t).peer(answerPeer("echo", 1)).start()
	pair, err := unix.Dup(r.hostFd(0))
	if err != nil {
		t.Fatal(err)
	}
	b := newSLCANBench(t, r.d.Owner, pair, &r.cfg.Controllers[0])
	b.kernelWrites("O\rt1001AA\r")
	b.expect("t1011AA\r")
	b.kernelWrites("C\rS5\rO\r")
	if got := <-b.rates; got != 250_000 {
		t.Fatalf("bitrate in force %d, want 250000", got)
	}
	b.kernelWrites("t1001AA\r")
	// Each attempt at 250 kbit/s is destroyed: TEC climbs past 96, and then 128
	// and 255 (a slow run may report only the later states).
	b.expect("sw", "sp", "sb")
	b.kernelWrites("C\rS6\rO\r")
	if got := <-b.rates; got != 500_000 {
		t.Fatalf("bitrate in force %d, want 500000", got)
	}
	b.kernelWrites("t2002BBCC\r")
	b.expect("t2012BBCC\r")
}
