package daemon

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/mcp2515"
	"cand/metrics"
	"cand/socketcan"
	"cand/socketcan/slcan"
)

// BenchmarkSLCANAdapterToKernel: frames the owner writes to its socketpair end,
// through the adapter (toKernel: read what waits, encode, one pty write), read
// back from the pty's slave as the kernel's slcan would get them. ns/frame is
// the path's cost on this host without the kernel's parsing and netif_rx; the
// socketcan/slcan benchmarks give its parts.
func BenchmarkSLCANAdapterToKernel(b *testing.B) {
	master, slave, err := slcan.OpenPTY()
	if err != nil {
		b.Skipf("no pseudo-terminal: %v", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fds[0])
	unix.SetNonblock(fds[1], true)
	a := benchAdapter(master, slave, fds[1])
	a.start()
	defer a.close()
	f := can.Frame{ID: 0x123, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	line := len(slcan.AppendFrame(nil, f))
	n := b.N
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for got := 0; got < n*line; {
			k, err := slave.Read(buf)
			if err != nil {
				done <- err
				return
			}
			got += k
		}
		done <- nil
	}()
	var rec [socketcan.FrameSize]byte
	socketcan.Encode(&rec, f)
	b.ResetTimer()
	for range n {
		if _, err := unix.Write(fds[0], rec[:]); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}

// benchAdapter is an adapter on master/slave and the socketpair end pair, with
// no owner and no netdev.
func benchAdapter(master, slave *os.File, pair int) *slcanPort {
	a := &slcanPort{cc: &config.Controller{Name: "bench", Bitrate: 500_000, OscillatorHz: 16_000_000, RestartMs: new(uint32)},
		name: "can0", log: slog.New(slog.NewTextHandler(io.Discard, nil)), m: metrics.New("bench").AddController("bench", "can0"),
		owner: &bridge.Owner{}, inForce: func(mcp2515.BitTiming) {}, kickc: make(chan struct{}, 1), links: &fakeSLCANLinks{},
		master: master, closeTT: func() error { slave.Close(); return master.Close() }, pair: os.NewFile(uintptr(pair), "pair")}
	a.rate.Store(500_000)
	return a
}
