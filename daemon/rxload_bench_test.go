package daemon

import (
	"runtime"
	"testing"
	"time"

	"cand/config"
)

// BenchmarkRXUnderFullLoad measures what the virtual Pi loses under full RX load
// at 1 Mbit/s on the default clock rule (strict), per board, frame size and INT
// poll window: a load peer at 100 % with DLC 0 or 8, the host side of the socket
// read continuously, for b.N seconds of the board's time from the first frame.
// It reports the frames the chip accepted (offered), those it lost to overflow
// and those the socket refused, and the loss in parts per million. DLC 0 frames
// carry no counter, so the chip's own books count the loss (the bench, cand
// bench, needs DLC 8 for its counters).
func BenchmarkRXUnderFullLoad(b *testing.B) {
	for _, board := range []config.SimBoard{config.SimBoardPi3, config.SimBoardPi4} {
		for _, dlc := range []uint8{0, 8} {
			for _, window := range []time.Duration{500 * time.Microsecond, 0} {
				name := string(board) + "/dlc=" + string('0'+rune(dlc)) + "/" + windowName(window)
				b.Run(name, func(b *testing.B) { rxUnderFullLoad(b, board, dlc, window) })
			}
		}
	}
}

func rxUnderFullLoad(b *testing.B, board config.SimBoard, dlc uint8, window time.Duration) {
	procs := runtime.GOMAXPROCS(0)
	b.Cleanup(func() { runtime.GOMAXPROCS(procs) }) // the daemon raises it
	c := newRigConfig(b).board(board).bitrate(1_000_000).pollWindow(window).
		peer(loadPeer("flood", floodID, dlc, 100))
	lr := &loadRig{rig: c.start()}
	b.Cleanup(lr.drainRX())
	clk := lr.pi.Clock()
	b.ResetTimer()
	end := clk.Now() + int64(b.N)*int64(time.Second)
	for clk.Now() < end {
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	cs := lr.pi.Node(0).Chip.Stats()
	m := lr.d.Owner.Ports[0].M
	offered := cs.Received + cs.Lost
	lost := cs.Lost + m.SocketWriteErrs.Load()
	b.ReportMetric(float64(offered), "offered")
	b.ReportMetric(float64(cs.Lost), "chip-lost")
	b.ReportMetric(float64(m.SocketWriteErrs.Load()), "socket-refused")
	if offered > 0 {
		b.ReportMetric(1e6*float64(lost)/float64(offered), "lost-ppm")
	}
	b.ReportMetric(0, "ns/op")
}
