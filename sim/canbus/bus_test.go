package canbus

import (
	"testing"

	"go.einride.tech/can"
)

const t0 = int64(1_000_000_000_000)

func u8(v uint8) *uint8 { return &v }

func newPeer(t *testing.T, b *Bus, c PeerSpec) *Peer {
	t.Helper()
	p, err := NewPeer(b, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// listener is a periodic peer that is never started: it ACKs, logs, and sends only
// what a test gives it (Send).
func listener(t *testing.T, b *Bus) *Peer {
	return newPeer(t, b, PeerSpec{Kind: PeerPeriodic, Name: "rx", IDs: []uint32{0x7FF}})
}

func record(b *Bus) *[]Event {
	var evs []Event
	b.OnEvent(func(e Event) { evs = append(evs, e) })
	return &evs
}

func advance(b *Bus, at int64) {
	b.Lock()
	b.AdvanceTo(at)
	b.Unlock()
}

func TestPacingExactBits(t *testing.T) {
	const rate = 500_000
	b := New(rate)
	rx := listener(t, b)
	ld := newPeer(t, b, PeerSpec{Kind: PeerLoad, Name: "load", IDs: []uint32{0x100, 0x001, 0x7F0}, DLC: u8(8), LoadPercent: 100})
	evs := record(b)
	advance(b, t0)
	ld.Start(t0)
	advance(b, t0+50_000_000) // 50 ms
	var sofs []Event
	var ends []Event
	for _, e := range *evs {
		switch e.Kind {
		case EvSOF:
			sofs = append(sofs, e)
		case EvFrame:
			ends = append(ends, e)
		case EvError:
			t.Fatalf("unexpected error event %+v", e)
		}
	}
	if len(ends) < 100 {
		t.Fatalf("only %d frames in 50 ms", len(ends))
	}
	if sofs[0].At != t0 {
		t.Fatalf("first SOF at %d, want %d", sofs[0].At-t0, 0)
	}
	var total int64
	for i := 0; i+1 < len(sofs) && i < len(ends); i++ {
		bits := FrameBits(sofs[i].Frame)
		if sofs[i].Bits != bits {
			t.Fatalf("frame %d: event bits %d, FrameBits %d", i, sofs[i].Bits, bits)
		}
		// End of EOF is 3 intermission bits before the frame's end.
		if want := sofs[i].At + int64(bits-3)*1e9/rate; ends[i].At != want {
			t.Fatalf("frame %d: EOF at +%d ns, want +%d", i, ends[i].At-sofs[i].At, want-sofs[i].At)
		}
		// At 100 % load the next SOF is right after the intermission.
		if want := sofs[i].At + int64(bits)*1e9/rate; sofs[i+1].At != want {
			t.Fatalf("frame %d: next SOF +%d ns, want +%d", i, sofs[i+1].At-sofs[i].At, want-sofs[i].At)
		}
	}
	n := len(ends) - 1
	for i := 0; i < n; i++ {
		total += int64(FrameBits(sofs[i].Frame))
	}
	if got, want := sofs[n].At-sofs[0].At, total*1e9/rate; got != want {
		t.Fatalf("%d frames took %d ns, want %d", n, got, want)
	}
	if st := rx.Stats(); st.Received != uint64(len(ends)) {
		t.Fatalf("listener received %d, want %d", st.Received, len(ends))
	}
	// Frames carry the counter and the IDs in turn.
	for i, r := range rx.Received()[:10] {
		if n, ok := Counter(r.Frame); !ok || n != uint64(i) || r.Frame.ID != []uint32{0x100, 0x001, 0x7F0}[i%3] {
			t.Fatalf("frame %d = %v, want counter %d", i, r.Frame, i)
		}
	}
}

func TestArbitrationOrder(t *testing.T) {
	b := New(1_000_000)
	var ps []*Peer
	for i := 0; i < 5; i++ {
		ps = append(ps, listener(t, b))
	}
	evs := record(b)
	advance(b, t0)
	frames := []can.Frame{
		{ID: 0x100 << 18, IsExtended: true, Length: 1},
		{ID: 0x100, IsRemote: true},
		{ID: 0x100, Length: 2},
		{ID: 0x0FF << 18, IsExtended: true, Length: 3},
		{ID: 0x0FF, Length: 4},
	}
	for i, f := range frames {
		ps[i].Send(f)
	}
	advance(b, t0+10_000_000)
	var got []can.Frame
	for _, e := range *evs {
		if e.Kind == EvFrame {
			got = append(got, e.Frame)
		}
	}
	want := []can.Frame{frames[4], frames[3], frames[2], frames[1], frames[0]}
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d on the bus = %v, want %v", i, got[i], want[i])
		}
	}
	// The extended 0x100<<18 frame lost four times before it went out.
	if s := ps[0].Stats(); s.ArbLost != 4 || s.Sent != 1 {
		t.Errorf("ext 0x100<<18 peer: %+v, want 4 losses, 1 sent", s)
	}
}

func TestRecessiveSequences(t *testing.T) {
	b := New(1_000_000)
	b.Lock()
	b.AdvanceTo(t0)
	b.seq, b.recSince = 0, t0
	if n := b.RecessiveSequences(t0 + 11_000*128); n != 128 {
		t.Fatalf("idle 128×11 bits: %d sequences", n)
	}
	if at := b.NextRecessiveSequence(5); at != t0+55_000 {
		t.Fatalf("5th sequence at +%d", at-t0)
	}
	b.Unlock()
}

func TestAdvanceNoAlloc(t *testing.T) {
	b := New(1_000_000)
	listener(t, b)
	ld := newPeer(t, b, PeerSpec{Kind: PeerLoad, Name: "load", IDs: []uint32{0x10}, LoadPercent: 100})
	advance(b, t0)
	ld.Start(t0)
	at := t0
	b.Lock()
	defer b.Unlock()
	if n := testing.AllocsPerRun(1000, func() { at += 100_000; b.AdvanceTo(at) }); n != 0 {
		t.Fatalf("AdvanceTo allocates %v per frame", n)
	}
}
