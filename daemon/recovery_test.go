package daemon

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/waitfor"
	"cand/sim/canbus"
	"cand/sim/clock/gaptrace"
	"cand/sim/mcpchip"
	"cand/socketcan"
)

// Error states: with no other node to ACK, cand's frame fails again and again; the
// transmit error counter climbs, and cand reports error-warning and then
// error-passive as SocketCAN error frames (CAN_ERR_CRTL with TX_WARNING, then
// TX_PASSIVE, with TEC/REC in data[6..7]).
func TestErrorFramesWarningThenPassive(t *testing.T) {
	r := newRigConfig(t).start()
	diag := traceErrorPass(r)
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	// Read until error-passive. The warning comes first unless the owner thread
	// was late by the ~250 µs TEC needs from 96 to 128 (then the chip is already
	// passive when cand looks, as with the kernel driver).
	var errs []can.Frame
	for len(errs) == 0 || errs[len(errs)-1].Data[1] != socketcan.CAN_ERR_CRTL_TX_PASSIVE {
		f, k, err := r.read(0, 5*time.Second)
		if err != nil {
			t.Fatalf("after error frames %v: %v", errs, err)
		}
		if k != socketcan.FrameError {
			t.Fatalf("unexpected %v frame %v", k, f)
		}
		errs = append(errs, f)
	}
	if len(errs) > 2 {
		t.Fatalf("error frames %v: want at most a warning, then passive", errs)
	}
	const class = socketcan.CAN_ERR_CRTL | socketcan.CAN_ERR_CNT
	// TEC is read ~17 µs before EFLG (one 18-register READ), and a failing
	// retransmission adds 8 meanwhile: the counter may lag the state by 16. A
	// READ held up for longer reads counters that disagree with EFLG; the
	// driver then reads them again (mcp2515/errors.go, settle).
	for i, f := range errs {
		want := struct {
			bits     byte
			min, max byte
		}{socketcan.CAN_ERR_CRTL_TX_PASSIVE, 128 - 16, 255}
		if i < len(errs)-1 {
			want.bits, want.min, want.max = socketcan.CAN_ERR_CRTL_TX_WARNING, 96-16, 127
		}
		if f.ID != class || f.Length != 8 || f.Data[1] != want.bits || f.Data[6] < want.min || f.Data[6] > want.max || f.Data[7] != 0 ||
			f.Data[0] != 0 || f.Data[2] != 0 || f.Data[3] != 0 || f.Data[4] != 0 || f.Data[5] != 0 {
			t.Fatalf("error frame %d: class %#x data % x; want class %#x, data[1] %#x, TEC in %d..%d, REC 0\n%s", i, f.ID, f.Data, uint32(class), want.bits, want.min, want.max, diag())
		}
	}
	m := r.d.Owner.Ports[0].M
	if m.BusState.Load() != 2 || m.TEC.Load() < 128-16 {
		t.Fatalf("bus state %d, TEC %d; want 2 (passive), ≥ 112", m.BusState.Load(), m.TEC.Load())
	}
	r.checkConservation()
}

// traceErrorPass turns on the board clock's gap trace and records the bus's
// error frames; the returned function formats both, for a failure's log: each
// error frame is one failed transmission (TEC + 8), so the gaps between them show
// what board time the owner thread was charged while the chip's counters moved.
func traceErrorPass(r *rig) func() string {
	ring := gaptrace.New(64)
	r.pi.Clock().TraceGaps(ring)
	var mu sync.Mutex
	var errAt []int64
	r.pi.Node(0).Bus.OnEvent(func(ev canbus.Event) {
		if ev.Kind == canbus.EvError {
			mu.Lock()
			errAt = append(errAt, ev.At)
			mu.Unlock()
		}
	})
	return func() string {
		var b strings.Builder
		mu.Lock()
		for i, at := range errAt {
			fmt.Fprintf(&b, "bus error frame %d at board %d (TEC %d after it)\n", i+1, at, 8*(i+1))
		}
		mu.Unlock()
		b.WriteString("the strict clock's last looked-at gaps:\n")
		b.WriteString(ring.Dump())
		return b.String()
	}
}

// error_frames: false: the state changes are tracked and exported, but no error
// frame is written to the socket.
func TestErrorFramesOff(t *testing.T) {
	r := newRigConfig(t).errorFramesOff().start()
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	m := r.d.Owner.Ports[0].M
	waitfor.Cond(t, 5*time.Second, "error-passive", func() bool { return m.BusState.Load() == 2 })
	if f, k, err := r.read(0, 100*time.Millisecond); err == nil {
		t.Fatalf("error_frames: false, but cand wrote a %v frame %v", k, f)
	}
	if m.ErrorFrames.Load() != 0 {
		t.Fatalf("cand_error_frames_total = %d, want 0", m.ErrorFrames.Load())
	}
	r.checkConservation()
}

// busOffRig starts cand with restart_ms and an answering peer, sticks the bus
// dominant for 200 ms and writes 123#01, so that cand's TEC climbs to bus-off.
// The bus stays stuck long enough for the frame to be pending in the chip even if
// the owner thread is slow to load it (busy CI machine). The board is a Pi 4 at
// force_turbo: on the strict clock the owner's time counts at the board's speed,
// and a host hiccup of a few milliseconds would be 200 ms on the default Pi 3 at
// its idle clocks (docs/clock.md). busFree waits for the
// end of the stuck bus on the virtual Pi's clock (sim/clock), which runs at its
// own pace against the host's; Reach, because a time taken with Now could later
// fall back into the stuck window.
func busOffRig(t *testing.T, restartMs int) (r *rig, busFree func()) {
	t.Helper()
	r = newRigConfig(t).board(config.SimBoardPi4).forceTurbo().restartMs(restartMs).peer(answerPeer("echo", 1)).start()
	// The bus stays stuck until busFree says otherwise: a fixed window of board time
	// could end before the owner loads the frame on a loaded host.
	clk := r.pi.Clock()
	bus := r.pi.Node(0).Bus
	bus.StuckDominant(clk.Reach(), math.MaxInt64)
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	return r, func() {
		t.Helper()
		end := clk.Reach()
		bus.EndStuck(end)
		waitfor.Cond(t, 5*time.Second, "the end of the stuck bus", func() bool { return clk.Reach() > end })
	}
}

// Bus-off and restart: a bus stuck dominant drives cand's TEC past 255 while it
// tries to send. cand reports the state changes ending in CAN_ERR_BUSOFF, holds the
// controller off the bus, restarts it restart_ms later (CAN_ERR_RESTARTED), drops
// and counts the frame that was loaded, and then bridges again.
func TestBusOffAndRestart(t *testing.T) {
	r, busFree := busOffRig(t, 50)
	var classes []uint32
	for {
		f, k, err := r.read(0, 5*time.Second)
		if err != nil {
			t.Fatalf("after error frames %#x: %v", classes, err)
		}
		if k != socketcan.FrameError {
			t.Fatalf("unexpected %v frame %v before the restart", k, f)
		}
		classes = append(classes, f.ID)
		if f.ID == socketcan.CAN_ERR_RESTARTED {
			if f.Data != (can.Data{}) {
				t.Fatalf("restart frame data % x, want zeros", f.Data)
			}
			break
		}
	}
	n := len(classes)
	if n < 2 || classes[n-2] != socketcan.CAN_ERR_BUSOFF|socketcan.CAN_ERR_CNT {
		t.Fatalf("error frame classes %#x: want CAN_ERR_BUSOFF|CAN_ERR_CNT right before CAN_ERR_RESTARTED", classes)
	}
	for _, c := range classes[:n-2] {
		if c != socketcan.CAN_ERR_CRTL|socketcan.CAN_ERR_CNT {
			t.Fatalf("error frame classes %#x: only warning/passive (CRTL) frames may come before bus-off", classes)
		}
	}
	m := r.d.Owner.Ports[0].M
	if m.BusOffs.Load() != 1 || m.TXDropped.Load() != 1 || m.BusState.Load() != 0 {
		t.Fatalf("bus-off %d, tx dropped %d, bus state %d; want 1, 1, 0", m.BusOffs.Load(), m.TXDropped.Load(), m.BusState.Load())
	}
	// Once the bus is free again, cand bridges: a new frame is sent and answered.
	busFree()
	g := can.Frame{ID: 0x200, Length: 2, Data: can.Data{7, 7}}
	r.write(0, g)
	want := g
	want.ID++
	r.expectAnswer(want)
	r.checkConservation()
}

// Bus-off with restart_ms 0: the controller stays off the bus until a manual
// restart (SIGUSR1 calls Owner.Restart), then reports CAN_ERR_RESTARTED and bridges.
func TestBusOffManualRestart(t *testing.T) {
	r, busFree := busOffRig(t, 0)
	for {
		f, k, err := r.read(0, 5*time.Second)
		if err != nil || k != socketcan.FrameError {
			t.Fatalf("waiting for bus-off: %v %v %v", f, k, err)
		}
		if f.ID == socketcan.CAN_ERR_BUSOFF|socketcan.CAN_ERR_CNT {
			break
		}
	}
	// Held off the bus: a frame written now is not sent, and nothing restarts it.
	r.write(0, can.Frame{ID: 0x200, Length: 1, Data: can.Data{2}})
	if f, k, err := r.read(0, 300*time.Millisecond); err == nil {
		t.Fatalf("while bus-off without restart_ms: %v frame %v", k, f)
	}
	// What `kill -USR1 $(pidof cand)` does, once the bus is free again.
	busFree()
	if err := unix.Kill(unix.Getpid(), unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	f, k, err := r.read(0, 5*time.Second)
	if err != nil || k != socketcan.FrameError || f.ID != socketcan.CAN_ERR_RESTARTED {
		t.Fatalf("after SIGUSR1: %v %v %v, want CAN_ERR_RESTARTED", f, k, err)
	}
	// The frame that waited in the socket queue goes out (once the bus is free)
	// and is answered.
	r.expectAnswer(can.Frame{ID: 0x201, Length: 1, Data: can.Data{2}})
	r.checkConservation()
}

// Chip health: a chip that resets itself (brown-out) is noticed by the idle-time
// check, counted, and initialised again; an unplugged chip takes its port down until
// it answers again (retried with back-off); bridging resumes both times. The
// peer's frames queued while the chip was gone come back to back and fill both RX
// buffers: their order is checked with the rest.
func TestChipResetAndUnplug(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)).start()
	m := r.d.Owner.Ports[0].M
	chip := r.pi.Node(0).Chip
	// Frames flow: after draining what is queued, three more arrive. While the
	// chip was gone nobody ACKed the peer, so its queued frames come back to back
	// and may overflow the chip once: RX-overflow reports are allowed here.
	flowing := func(when string) {
		t.Helper()
		r.readAll(0, time.Millisecond)
		r.expectPeerFrames(3, 0x100, when)
	}
	flowing("before")
	r.powerCycle(0)
	waitfor.Cond(t, 5*time.Second, "the chip reset to be noticed", func() bool { return m.ChipResets.Load() == 1 })
	flowing("after the reset")

	chip.Unplug(true)
	// Plugged back in once cand retries it with back-off: a chip back between the
	// check that found it missing and the re-initialisation's RESET would lose
	// what it received in that instant (docs/faults.md).
	r.waitLog(5*time.Second, "level=WARN", `msg="chip does not answer; retrying with back-off"`)
	if m.ChipResets.Load() != 2 || m.ChipUp.Load() != 0 {
		t.Fatalf("chip resets %d, cand_chip_up %d with the chip unplugged; want 2, 0", m.ChipResets.Load(), m.ChipUp.Load())
	}
	chip.Unplug(false)
	r.waitLog(5*time.Second, "level=INFO", `msg="chip back; bridging again"`)
	flowing("after plugging back in")
	if m.ChipResets.Load() != 2 {
		t.Fatalf("chip resets %d, want 2", m.ChipResets.Load())
	}
	r.checkConservation()
}

// A controller that recovers from bus-off by itself (128 × 11 recessive bits,
// MCP2515 datasheet DS20001801J §6.6) before cand holds it off the bus sends its
// pending frames and receives. Every such frame is accounted for: the frames it
// sent are counted sent (not dropped at the restart), the frames it received reach
// the socket, and the one it had no buffer for is reported as an overflow. The
// owner is held at its bus-off log line, after the interrupt that found the
// bus-off and before it takes the controller off the bus, until the chip, the bus
// healthy again, has sent the three pending frames and received the peer's three
// answers: two RX buffers for three frames. The clock is the host's (shared), so
// that the board's time passes while the owner is held.
func TestBusOffSelfRecoveredBeforeHold(t *testing.T) {
	var (
		r    *rig
		seen atomic.Bool
	)
	hold := func(line string) {
		if !strings.Contains(line, `msg="bus-off: controller held off the bus until its restart"`) || seen.Swap(true) {
			return
		}
		bus := r.pi.Node(0).Bus
		bus.InjectErrors(r.pi.Clock().Reach(), 0)
		bus.NoAck(0, 0)
		var st mcpchip.Stats
		if !waitfor.Until(5*time.Second, func() bool {
			st = r.pi.Node(0).Chip.Stats()
			return st.Sent >= 3 && st.Received+st.Lost >= 3
		}) {
			t.Errorf("the chip did not recover by itself while the owner was held: %+v", st) // on the daemon's goroutine: no Fatal
		}
	}
	r = newRigConfig(t).clockRule(config.SimCPUShared).restartMs(20).peer(answerPeer("echo", 1)).onLog(hold).start()
	m := r.d.Owner.Ports[0].M
	bus, clk := r.pi.Node(0).Bus, r.pi.Clock()
	// Unacknowledged, the first frame is retried and TEC stops at error-passive
	// (the ISO exception for ACK errors): the three TX buffers fill. Then every
	// frame is destroyed, and the controller goes bus-off with three pending.
	bus.NoAck(clk.Reach(), math.MaxInt64)
	for i := range 3 {
		r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{byte(i)}})
	}
	waitfor.Cond(t, 5*time.Second, "three frames loaded", func() bool { return m.TXBytes.Load() == 3 })
	bus.InjectErrors(clk.Reach(), 1<<30)
	waitfor.Cond(t, 5*time.Second, "the restart", func() bool { return m.Restarts.Load() == 1 })
	r.checkConservation()
	if s, d, rx, o := m.TXFrames.Load(), m.TXDropped.Load(), m.RXFrames.Load(), m.RXOverflows.Load(); s != 3 || d != 0 || rx != 2 || o != 1 {
		t.Errorf("sent %d, dropped %d, received %d, overflows %d; want 3, 0, 2, 1", s, d, rx, o)
	}
}
