package canbus

import (
	"testing"
	"time"

	"go.einride.tech/can"
)

func TestLoadPercent(t *testing.T) {
	b := New(1_000_000)
	listener(t, b)
	ld := newPeer(t, b, PeerSpec{Kind: PeerLoad, Name: "load", IDs: []uint32{0x10}, DLC: u8(8), LoadPercent: 25})
	advance(b, t0)
	ld.Start(t0)
	advance(b, t0+100_000_000)
	st := b.Stats()
	busy := float64(st.BusyNs) / float64(st.LastSOF-t0)
	if busy < 0.24 || busy > 0.26 {
		t.Fatalf("bus busy %.3f of the time, want 0.25", busy)
	}
}

func TestAnswerAndPeriodic(t *testing.T) {
	b := New(500_000)
	per := newPeer(t, b, PeerSpec{Kind: PeerPeriodic, Name: "per", IDs: []uint32{0x10, 0x20}, DLC: u8(4), Period: time.Millisecond})
	ans := newPeer(t, b, PeerSpec{Kind: PeerAnswer, Name: "ans", IDOffset: 0x100})
	advance(b, t0)
	per.Start(t0)
	advance(b, t0+3_500_000)
	got := per.Received()
	if len(got) != 4 {
		t.Fatalf("periodic peer received %d answers, want 4: %+v", len(got), got)
	}
	for i, r := range got {
		want := can.Frame{ID: []uint32{0x110, 0x120}[i%2], Length: 4, Data: Payload(uint64(i), 4)}
		if r.Frame != want {
			t.Errorf("answer %d = %v, want %v", i, r.Frame, want)
		}
		// The question was sent at i ms, the answer follows right after it.
		q := FrameBits(can.Frame{ID: 0x10, Length: 4, Data: Payload(uint64(i), 4)})
		if r.At < t0+int64(i)*1e6+int64(q)*2000 || r.At > t0+int64(i)*1e6+400_000 {
			t.Errorf("answer %d at +%d ns", i, r.At-t0)
		}
	}
	if s := ans.Stats(); s.Sent != 4 || s.Received != 4 {
		t.Fatalf("answer stats %+v", s)
	}
	if d := Payload(0x0102030405060708, 6); d != (can.Data{5, 6, 7, 8, 4, 5}) {
		t.Fatalf("Payload dlc 6 = %x", d)
	}
	if n, ok := Counter(can.Frame{Length: 6, Data: Payload(77, 6)}); !ok || n != 77 {
		t.Fatalf("Counter = %d %v", n, ok)
	}
	if n, ok := Counter(can.Frame{Length: 2, Data: Payload(0x1234, 2)}); !ok || n != 0x1234 {
		t.Fatalf("Counter dlc2 = %#x %v", n, ok)
	}
}

func TestPeerKindNames(t *testing.T) {
	for k, want := range map[PeerKind]string{PeerPeriodic: "periodic", PeerAnswer: "answer", PeerLoad: "load", PeerErrors: "errors", 0: "PeerKind(0)", 9: "PeerKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("PeerKind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
	_, err := NewPeer(New(500_000), PeerSpec{Name: "z"})
	const want = `sim peer "z": unknown kind "PeerKind(0)": use periodic, answer, load or errors`
	if err == nil || err.Error() != want {
		t.Errorf("NewPeer(no kind) error = %v, want %s", err, want)
	}
}
