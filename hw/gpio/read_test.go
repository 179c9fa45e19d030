package gpio

import (
	"errors"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// pipe returns a non-blocking pipe standing in for a line request fd, as the
// simulator's INT line does.
func pipe(t testing.TB) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatalf("pipe2: %v", err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

func testEvent(seq uint32) Event {
	return Event{
		TimestampNs: 1_000_000_000*uint64(seq) + 7,
		ID:          EventFallingEdge,
		Offset:      25,
		Seqno:       seq,
		LineSeqno:   seq,
	}
}

// writeEvents writes the events with one write(2), as the kernel queues them.
func writeEvents(t testing.TB, w int, evs ...Event) {
	t.Helper()
	b := make([]byte, len(evs)*EventSize)
	for i := range evs {
		evs[i].Encode(b[i*EventSize:])
	}
	if n, err := unix.Write(w, b); err != nil || n != len(b) {
		t.Fatalf("write %d bytes: %d, %v", len(b), n, err)
	}
}

func TestReadEventsDecodes(t *testing.T) {
	r, w := pipe(t)
	in := []Event{testEvent(1), testEvent(2), {TimestampNs: 1<<64 - 1, ID: EventRisingEdge, Offset: 4, Seqno: 3, LineSeqno: 1}}
	writeEvents(t, w, in...)
	buf := make([]byte, 16*EventSize)
	ev := make([]Event, 16)
	n, err := ReadEvents(r, buf, ev)
	if err != nil || n != 3 {
		t.Fatalf("ReadEvents = %d, %v; want 3, nil", n, err)
	}
	for i := range in {
		if ev[i] != in[i] {
			t.Errorf("event %d = %+v, want %+v", i, ev[i], in[i])
		}
	}
	if n, err := ReadEvents(r, buf, ev); n != 0 || !errors.Is(err, unix.EAGAIN) {
		t.Errorf("ReadEvents on an empty pipe = %d, %v; want 0, EAGAIN", n, err)
	}
}

// The read is capped by whichever of buf and ev holds fewer events; the rest stays
// queued for the next read.
func TestReadEventsPartial(t *testing.T) {
	r, w := pipe(t)
	writeEvents(t, w, testEvent(1), testEvent(2), testEvent(3), testEvent(4), testEvent(5))
	buf := make([]byte, 3*EventSize-1) // room for 2 whole events
	ev := make([]Event, 8)
	if n, err := ReadEvents(r, buf, ev); n != 2 || err != nil || ev[0].Seqno != 1 || ev[1].Seqno != 2 {
		t.Fatalf("ReadEvents(buf of 2.98 events) = %d, %v, seqnos %d %d; want 2, nil, 1 2", n, err, ev[0].Seqno, ev[1].Seqno)
	}
	buf = make([]byte, 8*EventSize)
	if n, err := ReadEvents(r, buf, ev[:1]); n != 1 || err != nil || ev[0].Seqno != 3 {
		t.Fatalf("ReadEvents(ev of 1) = %d, %v, seqno %d; want 1, nil, 3", n, err, ev[0].Seqno)
	}
	if n, err := ReadEvents(r, buf, ev); n != 2 || err != nil || ev[0].Seqno != 4 || ev[1].Seqno != 5 {
		t.Fatalf("ReadEvents(rest) = %d, %v, seqnos %d %d; want 2, nil, 4 5", n, err, ev[0].Seqno, ev[1].Seqno)
	}
}

func TestReadEventsTorn(t *testing.T) {
	r, w := pipe(t)
	b := make([]byte, EventSize+10)
	e := testEvent(9)
	e.Encode(b)
	if _, err := unix.Write(w, b); err != nil {
		t.Fatal(err)
	}
	ev := make([]Event, 4)
	n, err := ReadEvents(r, make([]byte, 4*EventSize), ev)
	if n != 1 || ev[0] != e || !errors.Is(err, ErrTornEvent) {
		t.Fatalf("ReadEvents = %d, %v, %+v; want 1, ErrTornEvent, %+v", n, err, ev[0], e)
	}
	if err.Error() != "gpio: read returned part of a 48-byte gpio_v2_line_event: the writer must write whole events" {
		t.Errorf("message %q", err)
	}
}

func TestReadEventsEOFAndSmallBuffers(t *testing.T) {
	r, w := pipe(t)
	if n, err := ReadEvents(r, make([]byte, EventSize-1), make([]Event, 1)); n != 0 || err != ErrEventBuffer {
		t.Errorf("ReadEvents(47-byte buf) = %d, %v; want 0, ErrEventBuffer", n, err)
	}
	if n, err := ReadEvents(r, make([]byte, EventSize), nil); n != 0 || err != ErrEventBuffer {
		t.Errorf("ReadEvents(no ev) = %d, %v; want 0, ErrEventBuffer", n, err)
	}
	unix.Close(w)
	if n, err := ReadEvents(r, make([]byte, EventSize), make([]Event, 1)); n != 0 || err != io.EOF {
		t.Errorf("ReadEvents after the writer closed = %d, %v; want 0, io.EOF", n, err)
	}
}

// The kernel drops the oldest events when its queue overflows: seqnos jump.
func TestReadEventsSeqnoGaps(t *testing.T) {
	r, w := pipe(t)
	writeEvents(t, w, testEvent(1), testEvent(2), testEvent(5), testEvent(6), testEvent(10))
	ev := make([]Event, 8)
	n, err := ReadEvents(r, make([]byte, 8*EventSize), ev)
	if n != 5 || err != nil {
		t.Fatalf("ReadEvents = %d, %v", n, err)
	}
	var st SeqTracker
	var got []uint32
	for i := range n {
		got = append(got, st.Observe(&ev[i]))
	}
	want := []uint32{0, 0, 2, 0, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lost per event = %v, want %v", got, want)
		}
	}
	if st.Lost() != 5 || st.Last() != 10 {
		t.Errorf("Lost, Last = %d, %d; want 5, 10", st.Lost(), st.Last())
	}
}

func TestReadEventsAllocs(t *testing.T) {
	r, w := pipe(t)
	rec := make([]byte, 4*EventSize)
	for i := range 4 {
		e := testEvent(uint32(i + 1))
		e.Encode(rec[i*EventSize:])
	}
	buf := make([]byte, 16*EventSize)
	ev := make([]Event, 16)
	var st SeqTracker
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := unix.Write(w, rec); err != nil {
			t.Fatal(err)
		}
		n, err := ReadEvents(r, buf, ev)
		if n != 4 || err != nil {
			t.Fatalf("ReadEvents = %d, %v", n, err)
		}
		for i := range n {
			st.Observe(&ev[i])
		}
		if _, err := ReadEvents(r, buf, ev); err != unix.EAGAIN {
			t.Fatalf("ReadEvents on empty = %v, want EAGAIN", err)
		}
	})
	if allocs != 0 {
		t.Errorf("ReadEvents + SeqTracker: %v allocations per run, want 0", allocs)
	}
}

// Value's ioctl argument must not escape to the heap; a pipe answers ENOTTY, which
// exercises the whole call without a GPIO chip.
func TestLineValueAllocs(t *testing.T) {
	r, _ := pipe(t)
	l := &Line{fd: r, offset: 25}
	want := unknownIoctlErrno(t)
	if _, e := l.value(); e != want {
		t.Fatalf("value on a pipe: %v, want %v", e, want)
	}
	if allocs := testing.AllocsPerRun(100, func() { l.value() }); allocs != 0 {
		t.Errorf("Line.value: %v allocations per call, want 0", allocs)
	}
	_, err := l.Value()
	if err == nil || err.Error() != "gpio: GPIO_V2_LINE_GET_VALUES_IOCTL on GPIO 25: "+want.Error() {
		t.Errorf("Value error = %v", err)
	}
}

func BenchmarkReadEvents(b *testing.B) {
	r, w := pipe(b)
	rec := make([]byte, EventSize)
	e := testEvent(1)
	e.Encode(rec)
	buf := make([]byte, 16*EventSize)
	ev := make([]Event, 16)
	b.ReportAllocs()
	for b.Loop() {
		unix.Write(w, rec)
		if n, err := ReadEvents(r, buf, ev); n != 1 || err != nil {
			b.Fatal(n, err)
		}
	}
}

var _ EventSource = (*Line)(nil)
