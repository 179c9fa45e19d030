package canbus

import (
	"testing"

	"go.einride.tech/can"
)

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

// A stuck bus held until further notice is released by EndStuck: frames start 11
// recessive bits after the release, not at the fault's original end.
func TestEndStuck(t *testing.T) {
	b := New(1_000_000)
	listener(t, b)
	tx := listener(t, b)
	advance(b, t0)
	b.StuckDominant(t0, t0+3_600_000_000_000)
	tx.Send(can.Frame{ID: 0x42})
	advance(b, t0+500_000)
	if s := tx.Stats(); s.Sent != 0 || s.TxErrors == 0 {
		t.Fatalf("tx while stuck %+v, want errors and nothing sent", s)
	}
	b.EndStuck(t0 + 500_000)
	advance(b, t0+700_000)
	if s := tx.Stats(); s.Sent != 1 {
		t.Fatalf("frame not sent after EndStuck: %+v", s)
	}
}
