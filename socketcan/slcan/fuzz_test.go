package slcan

import (
	"bytes"
	"testing"

	"cand/socketcan"
)

// FuzzLines: any byte stream, cut anywhere, splits into the same lines; every
// line parses to a kind without panicking; a frame line is re-encoded by
// AppendFrame to the same text (hex in upper case) and parses back to the same
// frame; a kept line is never longer than MaxLine.
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		"C\rS6\rO\r", "t1238DEADBEEF00112233\r", "T12ABCDEF2AA55\rr1230\rR000000014\r",
		"t12\at1230\r\r", "S9\rSa\rO1\rV\r", "t123xyz\rT2000000000\r",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		var whole, parts []seen
		var l1, l2 Lines
		l1.Feed(in, func(line []byte, tooLong bool) { whole = append(whole, seen{string(line), tooLong}) })
		k := min(int(cut), len(in))
		l2.Feed(in[:k], func(line []byte, tooLong bool) { parts = append(parts, seen{string(line), tooLong}) })
		l2.Feed(in[k:], func(line []byte, tooLong bool) { parts = append(parts, seen{string(line), tooLong}) })
		if len(whole) != len(parts) {
			t.Fatalf("split at %d: %d lines, whole %d", k, len(parts), len(whole))
		}
		for i, s := range whole {
			if s != parts[i] {
				t.Fatalf("line %d: %+v whole, %+v cut at %d", i, s, parts[i], k)
			}
			if len(s.line) > MaxLine {
				t.Fatalf("line of %d bytes kept", len(s.line))
			}
			ln := Parse([]byte(s.line))
			if ln.Kind >= numKinds {
				t.Fatalf("%q: kind %d", s.line, ln.Kind)
			}
			if ln.Kind != Frame {
				continue
			}
			out := AppendFrame(nil, ln.Frame)
			if want := append(bytes.ToUpper([]byte(s.line[:1])), bytes.ToUpper([]byte(s.line[1:]))...); !bytes.Equal(out[:len(out)-1], upperButType(s.line)) {
				t.Fatalf("%q re-encoded as %q (%q)", s.line, out, want)
			}
			if back := Parse(out[:len(out)-1]); back.Kind != Frame || back.Frame != ln.Frame {
				t.Fatalf("%q: %+v, back %+v", s.line, ln.Frame, back)
			}
		}
	})
}

// upperButType is a frame line with its hex digits in upper case, its type
// letter (t/T/r/R) as it was.
func upperButType(s string) []byte {
	return append([]byte{s[0]}, bytes.ToUpper([]byte(s[1:]))...)
}

// FuzzRecord: any 16-byte record becomes lines the codec parses back (a data
// or remote frame as the same frame), or nothing for a record that is not a
// classic frame; an error frame's lines are only `s` and `e` lines of the
// kernel's form.
func FuzzRecord(f *testing.F) {
	for _, s := range [][]byte{
		{0x23, 0x01, 0, 0, 2, 0, 0, 0, 0xaa, 0xbb},
		{0xef, 0xcd, 0xab, 0x92, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8},
		{0x40, 0x02, 0, 0x20, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0},
		{0x0c, 0x02, 0, 0x20, 8, 0, 0, 0, 0, 0x11, 0x08, 0x08, 0, 0, 0x80, 0x10},
		{0x23, 0x01, 0, 0, 9},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var rec [socketcan.FrameSize]byte
		copy(rec[:], in)
		out, ok := AppendRecord(nil, &rec)
		fr, kind := socketcan.Decode(&rec)
		// A line carries only the first Length bytes, and none of a remote frame.
		keep := int(min(fr.Length, 8))
		if fr.IsRemote {
			keep = 0
		}
		clear(fr.Data[keep:])
		fr.Length = min(fr.Length, 8)
		if ok != (kind.Valid() || kind == socketcan.FrameError) {
			t.Fatalf("% x: ok %v for kind %v", rec, ok, kind)
		}
		var l Lines
		n := 0
		l.Feed(out, func(line []byte, tooLong bool) {
			n++
			if tooLong {
				t.Fatalf("% x: a line too long in %q", rec, out)
			}
			switch {
			case kind.Valid():
				if p := Parse(line); p.Kind != Frame || p.Frame != fr {
					t.Fatalf("% x: %q parsed as %+v, want %+v", rec, line, p, fr)
				}
			case line[0] == 's':
				if len(line) != 8 || bytes.IndexByte([]byte("awpb"), line[1]) < 0 {
					t.Fatalf("% x: state line %q", rec, line)
				}
			case line[0] == 'e':
				if len(line) < 3 || int(line[1]-'0') != len(line)-2 || len(line)-2 > maxErrLetters {
					t.Fatalf("% x: error line %q", rec, line)
				}
			default:
				t.Fatalf("% x: line %q", rec, line)
			}
		})
		if l.Pending() != 0 || (kind.Valid() && n != 1) {
			t.Fatalf("% x: %q left %d bytes, %d lines", rec, out, l.Pending(), n)
		}
	})
}
