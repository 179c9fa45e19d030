package protocol

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"go.einride.tech/can"

	"cand/socketcan"
)

func TestNext(t *testing.T) {
	for _, tc := range []struct {
		in   string
		msgs []string
		rest string // what is left once no message is complete
	}{
		{"< hi >", []string{"< hi >"}, ""},
		{"< ok >< frame 123 1.000000 11 >", []string{"< ok >", "< frame 123 1.000000 11 >"}, ""},
		{"garbage< echo >\n", []string{"< echo >"}, ""},
		{"< echo >< sen", []string{"< echo >"}, "< sen"},
		{"> x < a < b > c", []string{"< a < b >"}, ""},
		{"no message", nil, ""},
	} {
		b := []byte(tc.in)
		var got []string
		for {
			msg, n := Next(b)
			b = b[n:]
			if msg == nil {
				break
			}
			got = append(got, string(msg))
		}
		if !reflect.DeepEqual(got, tc.msgs) || string(b) != tc.rest {
			t.Errorf("Next(%q): messages %q, rest %q; want %q, %q", tc.in, got, b, tc.msgs, tc.rest)
		}
	}
}

// readAll returns every message of r until its error.
func readAll(r io.Reader) ([]string, error) {
	rd := NewReader(r)
	var out []string
	for {
		msg, err := rd.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(msg))
	}
}

// Messages split across reads anywhere, or many in one read, come out whole.
func TestReaderSplitMessages(t *testing.T) {
	stream := "< hi >< open can0 >x< send 1ABCDEF0 2 1 f1 >  < echo >< frame 123 23.424242 1A220344 >< cut"
	want := []string{"< hi >", "< open can0 >", "< send 1ABCDEF0 2 1 f1 >", "< echo >", "< frame 123 23.424242 1A220344 >"}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(stream),
		"one byte": iotest.OneByteReader(strings.NewReader(stream)),
		"half":     iotest.HalfReader(strings.NewReader(stream)),
		"data+EOF": iotest.DataErrReader(strings.NewReader(stream)),
	} {
		got, err := readAll(r)
		if !reflect.DeepEqual(got, want) || err != io.EOF {
			t.Errorf("%s: %q, %v; want %q, EOF", name, got, err, want)
		}
	}
}

func TestReaderTooLong(t *testing.T) {
	stream := "< echo >< " + strings.Repeat("x", MaxMessage) + " >"
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(stream),
		"one byte": iotest.OneByteReader(strings.NewReader(stream)),
	} {
		got, err := readAll(r)
		if len(got) != 1 || got[0] != "< echo >" || !errors.Is(err, ErrTooLong) {
			t.Errorf("%s: %d messages, %v; want [< echo >], ErrTooLong", name, len(got), err)
		}
	}
	// Exactly at the limit is a message.
	long := "<" + strings.Repeat("x", MaxMessage-2) + ">"
	if got, err := readAll(strings.NewReader(long)); len(got) != 1 || got[0] != long || err != io.EOF {
		t.Fatalf("a %d-byte message: %d messages, %v", MaxMessage, len(got), err)
	}
}

func std(id uint32, data ...byte) can.Frame {
	f := can.Frame{ID: id, Length: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

func ext(id uint32, data ...byte) can.Frame {
	f := std(id, data...)
	f.IsExtended = true
	return f
}

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want Command
		err  string
	}{
		{"< open can0 >", Command{Verb: Open, Word: "open", Bus: "can0"}, ""},
		{"<open\tvcan1>", Command{Verb: Open, Word: "open", Bus: "vcan1"}, ""},
		{"< open >", Command{Verb: Open, Word: "open"}, "open takes one bus name of at most 16 characters"},
		{"< open abcdefghijklmnopq >", Command{Verb: Open, Word: "open"}, "open takes one bus name of at most 16 characters"},
		{"< rawmode >", Command{Verb: RawMode, Word: "rawmode"}, ""},
		{"< bcmmode >", Command{Verb: BCMMode, Word: "bcmmode"}, ""},
		{"< controlmode >", Command{Verb: ControlMode, Word: "controlmode"}, ""},
		{"< isotpmode >", Command{Verb: ISOTPMode, Word: "isotpmode"}, ""},
		{"< echo >", Command{Verb: Echo, Word: "echo"}, ""},
		{"< echo now >", Command{Verb: Echo, Word: "echo"}, "echo takes no arguments"},
		{"< statistics 1000 >", Command{Verb: Statistics, Word: "statistics", IntervalMs: 1000}, ""},
		{"< statistics 0 >", Command{Verb: Statistics, Word: "statistics"}, ""},
		{"< statistics -1 >", Command{Verb: Statistics, Word: "statistics"}, "statistics interval is not a number of milliseconds"},
		// The protocol text's examples of send.
		{"< send 123 0 >", Command{Verb: Send, Word: "send", Frame: std(0x123)}, ""},
		{"< send 1AAAAAAA 2 1 f1 >", Command{Verb: Send, Word: "send", Frame: ext(0x1AAAAAAA, 0x01, 0xF1)}, ""},
		// 8 digits make a 29-bit ID even when the value is small; python-can writes
		// the length in hex and an empty payload as two spaces.
		{"< send 00000123 8 0 1 2 3 4 5 6 7 >", Command{Verb: Send, Word: "send", Frame: ext(0x123, 0, 1, 2, 3, 4, 5, 6, 7)}, ""},
		{"< send 7FF 0  >", Command{Verb: Send, Word: "send", Frame: std(0x7FF)}, ""},
		{"< send 1ABCDEF0 3 de ad BE >", Command{Verb: Send, Word: "send", Frame: ext(0x1ABCDEF0, 0xDE, 0xAD, 0xBE)}, ""},
		{"< send 800 0 >", Command{Verb: Send, Word: "send"}, "can_id 800 is above 7FF, the largest 11-bit identifier; write a 29-bit one with 8 digits"},
		{"< send 20000000 0 >", Command{Verb: Send, Word: "send"}, "can_id 20000000 is above 1FFFFFFF, the largest 29-bit identifier"},
		{"< send 123456789 0 >", Command{Verb: Send, Word: "send"}, `can_id "123456789" is not 1..8 hex digits`},
		{"< send 0x12 0 >", Command{Verb: Send, Word: "send"}, `can_id "0x12" is not 1..8 hex digits`},
		{"< send 123 9 1 2 3 4 5 6 7 8 9 >", Command{Verb: Send, Word: "send", Frame: std(0x123)}, `can_dlc "9" is not 0..8`},
		{"< send 123 2 1 >", Command{Verb: Send, Word: "send", Frame: can.Frame{ID: 0x123, Length: 2}}, "can_dlc is 2 but 1 data bytes follow"},
		{"< send 123 1 100 >", Command{Verb: Send, Word: "send", Frame: can.Frame{ID: 0x123, Length: 1}}, `data byte "100" is not 1 or 2 hex digits`},
		{"< send 123 >", Command{Verb: Send, Word: "send"}, "send takes can_id can_dlc and can_dlc data bytes"},
		{"< can0 B 500000 0 0 0 0 0 0 0 >", Command{Verb: BusConfig, Word: "can0", Bus: "can0"}, ""},
		{"< can0 C 0 0 0 >", Command{Verb: BusConfig, Word: "can0", Bus: "can0"}, ""},
		{"< subscribe 0 0 123 >", Command{Verb: BCMJob, Word: "subscribe"}, ""},
		{"< sendpdu 0011 >", Command{Verb: ISOTPJob, Word: "sendpdu"}, ""},
		{"< hello >", Command{Verb: Unknown, Word: "hello"}, ""},
		{"< >", Command{}, ""},
		{"<", Command{}, "a message starts with < and ends with >"},
	} {
		got, err := ParseCommand([]byte(tc.msg))
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		if got != tc.want || errText != tc.err {
			t.Errorf("ParseCommand(%q) = %+v, %q; want %+v, %q", tc.msg, got, errText, tc.want, tc.err)
		}
	}
}

func TestAppendSend(t *testing.T) {
	for _, tc := range []struct {
		f    can.Frame
		want string
	}{
		{std(0x123), "< send 123 0 >"},
		{std(0x12, 0x01, 0xF1), "< send 012 2 1 f1 >"},
		{ext(0x1AAAAAAA, 0x01, 0xF1), "< send 1AAAAAAA 2 1 f1 >"},
		{ext(0x123, 0xFF), "< send 00000123 1 ff >"},
	} {
		if got := string(AppendSend(nil, tc.f)); got != tc.want {
			t.Errorf("AppendSend(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

var at = time.Unix(23, 424242000)

// The server's messages, byte for byte as the reference server writes them
// (state_raw.c, state_nobus.c, statistics.c).
func TestServerMessages(t *testing.T) {
	var cnt socketcan.ErrorFrame
	cnt.Controller(socketcan.CAN_ERR_CRTL_TX_PASSIVE)
	cnt.Counters(128, 0)
	var timeout socketcan.ErrorFrame
	timeout.Add(socketcan.CAN_ERR_TX_TIMEOUT)
	for _, tc := range []struct{ got, want string }{
		{string(AppendFrame(nil, std(0x123, 0x1A, 0x22, 0x03, 0x44), at)), "< frame 123 23.424242 1A220344 >"},
		{string(AppendFrame(nil, std(0x7), time.Unix(1700000000, 5000))), "< frame 007 1700000000.000005  >"},
		{string(AppendFrame(nil, ext(0x123, 0xFF), at)), "< frame 00000123 23.424242 FF >"},
		{string(AppendErrorFrame(nil, cnt, at)), "< error 204 23.424242 0020000000008000 >"},
		{string(AppendErrorFrame(nil, timeout, at)), "< error 001 23.424242 0000000000000000 >"},
		{string(AppendStat(nil, Stat{RXBytes: 1, RXFrames: 2, TXBytes: 3, TXFrames: 1 << 40})), "< stat 1 2 3 1099511627776 >"},
		{string(AppendError(nil, "could not open bus")), "< error could not open bus >"},
		{string(AppendError(nil, "bad <x>")), "< error bad  x  >"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestParseServer(t *testing.T) {
	var cnt socketcan.ErrorFrame
	cnt.Controller(socketcan.CAN_ERR_CRTL_TX_PASSIVE)
	cnt.Counters(128, 0)
	for _, tc := range []struct {
		msg  string
		want ServerMessage
		err  bool
	}{
		{"< hi >", ServerMessage{Kind: KindHi}, false},
		{"< ok >", ServerMessage{Kind: KindOK}, false},
		{"< echo >", ServerMessage{Kind: KindEcho}, false},
		{"< ok ok >", ServerMessage{}, false},
		{"< frame 123 23.424242 1A220344 >", ServerMessage{Kind: KindFrame, Frame: std(0x123, 0x1A, 0x22, 0x03, 0x44), Time: at}, false},
		{"< frame 1ABCDEF1 23.424242  >", ServerMessage{Kind: KindFrame, Frame: ext(0x1ABCDEF1), Time: at}, false},
		{"< frame 123 23.42424 11 >", ServerMessage{Kind: KindFrame, Frame: std(0x123)}, true},
		{"< frame 123 23.424242 112 >", ServerMessage{Kind: KindFrame, Frame: std(0x123), Time: at}, true},
		{"< error 204 23.424242 0020000000008000 >", ServerMessage{Kind: KindErrorFrame, ErrorFrame: cnt, Time: at}, false},
		{"< error 040 23.424242 >", ServerMessage{Kind: KindErrorFrame, ErrorFrame: socketcan.ErrorFrame{Class: socketcan.CAN_ERR_BUSOFF}, Time: at}, false},
		{"< error unknown command >", ServerMessage{Kind: KindError, Text: "unknown command"}, false},
		{"< error add 1.5 >", ServerMessage{Kind: KindError, Text: "add 1.5"}, false},
		{"< stat 1 2 3 4 >", ServerMessage{Kind: KindStat, Stat: Stat{1, 2, 3, 4}}, false},
		{"< stat 1 2 3 >", ServerMessage{Kind: KindStat}, true},
	} {
		got, err := ParseServer([]byte(tc.msg))
		if !reflect.DeepEqual(got, tc.want) || (err != nil) != tc.err {
			t.Errorf("ParseServer(%q) = %+v, %v; want %+v, error %v", tc.msg, got, err, tc.want, tc.err)
		}
	}
}

func TestBeacon(t *testing.T) {
	got := string(AppendBeacon(nil, Beacon{Name: "pi", Description: `cand "dev" & <more>`,
		Addr: netip.MustParseAddrPort("192.168.1.5:29536"), Buses: []string{"can0", "can1"}}))
	want := `<CANBeacon name="pi" type="SocketCAN" description="cand &#34;dev&#34; &amp; &lt;more&gt;"><URL>can://192.168.1.5:29536</URL><Bus name="can0"/><Bus name="can1"/></CANBeacon>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if b := AppendBeacon([]byte("x"), Beacon{}); !bytes.HasPrefix(b, []byte("x<CANBeacon")) {
		t.Errorf("AppendBeacon does not append: %q", b)
	}
}
