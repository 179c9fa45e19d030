package gpio

import (
	"bytes"
	"testing"
)

func TestEventEncodeBytes(t *testing.T) {
	e := Event{TimestampNs: 0x1122334455667788, ID: EventFallingEdge, Offset: 25, Seqno: 7, LineSeqno: 6}
	b := bytes.Repeat([]byte{0xFF}, EventSize)
	e.Encode(b)
	want := []byte{
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // timestamp_ns
		2, 0, 0, 0, // id
		25, 0, 0, 0, // offset
		7, 0, 0, 0, // seqno
		6, 0, 0, 0, // line_seqno
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // padding[6]
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("Encode = % x\nwant     % x", b, want)
	}
	var d Event
	d.Decode(b)
	if d != e {
		t.Errorf("Decode(Encode(e)) = %+v, want %+v", d, e)
	}
}

// FuzzEventDecode: any 48 bytes decode, and re-encoding keeps the fields and zeroes
// the padding.
func FuzzEventDecode(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0xA5}, EventSize))
	f.Add(make([]byte, EventSize))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < EventSize {
			return
		}
		var e Event
		e.Decode(in)
		out := make([]byte, EventSize)
		e.Encode(out)
		if !bytes.Equal(out[:24], in[:24]) {
			t.Fatalf("fields changed: % x → % x", in[:24], out[:24])
		}
		if !bytes.Equal(out[24:], make([]byte, EventSize-24)) {
			t.Fatalf("padding not zeroed: % x", out[24:])
		}
	})
}
