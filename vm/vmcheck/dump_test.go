package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want frame
	}{
		{"(1700000000.000001) vcan0 123#0102", frame{Iface: "vcan0", ID: 0x123, Data: []byte{1, 2}, Text: "123#0102"}},
		{"(1700000000.000001) vcan0 123#", frame{Iface: "vcan0", ID: 0x123, Data: []byte{}, Text: "123#"}},
		{"(1.000005) can0 1ABCDEF0#FF", frame{Iface: "can0", ID: 0x1ABCDEF0, Ext: true, Data: []byte{0xFF}, Text: "1ABCDEF0#FF"}},
		{"(1.000005) vcan0 20000004#0004000000000000", frame{Iface: "vcan0", ID: 4, Err: true, Data: []byte{0, 4, 0, 0, 0, 0, 0, 0}, Text: "20000004#0004000000000000"}},
		{"(1.000005) vcan0 7FF#R", frame{Iface: "vcan0", ID: 0x7FF, RTR: true, Text: "7FF#R"}},
		{"(1.000005) vcan0 123##1AABB", frame{Iface: "vcan0", ID: 0x123, FD: true, Data: []byte{0xAA, 0xBB}, Text: "123##1AABB"}},
	} {
		got, err := parseLine(tc.line)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if got.Iface != tc.want.Iface || got.ID != tc.want.ID || got.Ext != tc.want.Ext || got.Err != tc.want.Err ||
			got.RTR != tc.want.RTR || got.FD != tc.want.FD || !bytes.Equal(got.Data, tc.want.Data) || got.Text != tc.want.Text {
			t.Errorf("%q: got %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func TestParseLineErrors(t *testing.T) {
	for line, want := range map[string]string{
		"vcan0 123#00":                            "want 3 fields",
		"1.5 vcan0 123#00":                        "is not \"(sec.usec)\"",
		"(x) vcan0 123#00":                        "is not \"(sec.usec)\" with 6 digits",
		"(1.5) vcan0 123#00":                      "with 6 digits of µs",
		"(1.000005) vcan0 12300":                  "has no '#'",
		"(1.000005) vcan0 12#00":                  "has 2 digits",
		"(1.000005) vcan0 800#00":                 "exceeds 0x7FF",
		"(1.000005) vcan0 123#0":                  "not hex byte pairs",
		"(1.000005) vcan0 123#000000000000000000": "max 8",
	} {
		_, err := parseLine(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", line, err, want)
		}
	}
}

func TestReadDumpNamesLine(t *testing.T) {
	_, _, err := readDump(strings.NewReader("(1.000000) vcan0 123#00\n\n(1.000001) vcan0 garbage\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `dump line 3 "(1.000001) vcan0 garbage": `) {
		t.Fatalf("error %v, want it to name line 3", err)
	}
}

// candump -d reports its own socket's drops between the frames (candump.c).
func TestReadDumpDropCount(t *testing.T) {
	in := "(1.000000) vcan0 123#00\n" +
		"DROPCOUNT: dropped 1 CAN frame on 'vcan0' socket (total drops 1)\n" +
		"(1.000001) vcan0 123#01\n" +
		"DROPCOUNT: dropped 41 CAN frames on 'vcan0' socket (total drops 42)\n"
	frames, drops, err := readDump(strings.NewReader(in))
	if err != nil || len(frames) != 2 || drops != 42 || frames[1].Line != 3 {
		t.Fatalf("got %d frames (%+v), %d drops, %v; want 2 frames, the second on line 3, 42 drops", len(frames), frames, drops, err)
	}
	_, _, err = readDump(strings.NewReader("DROPCOUNT: lots\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `dump line 1 "DROPCOUNT: lots": not candump's`) {
		t.Fatalf("error %v, want it to name line 1", err)
	}
}
