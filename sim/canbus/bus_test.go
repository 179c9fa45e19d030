package canbus

import (
	"context"
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/internal/mono"
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

func TestNoAckAlone(t *testing.T) {
	b := New(1_000_000)
	p := listener(t, b)
	evs := record(b)
	advance(b, t0)
	f := can.Frame{ID: 0x123, Length: 1}
	p.Send(f)
	advance(b, t0+1_000_000)
	bits := FrameBits(f)
	var errs []Event
	for _, e := range *evs {
		if e.Kind == EvFrame {
			t.Fatalf("frame delivered without an ACK")
		}
		if e.Kind == EvError {
			errs = append(errs, e)
		}
	}
	if len(errs) < 10 || errs[0].Err != AckError {
		t.Fatalf("errors: %d, first %v; want many ack errors", len(errs), errs[0].Err)
	}
	// ACK error at the end of the ACK slot (bits-11), then 6+8+3 bits, then a retry.
	if want := t0 + int64(bits-11)*1000; errs[0].At != want {
		t.Fatalf("ack error at +%d, want +%d", errs[0].At-t0, want-t0)
	}
	if d := errs[1].At - errs[0].At; d != int64(17+bits-11)*1000 {
		t.Fatalf("retry period %d ns, want %d", d, (17+bits-11)*1000)
	}
	if s := p.Stats(); s.TxErrors != uint64(len(errs)) || s.Sent != 0 {
		t.Fatalf("peer stats %+v", s)
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

func TestInjectedErrors(t *testing.T) {
	b := New(1_000_000)
	rx := listener(t, b)
	tx := listener(t, b)
	advance(b, t0)
	b.InjectErrors(t0, 3)
	tx.Send(can.Frame{ID: 0x42, Length: 8})
	advance(b, t0+2_000_000)
	if s := tx.Stats(); s.TxErrors != 3 || s.Sent != 1 {
		t.Fatalf("tx %+v, want 3 errors then sent", s)
	}
	if s := rx.Stats(); s.RxErrors != 3 || s.Received != 1 {
		t.Fatalf("rx %+v, want 3 errors then one frame", s)
	}
}

func TestStuckDominant(t *testing.T) {
	b := New(1_000_000)
	rx := listener(t, b)
	tx := listener(t, b)
	advance(b, t0)
	b.Lock()
	seq0 := b.RecessiveSequences(t0)
	b.Unlock()
	b.StuckDominant(t0, t0+1_000_000)
	tx.Send(can.Frame{ID: 0x42})
	advance(b, t0+999_000)
	// every 8 bits after the 14th: (999000/1000-14)/8+1 ticks
	ticks := uint64((999-14)/8 + 1)
	if s := tx.Stats(); s.TxErrors != ticks || s.Sent != 0 {
		t.Fatalf("tx %+v, want %d errors", s, ticks)
	}
	if s := rx.Stats(); s.RxErrors != ticks {
		t.Fatalf("rx %+v, want %d errors", s, ticks)
	}
	b.Lock()
	seq := b.RecessiveSequences(t0 + 999_000)
	b.Unlock()
	advance(b, t0+1_200_000)
	if s := tx.Stats(); s.Sent != 1 {
		t.Fatalf("frame not sent after the bus was released: %+v", s)
	}
	b.Lock()
	defer b.Unlock()
	if seq != seq0 {
		t.Fatalf("recessive sequences while stuck: %d", seq)
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
	deadline := time.Now().Add(5 * time.Second)
	for rx.Stats().Received < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("Run delivered only %d frames in 5 s", rx.Stats().Received)
		}
		time.Sleep(100 * time.Microsecond)
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

func TestPeerKindNames(t *testing.T) {
	for k, want := range map[PeerKind]string{PeerPeriodic: "periodic", PeerAnswer: "answer", PeerLoad: "load", 0: "PeerKind(0)", 9: "PeerKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("PeerKind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
	_, err := NewPeer(New(500_000), PeerSpec{Name: "z"})
	const want = `sim peer "z": unknown kind "PeerKind(0)": use periodic, answer or load`
	if err == nil || err.Error() != want {
		t.Errorf("NewPeer(no kind) error = %v, want %s", err, want)
	}
}
