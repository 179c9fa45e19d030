package daemon

import (
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/waitfor"
	"cand/socketcan"
)

// echoRequest is the i-th request of TestSocketToBusAndBack: standard and extended
// IDs, DLC 0..8, the index in the first two data bytes (unused bytes zero).
func echoRequest(i int) can.Frame {
	f := can.Frame{ID: 0x123, Length: 8}
	if i%3 == 1 {
		f = can.Frame{ID: 0x1234567, IsExtended: true, Length: uint8(i % 9)}
	}
	var d can.Data
	d[0], d[1] = byte(i>>8), byte(i)
	copy(f.Data[:f.Length], d[:f.Length])
	return f
}

// Frames written to the socket reach the answering peer, whose answers come back
// in order with exact content: 1,000 each way, none lost, none reordered. The
// sender keeps one request outstanding (like cangen -g), so the test checks
// correctness, not how fast this noisy machine schedules the owner thread
// (that is the benchmark's job).
func TestSocketToBusAndBack(t *testing.T) {
	r := newRigConfig(t).peer(answerPeer("echo", 1)).start()
	const n = 1000
	next := make(chan int, 1)
	next <- 0
	go func() {
		for i := 0; i < n; i++ {
			if <-next < 0 {
				return
			}
			r.write(0, echoRequest(i))
		}
	}()
	for i := 0; i < n; i++ {
		f, k, err := r.read(0, 10*time.Second)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		want := echoRequest(i)
		want.ID++ // the answering peer's id_offset
		if k != socketcan.FrameData || f != want {
			r.logStages()
			next <- -1
			t.Fatalf("answer %d: got %v (%v), want %v", i, f, k, want)
		}
		next <- i + 1
	}
	if st := r.pi.Node(0).Peers[0].Stats(); st.Received != n || st.Sent != n {
		t.Fatalf("answering peer received %d and sent %d frames, want %d each", st.Received, st.Sent, n)
	}
	r.checkConservation()
}

// 10,000 frames from the socket, with all three TX buffers in use, arrive on the
// bus in socket order, none lost (the chip sends the highest TXP first, so the
// driver must hand out priorities in order).
func TestTXOrderThreeBuffers(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("listener", time.Hour, 0, 0x7FF)).start()
	const n = 10000
	go func() {
		for i := 0; i < n; i++ {
			var d can.Data
			d[0], d[1] = byte(i>>8), byte(i)
			// IDs descend so that ID arbitration alone would reorder them.
			r.write(0, can.Frame{ID: uint32(0x700 - i%0x700), Length: 2, Data: d})
		}
	}()
	peer := r.pi.Node(0).Peers[0]
	waitfor.Cond(t, 60*time.Second, "10,000 frames on the bus", func() bool { return peer.Stats().Received >= n })
	got := peer.Received()
	if len(got) < n {
		t.Fatalf("log holds %d frames", len(got))
	}
	got = got[len(got)-n:]
	for i, rec := range got {
		var d can.Data
		d[0], d[1] = byte(i>>8), byte(i)
		want := can.Frame{ID: uint32(0x700 - i%0x700), Length: 2, Data: d}
		if rec.Frame != want {
			t.Fatalf("bus frame %d: got %v, want %v", i, rec.Frame, want)
		}
	}
	r.checkConservation()
}

// TX timeout: a frame nobody ACKs is aborted after tx_timeout (CANCTRL.ABAT),
// reported with CAN_ERR_TX_TIMEOUT and counted as dropped; then cand takes frames
// from the socket again.
func TestTxTimeout(t *testing.T) {
	r := newRigConfig(t).txTimeout(50 * time.Millisecond).start()
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	var classes []uint32
	for {
		f, k, err := r.read(0, 5*time.Second)
		if err != nil || k != socketcan.FrameError {
			t.Fatalf("after error frames %#x: %v %v %v", classes, f, k, err)
		}
		classes = append(classes, f.ID)
		if f.ID == socketcan.CAN_ERR_TX_TIMEOUT {
			break
		}
	}
	m := r.d.Owner.Ports[0].M
	waitfor.Cond(t, 5*time.Second, "the aborted frame to be counted", func() bool { return m.TXDropped.Load() == 1 })
	// The next frame is taken from the socket and tried (and times out in turn).
	r.write(0, can.Frame{ID: 0x124, Length: 1, Data: can.Data{2}})
	waitfor.Cond(t, 5*time.Second, "the second frame to time out", func() bool { return m.TXDropped.Load() == 2 })
	r.checkConservation()
}
