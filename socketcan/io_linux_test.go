package socketcan

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unsafe"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"
)

// seqpacketPair is the stand-in for a CAN socket the design uses in tests:
// record boundaries are kept, so each write is one 16-byte frame.
func seqpacketPair(t testing.TB) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestReadWriteFrame(t *testing.T) {
	a, b := seqpacketPair(t)
	var out, in [FrameSize]byte
	Encode(&out, can.Frame{ID: 0x321, Length: 3, Data: can.Data{1, 2, 3}})
	if err := WriteFrame(a, &out); err != nil {
		t.Fatal(err)
	}
	var e ErrorFrame
	e.Controller(CAN_ERR_CRTL_RX_OVERFLOW)
	var ef [FrameSize]byte
	e.Encode(&ef)
	if err := WriteFrame(a, &ef); err != nil {
		t.Fatal(err)
	}
	drops := uint32(7)
	n, err := ReadFrame(b, &in, &drops)
	if n != FrameSize || err != nil || in != out {
		t.Fatalf("ReadFrame = %d, %v, %x; want 16, nil, %x", n, err, in, out)
	}
	if drops != 7 {
		t.Errorf("drops = %d without an SO_RXQ_OVFL cmsg, want unchanged 7", drops)
	}
	if n, err = ReadFrame(b, &in, nil); n != FrameSize || err != nil || in != ef {
		t.Fatalf("second ReadFrame = %d, %v, %x; want the error frame %x", n, err, in, ef)
	}
	if _, err = ReadFrame(b, &in, &drops); err != unix.EAGAIN {
		t.Fatalf("ReadFrame on empty queue: %v, want EAGAIN", err)
	}
}

func TestReadFrameWrongSize(t *testing.T) {
	a, b := seqpacketPair(t)
	if _, err := unix.Write(a, make([]byte, 72)); err != nil { // a CAN FD record
		t.Fatal(err)
	}
	if _, err := unix.Write(a, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	var in [FrameSize]byte
	if n, err := ReadFrame(b, &in, nil); n != FrameSize || !errors.Is(err, ErrFrameSize) {
		t.Fatalf("72-byte record: %d, %v; want 16, ErrFrameSize", n, err)
	}
	if n, err := ReadFrame(b, &in, nil); n != 3 || !errors.Is(err, ErrFrameSize) {
		t.Fatalf("3-byte record: %d, %v; want 3, ErrFrameSize", n, err)
	}
}

func TestReadFrameEOF(t *testing.T) {
	a, b := seqpacketPair(t)
	unix.Shutdown(a, unix.SHUT_WR)
	var in [FrameSize]byte
	if n, err := ReadFrame(b, &in, nil); n != 0 || err != io.EOF {
		t.Fatalf("after peer shutdown: %d, %v; want 0, EOF", n, err)
	}
}

func TestWriteFrameFullQueue(t *testing.T) {
	a, _ := seqpacketPair(t)
	var f [FrameSize]byte
	for i := range 1 << 20 {
		err := WriteFrame(a, &f)
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	t.Fatal("queue never filled")
}

func TestReadFrameBadFd(t *testing.T) {
	var in [FrameSize]byte
	if _, err := ReadFrame(-1, &in, nil); err != unix.EBADF {
		t.Fatalf("got %v, want EBADF", err)
	}
	if err := WriteFrame(-1, &in); err != unix.EBADF {
		t.Fatalf("got %v, want EBADF", err)
	}
}

// cmsg builds one control message as the kernel lays it out (CMSG_SPACE).
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, cmsgAlign(unix.SizeofCmsghdr+len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.SizeofCmsghdr + len(data))
	copy(b[unix.SizeofCmsghdr:], data)
	return b
}

func TestParseDrops(t *testing.T) {
	ovfl := cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, []byte{0x2a, 0x01, 0, 0})
	ts := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16))
	tests := []struct {
		name string
		oob  []byte
		want uint32
	}{
		{"alone", ovfl, 0x12a},
		{"after a timestamp", append(append([]byte{}, ts...), ovfl...), 0x12a},
		{"other level", cmsg(unix.SOL_CAN_RAW, unix.SO_RXQ_OVFL, []byte{1, 0, 0, 0}), 99},
		{"short payload", cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, []byte{1, 0}), 99},
		{"truncated header", ovfl[:unix.SizeofCmsghdr-1], 99},
		{"length beyond buffer", ovfl[:unix.SizeofCmsghdr+2], 99},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := uint32(99)
			parseDrops(tc.oob, &d)
			if d != tc.want {
				t.Fatalf("drops = %#x, want %#x", d, tc.want)
			}
		})
	}
}

func TestFrameIOAllocs(t *testing.T) {
	a, b := seqpacketPair(t)
	var out, in [FrameSize]byte
	Encode(&out, can.Frame{ID: 0x7ff, Length: 8})
	var drops uint32
	n := testing.AllocsPerRun(1000, func() {
		if err := WriteFrame(a, &out); err != nil {
			panic(err)
		}
		if _, err := ReadFrame(b, &in, &drops); err != nil {
			panic(err)
		}
		if _, err := ReadFrame(b, &in, &drops); err != unix.EAGAIN {
			panic(err)
		}
	})
	if n != 0 {
		t.Fatalf("write+read+EAGAIN allocate %v times, want 0", n)
	}
}

func BenchmarkWriteReadFrame(b *testing.B) {
	x, y := seqpacketPair(b)
	var out, in [FrameSize]byte
	var drops uint32
	for b.Loop() {
		if err := WriteFrame(x, &out); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadFrame(y, &in, &drops); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseDrops: any control bytes leave *drops alone or set it to 4 bytes found
// in them; an SO_RXQ_OVFL message built with cmsg, alone or after the fuzzed
// messages, is read back.
func FuzzParseDrops(f *testing.F) {
	f.Add(cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, []byte{1, 0, 0, 0}))
	f.Add(append(cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)), cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, []byte{0x2a, 1, 0, 0})...))
	f.Fuzz(func(t *testing.T, oob []byte) {
		if len(oob) > oobWords*8 {
			oob = oob[:oobWords*8]
		}
		// Copy into an aligned buffer, as ReadFrame's is.
		var buf [2 * oobWords]uint64
		bb := (*[2 * oobWords * 8]byte)(unsafe.Pointer(&buf[0]))
		copy(bb[:], oob)
		const untouched = 0xFEEDFACE
		d := uint32(untouched)
		parseDrops(bb[:len(oob)], &d)
		if d != untouched && !bytes.Contains(oob, native32(d)) {
			t.Fatalf("drops %#x is not in % x", d, oob)
		}

		var v uint32
		if len(oob) >= 4 {
			v = native.Uint32(oob)
		}
		ovfl := cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, native32(v))
		d = untouched
		parseDrops(ovfl, &d)
		if d != v {
			t.Fatalf("SO_RXQ_OVFL %#x read as %#x", v, d)
		}
		// After whole, well-formed messages the fuzzed ones end: cmsg pads each.
		if n := copy(bb[cmsgAlign(len(oob)):], ovfl); n == len(ovfl) && wellFormed(bb[:len(oob)]) {
			d = untouched
			parseDrops(bb[:cmsgAlign(len(oob))+n], &d)
			if d != v {
				t.Fatalf("SO_RXQ_OVFL %#x after % x read as %#x", v, oob, d)
			}
		}
	})
}

func native32(v uint32) []byte { return native.AppendUint32(nil, v) }

// wellFormed: oob (aligned) is a sequence of complete control messages, none of them
// SO_RXQ_OVFL, each padded to the cmsg alignment except perhaps the last.
func wellFormed(oob []byte) bool {
	for len(oob) > 0 {
		if len(oob) < unix.SizeofCmsghdr {
			return false
		}
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) || (h.Level == unix.SOL_SOCKET && h.Type == unix.SO_RXQ_OVFL) {
			return false
		}
		oob = oob[min(cmsgAlign(l), len(oob)):]
	}
	return true
}

func TestSetRcvBuf(t *testing.T) {
	a, _ := seqpacketPair(t)
	_, def, err := setRcvBuf(a, 0)
	if err != nil || def <= 0 {
		t.Fatalf("default: %d, %v", def, err)
	}
	warn, got, err := setRcvBuf(a, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if warn == nil && got < 1<<20 {
		t.Fatalf("SO_RCVBUFFORCE accepted but buffer is %d bytes, want >= %d", got, 1<<20)
	}
	if warn != nil && !strings.Contains(warn.Error(), "grant CAP_NET_ADMIN") {
		t.Fatalf("fallback warning without the fix: %v", warn)
	}
}
