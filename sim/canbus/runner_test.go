package canbus

import (
	"context"
	"testing"
	"time"

	"cand/internal/mono"
	"cand/internal/waitfor"
)

func TestRunRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	b := New(1_000_000)
	rx := listener(t, b)
	per := newPeer(t, b, PeerSpec{Kind: PeerPeriodic, Name: "per", IDs: []uint32{0x1}, Period: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	start := mono.Now()
	per.Start(start)
	if !waitfor.Until(5*time.Second, func() bool { return rx.Stats().Received >= 5 }) {
		t.Fatalf("Run delivered only %d frames in 5 s", rx.Stats().Received)
	}
	cancel()
	<-done
	for i, r := range rx.Received()[:5] {
		want := start + int64(i)*1e6 + int64(FrameBits(r.Frame)-3)*1000
		if r.At != want {
			t.Errorf("frame %d at +%d, want +%d", i, r.At-start, want-start)
		}
	}
}
