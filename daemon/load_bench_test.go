package daemon

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/internal/waitfor"
)

// BenchmarkTXUnderFullRXLoad measures on the wall clock what TestTXUnderFullRXLoad
// bounds in the owner's own work: under full RX load at 1 Mbit/s, with the poll
// window on and off, TX frames written one per millisecond (each once the previous
// one has been read). It reports the owner's heartbeat at its oldest (what the
// systemd watchdog sees, sampled every 250 µs), and the TX path from the socket
// write to RTS in two parts: write → read by the owner thread (the socket's queue
// empty again, SIOCOUTQ, looked at every 10 µs or so) p99 and max, and read → RTS
// p99 (cand_tx_socket_to_rts_seconds). The figures are the build machine's: host
// time, the simulator's threads on the same cores; host-stall-max is the longest
// the host kept the owner thread from running (sim/clock), which bounds them from
// below on a busy machine.
func BenchmarkTXUnderFullRXLoad(b *testing.B) {
	for _, window := range []time.Duration{500 * time.Microsecond, 0} {
		b.Run(windowName(window), func(b *testing.B) {
			procs := runtime.GOMAXPROCS(0)
			b.Cleanup(func() { runtime.GOMAXPROCS(procs) }) // the daemon raises it
			lr := startLoadRig(b, window, b.N)
			oldest := watchHeartbeat(lr.d.Owner)
			waits := make([]time.Duration, b.N)
			tk := time.NewTicker(time.Millisecond)
			defer tk.Stop()
			b.ResetTimer()
			for i := range b.N {
				<-tk.C
				t0 := time.Now()
				lr.write(0, txFrame(i))
				for {
					q, err := unix.IoctlGetInt(lr.host[0], unix.SIOCOUTQ)
					if err != nil {
						b.Fatal(err)
					}
					if q == 0 {
						break
					}
					if time.Since(t0) > 10*time.Second {
						b.Fatalf("TX frame %d not read within 10 s", i)
					}
					time.Sleep(10 * time.Microsecond) // leave the cores to the owner and the bus
				}
				waits[i] = time.Since(t0)
			}
			b.StopTimer()
			m := lr.d.Owner.Ports[0].M
			waitfor.Cond(b, 30*time.Second, fmt.Sprintf("%d TX frames on the bus", b.N), func() bool { return m.TXFrames.Load() >= uint64(b.N) })
			hb := oldest()
			slices.Sort(waits)
			b.ReportMetric(float64(hb.Microseconds()), "heartbeat-max-µs")
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "write-to-read-p99-µs")
			b.ReportMetric(float64(waits[len(waits)-1].Microseconds()), "write-to-read-max-µs")
			b.ReportMetric(float64(m.TXSocketToRTS.Snapshot().P99.Microseconds()), "read-to-rts-p99-µs")
			b.ReportMetric(float64(lr.pi.Clock().Stats().MaxRemovalNs/1e3), "host-stall-max-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// watchHeartbeat samples the owner's heartbeat every 250 µs until the returned
// function is called, which returns the oldest it saw it.
func watchHeartbeat(o *bridge.Owner) (stop func() time.Duration) {
	done := make(chan struct{})
	oldest := make(chan time.Duration, 1)
	go func() {
		var worst int64
		tk := time.NewTicker(250 * time.Microsecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				oldest <- time.Duration(worst)
				return
			case <-tk.C:
				worst = max(worst, o.HeartbeatAge())
			}
		}
	}()
	return func() time.Duration { close(done); return <-oldest }
}
