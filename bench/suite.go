package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"cand/bench/transfer"
)

// DefaultIntPollWindow is the INT poll window of the "poll window on" scenarios.
const DefaultIntPollWindow = 500 * time.Microsecond

// Durations of one suite.
type Durations struct {
	Main      time.Duration // 1 Mbit/s, 100 %, poll window on; and its stress twin
	Other     time.Duration // every other pipeline scenario
	Transfers int           // transfers per size and mode
}

// Quick runs the main scenarios for 4 s and the rest for 2 s (a few minutes in all,
// the workloads run twice: cand and the kernel driver's way); Full runs the main
// scenario for 60 s, the span of the zero-loss goal, and the rest for 20 s.
var (
	Quick = Durations{Main: 4 * time.Second, Other: 2 * time.Second, Transfers: 2000}
	Full  = Durations{Main: 60 * time.Second, Other: 20 * time.Second, Transfers: 20000}
)

// Suite returns the benchmark's scenarios with durations d.
func Suite(d Durations) []Scenario {
	var s []Scenario
	for _, br := range []uint32{125_000, 500_000, 1_000_000} {
		for _, win := range []time.Duration{DefaultIntPollWindow, 0} {
			dur := d.Other
			if br == 1_000_000 && win != 0 {
				dur = d.Main
			}
			onoff := "on"
			if win == 0 {
				onoff = "off"
			}
			s = append(s, Scenario{Name: fmt.Sprintf("load100-%s-window-%s", Rate(br), onoff), Bitrate: br,
				LoadPercent: 100, DLC: 8, IntPollWindow: win, Duration: dur})
		}
	}
	s = append(s,
		Scenario{Name: "load100-1M-window-on-stress", Bitrate: 1_000_000, LoadPercent: 100, DLC: 8,
			IntPollWindow: DefaultIntPollWindow, Stress: true, Duration: d.Main},
		// The same on host time: what the build machine's stalls cost (sim/clock).
		Scenario{Name: "load100-1M-window-on-shared-cpu", Bitrate: 1_000_000, LoadPercent: 100, DLC: 8,
			IntPollWindow: DefaultIntPollWindow, SharedCPU: true, Duration: d.Other},
		Scenario{Name: "isolated-1M-window-on", Bitrate: 1_000_000, Period: 5 * time.Millisecond, DLC: 8,
			IntPollWindow: DefaultIntPollWindow, Duration: d.Other})
	// Reference3x7's one interrupt with 3 messages: bursts of 3 back-to-back
	// frames every 2 ms at 1 Mbit/s, with the INT poll window on and off.
	for _, win := range []time.Duration{DefaultIntPollWindow, 0} {
		onoff := "on"
		if win == 0 {
			onoff = "off"
		}
		s = append(s, Scenario{Name: "burst3-1M-window-" + onoff, Bitrate: 1_000_000, Period: 2 * time.Millisecond,
			Burst: 3, DLC: 8, IntPollWindow: win, Duration: d.Other})
	}
	return append(s, Workloads(d)...)
}

// Rate is a bitrate as scenario names write it: 125k, 1M.
func Rate(br uint32) string {
	if br >= 1_000_000 {
		return fmt.Sprintf("%dM", br/1_000_000)
	}
	return fmt.Sprintf("%dk", br/1000)
}

// TransferSizes are the SPI transfer sizes compared: READ STATUS (2 bytes), READ RX
// BUFFER of an 8-byte frame (14), half a FIFO (32), a full FIFO (64), and more than
// the FIFO holds (200).
var TransferSizes = []int{2, 14, 32, 64, 200}

// Run runs scenarios and the transfer comparison, reporting progress to progress.
func Run(ctx context.Context, scenarios []Scenario, transfers int, base *Base, progress io.Writer) (*Report, error) {
	rep := &Report{}
	if err := runAll(ctx, rep, scenarios, base, progress, RunScenario); err != nil {
		return rep, err
	}
	for _, n := range TransferSizes {
		if transfers == 0 {
			break
		}
		fmt.Fprintf(progress, "bench: SPI engine, %d-byte transfers, poll vs sleep...\n", n)
		r, err := transfer.Run(n, transfers)
		if err != nil {
			return rep, err
		}
		rep.Transfers = append(rep.Transfers, r)
	}
	rep.Targets = Targets(rep)
	return rep, nil
}

// runAll runs scenarios with run into rep.
func runAll(ctx context.Context, rep *Report, scenarios []Scenario, base *Base, progress io.Writer,
	run func(context.Context, Scenario, *Base) (ScenarioResult, error)) error {
	for _, sc := range scenarios {
		fmt.Fprintf(progress, "bench: %s for %v...\n", sc.Name, sc.Duration)
		r, err := run(ctx, sc, base)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// One failed scenario (e.g. the daemon giving up under stress) is a
			// result, not the end of the run.
			r.Error = err.Error()
			fmt.Fprintf(progress, "bench: %s failed: %v\n", sc.Name, err)
		}
		rep.Scenarios = append(rep.Scenarios, r)
	}
	return nil
}
