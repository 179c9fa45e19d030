package bench

import (
	"fmt"

	"cand/hw/bcm2835"
)

// Targets checks cand's goals against rep. Goals whose scenario or transfer size
// is not in rep are left out.
func Targets(rep *Report) []Target {
	var t []Target
	for _, s := range rep.Scenarios {
		switch {
		case s.Workload == "tx-share" && s.Bitrate == 1_000_000:
			// TX under a busy bus: the socket-to-RTS latency against the frames'
			// own time on the wire (the RX frames' mean length).
			rts := s.Stages["tx_socket_to_rts"]
			limit := 2 * s.BitsPerFrame // µs at 1 Mbit/s
			t = append(t, Target{
				Goal:     fmt.Sprintf("TX socket → RTS p99 ≤ 2 frame times under RX load (%s, %s clock)", s.Name, rts.Clock),
				Measured: fmt.Sprintf("p99 %.1f µs, limit %.1f µs (%.0f bits a frame)", rts.P99, limit, s.BitsPerFrame),
				Met:      s.Error == "" && rts.Count > 0 && rts.P99 <= limit,
			})
		case s.Workload != "":
			// The other workloads' figures are compared, not judged against a goal.
		case s.Bitrate == 1_000_000 && s.LoadPercent >= 100 && s.IntPollWindowUs > 0 && !s.SharedCPU:
			t = append(t, Target{
				Goal:     fmt.Sprintf("0 frames lost, 0 RX overflows, 100 %% load, 1 Mbit/s, 8-byte frames (%s, %.0f s)", s.Name, s.DurationS),
				Measured: lostText(s),
				Met:      s.Error == "" && s.FramesLost == 0 && s.RXOverflows == 0 && s.FramesOffered > 0,
			})
		case s.LoadPercent == 0 && s.Burst == nil:
			t = append(t, Target{
				Goal:     fmt.Sprintf("≤ 2 SPI transfers and ≤ 16 bytes per isolated RX frame (%s)", s.Name),
				Measured: fmt.Sprintf("%.2f transfers, %.1f bytes", s.SPITransfersPerRXFrame, s.SPIBytesPerRXFrame),
				Met:      s.FramesReceived > 0 && s.SPITransfersPerRXFrame <= 2.0001 && s.SPIBytesPerRXFrame <= 16.0001,
			})
			e2e := s.Stages["rx_end_to_end"]
			limit := 2 * s.WireUsPerRXFrame
			t = append(t, Target{
				Goal:     fmt.Sprintf("RX end-to-end p99 ≤ 2 × SPI wire time per frame (%s)", s.Name),
				Measured: fmt.Sprintf("p99 %.1f µs, limit %.1f µs (wire %.1f µs)", e2e.P99, limit, s.WireUsPerRXFrame),
				Met:      e2e.Count > 0 && e2e.P99 <= limit,
			})
		}
		if hb := s.HeartbeatMaxMs; hb != nil && s.Bitrate == 1_000_000 && (s.LoadPercent >= 100 || s.Workload != "") {
			measured := fmt.Sprintf("oldest %.1f ms", *hb)
			if h := s.HeartbeatHostMaxMs; h != nil && *h != *hb {
				measured += fmt.Sprintf(" (host clock %.1f ms)", *h)
			}
			t = append(t, Target{
				Goal:     fmt.Sprintf("owner heartbeat never older than 50 ms under load (%s, board clock)", s.Name),
				Measured: measured,
				Met:      s.Error == "" && *hb <= 50,
			})
		}
		if s.LoadPercent >= 100 && s.Bitrate == 1_000_000 && s.IntPollWindowUs > 0 && !s.Stress {
			t = append(t, Target{
				Goal:     fmt.Sprintf("0 allocations per frame in steady state (%s, whole process)", s.Name),
				Measured: fmt.Sprintf("%.4f allocs/frame", s.AllocsPerFrame),
				Met:      s.AllocsPerFrame < 0.01,
			})
		}
	}
	for _, x := range rep.Transfers {
		if x.Bytes <= bcm2835.SPIFIFOSize { // up to what the FIFO holds at once
			t = append(t, Target{
				Goal:     fmt.Sprintf("polling-first %d-byte transfer p50 ≤ 1.3 × wire time", x.Bytes),
				Measured: fmt.Sprintf("%.2f µs = %.2f × wire %.2f µs", x.PollP50, x.PollVsWire, x.WireUs),
				Met:      x.PollVsWire > 0 && x.PollVsWire <= 1.3,
			})
		}
		if x.Bytes == 2 {
			t = append(t, Target{
				Goal:     "polling-first 2-byte transfer ≥ 5 × faster than sleeping (the kernel on a Pi 2: 5.5×)",
				Measured: fmt.Sprintf("%.1f×", x.SleepVsPoll),
				Met:      x.SleepVsPoll >= 5,
			})
		}
	}
	return t
}

func lostText(s ScenarioResult) string {
	if s.Error != "" {
		return "failed: " + s.Error
	}
	return fmt.Sprintf("%d of %d lost, %d overflows", s.FramesLost, s.FramesOffered, s.RXOverflows)
}
