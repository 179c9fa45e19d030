package daemon

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/internal/waitfor"
	"cand/sim/canbus"
	"cand/socketcan"
)

// floodID is the load peer's ID; every TX frame of these tests has a lower one, so
// it wins arbitration against the flood and goes out at the next start of frame.
const floodID = 0x123

// maxTXWaitRX bounds, in received frames, how long a TX frame may wait under full
// RX load: from the moment it could go (written, and the TX frame before it on the
// bus) to its start of frame, the owner thread reads at most this many frames
// from the chip. The loop reads it at its next turn (bridge.PollsPerTurn), or, if
// it waits for a TX buffer, right after the status pass that frees one and finds
// both RX buffers empty (bridge.Port.TXFreed), or after the drain. It starts at
// the next arbitration; meanwhile the owner reads what the chip already holds (two
// RX buffers), the frame on the wire, the next one if the RTS came after its
// arbitration, and one more when the TX priorities have run out and the driver
// waits for the pending frames to go: five. The rest is margin. Counting the
// frames the owner read from the chip, not time, keeps the host's stalls of the
// owner thread out of the measure: a stalled owner reads nothing.
const maxTXWaitRX = 12

// txFrame is the i-th TX frame of the load tests: IDs below floodID, descending
// (arbitration alone would reorder them), the index in the two data bytes.
func txFrame(i int) can.Frame {
	return can.Frame{ID: uint32(0x0FF - i%0x100), Length: 2, Data: can.Data{byte(i >> 8), byte(i)}}
}

// txIndex is the index a frame on the bus carries if it is one of txFrame's.
func txIndex(f can.Frame) (int, bool) {
	if f.IsExtended || f.IsRemote || f.ID >= floodID || f.Length != 2 {
		return 0, false
	}
	return int(f.Data[0])<<8 | int(f.Data[1]), true
}

// loadRig is a controller at 1 Mbit/s on a bus a load peer keeps 100 % busy with
// 8-byte frames, plus a listener that logs every frame on the bus. For each TX frame
// it notes how many frames the owner had received when the frame was written and
// when it started on the bus.
type loadRig struct {
	*rig
	// written[i] is the RX frame count when TX frame i had been written to the
	// socket; sof[i] the count when it started on the bus, + 1 (0: not yet).
	written, sof []atomic.Int64
}

// startLoadRig runs the daemon with int_poll_window window (0: off) under full RX
// load, ready for n TX frames. The host side of the socket is read continuously,
// as candump would, so the RX path writes as it would to a real socket.
func startLoadRig(tb testing.TB, window time.Duration, n int) *loadRig {
	tb.Helper()
	// The dedicated rule: the loop's bound is checked under a full RX load the
	// board keeps up with; on the strict rule a loaded host's hiccups, charged at
	// the board's speed, overflow even a Pi 4 at force_turbo (docs/clock.md).
	c := newRigConfig(tb).clockRule(config.SimCPUDedicated).bitrate(1_000_000).
		peer(loadPeer("flood", floodID, 8, 100)).
		peer(periodicPeer("listener", time.Hour, 0, 0x7FF)).
		pollWindow(window)
	lr := &loadRig{rig: c.start(), written: make([]atomic.Int64, n), sof: make([]atomic.Int64, n)}
	rx := lr.d.Owner.Ports[0].M.RXChipToRing // frames the owner read from the chip
	lr.pi.Node(0).Bus.OnEvent(func(ev canbus.Event) {
		if i, ok := txIndex(ev.Frame); ev.Kind == canbus.EvSOF && ok && i < n && lr.sof[i].Load() == 0 {
			lr.sof[i].Store(int64(rx.Count()) + 1)
		}
	})
	tb.Cleanup(lr.drainRX())
	return lr
}

// drainRX reads and discards what cand writes to the socket until the returned
// function is called.
func (lr *loadRig) drainRX() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [socketcan.FrameSize]byte
		for ctx.Err() == nil {
			unix.Poll([]unix.PollFd{{Fd: int32(lr.host[0]), Events: unix.POLLIN}}, 50)
			for {
				if _, err := unix.Read(lr.host[0], b[:]); err != nil {
					break
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// sendTX writes the TX frames first..first+n-1, one per period (a ticker: a late
// tick is dropped, never made up in a burst), and notes each one's write.
func (lr *loadRig) sendTX(first, n int, period time.Duration) {
	rx := lr.d.Owner.Ports[0].M.RXChipToRing // frames the owner read from the chip
	tk := time.NewTicker(period)
	defer tk.Stop()
	for i := first; i < first+n; i++ {
		<-tk.C
		lr.write(0, txFrame(i))
		lr.written[i].Store(int64(rx.Count()))
	}
}

// txWaits returns, per TX frame, the frames the owner received between the moment
// it could have started (written to the socket, and the TX frame before it started)
// and its start of frame; -1: not on the bus.
func (lr *loadRig) txWaits() []int64 {
	w := make([]int64, len(lr.sof))
	prev := int64(0)
	for i := range w {
		s := lr.sof[i].Load() - 1
		if s < 0 {
			w[i] = -1
			continue
		}
		w[i] = max(s-max(lr.written[i].Load(), prev), 0)
		prev = s
	}
	return w
}

// checkTXOnBus checks that the listener saw the n TX frames exactly, in order.
func (lr *loadRig) checkTXOnBus(t *testing.T, n int) {
	t.Helper()
	var got []can.Frame
	for _, rec := range lr.pi.Node(0).Peers[1].Received() {
		if _, ok := txIndex(rec.Frame); ok {
			got = append(got, rec.Frame)
		}
	}
	if len(got) != n {
		t.Fatalf("listener saw %d TX frames, want %d", len(got), n)
	}
	for i, f := range got {
		if f != txFrame(i) {
			t.Fatalf("TX frame %d on the bus: %v, want %v", i, f, txFrame(i))
		}
	}
}

// checkLoopBound checks the owner loop's counts against its bound: at most
// bridge.PollsPerTurn polls and one interrupt per port between two turns, at most
// bridge.WindowRearms re-arms per window; with a poll window, the load kept
// windows open until their cap, so the cap was what ended them.
func checkLoopBound(t *testing.T, st bridge.LoopStats, ports int, window bool) {
	t.Helper()
	switch {
	case st.MaxPollsPerTurn > bridge.PollsPerTurn:
		t.Errorf("%d polls between two loop turns, bound %d", st.MaxPollsPerTurn, bridge.PollsPerTurn)
	case st.MaxInterruptsPerTurn > uint64(ports):
		t.Errorf("the poll window handled %d interrupts between two loop turns, bound %d", st.MaxInterruptsPerTurn, ports)
	case st.MaxWindowRearms > bridge.WindowRearms:
		t.Errorf("a poll window was re-armed %d times, bound %d", st.MaxWindowRearms, bridge.WindowRearms)
	case window && (st.Polls == 0 || st.CappedWindows == 0):
		t.Errorf("poll window on under full load, but %d polls and %d windows ended at the cap", st.Polls, st.CappedWindows)
	case !window && st.Polls+st.Windows != 0:
		t.Errorf("poll window off, but %d windows and %d polls", st.Windows, st.Polls)
	}
}

// windowName names a subtest by its int_poll_window.
func windowName(window time.Duration) string {
	if window == 0 {
		return "window=off"
	}
	return "window=" + window.String()
}

// Under full RX load at 1 Mbit/s, with the poll window on and off, TX frames
// written at 1 kHz with IDs that win arbitration all reach the bus, exactly and in
// order; none waits longer than maxTXWaitRX received frames, and the owner loop
// kept its bound throughout.
func TestTXUnderFullRXLoad(t *testing.T) {
	for _, window := range []time.Duration{500 * time.Microsecond, 0} {
		t.Run(windowName(window), func(t *testing.T) {
			const n = 2000
			lr := startLoadRig(t, window, n)
			lr.sendTX(0, n, time.Millisecond)
			m := lr.d.Owner.Ports[0].M
			waitfor.Cond(t, 30*time.Second, fmt.Sprintf("%d TX frames on the bus", n), func() bool { return m.TXFrames.Load() >= n })
			lr.checkTXOnBus(t, n)
			hist := map[int64]int{}
			for i, w := range lr.txWaits() {
				hist[w]++
				if w > maxTXWaitRX {
					t.Errorf("TX frame %d waited while the owner received %d frames, bound %d", i, w, maxTXWaitRX)
				}
			}
			st := lr.d.Owner.LoopStats()
			t.Logf("TX waits in received frames (wait: frames) %v; RX %d frames, %d overflows; %+v", hist, m.RXFrames.Load(), m.RXOverflows.Load(), st)
			checkLoopBound(t, st, 1, window > 0)
		})
	}
}
