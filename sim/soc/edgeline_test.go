package soc_test

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"cand/hw/gpio"
	"cand/sim/soc"
)

func readEvents(t *testing.T, fd int) []gpio.Event {
	t.Helper()
	var buf [64 * gpio.EventSize]byte
	n, err := unix.Read(fd, buf[:])
	if errors.Is(err, unix.EAGAIN) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if n%gpio.EventSize != 0 {
		t.Fatalf("read %d bytes, not a multiple of %d", n, gpio.EventSize)
	}
	evs := make([]gpio.Event, n/gpio.EventSize)
	for i := range evs {
		evs[i].Decode(buf[i*gpio.EventSize:])
	}
	return evs
}

func TestEdgeLine(t *testing.T) {
	l, err := soc.NewEdgeLine(25)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if evs := readEvents(t, l.Fd()); len(evs) != 0 {
		t.Fatalf("events before any edge: %+v", evs)
	}
	l.Edge(true, 100)  // already high: no edge
	l.Edge(false, 200) // falling
	l.Edge(true, 300)  // rising: not watched
	l.WatchRising(true)
	l.Edge(false, 400)
	l.Edge(true, 500)
	want := []gpio.Event{
		{TimestampNs: 200, ID: gpio.EventFallingEdge, Offset: 25, Seqno: 1, LineSeqno: 1},
		{TimestampNs: 400, ID: gpio.EventFallingEdge, Offset: 25, Seqno: 2, LineSeqno: 2},
		{TimestampNs: 500, ID: gpio.EventRisingEdge, Offset: 25, Seqno: 3, LineSeqno: 3},
	}
	got := readEvents(t, l.Fd())
	if len(got) != len(want) {
		t.Fatalf("got %d events %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !l.Level() {
		t.Error("line level low after a rising edge")
	}
}

// A full buffer drops new events and counts them; the sequence numbers show the gap.
func TestEdgeLineOverflow(t *testing.T) {
	l, err := soc.NewEdgeLine(4)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range soc.DefaultEdgeBuffer + 3 {
		l.Edge(false, int64(2*i))
		l.Edge(true, int64(2*i+1))
	}
	if d := l.Dropped(); d != 3 {
		t.Fatalf("dropped %d events, want 3", d)
	}
	evs := readEvents(t, l.Fd())
	if len(evs) != soc.DefaultEdgeBuffer || evs[len(evs)-1].Seqno != soc.DefaultEdgeBuffer {
		t.Fatalf("read %d events, last seqno %d", len(evs), evs[len(evs)-1].Seqno)
	}
	l.Edge(false, 1000)
	evs = readEvents(t, l.Fd())
	if len(evs) != 1 || evs[0].Seqno != soc.DefaultEdgeBuffer+4 {
		t.Fatalf("after the overflow got %+v, want one event with seqno %d", evs, soc.DefaultEdgeBuffer+4)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Edge(true, 2000) // ignored after Close
}

// Hold records an edge without writing its event; Flush writes the held events
// in order, once.
func TestEdgeLineHoldFlush(t *testing.T) {
	l, err := soc.NewEdgeLine(25)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.WatchRising(true)
	l.Hold(false, 100)
	l.Hold(true, 200)
	if evs := readEvents(t, l.Fd()); len(evs) != 0 {
		t.Fatalf("events before Flush: %+v", evs)
	}
	if !l.Level() {
		t.Error("Level is low after a held rising edge; want the latest level, high")
	}
	l.Flush()
	evs := readEvents(t, l.Fd())
	if len(evs) != 2 || evs[0].ID != gpio.EventFallingEdge || evs[0].TimestampNs != 100 || evs[0].Seqno != 1 ||
		evs[1].ID != gpio.EventRisingEdge || evs[1].TimestampNs != 200 || evs[1].Seqno != 2 {
		t.Fatalf("after Flush: %+v, want falling at 100 (seq 1), rising at 200 (seq 2)", evs)
	}
	l.Flush()
	if evs := readEvents(t, l.Fd()); len(evs) != 0 {
		t.Fatalf("a second Flush wrote %+v", evs)
	}
}
