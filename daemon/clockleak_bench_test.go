package daemon

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"cand/config"
	"cand/sim/clock"
	"cand/sim/clock/gaptrace"
)

// How often the strict rule lets a Pi 4 at force_turbo overflow at 10 % of a
// 1 Mbit/s bus (8-byte frames about 1 ms apart, a load the board keeps up with),
// with CAND_LEAK_HOGS CPU hogs (busy shell loops, other processes) loading the
// host, for CAND_LEAK_SECONDS (default 30). At each new overflow it logs the
// clock's per-gap trace (sim/clock trace.go) of the last looked-at gaps:
//
//	CAND_LEAK_HOGS=2 go test -run - -bench StrictRuleUnderHostLoad -benchtime 1x -v ./daemon/
func BenchmarkStrictRuleUnderHostLoad(b *testing.B) {
	secs, hogs := envInt("CAND_LEAK_SECONDS", 30), envInt("CAND_LEAK_HOGS", 0)
	for b.Loop() {
		for range hogs {
			hog := exec.Command("sh", "-c", "while :; do :; done")
			if err := hog.Start(); err != nil {
				b.Skipf("cannot start a CPU hog: %v", err)
			}
			b.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
		}
		r := newRigConfig(b).clockRule(config.SimCPUStrict).board(config.SimBoardPi4).forceTurbo().bitrate(1_000_000).
			peer(loadPeer("load", floodID, 8, 10)).start()
		lr := &loadRig{rig: r}
		b.Cleanup(lr.drainRX())
		clk := r.pi.Clock()
		ring := gaptrace.New(48)
		clk.TraceGaps(ring)
		m := r.d.Owner.Ports[0].M
		seen, dumps := uint64(0), 0
		for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
			time.Sleep(200 * time.Microsecond) // a sampling period, not a wait for an event
			if n := m.RXOverflows.Load(); n > seen {
				seen = n
				if dumps < 3 {
					dumps++
					b.Logf("overflow %d at %d RX frames, board time %d; the last gaps:\n%s", n, m.RXFrames.Load(), clk.Reached(), ring.Dump())
				}
			}
		}
		st := clk.Stats()
		b.ReportMetric(float64(seen)*60/float64(secs), "overflows/min")
		b.ReportMetric(float64(m.RXFrames.Load()), "rx-frames")
		b.ReportMetric(float64(hogs), "hogs")
		for c, rm := range st.Removed {
			if rm.Ns > 0 {
				b.Logf("removed %s: %d × %.1f ms", clock.Category(c), rm.Count, float64(rm.Ns)/1e6)
			}
		}
		b.Logf("floors kept %.1f ms; %d register accesses a frame", float64(st.FloorKeptNs)/1e6, st.Removed[clock.Model].Count/max(m.RXFrames.Load(), 1))
		b.Logf("scaled %.1f ms, idle %.1f ms, wakes %d (%.1f ms), parks %d (%.1f ms)", float64(st.ScaledNs)/1e6, float64(st.IdleNs)/1e6,
			st.Wakes, float64(st.WakeNs)/1e6, st.Parks, float64(st.ParkNs)/1e6)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}
