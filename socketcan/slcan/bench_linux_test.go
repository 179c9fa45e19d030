package slcan

import (
	"io"
	"os"
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/socketcan"
)

// What the slcan path costs per frame on this host, without the kernel's side
// (slcan's parsing and netif_rx: the build machine's kernel has no CAN):
//
//	BenchmarkSocketpairRecord  a 16-byte record through a SOCK_SEQPACKET socketpair
//	                           (the owner's socket with kind vcan/none), written and read
//	BenchmarkPTYLinePerWrite   a frame encoded as an SLCAN line, one pty write per frame
//	BenchmarkPTYLinesBatched   64 frames encoded into one buffer, one pty write
//
// Each reports ns/frame; a goroutine reads everything back on the other side.

func benchFrame(i int) can.Frame {
	return can.Frame{ID: uint32(i) & 0x7ff, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, byte(i)}}
}

// drain reads r until want bytes arrived, then signals done.
func drain(r io.Reader, want int, done chan<- error) {
	buf := make([]byte, 64<<10)
	for got := 0; got < want; {
		n, err := r.Read(buf)
		if err != nil {
			done <- err
			return
		}
		got += n
	}
	done <- nil
}

func lineLen() int { return len(AppendFrame(nil, benchFrame(0))) }

func benchPTY(b *testing.B, batch int) {
	m, s, err := OpenPTY()
	if err != nil {
		b.Skipf("no pseudo-terminal: %v", err)
	}
	defer m.Close()
	defer s.Close()
	n := b.N
	done := make(chan error, 1)
	go drain(s, n*lineLen(), done)
	out := make([]byte, 0, batch*MaxLine+batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < n; {
		out = out[:0]
		for k := 0; k < batch && i < n; k++ {
			out = AppendFrame(out, benchFrame(i))
			i++
		}
		if _, err := m.Write(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}

func BenchmarkPTYLinePerWrite(b *testing.B) { benchPTY(b, 1) }
func BenchmarkPTYLinesBatched(b *testing.B) { benchPTY(b, 64) }

func BenchmarkSocketpairRecord(b *testing.B) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	w, r := os.NewFile(uintptr(fds[0]), "w"), os.NewFile(uintptr(fds[1]), "r")
	defer w.Close()
	defer r.Close()
	n := b.N
	done := make(chan error, 1)
	go func() {
		var rec [socketcan.FrameSize]byte
		for range n {
			if _, err := r.Read(rec[:]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var rec [socketcan.FrameSize]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := range n {
		socketcan.Encode(&rec, benchFrame(i))
		if _, err := w.Write(rec[:]); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}
