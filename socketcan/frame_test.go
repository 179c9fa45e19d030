package socketcan

import (
	"testing"

	"go.einride.tech/can"
)

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name  string
		frame can.Frame
		bytes string // struct can_frame
		kind  FrameKind
	}{
		{"standard data", can.Frame{ID: 0x123, Length: 2, Data: can.Data{0xde, 0xad}},
			"23010000 02 00 00 00 dead000000000000", FrameData},
		{"max standard 8 bytes", can.Frame{ID: 0x7ff, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}},
			"ff070000 08 00 00 00 0102030405060708", FrameData},
		{"extended", can.Frame{ID: 0x1fffffff, IsExtended: true, Length: 1, Data: can.Data{0x55}},
			"ffffff9f 01 00 00 00 5500000000000000", FrameData},
		{"extended small id", can.Frame{ID: 0x12, IsExtended: true},
			"12000080 00 00 00 00 0000000000000000", FrameData},
		{"remote", can.Frame{ID: 0x100, IsRemote: true, Length: 4},
			"00010040 04 00 00 00 0000000000000000", FrameRemote},
		{"extended remote", can.Frame{ID: 0x10000, IsExtended: true, IsRemote: true, Length: 8},
			"000001c0 08 00 00 00 0000000000000000", FrameRemote},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b [FrameSize]byte
			for i := range b {
				b[i] = 0xee // Encode must overwrite every byte
			}
			Encode(&b, tc.frame)
			want := hx(t, tc.bytes)
			if string(b[:]) != string(want) {
				t.Fatalf("Encode\n got %x\nwant %x", b, want)
			}
			f, kind := Decode(&b)
			if f != tc.frame || kind != tc.kind {
				t.Fatalf("Decode = %+v %v, want %+v %v", f, kind, tc.frame, tc.kind)
			}
		})
	}
}

func TestEncodeMasksAndClamps(t *testing.T) {
	var b [FrameSize]byte
	Encode(&b, can.Frame{ID: 0xfff, Length: 12})
	if want := hx(t, "ff070000 08 00 00 0c 0000000000000000"); string(b[:]) != string(want) {
		t.Fatalf("standard ID 0xfff, DLC 12\n got %x\nwant %x", b, want)
	}
	Encode(&b, can.Frame{ID: 0xffffffff, IsExtended: true, Length: 200})
	if want := hx(t, "ffffff9f 08 00 00 00 0000000000000000"); string(b[:]) != string(want) {
		t.Fatalf("extended ID 0xffffffff, Length 200\n got %x\nwant %x", b, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name  string
		bytes string
		kind  FrameKind
		frame can.Frame
	}{
		{"len 9", "23010000 09 00 00 00 0102030405060708", FrameBadLen,
			can.Frame{ID: 0x123, Length: 9, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"len 64 (CAN FD)", "23010080 40 00 00 00 0000000000000000", FrameBadLen,
			can.Frame{ID: 0x123, IsExtended: true, Length: 64}},
		{"standard id above 0x7ff", "00080000 01 00 00 00 0100000000000000", FrameBadID,
			can.Frame{ID: 0x800, Length: 1, Data: can.Data{1}}},
		{"error frame", "04000020 08 00 00 00 0004000000000000", FrameError,
			can.Frame{ID: CAN_ERR_CRTL, Length: 8, Data: can.Data{0, CAN_ERR_CRTL_RX_WARNING}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := [FrameSize]byte(hx(t, tc.bytes))
			f, kind := Decode(&b)
			if kind != tc.kind || f != tc.frame {
				t.Fatalf("Decode = %+v %v, want %+v %v", f, kind, tc.frame, tc.kind)
			}
			if kind.Valid() {
				t.Errorf("%v.Valid() = true", kind)
			}
		})
	}
}

func TestFrameKindString(t *testing.T) {
	want := []string{"data", "remote", "error", "bad_len", "bad_id"}
	for k := range NumFrameKinds {
		if got := FrameKind(k).String(); got != want[k] {
			t.Errorf("FrameKind(%d) = %q, want %q", k, got, want[k])
		}
	}
	if got := FrameKind(200).String(); got != "unknown" {
		t.Errorf("FrameKind(200) = %q", got)
	}
}

func TestCodecAllocs(t *testing.T) {
	var b [FrameSize]byte
	f := can.Frame{ID: 0x123, Length: 8}
	var e ErrorFrame
	e.Controller(CAN_ERR_CRTL_RX_PASSIVE)
	e.Counters(1, 130)
	n := testing.AllocsPerRun(1000, func() {
		Encode(&b, f)
		f, _ = Decode(&b)
		e.Encode(&b)
		e, _ = DecodeErrorFrame(&b)
	})
	if n != 0 {
		t.Fatalf("codec allocates %v times per frame, want 0", n)
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	var buf [FrameSize]byte
	f := can.Frame{ID: 0x123, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	for b.Loop() {
		Encode(&buf, f)
		f, _ = Decode(&buf)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(hx(f, "23010000 02 00 00 00 dead000000000000"))
	f.Add(hx(f, "000001c0 08 00 00 00 0000000000000000"))
	f.Add(hx(f, "04000020 08 00 00 00 0004000000000000"))
	f.Add(hx(f, "23010000 ff 00 00 00 0000000000000000"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var b [FrameSize]byte
		copy(b[:], in)
		fr, kind := Decode(&b)
		if kind >= numFrameKinds {
			t.Fatalf("kind %d out of range", kind)
		}
		if !kind.Valid() {
			return
		}
		// A valid frame survives a round trip bit for bit, except the
		// bytes Encode owns (pad, res0, len8_dlc).
		var out [FrameSize]byte
		Encode(&out, fr)
		b[offsetPad], b[offsetRes0], b[offsetLen8DLC] = 0, 0, 0
		if out != b {
			t.Fatalf("round trip\n in %x\nout %x", b, out)
		}
		if fr.Length > MaxDataLen || (!fr.IsExtended && fr.ID > canSFFMask) {
			t.Fatalf("valid kind %v for %+v", kind, fr)
		}
	})
}
