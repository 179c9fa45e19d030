package slcan

import (
	"strings"
	"testing"

	"go.einride.tech/can"
)

func TestParseFrames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want can.Frame
	}{
		{"t1230", can.Frame{ID: 0x123}},
		{"t4563112233", can.Frame{ID: 0x456, Length: 3, Data: can.Data{0x11, 0x22, 0x33}}},
		{"t1238DEADBEEF00112233", can.Frame{ID: 0x123, Length: 8, Data: can.Data{0xde, 0xad, 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33}}},
		{"t7ff1aB", can.Frame{ID: 0x7ff, Length: 1, Data: can.Data{0xab}}},
		{"T12ABCDEF2AA55", can.Frame{ID: 0x12abcdef, IsExtended: true, Length: 2, Data: can.Data{0xaa, 0x55}}},
		{"T1FFFFFFF0", can.Frame{ID: 0x1fffffff, IsExtended: true}},
		{"r1230", can.Frame{ID: 0x123, IsRemote: true}},
		{"r1238", can.Frame{ID: 0x123, IsRemote: true, Length: 8}},
		{"R000000014", can.Frame{ID: 1, IsExtended: true, IsRemote: true, Length: 4}},
	} {
		got := Parse([]byte(tc.in))
		if got.Kind != Frame || got.Frame != tc.want {
			t.Errorf("Parse(%q) = %v %+v, want frame %+v", tc.in, got.Kind, got.Frame, tc.want)
		}
	}
}

func TestParseCommands(t *testing.T) {
	for i, rate := range Bitrates {
		in := []byte{'S', byte('0' + i)}
		if got := Parse(in); got.Kind != Bitrate || got.Bitrate != rate || got.Index != i {
			t.Errorf("Parse(%q) = %+v, want bitrate %d", in, got, rate)
		}
	}
	for in, want := range map[string]Kind{
		"": Empty, "O": Open, "C": Close, "F": ClearErrors,
		"V": Unknown, "N": Unknown, "Z1": Unknown, "sa000000": Unknown,
	} {
		if got := Parse([]byte(in)); got.Kind != want {
			t.Errorf("Parse(%q) = %v, want %v", in, got.Kind, want)
		}
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{
		"t", "t12", "t123", "t1239", "t123x", "t12G0", "t8000", "t1231", "t12310", "t1231111",
		"t12311G", "t1230 ", "T123", "T2000000000", "T1234567", "T12345678", "T123456789",
		"r12300", "r1239", "R1234567800", "S", "S9", "S10", "Sa", "O1", "CC", "F0",
		strings.Repeat("x", MaxLine+1),
	} {
		if got := Parse([]byte(in)); got.Kind != Malformed {
			t.Errorf("Parse(%q) = %v %+v, want malformed", in, got.Kind, got)
		}
	}
}

func TestAppendFrame(t *testing.T) {
	for _, tc := range []struct {
		f    can.Frame
		want string
	}{
		{can.Frame{ID: 0x321, Length: 2, Data: can.Data{0xaa, 0xbb}}, "t3212AABB\r"},
		{can.Frame{ID: 0x5}, "t0050\r"},
		{can.Frame{ID: 0x12abcdef, IsExtended: true, Length: 2, Data: can.Data{0xaa, 0x55}}, "T12ABCDEF2AA55\r"},
		{can.Frame{ID: 0x123, IsRemote: true, Length: 8, Data: can.Data{1, 2}}, "r1238\r"},
		{can.Frame{ID: 0x1, IsExtended: true, IsRemote: true, Length: 0}, "R000000010\r"},
		{can.Frame{ID: 0xfff, Length: 12, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}, "t7FF80102030405060708\r"},
		{can.Frame{ID: 0xffffffff, IsExtended: true}, "T1FFFFFFF0\r"},
	} {
		if got := string(AppendFrame(nil, tc.f)); got != tc.want {
			t.Errorf("AppendFrame(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestAppendStateAndErrors(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(AppendState(nil, StatePassive, 130, 128)), "sp130128\r"},
		{string(AppendState(nil, StateActive, 57, 33)), "sa057033\r"},
		{string(AppendState(nil, StateBusOff, 0, 1000)), "sb000999\r"},
		{string(AppendState(nil, StateWarning, -1, 96)), "sw000096\r"},
		{string(AppendErrors(nil, ErrRXOverrun)), "e1o\r"},
		{string(AppendErrors(nil, ErrBit0, ErrCRC, ErrTXOverrun)), "e3bcO\r"},
		{string(AppendErrors(nil)), ""},
		{string(AppendErrors(nil, []byte("aaaaaaaaaa")...)), "e8aaaaaaaa\r"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestBitrateIndex(t *testing.T) {
	if n, ok := BitrateIndex(500000); !ok || n != 6 {
		t.Errorf("BitrateIndex(500000) = %d %v, want 6 (S6)", n, ok)
	}
	if _, ok := BitrateIndex(83333); ok {
		t.Error("BitrateIndex(83333) found a rate slcan does not have")
	}
}

// Every frame AppendFrame writes parses back to the same frame.
func TestFrameRoundTrip(t *testing.T) {
	for _, f := range []can.Frame{
		{ID: 0x7ff, Length: 8, Data: can.Data{0xff, 0, 0x10, 0x9a, 0xbc, 0xde, 0xf0, 1}},
		{ID: 0, IsExtended: true, Length: 0},
		{ID: 0x1abcdef0, IsExtended: true, IsRemote: true, Length: 5},
	} {
		line := AppendFrame(nil, f)
		got := Parse(line[:len(line)-1])
		if got.Kind != Frame || got.Frame != f {
			t.Errorf("%q parsed as %v %+v, want %+v", line, got.Kind, got.Frame, f)
		}
	}
}
