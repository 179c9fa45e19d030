package mcpchip

import (
	"context"
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/mono"
	"cand/mcp2515"
	"cand/sim/canbus"
)

// TestRealTimeINT runs the bus goroutine: a periodic peer's frames pull INT low at
// their exact end-of-frame time, and a driver-like loop drains them with READ RX BUFFER.
// The loop reads only RXB0, so frames are 100 ms apart: a loop late by a whole period
// on a loaded machine would find the next frame rolled over into RXB1.
func TestRealTimeINT(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	b := canbus.New(500_000)
	per, err := canbus.NewPeer(b, canbus.PeerSpec{Kind: canbus.PeerPeriodic, Name: "per", IDs: []uint32{0x10, 0x11}, Period: 100 * time.Millisecond, DLC: u8(8)})
	if err != nil {
		t.Fatal(err)
	}
	c := New(osc, b)
	edges := make(chan edge, 64)
	c.OnINT(func(high bool, at int64) {
		select {
		case edges <- edge{high, at}:
		default:
		}
	})
	r := &rig{t: t, c: c, at: mono.Now() + 20_000}
	r.setup500k(mcp2515.ModeNormal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	per.Start(mono.Now())
	var got []can.Frame
	var falls []int64
	deadline := time.After(5 * time.Second)
	for len(got) < 5 {
		select {
		case e := <-edges:
			if e.high {
				continue
			}
			falls = append(falls, e.at)
			r.at = mono.Now()
			rx := r.readRx(0)
			if r.status()&0x02 != 0 { // READ STATUS bit 1: CANINTF.RX1IF
				t.Skipf("the loop was a whole period late (a frame rolled over into RXB1): this machine is too busy for a real-time test")
			}
			id, _ := mcp2515.GetID(rx[0:4])
			f := can.Frame{ID: id, Length: rx[4] & 0x0F}
			copy(f.Data[:], rx[5:13])
			got = append(got, f)
		case <-deadline:
			t.Fatalf("only %d frames in 5 s", len(got))
		}
	}
	sent := per.Log()
	for i, f := range got {
		if want := sent[i]; f != want.Frame || falls[i] != want.At {
			t.Errorf("frame %d: %v with INT falling at %d; peer sent %v ending at %d", i, f, falls[i], want.Frame, want.At)
		}
	}
}
