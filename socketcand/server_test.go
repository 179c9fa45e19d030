package socketcand

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/internal/waitfor"
	"cand/socketcan"
	"cand/socketcand/protocol"
	"cand/socketcand/sctest"
)

// wait bounds every wait of these tests for a frame or a connection.
const wait = sctest.Wait

// owner is the test's end of a bus's socketpair: what cand's owner thread would
// hold.
type owner struct {
	t  *testing.T
	fd int
}

// startServer serves one bus "can0" on loopback; the test plays cand's owner
// thread at the returned end.
func startServer(t *testing.T, cfg Config, stats func() protocol.Stat) (*Server, *owner) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.MaxClients == 0 {
		cfg.MaxClients = 4
	}
	cfg.Log = slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		cfg.Log = slog.Default()
	}
	s, err := Start(cfg, []Bus{{Name: "can0", Fd: fds[1], Stats: stats}})
	if err != nil {
		unix.Close(fds[0])
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		unix.Close(fds[0])
	})
	return s, &owner{t, fds[0]}
}

// write puts a record on the bus, as the owner thread does for a received frame.
func (o *owner) write(rec *[socketcan.FrameSize]byte) {
	if err := socketcan.WriteFrame(o.fd, rec); err != nil {
		o.t.Fatal(err)
	}
}

func (o *owner) writeFrame(f can.Frame) {
	var rec [socketcan.FrameSize]byte
	socketcan.Encode(&rec, f)
	o.write(&rec)
}

// read returns the next record a client sent, as the owner thread would read it.
func (o *owner) read() can.Frame {
	o.t.Helper()
	var rec [socketcan.FrameSize]byte
	deadline := time.Now().Add(wait)
	for {
		_, err := socketcan.ReadFrame(o.fd, &rec, nil)
		if err == nil {
			f, k := socketcan.Decode(&rec)
			if k != socketcan.FrameData {
				o.t.Fatalf("record of kind %v: %v", k, f)
			}
			return f
		}
		if err != unix.EAGAIN || time.Now().After(deadline) {
			o.t.Fatalf("no frame from socketcand: %v", err)
		}
		unix.Poll([]unix.PollFd{{Fd: int32(o.fd), Events: unix.POLLIN}}, int(time.Until(deadline)/time.Millisecond)+1)
	}
}

// dial connects a test client to s.
func dial(t *testing.T, s *Server) *sctest.Client { return sctest.Dial(t, s.Addr().String()) }

// rawClient connects, opens can0 and enters raw mode.
func rawClient(t *testing.T, s *Server) *sctest.Client {
	return sctest.Raw(t, s.Addr().String(), "can0")
}

func stdFrame(id uint32, data ...byte) can.Frame {
	f := can.Frame{ID: id, Length: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

// Raw mode: the bus's data frames and error frames reach the client, remote
// frames do not (the protocol has no form for them); the client's frames reach
// the bus, also when a message is split across writes, with 29-bit identifiers
// told by their 8 digits.
func TestRawModeBothWays(t *testing.T) {
	s, o := startServer(t, Config{}, nil)
	c := rawClient(t, s)

	before := time.Now()
	o.writeFrame(can.Frame{ID: 0x100, IsRemote: true, Length: 2})
	o.writeFrame(stdFrame(0x123, 0x1A, 0x22, 0x03, 0x44))
	c.Frame(stdFrame(0x123, 0x1A, 0x22, 0x03, 0x44), before)
	o.writeFrame(can.Frame{ID: 0x18DAF110, IsExtended: true, Length: 0})
	c.Frame(can.Frame{ID: 0x18DAF110, IsExtended: true}, before)

	var e socketcan.ErrorFrame
	e.Controller(socketcan.CAN_ERR_CRTL_TX_PASSIVE)
	e.Counters(128, 3)
	var rec [socketcan.FrameSize]byte
	e.Encode(&rec)
	o.write(&rec)
	if got, m := c.NextParsed(); m.Kind != protocol.KindErrorFrame || m.ErrorFrame != e {
		t.Fatalf("got %q, want error frame %+v", got, e)
	}

	c.Send("< se", "nd 1ABC", "DEF0 2 1 f", "1 >< send 7FF 0  >")
	if f := o.read(); f != (can.Frame{ID: 0x1ABCDEF0, IsExtended: true, Length: 2, Data: can.Data{0x01, 0xF1}}) {
		t.Fatalf("bus got %v, want 1ABCDEF0#01F1", f)
	}
	if f := o.read(); f != stdFrame(0x7FF) {
		t.Fatalf("bus got %v, want 7FF#", f)
	}
	c.Send("< send 800 0 >")
	c.Expect("< error can_id 800 is above 7FF, the largest 11-bit identifier; write a 29-bit one with 8 digits >")
	c.Send("< echo >")
	c.Expect("< echo >")
}

// A client's frame reaches the other raw-mode clients of the bus, not itself, as
// on a SocketCAN interface.
func TestOtherClientsSeeSentFrames(t *testing.T) {
	s, o := startServer(t, Config{}, nil)
	a, b := rawClient(t, s), rawClient(t, s)
	before := time.Now()
	a.Send("< send 321 1 aa >")
	if f := o.read(); f != stdFrame(0x321, 0xAA) {
		t.Fatalf("bus got %v", f)
	}
	b.Frame(stdFrame(0x321, 0xAA), before)
	// a's next message is the bus's next frame, not its own.
	o.writeFrame(stdFrame(0x001, 0x01))
	a.Frame(stdFrame(0x001, 0x01), before)
	b.Frame(stdFrame(0x001, 0x01), before)
}

// Control mode sends "< stat ... >" every interval from the bus's counters, and
// stops before the ok of leaving it; raw-mode frames stop before the ok of
// leaving raw mode.
func TestControlModeStatistics(t *testing.T) {
	s, o := startServer(t, Config{}, func() protocol.Stat { return protocol.Stat{RXBytes: 80, RXFrames: 10, TXBytes: 16, TXFrames: 2} })
	c := rawClient(t, s)
	c.Send("< controlmode >")
	c.Expect("< ok >")
	c.Send("< send 123 0 >")
	c.Expect("< error unknown command >")
	c.Send("< statistics 20 >")
	c.Expect("< stat 80 10 16 2 >")
	c.Expect("< stat 80 10 16 2 >")
	c.Send("< rawmode >")
	for {
		got, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got == "< ok >" {
			break
		}
		if got != "< stat 80 10 16 2 >" {
			t.Fatalf("got %q before the ok of rawmode", got)
		}
	}
	o.writeFrame(stdFrame(0x42))
	c.Frame(stdFrame(0x42), time.Time{})
	c.Send("< bcmmode >")
	c.Expect("< ok >")
	c.Send("< subscribe 0 0 123 >")
	c.Expect("< error subscribe is not supported: use rawmode >")
	o.writeFrame(stdFrame(0x43))
	c.Send("< echo >")
	c.Expect("< echo >")
}

// Before a bus is open only open is understood; a bus that does not exist ends
// the connection, as in the reference server.
func TestOpen(t *testing.T) {
	s, _ := startServer(t, Config{}, nil)
	c := dial(t, s)
	c.Expect("< hi >")
	c.Send("< rawmode >")
	c.Expect("< error unknown command >")
	c.Send("< open can1 >")
	c.Expect("< error could not open bus >")
	c.ExpectEOF()

	c = dial(t, s)
	c.Expect("< hi >")
	c.Send("< can0 B 500000 875 0 0 0 0 0 0 >")
	c.Expect("< error cand sets bit timing and controller modes from its configuration file >")
	c.ExpectEOF()

	c = dial(t, s)
	c.Expect("< hi >")
	c.Send("< open can0 >< isotpmode >")
	c.Expect("< ok >")
	c.Expect("< error isotp mode is not supported >")
}

func TestMessageTooLong(t *testing.T) {
	s, _ := startServer(t, Config{}, nil)
	c := dial(t, s)
	c.Expect("< hi >")
	long := make([]byte, protocol.MaxMessage)
	for i := range long {
		long[i] = 'x'
	}
	c.Send("< ", string(long))
	c.Expect("< error message too long >")
	c.ExpectEOF()
}

// A client whose address the allow-list does not hold is told so and hung up on.
func TestAllowList(t *testing.T) {
	s, _ := startServer(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, nil)
	c := dial(t, s)
	c.Expect("< error client address not allowed >")
	c.ExpectEOF()

	s, _ = startServer(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}}, nil)
	c = dial(t, s)
	c.Expect("< hi >")
}

// Off loopback, Start refuses to serve without an allow-list.
func TestNoAllowListOffLoopback(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	s, err := Start(Config{Listen: "0.0.0.0:0"}, []Bus{{Name: "can0", Fd: fds[1]}})
	if err == nil {
		s.Close()
		t.Fatal("Start served 0.0.0.0 without an allow-list")
	}
	// Start closed the bus's descriptor: the other end reads EOF.
	var rec [socketcan.FrameSize]byte
	if _, err := socketcan.ReadFrame(fds[0], &rec, nil); err != io.EOF {
		t.Fatalf("bus descriptor still open after a failed Start: %v", err)
	}
}

// Beyond max_clients a client is told so; once one leaves, the next gets in.
func TestMaxClients(t *testing.T) {
	s, _ := startServer(t, Config{MaxClients: 1}, nil)
	first := dial(t, s)
	first.Expect("< hi >")
	second := dial(t, s)
	second.Expect("< error too many clients >")
	second.ExpectEOF()
	first.Conn.Close()
	var got string
	var err error
	if !waitfor.Until(wait, func() bool {
		got, err = dial(t, s).Next()
		if got != "< hi >" && got != "< error too many clients >" {
			t.Fatalf("after the first client left: %q (%v)", got, err)
		}
		return got == "< hi >"
	}) {
		t.Fatalf("after the first client left: %q (%v)", got, err)
	}
}

// The beacon goes to the configured address every interval, naming the server's
// address and its buses.
func TestBeacon(t *testing.T) {
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	to := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	s, _ := startServer(t, Config{Beacon: to, BeaconEvery: 20 * time.Millisecond, Name: "pi", Description: "cand test"}, nil)
	want := `<CANBeacon name="pi" type="SocketCAN" description="cand test"><URL>can://` + s.Addr().String() + `</URL><Bus name="can0"/></CANBeacon>`
	buf := make([]byte, 1500)
	for i := range 2 {
		pc.SetReadDeadline(time.Now().Add(wait))
		n, err := pc.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("beacon %d: %q (%v), want %q", i, buf[:n], err, want)
		}
	}
}
