package daemon

import (
	"fmt"
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/socketcan"
)

// Two MCP2515s on one SPI bus — CE0 active-low and GPIO24 as an active-high chip
// select — each on its own CAN bus, driven at the same time through their own
// sockets: every frame reaches only its own bus and comes back only on its own
// socket, in order.
func TestTwoControllersNoCrossTalk(t *testing.T) {
	r := newRigConfig(t).
		named("a", "vcan0").chipSelect("ce0", false).intGPIO(25).peer(answerPeer("echo-a", 1)).
		controller("b", "vcan1").bitrate(250_000).chipSelect("gpio24", true).intGPIO(23).peer(answerPeer("echo-b", 2)).
		start()
	const n = 300
	errc := make(chan error, 2)
	drive := func(c int, id uint32, offset uint32) {
		for i := 0; i < n; i++ {
			f := can.Frame{ID: id, Length: 3, Data: can.Data{byte(c), byte(i >> 8), byte(i)}}
			r.write(c, f)
			got, k, err := r.read(c, 10*time.Second)
			if err != nil {
				errc <- fmt.Errorf("controller %d frame %d: %v", c, i, err)
				return
			}
			want := f
			want.ID += offset
			if k != socketcan.FrameData || got != want {
				errc <- fmt.Errorf("controller %d frame %d: got %v (%v), want %v", c, i, got, k, want)
				return
			}
		}
		errc <- nil
	}
	go drive(0, 0x300, 1)
	go drive(1, 0x400, 2)
	for i := 0; i < 2; i++ {
		if err := <-errc; err != nil {
			r.logStages()
			t.Fatal(err)
		}
	}
	for c, id := range []uint32{0x300, 0x400} {
		peer := r.pi.Node(c).Peers[0]
		recv := peer.Received()
		if len(recv) != n {
			t.Fatalf("bus %d: peer received %d frames, want %d", c, len(recv), n)
		}
		for i, rec := range recv {
			if want := (can.Frame{ID: id, Length: 3, Data: can.Data{byte(c), byte(i >> 8), byte(i)}}); rec.Frame != want {
				t.Fatalf("bus %d frame %d: %v, want %v", c, i, rec.Frame, want)
			}
		}
	}
	r.checkConservation()
}
