package protocol

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// chunks reads its data in the pieces the fuzzer chose: each byte of sizes is the
// length of the next read (0 reads nothing), the rest in one read.
type chunks struct {
	data, sizes []byte
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n, c.sizes = min(int(c.sizes[0]), n), c.sizes[1:]
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// However a stream is split into reads, Reader yields the same messages, each
// starting with '<' and ending with its first '>'.
func FuzzReader(f *testing.F) {
	f.Add([]byte("< hi >< open can0 >< ok >"), []byte{3, 1, 7})
	f.Add([]byte("junk< send 1ABCDEF0 2 1 f1 >< rawmode"), []byte{0, 12, 1, 1, 1})
	f.Add([]byte(">>< echo ><<"), []byte{1})
	f.Fuzz(func(t *testing.T, stream, sizes []byte) {
		whole, werr := readAll(bytes.NewReader(stream))
		split, serr := readAll(&chunks{data: stream, sizes: sizes})
		if !reflect.DeepEqual(whole, split) || (werr == ErrTooLong) != (serr == ErrTooLong) {
			t.Fatalf("whole: %d messages (%v); split: %d messages (%v)", len(whole), werr, len(split), serr)
		}
		for _, m := range whole {
			if m[0] != '<' || m[len(m)-1] != '>' || bytes.IndexByte([]byte(m[:len(m)-1]), '>') >= 0 {
				t.Fatalf("message %q", m)
			}
		}
	})
}

// ParseCommand takes any message; a send it accepts is written back by AppendSend
// as a command that parses to the same frame.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"< open can0 >", "< send 123 0 >", "< send 1AAAAAAA 2 1 f1 >", "< send 7FF 8 0 1 2 3 4 5 6 7 >",
		"< statistics 1000 >", "< can0 B 500000 875 0 0 0 0 0 0 >", "< rawmode >", "<send 00000000 1 FF>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, err := ParseCommand(msg)
		if err != nil || c.Verb != Send {
			return
		}
		again, err := ParseCommand(AppendSend(nil, c.Frame))
		if err != nil || again.Frame != c.Frame {
			t.Fatalf("%q → %v → %q → %v, %v", msg, c.Frame, AppendSend(nil, c.Frame), again.Frame, err)
		}
	})
}

// ParseServer takes any message; a frame, error frame or stat it accepts is
// formatted back to a message that parses to the same values.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"< frame 123 23.424242 1A220344 >", "< frame 1ABCDEF1 1.000000  >", "< error 204 23.424242 0020000000008000 >",
		"< error 040 1.000001 >", "< error unknown command >", "< stat 1 2 3 4 >", "< hi >"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		m, err := ParseServer(msg)
		if err != nil {
			return
		}
		var out []byte
		switch m.Kind {
		case KindFrame:
			out = AppendFrame(nil, m.Frame, m.Time)
		case KindErrorFrame:
			out = AppendErrorFrame(nil, m.ErrorFrame, m.Time)
		case KindStat:
			out = AppendStat(nil, m.Stat)
		default:
			return
		}
		again, err := ParseServer(out)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("%q → %+v → %q → %+v, %v", msg, m, out, again, err)
		}
	})
}
