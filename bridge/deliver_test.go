package bridge

import (
	"fmt"
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/hw/bcm2835"
	"cand/hw/gpio"
	"cand/internal/kernelop"
	"cand/internal/mono"
	"cand/mcp2515"
	"cand/socketcan"
)

// readAll reads every record waiting on the test's end of the socketpair.
func (r *portRig) readAll() [][socketcan.FrameSize]byte {
	r.t.Helper()
	var got [][socketcan.FrameSize]byte
	for {
		var b [socketcan.FrameSize]byte
		if _, err := unix.Read(r.host, b[:]); err != nil {
			if err == unix.EAGAIN {
				return got
			}
			r.t.Fatal(err)
		}
		got = append(got, b)
	}
}

// A ring forced full loses the frames it cannot take, counted and reported with
// one RX overflow error frame behind the frames it holds; nothing else is lost or
// reordered.
func TestRingFullLosesCountedFrames(t *testing.T) {
	r := newPortRig(t)
	p := r.port
	p.ring = newRing(4)
	p.M.TEC.Set(5)
	p.M.REC.Set(7)
	frames := make([]can.Frame, 7)
	for i := range frames {
		frames[i] = can.Frame{ID: uint32(0x100 + i), Length: 1, Data: can.Data{byte(i)}}
		p.Received(&frames[i])
	}
	p.deliver()
	got := r.readAll()
	if len(got) != 5 {
		t.Fatalf("%d records on the socket, want 4 frames and an error frame", len(got))
	}
	for i := range 4 {
		f, kind := socketcan.Decode(&got[i])
		if !kind.Valid() || f != frames[i] {
			t.Fatalf("record %d is %v (kind %v), want %v", i, f, kind, frames[i])
		}
	}
	var want socketcan.ErrorFrame
	want.Class = socketcan.CAN_ERR_CRTL | socketcan.CAN_ERR_CNT
	want.Data[1] = socketcan.CAN_ERR_CRTL_RX_OVERFLOW
	want.Data[6], want.Data[7] = 5, 7
	var wantRec [socketcan.FrameSize]byte
	want.Encode(&wantRec)
	if got[4] != wantRec {
		t.Fatalf("record 4 is % x, want the overflow error frame % x", got[4], wantRec)
	}
	m := p.M
	if m.RXRingDrops.Load() != 3 || m.RXFrames.Load() != 4 || m.ErrorFrames.Load() != 1 || m.RXRingHighWater.Load() != 4 {
		t.Fatalf("ring drops %d, frames %d, error frames %d, high water %d; want 3, 4, 1, 4",
			m.RXRingDrops.Load(), m.RXFrames.Load(), m.ErrorFrames.Load(), m.RXRingHighWater.Load())
	}
}

// seamLog records, in order, the SPI transfers of the port's controller (with the
// status byte READ STATUS returned) and the system calls the owner thread makes.
type seamLog struct {
	dev    Transport
	events []string
}

func (s *seamLog) Transfer(tx, rx []byte, t *bcm2835.Timing) error {
	err := s.dev.Transfer(tx, rx, t)
	s.note(tx, rx)
	return err
}

func (s *seamLog) TransferThen(tx, rx []byte, first int, more func([]byte) int, t *bcm2835.Timing) (int, error) {
	n, err := s.dev.(TransportThen).TransferThen(tx, rx, first, more, t)
	s.note(tx, rx)
	return n, err
}

func (s *seamLog) note(tx, rx []byte) {
	switch {
	case tx[0] == mcp2515.InstrReadStatus:
		s.events = append(s.events, fmt.Sprintf("status %02x", mcp2515.Status(rx[1])&mcp2515.StatusRXAll))
	case tx[0]&0xF9 == mcp2515.InstrReadRxBuf:
		s.events = append(s.events, "read rx")
	default:
		s.events = append(s.events, fmt.Sprintf("spi %02x", tx[0]))
	}
}

func (s *seamLog) Enter(op kernelop.Op) { s.events = append(s.events, "syscall "+op.String()) }
func (s *seamLog) Exit(kernelop.Op)     {}

// Chip first: woken by an INT edge with both RX buffers full and a TX frame
// waiting in the socket, the owner reads the status and both buffers before any
// system call: the edge events are read after the drain, and then the frames
// are written, in bus order, each paired with its edge. The TX frame waits for
// the loop's turn. The inline path (kept for comparison) reads the events first.
func TestDrainBeforeAnySystemCall(t *testing.T) {
	for _, tc := range []struct {
		inline bool
		want   []string
	}{
		// INT is high once both are read: no error pass, no second pass.
		{false, []string{"status 03", "read rx", "read rx", "syscall event_read", "syscall socket_write", "syscall socket_write"}},
		{true, []string{"syscall event_read", "status 03", "read rx", "read rx", "syscall socket_write", "syscall socket_write"}},
	} {
		t.Run(fmt.Sprintf("inline=%v", tc.inline), func(t *testing.T) { drainSteps(t, tc.inline, tc.want) })
	}
}

func drainSteps(t *testing.T, inline bool, want []string) {
	r := newPortRig(t)
	p := r.port
	p.inline = inline
	log := &seamLog{dev: p.spi.dev}
	p.spi.dev, p.spi.then = log, log
	p.kernel = meter{log}
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pipe[0]); unix.Close(pipe[1]) })
	p.intFd = pipe[0]

	first := can.Frame{ID: 0x321, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	second := can.Frame{ID: 0x322, Length: 2, Data: can.Data{9, 10}}
	r.bothFull(first, second)
	edge := mono.Now()
	var ev [gpio.EventSize]byte
	(&gpio.Event{TimestampNs: uint64(edge), ID: gpio.EventFallingEdge, Offset: uint32(r.intPin), Seqno: 1, LineSeqno: 1}).Encode(ev[:])
	if _, err := unix.Write(pipe[1], ev[:]); err != nil {
		t.Fatal(err)
	}
	var tx [socketcan.FrameSize]byte
	socketcan.Encode(&tx, can.Frame{ID: 0x7FF, Length: 1})
	if _, err := unix.Write(r.host, tx[:]); err != nil {
		t.Fatal(err)
	}
	p.sockReadable = true

	log.events = nil
	if err := p.intEvents(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(log.events) != fmt.Sprint(want) {
		t.Fatalf("owner's steps %q, want %q", log.events, want)
	}
	recs := r.readAll()
	if len(recs) != 2 {
		t.Fatalf("%d records on the socket, want 2", len(recs))
	}
	for k, w := range []can.Frame{first, second} {
		if f, _ := socketcan.Decode(&recs[k]); f != w {
			t.Fatalf("record %d is %v, want %v", k, f, w)
		}
	}
	if n := p.M.RXEndToEnd.Count(); n != 2 {
		t.Fatalf("%d end-to-end latencies, want 2 (each frame paired with the edge)", n)
	}
	if n := p.M.IntToHandler.Count(); n != 1 {
		t.Fatalf("%d edge → handler latencies, want 1", n)
	}
}
