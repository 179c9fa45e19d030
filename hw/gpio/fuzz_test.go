package gpio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FuzzLineInfo: any struct gpio_v2_line_info decodes: the names are the bytes up to
// the first NUL (all 32 without one), offset and flags are copied, and the debounce
// is a debounce attribute's among the first num_attrs (at most 10), else 0.
func FuzzLineInfo(f *testing.F) {
	var li lineInfo
	copy(li.Name[:], "GPIO25")
	copy(li.Consumer[:], "cand")
	li.Offset = 25
	li.Flags = uint64(LineFlagUsed | LineFlagInput | LineFlagEdgeFalling | LineFlagBiasPullUp)
	li.NumAttrs = 1
	li.Attrs[0] = lineAttribute{ID: attrIDDebounce, Data: 10}
	f.Add(unsafe.Slice((*byte)(unsafe.Pointer(&li)), sizeofLineInfo))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var li lineInfo
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&li)), sizeofLineInfo), raw)
		b := unsafe.Slice((*byte)(unsafe.Pointer(&li)), sizeofLineInfo)
		got := decodeLineInfo(&li)
		name := func(field []byte) string {
			if i := bytes.IndexByte(field, 0); i >= 0 {
				return string(field[:i])
			}
			return string(field)
		}
		if got.Name != name(b[0:32]) || got.Consumer != name(b[32:64]) {
			t.Fatalf("names %q %q from % x", got.Name, got.Consumer, b[:64])
		}
		if got.Offset != binary.LittleEndian.Uint32(b[64:]) || got.Flags != LineFlag(binary.LittleEndian.Uint64(b[72:])) {
			t.Fatalf("offset %d flags %#x from % x", got.Offset, got.Flags, b[64:80])
		}
		if got.Used() != (got.Flags&LineFlagUsed != 0) {
			t.Fatalf("Used() = %v with flags %#x", got.Used(), got.Flags)
		}
		var debounces []time.Duration
		for i := range int(min(li.NumAttrs, lineNumAttrMax)) {
			a := b[80+i*sizeofLineAttribute:]
			if binary.LittleEndian.Uint32(a) == attrIDDebounce {
				debounces = append(debounces, time.Duration(binary.LittleEndian.Uint32(a[8:]))*time.Microsecond)
			}
		}
		switch {
		case len(debounces) == 0 && got.Debounce != 0:
			t.Fatalf("debounce %v without a debounce attribute", got.Debounce)
		case len(debounces) > 0 && !containsDuration(debounces, got.Debounce):
			t.Fatalf("debounce %v, attributes say %v", got.Debounce, debounces)
		}
	})
}

func containsDuration(list []time.Duration, d time.Duration) bool {
	for _, x := range list {
		if x == d {
			return true
		}
	}
	return false
}

// pipeBuf is PIPE_BUF (linux/limits.h): a write of at most this many bytes to a pipe
// is atomic.
const pipeBuf = 4096

// FuzzReadEvents: whatever bytes a writer puts into the pipe, ReadEvents delivers
// every whole 48-byte event in order, capped per read by buf and ev, reports the
// torn tail once (ErrTornEvent) and then io.EOF; a buffer without room for an event
// is refused without reading.
func FuzzReadEvents(f *testing.F) {
	two := make([]byte, 2*EventSize)
	for i, e := range []Event{testEvent(1), testEvent(2)} {
		e.Encode(two[i*EventSize:])
	}
	f.Add(two, uint8(0x21))
	f.Add(two[:EventSize+10], uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, room uint8) {
		if len(data) > pipeBuf {
			data = data[:pipeBuf] // one atomic write
		}
		r, w := pipe(t)
		if len(data) > 0 {
			if n, err := unix.Write(w, data); err != nil || n != len(data) {
				t.Fatalf("write %d bytes: %d, %v", len(data), n, err)
			}
		}
		unix.Close(w)
		nev, nbuf := int(room%8)+1, int(room/32)+1
		buf := make([]byte, nbuf*EventSize+int(room>>4&1)*(EventSize-1))
		ev := make([]Event, nev)
		if n, err := ReadEvents(r, buf[:EventSize-1], ev); n != 0 || err != ErrEventBuffer {
			t.Fatalf("ReadEvents(47-byte buf) = %d, %v", n, err)
		}
		var got []Event
		torn := 0
		for reads := 0; ; reads++ {
			if reads > len(data)/EventSize+2 {
				t.Fatalf("%d reads for %d bytes", reads, len(data))
			}
			n, err := ReadEvents(r, buf, ev)
			if n > min(nev, nbuf) {
				t.Fatalf("%d events in one read with room for %d", n, min(nev, nbuf))
			}
			got = append(got, ev[:n]...)
			if errors.Is(err, ErrTornEvent) {
				torn++
				continue
			}
			if err == io.EOF && n == 0 {
				break
			}
			if err != nil {
				t.Fatalf("ReadEvents: %d, %v", n, err)
			}
		}
		if want := len(data) % EventSize; (torn == 1) != (want != 0) || torn > 1 {
			t.Fatalf("%d torn reads for %d bytes", torn, len(data))
		}
		if len(got) != len(data)/EventSize {
			t.Fatalf("%d events from %d bytes", len(got), len(data))
		}
		for i := range got {
			var want Event
			want.Decode(data[i*EventSize:])
			if got[i] != want {
				t.Fatalf("event %d = %+v, want %+v", i, got[i], want)
			}
		}
	})
}

// FuzzSeqTracker: events numbered from start on, each step a gap (step > 0: step−1
// events lost), a repeat (0) or a jump back (0xFF, a resync): Observe reports each
// gap, Lost is their sum and Last the last seqno, across the u32 wrap.
func FuzzSeqTracker(f *testing.F) {
	f.Add(uint32(0), []byte{1, 1, 1})
	f.Add(uint32(1<<32-3), []byte{1, 2, 0, 0xFF, 5})
	f.Fuzz(func(t *testing.T, start uint32, steps []byte) {
		var st SeqTracker
		first := st.Observe(&Event{Seqno: start})
		lost := st.Lost()
		if lost != uint64(first) {
			t.Fatalf("first event: Observe %d, Lost %d", first, lost)
		}
		seq := start
		for i, s := range steps {
			want := uint32(0)
			switch s {
			case 0xFF:
				seq -= 1000
			default:
				seq += uint32(s)
				if s > 0 {
					want = uint32(s) - 1
				}
			}
			if got := st.Observe(&Event{Seqno: seq}); got != want {
				t.Fatalf("step %d (%d to seqno %d): lost %d, want %d", i, s, seq, got, want)
			}
			lost += uint64(want)
		}
		if st.Lost() != lost || st.Last() != seq {
			t.Fatalf("Lost, Last = %d, %d; want %d, %d", st.Lost(), st.Last(), lost, seq)
		}
	})
}
